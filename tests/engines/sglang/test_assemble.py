"""A start's outcome as SGLang's assembly decides it (:mod:`logparse.engines.sglang.assemble`).

Crashes of the 0.1-0.3 era: ``Exception in X:`` + the traceback on the following lines.  Each log
below was written by us in the format of the release named (lines read from that release's own
source); the start must come out ``failed`` with the exception line at the end of the traceback as
its error, never ``incomplete``.  A ready start names the line that decided it.
"""

from __future__ import annotations

import textwrap

import pytest
from helpers import SAMPLES

from logparse.pipeline import parse_paths

PY = "/usr/local/lib/python3.10/dist-packages"


def _parse(tmp_path, text: str, unrecognized: int = 0):
    path = tmp_path / "crash.log"
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    result = parse_paths([str(path)])
    assert result.lines.unrecognized == unrecognized, [(u.line_no, u.reason, u.text[:80]) for u in result.unrecognized]
    return result.launches


CAPTURE_OOM = "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 80.00 MiB. GPU 1 has a total capacity of 79.15 GiB of which 18.75 MiB is free."

# 0.2.14-0.3.2: TP rank 1 dies capturing CUDA graphs; its process re-raises (multiprocessing prints it again).
LOG_032_RUN_TP_SERVER = f"""
[09:41:02] server_args=ServerArgs(model_path='/srv/models/Qwen2-57B-A14B-Instruct', tp_size=2, mem_fraction_static=0.9)
[09:41:09 TP0] Init nccl begin.
[09:41:09 TP1] Init nccl begin.
[09:41:12 TP0] Load weight begin. avail mem=78.81 GB
[09:41:12 TP1] Load weight begin. avail mem=78.83 GB
[09:42:40 TP1] Load weight end. type=Qwen2MoeForCausalLM, dtype=torch.bfloat16, avail mem=25.37 GB
[09:42:41 TP0] Load weight end. type=Qwen2MoeForCausalLM, dtype=torch.bfloat16, avail mem=25.35 GB
[09:42:41 TP0] Memory pool end. avail mem=7.92 GB
[09:42:41 TP1] Memory pool end. avail mem=7.94 GB
[09:42:42 TP0] Capture cuda graph begin. This can take up to several minutes.
[09:42:42 TP1] Capture cuda graph begin. This can take up to several minutes.
[09:42:57 TP1] Exception in run_tp_server:
Traceback (most recent call last):
  File "{PY}/sglang/srt/managers/tp_worker.py", line 957, in run_tp_server
    model_server = ModelTpServer(
  File "{PY}/sglang/srt/model_executor/cuda_graph_runner.py", line 178, in __init__
    raise Exception(
{CAPTURE_OOM}
Possible solutions:
1. disable cuda graph by --disable-cuda-graph
2. set --mem-fraction-static to a smaller value
3. disable torch compile by not using --enable-torch-compile
Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose

Process Process-1:
Traceback (most recent call last):
  File "/usr/lib/python3.10/multiprocessing/process.py", line 314, in _bootstrap
    self.run()
{CAPTURE_OOM}
"""

# 0.2.0-0.2.6: no prefix, "[gpu_id=N]" inside the message; the first forward pass (the warmup
# request) hits an illegal address: the TP server logs it, then the controller.
ILLEGAL = "RuntimeError: CUDA error: an illegal memory access was encountered"
LOG_025_MODEL_TP_SERVER = f"""
server_args=ServerArgs(model_path='/data/llama-2-7b', tp_size=1, mem_fraction_static=0.89)
[gpu_id=0] Init nccl begin.
[gpu_id=0] Load weight begin. avail mem=78.51 GB
[gpu_id=0] Load weight end. type=LlamaForCausalLM, dtype=torch.float16, avail mem=65.92 GB
[gpu_id=0] Memory pool end. avail mem=8.63 GB
[gpu_id=0] Capture cuda graph begin. This can take up to several minutes.
[gpu_id=0] max_total_num_tokens=115203, max_prefill_tokens=16384, max_running_requests=14400, context_len=4096
INFO:     Started server process [9051]
INFO:     Waiting for application startup.
INFO:     Application startup complete.
INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)
Exception in ModelTpServer:
Traceback (most recent call last):
  File "{PY}/sglang/srt/managers/controller/tp_worker.py", line 188, in exposed_step
    self.forward_step()
  File "{PY}/sglang/srt/managers/controller/model_runner.py", line 402, in forward
    return self.forward_extend(batch)
{ILLEGAL}

Exception in ControllerSingle:
Traceback (most recent call last):
  File "{PY}/sglang/srt/managers/controller/manager_single.py", line 91, in start_controller_process
    loop.run_until_complete(controller.loop_for_forward())
{ILLEGAL}

"""

