"""vLLM outcomes the log only implies, the evidence that decided each outcome, the block count of V1's
stat logger, the newest lines (V2 model runner, a patched build's cleanup) and the CUDA-graph estimate
in the budget by the launch's own evidence (issue 21).  Samples are ours, in vLLM's formats."""

from __future__ import annotations

import pytest
from helpers import SAMPLES, assert_accounted, cli

from logparse.budget.model import launch_budget
from logparse.grammar.classify import LineClassifier
from logparse.pipeline import parse_text
from logparse.sources.records import Record

_CFG_053 = (
    "model='/models/mistral-7b', speculative_config=None, tokenizer='/models/mistral-7b', skip_tokenizer_init=False, "
    "dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=1, pipeline_parallel_size=1, quantization=None, "
    "enforce_eager=False, kv_cache_dtype=auto, device_config=cuda, seed=0, served_model_name=/models/mistral-7b, "
    "use_v2_block_manager=False, enable_prefix_caching=False)"
)
ENGINE_053 = (
    f"INFO 07-24 10:11:02 llm_engine.py:176] Initializing an LLM engine (v0.5.3.post1) with config: {_CFG_053}\n"
)
_CFG_063 = (
    "model='/models/phi-3-mini', speculative_config=None, tokenizer='/models/phi-3-mini', skip_tokenizer_init=False, "
    "dtype=torch.bfloat16, max_seq_len=4096, tensor_parallel_size=1, pipeline_parallel_size=1, quantization=None, "
    "enforce_eager=False, kv_cache_dtype=auto, device_config=cuda, seed=0, served_model_name=/models/phi-3-mini, "
    "num_scheduler_steps=1, enable_prefix_caching=False, use_async_output_proc=True, use_cached_outputs=True, "
    "mm_processor_kwargs=None)"
)
ENGINE_063 = (
    f"INFO 07-22 16:40:02 llm_engine.py:237] Initializing an LLM engine (v0.6.3.post1) with config: {_CFG_063}\n"
)
V0_FIGURES = (
    "INFO 07-22 16:40:11 model_runner.py:1067] Loading model weights took 7.1183 GB\n"
    "INFO 07-22 16:40:14 gpu_executor.py:122] # GPU blocks: 12035, # CPU blocks: 682\n"
    "INFO 07-22 16:40:14 gpu_executor.py:126] Maximum concurrency for 4096 tokens per request: 47.01x\n"
)
GRAPHS_063 = "INFO 07-22 16:40:29 model_runner.py:1523] Graph capturing finished in 14 secs.\n"
ROUTES = (
    "INFO 07-22 16:40:31 launcher.py:19] Available routes are:\n"
    "INFO 07-22 16:40:31 launcher.py:27] Route: /openapi.json, Methods: HEAD, GET\n"
    "INFO 07-22 16:40:31 launcher.py:27] Route: /health, Methods: GET\n"
    "INFO 07-22 16:40:31 launcher.py:27] Route: /v1/chat/completions, Methods: POST\n"
)
SERVER_063 = "INFO 07-22 16:40:00 api_server.py:528] vLLM API server version 0.6.3.post1\n"


def _one(text: str):
    result = parse_text(text)
    assert_accounted(result, text.count("\n"))
    (launch,) = result.launches
    return launch


# --------------------------------------------------------------------------- failed starts the log implies
def test_zero_gpu_blocks_and_a_cut_traceback_is_a_failed_start():
    text = (
        ENGINE_053
        + "INFO 07-24 10:11:09 model_runner.py:692] Loading model weights took 13.9821 GB\n"
        + "INFO 07-24 10:11:13 gpu_executor.py:102] # GPU blocks: 0, # CPU blocks: 1092\n"
        + "Traceback (most recent call last):\n"
        + '  File "/opt/app/run.py", line 12, in <module>\n'
        + '    llm = LLM(model="/models/mistral-7b", gpu_memory_utilization=0.35)\n'
    )
    launch = _one(text)
    assert (launch.outcome, launch.error_kind) == ("failed", "no_kv_memory")
    assert launch.error == "# GPU blocks: 0, # CPU blocks: 1092"
    assert launch.outcome_evidence.startswith("'# GPU blocks: 0, # CPU blocks: 1092': no memory was left")
    assert launch.outcome_evidence.endswith("the traceback after it lost its exception line (at 10:11:13)")
    assert launch.num_gpu_blocks == 0 and launch.kv_tokens == 0