# 0.2.14-0.3.2 with a prefix: the same, data parallel (ControllerMulti), ending in the warmup error.
LOG_030_CONTROLLER_MULTI = f"""
[11:02:03] server_args=ServerArgs(model_path='/m/mistral-7b', tp_size=1, dp_size=2, mem_fraction_static=0.88)
[11:02:10 DP0 TP0] Init nccl begin.
[11:02:10 DP1 TP0] Init nccl begin.
[11:02:12 DP0 TP0] Load weight begin. avail mem=78.40 GB
[11:02:12 DP1 TP0] Load weight begin. avail mem=78.40 GB
[11:02:20 DP0 TP0] Load weight end. type=MistralForCausalLM, dtype=torch.bfloat16, avail mem=64.87 GB
[11:02:20 DP1 TP0] Load weight end. type=MistralForCausalLM, dtype=torch.bfloat16, avail mem=64.87 GB
[11:02:21 DP0 TP0] max_total_num_tokens=431790, max_prefill_tokens=16384, max_running_requests=4097, context_len=32768
[11:02:21 DP1 TP0] max_total_num_tokens=431790, max_prefill_tokens=16384, max_running_requests=4097, context_len=32768
[11:02:30 DP0 TP0] Exception in ModelTpServer:
Traceback (most recent call last):
  File "{PY}/sglang/srt/managers/tp_worker.py", line 211, in exposed_step
    self.forward_step()
AssertionError: the batch has no request
[11:02:30] Exception in ControllerMulti:
Traceback (most recent call last):
  File "{PY}/sglang/srt/managers/controller_multi.py", line 190, in start_controller_process
    controller.loop_for_forward()
AssertionError: the batch has no request
"""

# 0.1.22-0.2.0 run_tp_server, before the "Capture cuda graph failed:" colon existed (0.1.22 has none).
LOG_0122_RUN_TP_SERVER = f"""
[gpu_id=0] Init nccl begin.
[gpu_id=1] Init nccl begin.
[gpu_id=0] Load weight begin. avail mem=39.02 GB
[gpu_id=1] Load weight begin. avail mem=39.02 GB
[gpu_id=0] Load weight end. type=LlamaForCausalLM, dtype=torch.float16, avail mem=32.71 GB
[gpu_id=1] Load weight end. type=LlamaForCausalLM, dtype=torch.float16, avail mem=32.71 GB
[gpu_id=0] Memory pool end. avail mem=4.02 GB
[gpu_id=1] Memory pool end. avail mem=4.02 GB
[gpu_id=1] Capture cuda graph begin.
[gpu_id=0] Capture cuda graph begin.
Exception in run_tp_server:
Traceback (most recent call last):
  File "{PY}/sglang/srt/managers/controller/tp_worker.py", line 771, in run_tp_server
    model_server = ModelTpServer(
torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 1 has a total capacity of 39.39 GiB of which 2.25 MiB is free.
"""

# 0.1.3-0.1.16 (router era): the model process dies in the warmup request, after uvicorn started.
LOG_0112_MODEL_RPC_CLIENT = f"""
Rank 0: load weight begin.
Rank 0: load weight end.
Rank 0: max_total_num_token=58321, max_prefill_num_token=9720, context_len=4096, model_mode=[]
INFO:     Started server process [7702]
INFO:     Waiting for application startup.
INFO:     Application startup complete.
INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)
new fill batch. #seq: 1. #cached_token: 0. #new_token: 8. #remaining_req: 0. #running_req: 0. tree_cache_hit_rate: 0.00%.
Exception in ModelRpcClient:
Traceback (most recent call last):
  File "{PY}/sglang/srt/managers/router/model_rpc.py", line 162, in exposed_step
    self.forward_step()
  File "{PY}/triton/runtime/jit.py", line 425, in run
    kernel = self.compile(
triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 196608, Hardware limit: 101376. Reducing block sizes or `num_stages` may help.
"""

# 0.1.3-0.1.14: the router's init traceback is printed by the server after "router init state:".
NOT_ENOUGHT = "RuntimeError: Not enought memory. Please try to increase --mem-fraction-static."
LOG_0110_ROUTER_INIT = f"""
Rank 0: load weight begin.
Rank 0: load weight end.
Process Process-1:
Traceback (most recent call last):
  File "/usr/lib/python3.10/multiprocessing/process.py", line 314, in _bootstrap
    self.run()
  File "{PY}/sglang/srt/managers/router/model_runner.py", line 341, in init_memory_pool
    raise RuntimeError(
{NOT_ENOUGHT}
router init state: Traceback (most recent call last):
  File "{PY}/sglang/srt/managers/router/manager.py", line 68, in start_router_process
    model_client = ModelRpcClient(server_args, port_args)
  File "{PY}/sglang/srt/managers/router/model_runner.py", line 341, in init_memory_pool
    raise RuntimeError(
{NOT_ENOUGHT}

detoken init state: init ok
"""