def test_zero_cuda_blocks_fail_without_any_traceback():
    text = (
        "INFO 03-01 09:00:00 [llm_engine.py:232] Initializing a V0 LLM engine (v0.7.3) with config: model='org/m', "
        "max_seq_len=8192, tensor_parallel_size=1, kv_cache_dtype=auto\n"
        "INFO 03-01 09:00:20 [executor_base.py:111] # cuda blocks: 0, # CPU blocks: 2048\n"
    )
    launch = _one(text)
    assert (launch.outcome, launch.error_kind) == ("failed", "no_kv_memory")
    assert "lost its exception line" not in launch.outcome_evidence


def test_the_engines_own_failure_line_explains_more_than_the_zero_blocks():
    text = (
        ENGINE_053
        + "INFO 07-24 10:11:13 gpu_executor.py:102] # GPU blocks: 0, # CPU blocks: 1092\n"
        + "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
        "initializing the engine.\n"
    )
    launch = _one(text)
    assert launch.error_kind == "no_kv_memory" and launch.error.startswith("ValueError: No available memory")
    assert launch.outcome_evidence.startswith("vLLM's startup failure: ValueError: No available memory")


def test_nonzero_blocks_and_no_terminal_line_stay_incomplete():
    launch = _one(SERVER_063 + ENGINE_063 + V0_FIGURES + GRAPHS_063)
    assert launch.outcome == "incomplete"
    assert launch.outcome_evidence == "neither a ready nor a failure line in the input"


_WORKER = "(VllmWorkerProcess pid=3311) ERROR 10-02 08:13:20 multiproc_worker_utils.py:233] "
_TP2 = ENGINE_063.replace("tensor_parallel_size=1", "tensor_parallel_size=2")


def test_a_workers_exception_in_initialize_cache_fails_the_start():
    text = (
        SERVER_063
        + _TP2
        + V0_FIGURES
        + _WORKER
        + "Exception in worker VllmWorkerProcess while processing method initialize_cache.\n"
        + _WORKER
        + "Traceback (most recent call last):\n"
        + _WORKER
        + '  File "/usr/lib/python3/vllm/executor/multiproc_worker_utils.py", line 226, in _run_worker_process\n'
    )
    launch = _one(text)
    assert (launch.outcome, launch.error_kind) == ("failed", "kv_cache_init")
    assert launch.outcome_evidence.startswith("worker VllmWorkerProcess raised in initialize_cache")
    assert launch.outcome_evidence.endswith("(at 08:13:20)")


def test_the_workers_exception_text_is_the_error_and_its_method_the_kind():
    text = (
        SERVER_063
        + _TP2
        + _WORKER
        + "Exception in worker VllmWorkerProcess while processing method initialize_cache.\n"
        + _WORKER
        + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of "
        "79.15 GiB of which 1.02 GiB is free.\n"
    )
    launch = _one(text)
    assert launch.error.startswith("torch.OutOfMemoryError: CUDA out of memory")
    assert launch.error_kind == "kv_cache_init"


def test_the_colon_form_carries_the_exception_and_load_model_means_weights():
    text = (
        SERVER_063
        + _TP2
        + _WORKER
        + "Exception in worker VllmWorkerProcess while processing method load_model: CUDA out of memory. Tried to "
        "allocate 448.00 MiB, Traceback (most recent call last):\n"
    )
    launch = _one(text)
    assert (launch.outcome, launch.error_kind) == ("failed", "weights")
    (ev,) = [e for e in launch.events if e.kind == "vllm_worker_exception"]
    assert ev.fields["detail"] == "CUDA out of memory. Tried to allocate 448.00 MiB" and ev.form == "colon"


def test_a_workers_exception_after_the_server_is_up_leaves_it_ready():
    text = (
        SERVER_063
        + _TP2
        + V0_FIGURES
        + GRAPHS_063
        + ROUTES
        + "INFO:     Application startup complete.\n"
        + _WORKER.replace("08:13:20", "08:40:00")
        + "Exception in worker VllmWorkerProcess while processing method execute_model.\n"
    )
    launch = _one(text)
    assert launch.outcome == "ready" and "uvicorn's 'Application startup complete.'" in launch.outcome_evidence


def test_a_v1_worker_that_failed_to_start_is_the_failure_before_the_engines_echo():
    text = (
        "(EngineCore_DP0 pid=301) INFO 03-24 09:45:10 [core.py:93] Initializing a V1 LLM engine (v0.11.0) with "
        "config: model='org/moe', max_seq_len=32768, tensor_parallel_size=8, kv_cache_dtype=auto\n"
        "(Worker_TP1_EP1 pid=7311) ERROR 03-24 09:46:59 [multiproc_executor.py:597] WorkerProc failed to start.\n"
        "(Worker_TP1_EP1 pid=7311) ERROR 03-24 09:46:59 [multiproc_executor.py:597] Traceback (most recent call "
        "last):\n"
        "(EngineCore_DP0 pid=301) ERROR 03-24 09:47:01 [core.py:708] EngineCore failed to start.\n"
        "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}\n"
    )
    launch = _one(text)
    assert (launch.outcome, launch.error_kind) == ("failed", "worker_exception")
    assert launch.outcome_evidence.startswith("a worker failed to start")


# --------------------------------------------------------------------------- ready starts the log implies
def test_an_offline_v0_run_is_ready_at_its_last_graph_capture():
    launch = _one(ENGINE_063 + V0_FIGURES + GRAPHS_063)
    assert launch.outcome == "ready" and launch.ready_at.endswith("07-22T16:40:29")
    assert launch.outcome_evidence.startswith("'Graph capturing finished' of an offline V0 run")
    assert launch.outcome_evidence.endswith("(at 16:40:29)")


def test_an_offline_v1_piece_is_not_ready_on_a_graph_capture():
    text = (
        "INFO 03-02 11:00:00 [core.py:61] Initializing a V1 LLM engine (v0.8.3) with config: model='org/m', "
        "max_seq_len=4096, tensor_parallel_size=1, kv_cache_dtype=auto\n"
        "INFO 03-02 11:00:14 [kv_cache_utils.py:578] GPU KV cache size: 1,200,000 tokens\n"
        "INFO 03-02 11:00:19 [gpu_model_runner.py:1608] Graph capturing finished in 5 secs, took 0.41 GiB\n"
    )
    assert _one(text).outcome == "incomplete"


def test_an_api_server_that_listed_its_routes_is_up():
    launch = _one(SERVER_063 + ENGINE_063 + V0_FIGURES + GRAPHS_063 + ROUTES)
    assert launch.outcome == "ready" and launch.ready_at.endswith("07-22T16:40:31")
    assert launch.outcome_evidence.startswith("the API server listed its routes (3 'Route:' line(s))")
    assert launch.outcome_evidence.endswith("(at 16:40:31)")
    assert {e.form for e in launch.events if e.kind == "vllm_routes"} == {"head", "route_methods"}


def test_routes_then_a_failure_is_a_failed_start():
    text = (
        SERVER_063
        + ENGINE_063
        + V0_FIGURES
        + ROUTES
        + "OSError: [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use\n"
    )
    launch = _one(text)
    assert launch.outcome == "failed" and launch.error.startswith("OSError: [Errno 98]")
    assert launch.outcome_evidence.startswith("an exception before any ready line: OSError: [Errno 98]")