# A traceback whose last line we cannot name (no "module." qualifier, no Error/Exception suffix):
# the crash line is the error.
LOG_031_UNNAMED_TAIL = f"""
[08:00:01] server_args=ServerArgs(model_path='/m/gemma-2-9b', tp_size=2, mem_fraction_static=0.85)
[08:00:05 TP0] Init nccl begin.
[08:00:05 TP1] Init nccl begin.
[08:00:07 TP1] Load weight begin. avail mem=43.80 GB
[08:00:07 TP0] Load weight begin. avail mem=43.80 GB
[08:00:31 TP1] Exception in run_tp_server:
Traceback (most recent call last):
  File "{PY}/sglang/srt/managers/tp_worker.py", line 889, in run_tp_server
    model_server = ModelTpServer(
OutOfResources
"""


@pytest.mark.parametrize(
    "text,error,release_in",
    [
        (LOG_032_RUN_TP_SERVER, CAPTURE_OOM, "0.3.2"),
        (LOG_025_MODEL_TP_SERVER, ILLEGAL, "0.2.5"),
        (LOG_030_CONTROLLER_MULTI, "AssertionError: the batch has no request", "0.3.0"),
        (
            LOG_0122_RUN_TP_SERVER,
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 1 has a total capacity of 39.39 GiB of which 2.25 MiB is free.",
            "0.1.22",
        ),
        (
            LOG_0112_MODEL_RPC_CLIENT,
            "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 196608, Hardware limit: 101376. Reducing block sizes or `num_stages` may help.",
            "0.1.12",
        ),
        (LOG_0110_ROUTER_INIT, NOT_ENOUGHT, "0.1.10"),
        (LOG_031_UNNAMED_TAIL, "[08:00:31 TP1] Exception in run_tp_server:", "0.3.1"),
    ],
    ids=[
        "run_tp_server-0.3.2",
        "ModelTpServer+ControllerSingle-0.2.5",
        "ControllerMulti-0.3.0",
        "run_tp_server-0.1.22",
        "ModelRpcClient-0.1.12",
        "router-init-state-0.1.10",
        "unnamed-tail-0.3.1",
    ],
)
def test_old_crash_is_a_failed_start_with_the_traceback_error(tmp_path, text, error, release_in):
    from logparse.engines.sglang import versions

    # the unnamed last line stays unrecognized: we cannot tell it is an exception by itself
    (launch,) = _parse(tmp_path, text, unrecognized=int(text is LOG_031_UNNAMED_TAIL))
    assert launch.outcome == "failed"
    assert launch.error == error
    assert versions.in_range(release_in, launch.version_range), (launch.sglang_version_range, launch.version_evidence)


def test_failed_0_1_router_start_keeps_its_ranks(tmp_path):
    (launch,) = _parse(tmp_path, LOG_0110_ROUTER_INIT)
    assert [r.tp_rank for r in launch.ranks] == [0]
    assert launch.sglang_version_range == "0.1.6–0.1.14"


def test_image_error_of_the_tokenizer_manager_is_not_a_crash(tmp_path):
    text = f"""
    [2024-11-28 16:20:00] server_args=ServerArgs(model_path='/m/llava', tp_size=1, mem_fraction_static=0.88)
    [2024-11-28 16:20:09] Load weight begin. avail mem=78.40 GB
    [2024-11-28 16:20:30] The server is fired up and ready to roll!
    [2024-11-28 16:25:02] Exception in TokenizerManager:
    Traceback (most recent call last):
      File "{PY}/sglang/srt/managers/image_processor.py", line 88, in _process_single_image_task
        image, image_size = load_image(image_data)
    PIL.UnidentifiedImageError: cannot identify image file <_io.BytesIO object at 0x7f21c4d9e3e0>
    """
    (launch,) = _parse(tmp_path, text)
    assert launch.outcome == "ready"


def test_scheduler_crash_with_an_unusual_exception_class_fails(tmp_path):
    """0.3.6.post3+: the same holds for "Scheduler hit an exception:" (was incomplete)."""
    text = f"""
    [2025-07-02 10:00:00] server_args=ServerArgs(model_path='/m/llama', tp_size=1, mem_fraction_static=0.87)
    [2025-07-02 10:00:07] Load weight begin. avail mem=78.50 GB
    [2025-07-02 10:00:20] Scheduler hit an exception: Traceback (most recent call last):
      File "{PY}/sglang/srt/managers/scheduler.py", line 2301, in run_scheduler_process
        scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)
    triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 262144, Hardware limit: 232448.
    """
    (launch,) = _parse(tmp_path, text)
    assert launch.outcome == "failed"
    assert launch.error.startswith("triton.runtime.errors.OutOfResources: out of resource")


def test_sglang_launches_name_their_deciding_line_too():
    from logparse.pipeline import parse_paths

    (launch,) = parse_paths([str(SAMPLES / "sglang-0.5/llama-0.5.9-dataclass.log")]).launches
    assert launch.outcome == "ready" and launch.outcome_evidence.startswith("the ready line 'The server is fired up")
    assert launch.to_dict()["outcome_evidence"] == launch.outcome_evidence