def test_uvicorn_and_the_offline_init_name_their_line():
    ready = _one(SERVER_063 + ENGINE_063 + V0_FIGURES + ROUTES + "INFO:     Application startup complete.\n")
    assert ready.outcome_evidence == "uvicorn's 'Application startup complete.'"
    offline = _one(
        "INFO 03-02 11:00:00 [core.py:61] Initializing a V1 LLM engine (v0.8.3) with config: model='org/m', "
        "max_seq_len=4096, tensor_parallel_size=1, kv_cache_dtype=auto\n"
        "INFO 03-02 11:00:20 [core.py:162] init engine (profile, create kv cache, warmup model) took 10.01 seconds\n"
    )
    assert offline.outcome == "ready" and offline.outcome_evidence.startswith("'init engine … took'")


def test_show_and_explain_say_what_decided(tmp_path):
    log = tmp_path / "routes.log"
    log.write_text(SERVER_063 + ENGINE_063 + V0_FIGURES + ROUTES, encoding="utf-8")
    db = tmp_path / "s.duckdb"
    assert cli("ingest", log, db=db).code == 0
    shown = cli("show", "@latest", db=db)
    assert shown.code == 0 and "ready by the API server listed its routes" in shown.out
    explained = cli("explain", "@latest", "--json", db=db)
    assert explained.code == 0 and '"outcome_evidence": "the API server listed its routes' in explained.out


# --------------------------------------------------------------------------- V1's engine blocks
_V1_HEAD = (
    "(APIServer pid=411) INFO 09-14 03:12:01 [api_server.py:1890] vLLM server version 0.30.0, serving model org/m\n"
    "(EngineCore pid=520) INFO 09-14 03:12:20 [core.py:101] Initializing a V1 LLM engine (v0.30.0) with config: "
    "model='org/m', max_seq_len=65536, tensor_parallel_size=1, kv_cache_dtype=auto\n"
)
_CACHE_INFO = (
    "(APIServer pid=411) INFO 09-14 03:14:31 [loggers.py:147] Engine 000: vllm cache_config_info with "
    "initialization after num_gpu_blocks is: {blocks}\n"
)
_KV_LINE = (
    "(EngineCore pid=520) INFO 09-14 03:14:05 [kv_cache_utils.py:1869] GPU KV cache size: {tokens} tokens, "
    "Maximum concurrency for 65,536 tokens per request: {conc}x\n"
)


def _v1(tokens: str, conc: str, blocks: int, block_size: int | None) -> str:
    head = _V1_HEAD.splitlines(keepends=True)
    args = (
        f"(APIServer pid=411) INFO 09-14 03:12:02 [utils.py:253] non-default args: {{'model': 'org/m', "
        f"'block_size': {block_size}}}\n"
        if block_size
        else ""
    )
    return head[0] + args + head[1] + _KV_LINE.format(tokens=tokens, conc=conc) + _CACHE_INFO.format(blocks=blocks)


def test_cache_config_info_gives_the_engines_blocks():
    launch = _one(_v1("512,770", "7.82", 16024, None))
    assert launch.num_gpu_blocks == 16024 and launch.kv_tokens == 512770
    assert launch.kv_tokens_definition == "concurrency×max_model_len"
    # V1's blocks may be a hybrid model's: concurrency × L / blocks is no block size there
    assert launch.block_size is None
    assert not any("several groups" in w for w in launch.warnings)


def test_one_groups_blocks_times_block_size_are_its_tokens():
    launch = _one(_v1("512,770", "7.82", 16024, 32))
    assert launch.block_size == 32 and not any("several groups" in w for w in launch.warnings)


def test_a_hybrid_models_tokens_are_not_blocks_times_block_size():
    """Two full-attention groups: each request of 65,536 tokens takes 2 × 4,096 blocks of 16."""
    launch = _one(_v1("262,144", "4.00", 32768, 16))
    assert launch.num_gpu_blocks == 32768 and launch.kv_tokens == 262144
    (warning,) = [w for w in launch.warnings if "several groups" in w]
    assert "32,768 × 16 = 524,288 is not kv_tokens = 262,144" in warning


def test_v0_blocks_still_give_the_block_size():
    launch = _one(ENGINE_063 + V0_FIGURES + GRAPHS_063)
    assert launch.block_size == 16 and launch.kv_tokens == 12035 * 16


# --------------------------------------------------------------------------- the newest lines
def test_the_v2_model_runner_and_a_patched_builds_cleanup_are_kept():
    text = (
        _V1_HEAD
        + "(EngineCore pid=520) INFO 09-14 03:12:58 [gpu_worker.py:441] Using V2 Model Runner\n"
        + "(EngineCore pid=520) INFO 09-14 03:13:40 [model_runner.py:428] Model loading took 51.37 GiB memory and "
        "33.120551 seconds\n"
        + "(Worker_TP0 pid=257) INFO 09-14 03:14:26 [gpu_worker.py:781] Cleared 0.15 GiB of cached CUDA allocator "
        "memory before KV cache allocation.\n"
    )
    text += (
        "(Worker_TP0 pid=257) INFO 09-14 03:14:20 [gpu_worker.py:402] Freed 0.31 GiB before KV cache sizing; "
        "non-torch profile increase is 0.42 GiB.\n"
    )
    launch = _one(text)
    assert launch.runtime["model_runner"] == "V2"
    assert any("freed 0.31 GiB" in w and "0.42 GiB" in w for w in launch.warnings)
    assert any("patched build" in w and "0.15 GiB" in w for w in launch.warnings)
    assert launch.ranks[0].weights_gb == 51.37


def test_profiling_cuda_graph_memory_reads_each_mode():
    res = LineClassifier().classify(
        Record(
            1,
            "(EngineCore pid=520) INFO 09-14 03:13:52 [gpu_model_runner.py:6290] Profiling CUDA graph memory: "
            "PIECEWISE=11 (largest=512), FULL=7 (largest=64)",
        )
    )
    assert res.status == "parsed"
    assert res.parsed[2][1]["modes"] == {
        "PIECEWISE": {"graphs": 11, "largest": 512},
        "FULL": {"graphs": 7, "largest": 64},
    }


@pytest.mark.parametrize(
    "line",
    [
        "INFO 11-03 09:00:52 launcher.py:27] Route: /v1/models, Verbs: GET",
        "(APIServer pid=411) INFO 09-14 03:14:31 [loggers.py:147] Engine 000: vllm cache_config_info with "
        "initialization after num_gpu_blocks is: many",
        "(VllmWorkerProcess pid=3311) ERROR 10-02 08:13:20 multiproc_worker_utils.py:233] Exception in worker "
        "VllmWorkerProcess while processing method",
        "(Worker_TP0 pid=257) INFO 09-09 20:24:26 [gpu_worker.py:781] Cleared 0.15 GB of cached CUDA allocator memory "
        "before KV cache allocation.",
        "(EngineCore pid=520) INFO 09-14 03:12:58 [gpu_worker.py:441] Using V2 Model Runner for drafts",
    ],
)
def test_near_misses_of_the_new_lines_are_reported(line):
    res = LineClassifier().classify(Record(1, line))
    assert res.status == "unrecognized" and res.reason.startswith("near miss")


# --------------------------------------------------------------------------- CUDA graphs in the budget
_V031 = (SAMPLES / "vllm" / "v1-tags-in-format-0.31.0.log").read_text(encoding="utf-8")
_DISABLED = (
    "(Worker_TP0 pid=601) WARNING 10-09 22:15:55 [gpu_worker.py:440] CUDA graph memory profiling is disabled "
    "(VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0). Without it, CUDA graph memory is not accounted for during KV cache "
    "allocation, which may require lowering --gpu-memory-utilization to avoid OOM. Consider re-enabling it (the "
    "default as of v0.21.0) and increasing --gpu-memory-utilization from 0.9000 to 0.9102.\n"
)


def _with_disabled_profiling() -> str:
    """The 0.31.0 sample as the same launch would print it with the estimate switched off: the pool
    keeps the 1.42 GiB the estimate took."""
    lines = _V031.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if "Available KV cache memory" in line)
    text = "".join(lines[:at] + [_DISABLED] + lines[at:])
    text = text.replace("Available KV cache memory: 85.41 GiB", "Available KV cache memory: 86.83 GiB")
    return text.replace("Current kv cache memory in use is 85.41 GiB", "Current kv cache memory in use is 86.83 GiB")


def test_the_release_default_puts_the_graph_estimate_in_the_budget():
    b = launch_budget(parse_text(_V031).launches[0])
    assert b.predicted_kv_gb == b.kv_pool_gb == 85.41
    assert "the CUDA-graph estimate is inside the budget: the default of 0.31.0 (on from 0.20.0)" in b.derivation


def test_a_launch_that_turned_the_estimate_off_keeps_it_out_of_the_budget():
    launch = parse_text(_with_disabled_profiling()).launches[0]
    b = launch_budget(launch)
    assert b.predicted_kv_gb == b.kv_pool_gb == 86.83
    assert not any("CUDA-graph estimate" in step for step in b.derivation)
    from logparse.reports.explain import explain_launch

    rep = explain_launch(launch).to_dict()
    assert not any(s["label"] == "CUDA-graph estimate" for s in rep["waterfall"])
    assert any("not in the KV budget" in s and "profiling is off" in s for s in rep["sentences"])


def test_total_memory_from_the_graph_advice_carries_its_rounding_range():
    from logparse.engines.vllm.explain import binding_rank, not_shown, total_gb_range

    launch = parse_text((SAMPLES / "vllm" / "v1-defaults-0.20.2.log").read_text(encoding="utf-8")).launches[0]
    t, lo, hi = total_gb_range(launch, binding_rank(launch))
    assert lo < t < hi and hi - lo < 0.05 * t
    (said,) = [m for m in not_shown(launch, binding_rank(launch)) if m.startswith("total GPU memory T")]
    assert f"≈ {t:.1f} GiB, {lo:.1f}–{hi:.1f} GiB" in said
    # a budget report prints T: nothing is derived then
    printed = parse_text(_V031).launches[0]
    assert total_gb_range(printed, binding_rank(printed)) is None


def test_a_hybrid_models_ranks_keep_no_token_count_for_a_per_token_size():
    """0.20.1-0.27.1 print one 'GPU KV cache size' line (a rank's count): for a hybrid model (padding
    layers) it is concurrency × max_model_len, so pool / tokens would be no bytes per token."""
    lines = (
        "INFO 08-01 10:00:00 [core.py:93] Initializing a V1 LLM engine (v0.24.0) with config: model='org/hybrid', "
        "max_seq_len=32768, tensor_parallel_size=1, kv_cache_dtype=auto\n"
        "INFO 08-01 10:00:30 [gpu_worker.py:300] Available KV cache memory: 40.12 GiB\n"
        "{padding}"
        "INFO 08-01 10:00:31 [kv_cache_utils.py:1200] GPU KV cache size: 1,310,720 tokens\n"
        "INFO 08-01 10:00:31 [kv_cache_utils.py:1204] Maximum concurrency for 32,768 tokens per request: 40.00x\n"
    )
    plain = _one(lines.format(padding=""))
    assert plain.ranks[0].kv_tokens == 1310720 and launch_budget(plain).ranks[0].bytes_per_token is not None
    pad = (
        "WARNING 08-01 10:00:31 [kv_cache_utils.py:900] Add 2 padding layers, may waste at most 3.85% KV cache memory\n"
    )
    hybrid = _one(lines.format(padding=pad))
    assert hybrid.kv_tokens == 1310720 and hybrid.ranks[0].kv_tokens is None
    assert launch_budget(hybrid).ranks[0].bytes_per_token is None


def test_uvicorn_running_without_its_startup_line_is_up():
    launch = _one(
        SERVER_063
        + ENGINE_063
        + V0_FIGURES
        + "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)\n"
    )
    assert launch.outcome == "ready" and launch.outcome_evidence.startswith("uvicorn's 'Uvicorn running on")


def test_a_paste_of_only_a_workers_exception_is_a_failed_launch():
    text = (
        _WORKER
        + "Exception in worker VllmWorkerProcess while processing method determine_num_available_blocks.\n"
        + _WORKER
        + "Traceback (most recent call last):\n"
    )
    launch = _one(text)
    assert (launch.outcome, launch.error_kind) == ("failed", "profile")
