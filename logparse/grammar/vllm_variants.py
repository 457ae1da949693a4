"""Every vLLM line variant that carries a figure or an outcome, as data (the vLLM log catalogue).

Each entry: a name, the release range in which vLLM prints exactly that wording (catalogue §2, as
``since``/``until`` over :data:`logparse.grammar.vllm_versions.RELEASES`), one sample line written
by us in that format (our own numbers), and the fields the sample must parse to.
``tests/test_vllm_variants.py`` walks the table, as ``tests/test_variants.py`` walks SGLang's.

The table also dates a log whose version is not printed (a pasted excerpt): an event's signature
(kind, wording form, field names) is looked up here, and the union of the matching variants'
ranges narrows the launch's release range.  ``prefix_*`` entries test the layers in front of the
message (process tags, formatter eras) and date through :func:`prefix_evidence`; runtime, uvicorn
and generic lines do not date (``dates=False``).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from logparse.grammar import vllm_versions as vv
from logparse.grammar.variants import Variant
from logparse.vllm_prefix import split_head

LAST = vv.LAST


V = Variant  # the same record as SGLang's variants: a release range, a sample, the fields
_P8 = "INFO 05-02 09:15:03 [{}] "  # the 0.8.0+ formatter
_P4 = "INFO 06-11 10:04:31 {}] "  # the 0.4.0 - 0.7.3 formatter


def _b(loc: str, msg: str, tag: str = "") -> str:
    return tag + _P8.format(loc) + msg


def _o(loc: str, msg: str, tag: str = "") -> str:
    return tag + _P4.format(loc) + msg


_CFG_V0 = (
    "model='/models/llama-8b', speculative_config=None, tokenizer='/models/llama-8b', skip_tokenizer_init=False, "
    "dtype=torch.bfloat16, max_seq_len=8192, tensor_parallel_size=2, pipeline_parallel_size=1, "
    "quantization=None, enforce_eager=False, kv_cache_dtype=auto, device_config=cuda, seed=0, "
    "served_model_name=/models/llama-8b, enable_prefix_caching=False"
)
_CFG_V1 = (
    "model='org/chat-14b', speculative_config=None, tokenizer='org/chat-14b', dtype=torch.bfloat16, "
    "max_seq_len=32768, tensor_parallel_size=1, pipeline_parallel_size=1, data_parallel_size=1, "
    "quantization=None, enforce_eager=False, kv_cache_dtype=fp8, device_config=cuda, seed=0, "
    "served_model_name=org/chat-14b, enable_prefix_caching=True, compilation_config={'level': 3, 'cudagraph_capture_sizes': [512, 256, 8, 4, 2, 1]}"
)
_USAGE_W = (
    "Actual usage is 15.2 GiB for weight, 2.41 GiB for peak activation, 0.63 GiB for non-torch memory, "
    "and 0.88 GiB for CUDAGraph memory."
)
_USAGE_C = (
    "Actual usage is 15.9 GiB for consumed memory (weights + non-torch), 1.7 GiB for peak activation, "
    "and 0.88 GiB for CUDAGraph memory."
)
_REPORT_HEAD = (
    "Free memory on device (78.52/79.19 GiB) on startup. Desired GPU memory utilization is (0.92, 72.85 GiB). "
)
_MAXLEN_TAIL = "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."
_DOCS = " See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."

VARIANTS: list[Variant] = [
    # ---------------------------------------------------------------- layers in front of the message (§1)
    V(
        "prefix_bare_location",
        "0.4.0",
        "0.7.3",
        _o("gpu_executor.py:76", "# GPU blocks: 27311, # CPU blocks: 4096"),
        {"gpu_blocks": 27311},
        "vllm_blocks",
    ),
    V(
        "prefix_bracketed_location",
        "0.8.0",
        LAST,
        _b("kv_cache_utils.py:634", "GPU KV cache size: 212,480 tokens"),
        {"kv_tokens": 212480},
        "vllm_kv_tokens",
    ),
    V(
        "prefix_debug_path",
        "0.10.2",
        LAST,
        _b("v1/worker/gpu_worker.py:440", "Available KV cache memory: 41.07 GiB"),
        {"kv_gb": 41.07},
        "vllm_kv_memory",
    ),
    V(
        "prefix_tag_vllm_worker_process",
        "0.4.2",
        "0.10.2",
        _o("model_runner.py:1099", "Loading model weights took 7.4807 GB", "(VllmWorkerProcess pid=4120) "),
        {"weights_gb": 7.4807, "tp_rank": None},
        "vllm_weights",
    ),
    V(
        "prefix_tag_vllm_worker_rank",
        "0.6.5",
        "0.10.0",
        _b(
            "gpu_model_runner.py:1347",
            "Model loading took 7.4807 GiB and 6.220451 seconds",
            "(VllmWorker rank=1 pid=5001) ",
        ),
        {"weights_gb": 7.4807, "tp_rank": 1},
        "vllm_weights",
    ),
    V(
        "prefix_tag_vllm_worker_tp",
        "0.10.1",
        "0.10.1.1",
        _b("gpu_worker.py:276", "Available KV cache memory: 30.12 GiB", "(VllmWorker TP3 pid=5003) "),
        {"kv_gb": 30.12, "tp_rank": 3},
        "vllm_kv_memory",
    ),
    V(
        "prefix_tag_worker_tp",
        "0.10.2",
        LAST,
        _b("gpu_worker.py:298", "Available KV cache memory: 30.12 GiB", "(Worker_TP1 pid=812) "),
        {"kv_gb": 30.12, "tp_rank": 1},
        "vllm_kv_memory",
    ),
    V(
        "prefix_tag_worker_dp_pp_tp",
        "0.10.2",
        LAST,
        _b("gpu_worker.py:440", "Available KV cache memory: 30.1 GiB", "(Worker_DP1_PP1_TP3_EP3 pid=812) "),
        {"dp_rank": 1, "pp_rank": 1, "tp_rank": 3},
        "vllm_kv_memory",
    ),
    V(
        "prefix_tag_engine_core_0",
        "0.8.3",
        "0.10.1.1",
        _b("core.py:74", f"Initializing a V1 LLM engine (v0.10.1) with config: {_CFG_V1}", "(EngineCore_0 pid=300) "),
        {"version": "0.10.1"},
        "vllm_engine_init",
    ),
    V(
        "prefix_tag_engine_core_dp",
        "0.10.2",
        LAST,
        _b("kv_cache_utils.py:1087", "GPU KV cache size: 98,304 tokens", "(EngineCore_DP0 pid=301) "),
        {"kv_tokens": 98304, "dp_rank": 0},
        "vllm_kv_tokens",
    ),
    V(
        "prefix_tag_in_format",
        "0.31.0",
        LAST,
        _b("gpu_worker.py:692", "Available KV cache memory: 61.3 GiB", "(EngineCore pid=4242) "),
        {"kv_gb": 61.3},
        "vllm_kv_memory",
    ),
    V(
        "prefix_tag_main_process",
        "0.31.0",
        LAST,
        _b("api_utils.py:347", "vLLM server version 0.31.0, serving model org/chat-14b", "(MainProcess pid=4100) "),
        {"version": "0.31.0"},
        "vllm_version",
    ),
    V(
        "prefix_ray_actor",
        "0.4.1",
        "0.32.0",
        _o("model_runner.py:1099", "Loading model weights took 7.4807 GB", "(RayWorkerWrapper pid=771, ip=10.0.0.7) "),
        {"weights_gb": 7.4807},
        "vllm_weights",
    ),
    V(
        "prefix_rank_traceback",
        "0.4.0",
        LAST,
        "[rank0]: ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.",
        {"exception": "ValueError"},
        "vllm_failure",
    ),
    # ---------------------------------------------------------------- version, args, engine (§2.1)
    V(
        "api_server_version",
        "0.4.0",
        "0.14.1",
        _o("api_server.py:712", "vLLM API server version 0.6.6.post1"),
        {"version": "0.6.6.post1"},
        "vllm_version",
    ),
    V(
        "server_version_plain",
        "0.15.0",
        LAST,
        _b("utils.py:306", "vLLM server version 0.21.0, serving model org/chat-14b"),
        {"version": "0.21.0", "model": "org/chat-14b"},
        "vllm_version",
    ),
    V(
        "logo_version",
        "0.15.0",
        LAST,
        _b("utils.py:299", " ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.20.0", "(APIServer pid=7) "),
        {"version": "0.20.0"},
        "vllm_version",
    ),
    V(
        "logo_model",
        "0.15.0",
        LAST,
        _b("utils.py:299", "  █▄█▀ █     █     █     █  model   org/chat-14b"),
        {"model": "org/chat-14b"},
        "vllm_logo_model",
    ),
    V(
        "batch_version",
        "0.6.0",
        LAST,
        _b("run_batch.py:400", "vLLM batch processing API version 0.12.0"),
        {"version": "0.12.0"},
        "vllm_version",
    ),
    V(
        "grpc_version",
        "0.14.0",
        "0.14.1",
        _b("grpc_server.py:90", "vLLM gRPC server version 0.14.0"),
        {"version": "0.14.0"},
        "vllm_version",
    ),
    V(
        "args_namespace",
        "0.4.0",
        "0.8.5.post1",
        _o(
            "api_server.py:712",
            "args: Namespace(host=None, port=8000, model='/models/llama-8b', gpu_memory_utilization=0.9, block_size=16)",
        ),
        {},
        "vllm_args",
    ),
    V(
        "args_non_default",
        "0.9.0",
        LAST,
        _b(
            "utils.py:233",
            "non-default args: {'model': 'org/chat-14b', 'max_model_len': 32768, 'gpu_memory_utilization': 0.85}",
        ),
        {},
        "vllm_args",
    ),
    V(
        "engine_init_explicit",
        "0.4.0",
        "0.6.4.post1",
        _o("llm_engine.py:237", f"Initializing an LLM engine (v0.6.3) with config: {_CFG_V0})"),
        {"version": "0.6.3", "generation": "V0", "tensor_parallel_size": 2, "max_seq_len": 8192},
        "vllm_engine_init",
    ),
    V(
        "engine_init_cached",
        "0.6.5",
        "0.7.0",
        _o(
            "llm_engine.py:234",
            f"Initializing an LLM engine (v0.6.6) with config: {_CFG_V0}, use_cached_outputs=True, ",
        ),
        {"version": "0.6.6", "generation": "V0", "kv_cache_dtype": "auto"},
        "vllm_engine_init",
    ),
    V(
        "engine_init_an_v1",
        "0.6.4",
        "0.7.0",
        _o("core.py:49", f"Initializing an LLM engine (v0.6.5) with config: {_CFG_V1}"),
        {"version": "0.6.5", "generation": "V1"},
        "vllm_engine_init",
    ),
    V(
        "engine_init_v0",
        "0.7.1",
        "0.10.2",
        _b(
            "llm_engine.py:240",
            f"Initializing a V0 LLM engine (v0.8.5) with config: {_CFG_V0}, use_cached_outputs=True, ",
        ),
        {"version": "0.8.5", "generation": "V0"},
        "vllm_engine_init",
    ),
    V(
        "engine_init_v1",
        "0.7.1",
        LAST,
        _b("core.py:109", f"Initializing a V1 LLM engine (v0.20.1) with config: {_CFG_V1}"),
        {
            "version": "0.20.1",
            "generation": "V1",
            "max_seq_len": 32768,
            "kv_cache_dtype": "fp8",
            "data_parallel_size": 1,
        },
        "vllm_engine_init",
    ),
    V(
        "engine_process",
        "0.5.5",
        "0.10.2",
        _o("api_server.py:230", "Started engine process with PID 4133"),
        {"pid": 4133},
        "vllm_engine_process",
    ),
    # ---------------------------------------------------------------- weights (§2.2)
    V(
        "weights_took_gb",
        "0.4.0",
        "0.8.2",
        _o("model_runner.py:1099", "Loading model weights took 14.9888 GB"),
        {"weights_gb": 14.9888},
        "vllm_weights",
    ),
    V(
        "model_loading_gb",
        "0.8.0",
        "0.8.2",
        _b("gpu_model_runner.py:1186", "Model loading took 14.9888 GB and 7.250311 seconds"),
        {"weights_gb": 14.9888, "load_s": 7.250311},
        "vllm_weights",
    ),
    V(
        "model_loading_gib",
        "0.8.3",
        "0.13.0",
        _b("gpu_model_runner.py:2392", "Model loading took 14.9888 GiB and 7.250311 seconds"),
        {"weights_gb": 14.9888},
        "vllm_weights",
    ),
    V(
        "model_loading_gib_memory",
        "0.14.0",
        LAST,
        _b("gpu_model_runner.py:4879", "Model loading took 27.51 GiB memory and 12.006713 seconds"),
        {"weights_gb": 27.51, "load_s": 12.006713},
        "vllm_weights",
    ),
    V(
        "loading_weights_took",
        "0.8.0",
        LAST,
        _b("default_loader.py:268", "Loading weights took 6.31 seconds"),
        {"load_s": 6.31},
        "vllm_load_time",
    ),
    V(
        "starting_to_load",
        "0.5.3",
        LAST,
        _b("gpu_model_runner.py:2392", "Starting to load model org/chat-14b..."),
        {"model": "org/chat-14b"},
        "vllm_load_start",
        False,
    ),
    # ---------------------------------------------------------------- memory profiling (§2.3)
    V(
        "profile_results_gib_typo",
        "0.6.4",
        "0.6.4",
        _o(
            "worker.py:195",
            "Memory profiling results: total_gpu_memory=79.19GiB initial_memory_usage=15.62GiB peak_torch_memory=16.80GiB memory_usage_post_profile=16.10Gib non_torch_memory=0.61GiB kv_cache_size=54.46GiB gpu_memory_utilization=0.90",
        ),
        {"total_gb": 79.19, "kv_gb": 54.46, "utilization": 0.9},
        "vllm_profile",
    ),
    V(
        "profile_results",
        "0.6.4.post1",
        "0.6.4.post1",
        _o(
            "worker.py:195",
            "Memory profiling results: total_gpu_memory=79.19GiB initial_memory_usage=15.62GiB peak_torch_memory=16.80GiB memory_usage_post_profile=16.10GiB non_torch_memory=0.61GiB kv_cache_size=54.46GiB gpu_memory_utilization=0.90",
        ),
        {"non_torch_gb": 0.61},
        "vllm_profile",
    ),
    V(
        "profile_takes",
        "0.6.5",
        "0.10.2",
        _o("worker.py:241", "Memory profiling takes 1.83 seconds"),
        {"profile_s": 1.83},
        "vllm_profile",
    ),
    V(
        "profile_budget",
        "0.6.5",
        "0.10.2",
        _o(
            "worker.py:241",
            "the current vLLM instance can use total_gpu_memory (79.19GiB) x gpu_memory_utilization (0.90) = 71.27GiB",
        ),
        {"total_gb": 79.19, "utilization": 0.9, "requested_gb": 71.27},
        "vllm_profile",
    ),
    V(
        "profile_terms",
        "0.6.5",
        "0.10.2",
        _o(
            "worker.py:241",
            "model weights take 7.49GiB; non_torch_memory takes 0.62GiB; PyTorch activation peak memory takes 1.38GiB; the rest of the memory reserved for KV Cache is 61.78GiB.",
        ),
        {"weights_gb": 7.49, "non_torch_gb": 0.62, "activation_gb": 1.38, "kv_gb": 61.78},
        "vllm_profile",
    ),
    V(
        "profile_debug",
        "0.9.1",
        "0.26.0",
        "DEBUG 05-02 09:15:40 [gpu_worker.py:440] Memory profiling takes 4.12 seconds. Total non KV cache memory: 17.9GiB; torch peak memory increase: 2.04GiB; non-torch forward increase memory: 0.4GiB; weights memory: 15.46GiB.",
        {"non_kv_gb": 17.9, "non_torch_gb": 0.4, "weights_gb": 15.46},
        "vllm_profile",
    ),
    V(
        "profile_debug_consumed",
        "0.27.0",
        LAST,
        "DEBUG 08-12 09:15:40 [gpu_worker.py:563] Memory profiling takes 4.12 seconds. Total non KV cache memory: 18.3GiB; torch peak memory increase: 2.04GiB; total consumed (from mem_get_info): 16.26GiB; weights memory: 15.46GiB.",
        {"consumed_gb": 16.26},
        "vllm_profile",
    ),
    V(
        "available_kv_memory_2d",
        "0.9.1",
        "0.13.0",
        _b("gpu_worker.py:298", "Available KV cache memory: 52.41 GiB"),
        {"kv_gb": 52.41},
        "vllm_kv_memory",
    ),
    V(
        "available_kv_memory",
        "0.14.0",
        LAST,
        _b("gpu_worker.py:578", "Available KV cache memory: -1.92 GiB"),
        {"kv_gb": -1.92},
        "vllm_kv_memory",
    ),
    V(
        "kv_memory_specified",
        "0.10.2",
        LAST,
        _b(
            "gpu_worker.py:270",
            "Initial free memory 78.81 GiB, reserved 40.00 GiB memory for KV Cache as specified by kv_cache_memory_bytes config and skipped memory profiling. This does not respect the gpu_memory_utilization config.",
        ),
        {"free_gb": 78.81, "kv_gb": 40.0},
        "vllm_kv_memory",
    ),
    V(
        "budget_report_bytes",
        "0.10.2",
        "0.10.2",
        _b(
            "gpu_worker.py:355",
            _REPORT_HEAD.replace("0.92", "0.9").replace("72.85", "71.27")
            + _USAGE_W
            + " Replace gpu_memory_utilization config with `--kv-cache-memory=56315806924` to fit into requested memory, "
            "or `--kv-cache-memory=64620249702` to fully utilize gpu memory. Current kv cache memory in use is 56473993216 bytes.",
        ),
        {"weights_gb": 15.2, "graph_gb": 0.88, "kv_gb": 52.6, "utilization": 0.9},
        "vllm_budget_report",
    ),
    V(
        "budget_report_gib",
        "0.11.0",
        "0.26.0",
        _b(
            "gpu_worker.py:560",
            _REPORT_HEAD
            + _USAGE_W
            + " Replace gpu_memory_utilization config with `--kv-cache-memory=57904562585` (53.93 GiB) to fit into requested memory, "
            "or `--kv-cache-memory=64620249702` (60.18 GiB) to fully utilize gpu memory. Current kv cache memory in use is 53.73 GiB.",
        ),
        {"total_gb": 79.19, "requested_gb": 72.85, "non_torch_gb": 0.63, "kv_gb": 53.73},
        "vllm_budget_report",
    ),
    V(
        "budget_report_consumed",
        "0.27.0",
        LAST,
        _b(
            "gpu_worker.py:600",
            _REPORT_HEAD
            + _USAGE_C
            + " Replace gpu_memory_utilization config with `--kv-cache-memory=57904562585` (53.93 GiB) to fit into requested memory, "
            "or `--kv-cache-memory=64620249702` (60.18 GiB) to fully utilize gpu memory. Current kv cache memory in use is 54.37 GiB.",
        ),
        {"consumed_gb": 15.9, "activation_gb": 1.7, "kv_gb": 54.37},
        "vllm_budget_report",
    ),
    V(
        "mm_reserve",
        "0.25.0",
        LAST,
        _b(
            "gpu_worker.py:538",
            "Reserving 2.5 GiB of GPU memory for frontend multimodal decoding (1.5 GiB raw-frame semaphore budget, 1.0 GiB decoder+CUDA-context across 1 API server(s) @ 1.0 GiB/server); KV cache memory reduced to 48.1 GiB.",
        ),
        {"reserved_gb": 2.5, "kv_gb": 48.1},
        "vllm_mm_reserve",
    ),
    V(
        "startup_plan",
        "0.26.0",
        LAST,
        _b(
            "startup_plan.py:88",
            "Applying persisted startup plan (fingerprint 9f2c41aa): kv_cache_memory_bytes=53687091200 (50.00 GiB), recorded free-memory baseline 78.50 GiB, current 78.52 GiB. Memory profiling will be skipped.",
        ),
        {"kv_gb": 50.0, "kv_bytes": 53687091200},
        "vllm_startup_plan",
    ),
    V(
        "startup_plan_fallback",
        "0.26.0",
        LAST,
        _b(
            "startup_plan.py:97",
            "Startup plan not applied: current free memory (70.10 GiB) is below the recorded baseline (78.50 GiB); falling back to full memory profiling.",
        ),
        {},
        "vllm_startup_plan",
    ),
    V(
        "external_weights",
        "0.32.0",
        LAST,
        _b(
            "utils.py:120",
            "Weights are held outside this process: of the 72.85 GiB utilization budget, 15.2 GiB is externally held and 57.65 GiB remains for the engine's own allocations.",
        ),
        {"external_gb": 15.2},
        "vllm_external_weights",
    ),
    V(
        "model_loading_gib_short",
        "0.14.0",
        "0.27.1",
        _b("model_runner.py:187", "Model loading took 14.99 GiB and 7.250311 seconds"),
        {"weights_gb": 14.99},
        "vllm_weights",
    ),
    V(
        "model_loading_gib_memory_4d",
        "0.11.1",
        "0.13.0",
        _b("gpu_model_runner.py:3659", "Model loading took 27.5112 GiB memory and 12.006713 seconds"),
        {"weights_gb": 27.5112},
        "vllm_weights",
    ),
    V(
        "available_kv_memory_2d_padded",
        "0.9.1",
        "0.13.0",
        _b("gpu_worker.py:375", "Available KV cache memory: 52.40 GiB"),
        {"kv_gb": 52.4},
        "vllm_kv_memory",
    ),
    V(
        "available_kv_memory_rounded",
        "0.14.0",
        LAST,
        _b("gpu_worker.py:440", "Available KV cache memory: 61.3 GiB"),
        {"kv_gb": 61.3},
        "vllm_kv_memory",
    ),
    # ---------------------------------------------------------------- blocks, tokens, concurrency (§2.4)
    V(
        "blocks_gpu_cpu",
        "0.4.0",
        "0.6.6.post1",
        _o("distributed_gpu_executor.py:57", "# GPU blocks: 31562, # CPU blocks: 4096"),
        {"gpu_blocks": 31562, "cpu_blocks": 4096},
        "vllm_blocks",
    ),
    V(
        "blocks_CUDA",
        "0.7.0",
        "0.7.2",
        _o("executor_base.py:110", "# CUDA blocks: 31562, # CPU blocks: 4096"),
        {"gpu_blocks": 31562},
        "vllm_blocks",
    ),
    V(
        "blocks_cuda",
        "0.7.3",
        "0.10.2",
        _b("executor_base.py:113", "# cuda blocks: 31562, # CPU blocks: 4096"),
        {"gpu_blocks": 31562},
        "vllm_blocks",
    ),
    V(
        "blocks_tpu",
        "0.5.0.post1",
        "0.6.6.post1",
        _o("tpu_executor.py:81", "# TPU blocks: 9000, # CPU blocks: 1000"),
        {"gpu_blocks": 9000, "device": "TPU"},
        "vllm_blocks",
    ),
    V(
        "blocks_v1_only",
        "0.6.4",
        "0.7.3",
        _o("kv_cache_utils.py:522", "# GPU blocks: 26040"),
        {"gpu_blocks": 26040},
        "vllm_blocks",
    ),
    V(
        "blocks_override",
        "0.4.2",
        LAST,
        _o("worker.py:200", "Overriding num_gpu_blocks=31562 with num_gpu_blocks_override=2048"),
        {"profiled": 31562, "override": 2048},
        "vllm_blocks_override",
    ),
    V(
        "blocks_cache_config_info",
        "0.9.0",
        "0.9.0.1",
        _b("loggers.py:134", "vllm cache_config_info with initialization after num_gpu_blocks is: 70688"),
        {"gpu_blocks": 70688, "device": "GPU"},
        "vllm_blocks",
        False,  # dated from line numbers of public logs only (no release source read): does not date
    ),
    V(
        "blocks_cache_config_info_engine",
        "0.9.1",
        LAST,
        _b(
            "loggers.py:147",
            "Engine 000: vllm cache_config_info with initialization after num_gpu_blocks is: 16024",
            "(APIServer pid=411) ",
        ),
        {"gpu_blocks": 16024, "engine_index": 0},
        "vllm_blocks",
        False,  # the upper bound is not pinned (the loggers.py rework of 2026): does not date
    ),
    V(
        "concurrency_plain",
        "0.6.3",
        "0.11.0",
        _o("gpu_executor.py:80", "Maximum concurrency for 8192 tokens per request: 61.64x"),
        {"max_model_len": 8192, "max_concurrency": 61.64},
        "vllm_concurrency",
    ),
    V(
        "concurrency_short",
        "0.6.3",
        "0.27.1",
        _o("gpu_executor.py:80", "Maximum concurrency for 512 tokens per request: 986.25x"),
        {"max_model_len": 512},
        "vllm_concurrency",
    ),
    V(
        "concurrency_commas",
        "0.8.0",
        "0.27.1",
        _b("kv_cache_utils.py:868", "Maximum concurrency for 32,768 tokens per request: 6.48x"),
        {"max_model_len": 32768, "max_concurrency": 6.48},
        "vllm_concurrency",
    ),
    V(
        "kv_tokens_separate",
        "0.8.0",
        "0.27.1",
        _b("kv_cache_utils.py:864", "GPU KV cache size: 212,480 tokens"),
        {"kv_tokens": 212480, "pools": "GPU"},
        "vllm_kv_tokens",
    ),
    V(
        "kv_tokens_combined",
        "0.28.0",
        LAST,
        _b(
            "kv_cache_utils.py:1869",
            "GPU KV cache size: 419,328 tokens, Maximum concurrency for 32,768 tokens per request: 12.80x",
        ),
        {"kv_tokens": 419328, "max_model_len": 32768, "max_concurrency": 12.8},
        "vllm_kv_tokens",
    ),
    V(
        "kv_tokens_combined_device",
        "0.30.0",
        LAST,
        _b(
            "kv_cache_utils.py:2395",
            "XPU KV cache size: 100,000 tokens, Maximum concurrency for 4,096 tokens per request: 24.41x",
        ),
        {"pools": "XPU"},
        "vllm_kv_tokens",
    ),
    V(
        "kv_tokens_combined_host",
        "0.32.0",
        LAST,
        _b(
            "kv_cache_utils.py:2327",
            "GPU + host KV cache size: 900,000 tokens, Maximum concurrency for 32,768 tokens per request: 27.46x",
        ),
        {"pools": "GPU + host", "kv_tokens": 900000},
        "vllm_kv_tokens",
    ),
    V(
        "kv_context_parallel",
        "0.10.2",
        "0.20.0",
        _b("kv_cache_utils.py:1300", "Multiplying the GPU KV cache size by the dcp_world_size 2."),
        {},
        "vllm_kv_note",
    ),
    V(
        "kv_padding",
        "0.9.1",
        LAST,
        "WARNING 05-02 09:15:40 [kv_cache_utils.py:900] Add 2 padding layers, may waste at most 4.17% KV cache memory",
        {"padding_layers": 2, "waste_pct": 4.17},
        "vllm_kv_note",
    ),
    V(
        "autofit_fits",
        "0.32.0",
        LAST,
        _b(
            "kv_cache_utils.py:1200",
            "Auto-fit max_model_len: full model context length 131072 fits in available KV cache memory (40.2 GiB)",
        ),
        {"max_model_len": 131072},
        "vllm_autofit",
    ),
    V(
        "autofit_reduced",
        "0.32.0",
        LAST,
        _b(
            "kv_cache_utils.py:1210",
            "Auto-fit max_model_len: reduced from 131072 to 65536 to fit in available KV cache memory (9.6 GiB)",
        ),
        {"from_len": 131072, "max_model_len": 65536},
        "vllm_autofit",
    ),
    # ---------------------------------------------------------------- CUDA graphs (§2.5)
    V(
        "graph_secs",
        "0.4.0",
        "0.6.3.post1",
        _o("model_runner.py:1530", "Graph capturing finished in 14 secs."),
        {"graph_s": 14.0},
        "vllm_graph",
    ),
    V(
        "graph_secs_gib",
        "0.6.4",
        LAST,
        _b("gpu_model_runner.py:3118", "Graph capturing finished in 9 secs, took 0.71 GiB"),
        {"graph_s": 9.0, "graph_gb": 0.71},
        "vllm_graph",
    ),
    V(
        "graph_estimate",
        "0.18.0",
        LAST,
        _b("gpu_model_runner.py:5900", "Estimated CUDA graph memory: 0.94 GiB total"),
        {"graph_estimate_gb": 0.94},
        "vllm_graph_estimate",
    ),
    V(
        "graph_pool",
        "0.18.0",
        LAST,
        _b(
            "gpu_worker.py:600",
            "CUDA graph pool memory: 0.88 GiB (actual), 0.94 GiB (estimated), difference: -0.06 GiB (-6.8%).",
        ),
        {"actual_gb": 0.88, "estimated_gb": 0.94},
        "vllm_graph_pool",
    ),
    V(
        "graph_advice_optin",
        "0.18.0",
        "0.19.1",
        _b(
            "gpu_worker.py:456",
            "CUDA graph memory profiling is enabled (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1). This will become the default in v0.19. The current --gpu-memory-utilization=0.9000 is equivalent to --gpu-memory-utilization=0.8881 without CUDA graph memory profiling. To maintain the same effective KV cache size as before, increase --gpu-memory-utilization to 0.9119.",
        ),
        {"utilization": 0.9, "equivalent_utilization": 0.8881, "estimate_applied": True},
        "vllm_graph_advice",
    ),
    V(
        "graph_advice_off",
        "0.18.0",
        "0.19.1",
        _b(
            "gpu_worker.py:456",
            "In v0.19, CUDA graph memory profiling will be enabled by default (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1), which more accurately accounts for CUDA graph memory during KV cache allocation. To try it now, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 and increase --gpu-memory-utilization from 0.9000 to 0.9119 to maintain the same effective KV cache size.",
        ),
        {"utilization": 0.9, "estimate_applied": False},
        "vllm_graph_advice",
    ),
    V(
        "graph_advice_default",
        "0.20.0",
        LAST,
        _b(
            "gpu_worker.py:440",
            "CUDA graph memory profiling is enabled (default since v0.21.0). The current --gpu-memory-utilization=0.9200 is equivalent to --gpu-memory-utilization=0.9081 without CUDA graph memory profiling. To maintain the same effective KV cache size as before, increase --gpu-memory-utilization to 0.9319. To disable, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0.",
        ),
        {"utilization": 0.92, "equivalent_utilization": 0.9081, "suggested_utilization": 0.9319},
        "vllm_graph_advice",
    ),
    V(
        "graph_advice_disabled",
        "0.20.0",
        LAST,
        "WARNING 05-02 09:15:40 [gpu_worker.py:440] CUDA graph memory profiling is disabled (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0). Without it, CUDA graph memory is not accounted for during KV cache allocation, which may require lowering --gpu-memory-utilization to avoid OOM. Consider re-enabling it (the default as of v0.21.0) and increasing --gpu-memory-utilization from 0.9200 to 0.9319.",
        {"utilization": 0.92, "estimate_applied": False},
        "vllm_graph_advice",
    ),
    V(
        "graph_profiling",
        "0.18.0",
        LAST,
        _b(
            "gpu_model_runner.py:5850", "Profiling CUDA graph memory: PIECEWISE=35 (largest=512), FULL=19 (largest=256)"
        ),
        {"modes": {"PIECEWISE": {"graphs": 35, "largest": 512}, "FULL": {"graphs": 19, "largest": 256}}},
        "vllm_graph_note",
    ),
    V(
        "patch_allocator_cleared",
        "0.28.0",
        LAST,
        _b(
            "gpu_worker.py:781",
            "Cleared 0.15 GiB of cached CUDA allocator memory before KV cache allocation.",
            "(Worker_TP0 pid=257) ",
        ),
        {"cleared_gb": 0.15, "tp_rank": 0},
        "vllm_patch_note",
        False,  # not upstream: a patched build's line (spark-vllm-docker's pre-KV allocator cleanup)
    ),
    V(
        "patch_freed_before_sizing",
        "0.28.0",
        LAST,
        _b(
            "gpu_worker.py:402",
            "Freed 0.31 GiB before KV cache sizing; non-torch profile increase is 0.42 GiB.",
            "(Worker_TP0 pid=257) ",
        ),
        {"freed_gb": 0.31, "non_torch_increase_gb": 0.42},
        "vllm_patch_note",
        False,  # not upstream: the same patch as patch_allocator_cleared
    ),
    V(
        "v2_model_runner",
        "0.12.0",
        LAST,
        _b("gpu_worker.py:441", "Using V2 Model Runner", "(EngineCore pid=520) "),
        {"runner": "V2"},
        "vllm_runner",
        False,  # the first release that prints it is not pinned (MRv2 era, the default from 0.29.0)
    ),
    V(
        "graph_notice_model",
        "0.4.0",
        "0.6.3.post1",
        _o(
            "model_runner.py:1300",
            "Capturing the model for CUDA graphs. This may lead to unexpected consequences if the model is not static.",
        ),
        {},
        "vllm_graph_note",
    ),
    V(
        "graph_notice_cudagraphs_hint",
        "0.6.6",
        "0.10.2",
        _o(
            "model_runner.py:1400",
            "Capturing cudagraphs for decoding. This may lead to unexpected consequences if the model is not static. If out-of-memory error occurs during cudagraph capture, consider decreasing `gpu_memory_utilization` or switching to eager mode.",
        ),
        {},
        "vllm_graph_note",
    ),
    # ---------------------------------------------------------------- end of engine init (§2.6)
    V(
        "init_engine_seconds",
        "0.6.5",
        "0.19.1",
        _b("core.py:210", "init engine (profile, create kv cache, warmup model) took 41.27 seconds"),
        {"init_s": 41.27},
        "vllm_init_engine",
    ),
    V(
        "init_engine_s",
        "0.20.0",
        LAST,
        _b("core.py:306", "init engine (profile, create kv cache, warmup model) took 38.02 s"),
        {"init_s": 38.02},
        "vllm_init_engine",
    ),
    V(
        "init_engine_s_compile",
        "0.20.0",
        LAST,
        _b("core.py:299", "init engine (profile, create kv cache, warmup model) took 52.10 s (compilation: 21.44 s)"),
        {"init_s": 52.1, "compile_s": 21.44},
        "vllm_init_engine",
    ),
    V(
        "init_engine_s_compile_split",
        "0.20.0",
        LAST,
        _b(
            "core.py:289",
            "init engine (profile, create kv cache, warmup model) took 60.50 s (compilation: 30.00 s — language_model: 24.00 s, encoder: 6.00 s)",
        ),
        {"encoder_compile_s": 6.0},
        "vllm_init_engine",
    ),
    V(
        "torch_compile_takes",
        "0.6.5",
        "0.17.1",
        _b("monitor.py:34", "torch.compile takes 18.22 s in total"),
        {"compile_s": 18.22},
        "vllm_torch_compile",
    ),
    V(
        "torch_compile_took",
        "0.18.0",
        LAST,
        _b("monitor.py:40", "torch.compile took 18.22 s in total"),
        {"compile_s": 18.22},
        "vllm_torch_compile",
    ),
    # ---------------------------------------------------------------- configuration lines (§2.1.5)
    V(
        "using_max_model_len",
        "0.9.2",
        LAST,
        _b("config.py:1900", "Using max model len 32768"),
        {"max_model_len": 32768},
        "vllm_max_model_len",
    ),
    V(
        "chunked_prefill",
        "0.5.3.post1",
        LAST,
        _b("scheduler.py:200", "Chunked prefill is enabled with max_num_batched_tokens=8192."),
        {"max_num_batched_tokens": 8192},
        "vllm_chunked_prefill",
    ),
    V(
        "rank_assign",
        "0.8.0",
        LAST,
        _b(
            "parallel_state.py:1165",
            "rank 3 in world size 4 is assigned as DP rank 0, PP rank 0, TP rank 3, EP rank 3",
            "(Worker_TP3 pid=815) ",
        ),
        {"rank": 3, "world_size": 4, "tp_rank": 3},
        "vllm_rank_assign",
        False,
    ),
    # ---------------------------------------------------------------- the server is up (§2.8)
    V(
        "server_start_api_on",
        "0.7.3",
        "0.9.0.1",
        _b("api_server.py:1043", "Starting vLLM API server on http://0.0.0.0:8000"),
        {"url": "http://0.0.0.0:8000"},
        "vllm_server_start",
    ),
    V(
        "server_start_indexed",
        "0.9.1",
        "0.17.1",
        _b("api_server.py:1896", "Starting vLLM API server 0 on http://0.0.0.0:8000", "(APIServer pid=7) "),
        {"server_index": 0},
        "vllm_server_start",
    ),
    V(
        "server_start",
        "0.18.0",
        LAST,
        _b("api_server.py:1100", "Starting vLLM server on http://0.0.0.0:8000"),
        {"url": "http://0.0.0.0:8000"},
        "vllm_server_start",
    ),
    V(
        "routes_head",
        "0.5.2",
        LAST,
        _o("launcher.py:19", "Available routes are:"),
        {},
        "vllm_routes",
    ),
    V(
        "route_methods_set",
        "0.5.2",
        "0.5.3.post1",
        _o("api_server.py:251", "Route: /v1/models, Methods: {'GET'}"),
        {"path": "/v1/models", "methods": "{'GET'}"},
        "vllm_routes",
    ),
    V(
        "route_methods",
        "0.5.4",
        LAST,
        _b("launcher.py:37", "Route: /v1/chat/completions, Methods: POST"),
        {"path": "/v1/chat/completions", "methods": "POST"},
        "vllm_routes",
    ),
    V(
        "route_endpoint",
        "0.16.0",
        LAST,
        _b("launcher.py:44", "Route: /docs/oauth2-redirect, Endpoint: swagger_ui_redirect", "(APIServer pid=88) "),
        {"path": "/docs/oauth2-redirect", "endpoint": "swagger_ui_redirect"},
        "vllm_routes",
    ),
    # ---------------------------------------------------------------- startup failures (§2.7)
    V(
        "no_kv_memory",
        "0.4.0",
        "0.12.0",
        "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.",
        {"exception": "ValueError"},
        "vllm_failure",
    ),
    V(
        "no_kv_memory_docs",
        "0.13.0",
        "0.21.0",
        "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."
        + _DOCS,
        {},
        "vllm_failure",
    ),
    V(
        "no_kv_memory_cpu_note",
        "0.22.0",
        LAST,
        "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine (this flag also controls CPU memory reservation on the CPU backend, despite its name)."
        + _DOCS,
        {},
        "vllm_failure",
    ),
    V(
        "max_len_v0",
        "0.4.0",
        "0.10.2",
        "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (21440). "
        + _MAXLEN_TAIL,
        {"max_model_len": 32768, "kv_tokens": 21440},
        "vllm_failure",
    ),
    V(
        "max_len_v1_gb",
        "0.7.0",
        "0.8.2",
        "ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GB KV cache is needed, which is larger than the available KV cache memory (9.41 GB). "
        + _MAXLEN_TAIL,
        {"needed_gb": 16.0, "available_gb": 9.41},
        "vllm_failure",
    ),
    V(
        "max_len_v1_gib",
        "0.8.3",
        "0.21.0",
        "ValueError: To serve at least one request with the models's max seq len (131072), (16.0 GiB KV cache is needed, which is larger than the available KV cache memory (9.41 GiB). Based on the available memory, the estimated maximum model length is 77088. "
        + _MAXLEN_TAIL
        + _DOCS,
        {"needed_gb": 16.0, "available_gb": 9.41, "estimated_max_model_len": 77088},
        "vllm_failure",
    ),
    V(
        "max_len_v1_model",
        "0.22.0",
        LAST,
        "ValueError: To serve at least one request with the model's max seq len (131072), (16.0 GiB KV cache is needed, which is larger than the available KV cache memory (9.41 GiB). Try increasing `gpu_memory_utilization` (which also controls CPU memory on the CPU backend) or decreasing `max_model_len` when initializing the engine."
        + _DOCS,
        {"max_model_len": 131072},
        "vllm_failure",
    ),
    V(
        "free_memory_at_start",
        "0.9.1",
        "0.13.0",
        "ValueError: Free memory on device (30.12/79.19 GiB) on startup is less than desired GPU memory utilization (0.9, 71.27 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
        {"free_gb": 30.12, "total_gb": 79.19, "utilization": 0.9, "requested_gb": 71.27},
        "vllm_failure",
    ),
    V(
        "free_memory_at_start_device",
        "0.14.0",
        LAST,
        "ValueError: Free memory on device cuda:0 (30.12/79.19 GiB) on startup is less than desired GPU memory utilization (0.92, 72.86 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
        {"free_gb": 30.12, "requested_gb": 72.86},
        "vllm_failure",
    ),
    V(
        "free_memory_at_start_external",
        "0.32.0",
        LAST,
        "ValueError: Free memory on device cuda:0 (30.12/79.19 GiB) on startup is less than the engine's budget after excluding external process's weights (0.92, 57.66 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
        {"free_gb": 30.12},
        "vllm_failure",
    ),
    V(
        "weights_oom",
        "0.13.0",
        LAST,
        _b(
            "gpu_model_runner.py:4000",
            "Failed to load model - not enough GPU memory. Try lowering --gpu-memory-utilization to free memory for weights, increasing --tensor-parallel-size, or using --quantization. (original error: CUDA out of memory)",
        ).replace("INFO", "ERROR"),
        {},
        "vllm_failure",
    ),
    V(
        "profile_assertion_bytes",
        "0.5.4",
        "0.9.0.1",
        "AssertionError: Error in memory profiling. Initial free memory 84010729472, current free memory 84557037568. This happens when the GPU memory was not properly cleaned up before initializing the vLLM instance.",
        {"initial_free": 84010729472.0},
        "vllm_failure",
    ),
    V(
        "profile_assertion_gib",
        "0.9.1",
        LAST,
        "AssertionError: Error in memory profiling. Initial free memory 70.5 GiB, current free memory 72.1 GiB. This happens when other processes sharing the same container release GPU memory while vLLM is profiling during initialization.",
        {"initial_free": 70.5},
        "vllm_failure",
    ),
    V(
        "engine_core_init_failed",
        "0.8.4",
        "0.8.5.post1",
        _b("core_client.py:500", "Engine core initialization failed. See root cause above.").replace("INFO", "ERROR"),
        {},
        "vllm_engine_failed",
    ),
    V(
        "engine_core_init_failed_procs",
        "0.9.0",
        LAST,
        "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore_DP0': 1}",
        {},
        "vllm_engine_failed",
    ),
    V(
        "engine_core_failed_to_start",
        "0.8.5",
        LAST,
        _b("core.py:700", "EngineCore failed to start.", "(EngineCore_DP0 pid=301) ").replace("INFO", "ERROR"),
        {},
        "vllm_engine_failed",
    ),
    V(
        "mm_reservation_failed",
        "0.25.0",
        LAST,
        "ValueError: frontend multimodal GPU decoding reserves 6.0 GiB (4.0 GiB raw-frame budget, 2.0 GiB decoder cache budget), but only 3.2 GiB is available for the KV cache.",
        {"reserved_gb": 6.0},
        "vllm_failure",
    ),
    V(
        "worker_exception",
        "0.4.2",
        "0.10.2",
        _o(
            "multiproc_worker_utils.py:233",
            "Exception in worker VllmWorkerProcess while processing method initialize_cache.",
            "(VllmWorkerProcess pid=3311) ",
        ).replace("INFO", "ERROR"),
        {"process": "VllmWorkerProcess", "method": "initialize_cache"},
        "vllm_worker_exception",
    ),
    V(
        "worker_exception_colon",
        "0.4.2",
        "0.10.2",
        _o(
            "multiproc_worker_utils.py:240",
            "Exception in worker VllmWorkerProcess while processing method load_model: CUDA out of memory. "
            "Tried to allocate 896.00 MiB, Traceback (most recent call last):",
            "(VllmWorkerProcess pid=3312) ",
        ).replace("INFO", "ERROR"),
        {"method": "load_model", "detail": "CUDA out of memory. Tried to allocate 896.00 MiB"},
        "vllm_worker_exception",
        False,  # the release that printed this form is not pinned (a fork's copy has it): does not date
    ),
    V(
        "workerproc_failed_to_start",
        "0.8.0",
        LAST,
        _b("multiproc_executor.py:597", "WorkerProc failed to start.", "(Worker_TP1_EP1 pid=7311) ").replace(
            "INFO", "ERROR"
        ),
        {"tp_rank": 1},
        "vllm_worker_exception",
        False,  # V1's multiprocessing executor; the first release that prints it is not pinned here
    ),
    V("traceback", "0.4.0", LAST, "[rank0]: Traceback (most recent call last):", {}, "exception_start", False),
    V(
        "debug_initial_free",
        "0.9.1",
        "0.10.0",
        "DEBUG 06-12 09:00:05 [gpu_worker.py:150] Initial free memory: 78.52 GiB, free memory: 62.10 GiB, requested GPU memory: 71.27 GiB",
        {"free_gb": 78.52, "requested_gb": 71.27},
        "vllm_profile",
    ),
    V(
        "debug_requested",
        "0.10.1",
        "0.13.0",
        "DEBUG 08-20 09:00:05 [gpu_worker.py:250] Initial free memory: 78.52 GiB; Requested memory: 0.90 (util), 71.27 GiB",
        {"utilization": 0.9, "requested_gb": 71.27},
        "vllm_profile",
    ),
    V(
        "debug_requested_util6",
        "0.14.0",
        LAST,
        "DEBUG 01-20 09:00:05 [utils.py:90] Initial free memory: 78.52 GiB; Requested memory: 0.920000 (util), 72.86 GiB",
        {"utilization": 0.92, "requested_gb": 72.86},
        "vllm_profile",
    ),
    V(
        "debug_free_after_profiling",
        "0.10.1",
        LAST,
        "DEBUG 08-20 09:00:09 [gpu_worker.py:280] Free memory after profiling: 60.3 GiB (total), 53.12 GiB (within requested)",
        {"free_after_gb": 60.3, "free_within_gb": 53.12},
        "vllm_profile",
    ),
    V(
        "dynamo_time",
        "0.6.5",
        "0.31.0",
        _b("backends.py:426", "Dynamo bytecode transform time: 9.88 s"),
        {"dynamo_s": 9.88},
        "vllm_compile_time",
    ),
    V(
        "compile_dynamic_shape",
        "0.10.0",
        "0.12.0",
        _b("backends.py:215", "Compiling a graph for dynamic shape takes 31.04 s"),
        {"graph_compile_s": 31.04},
        "vllm_compile_time",
    ),
    V(
        "compile_range",
        "0.13.0",
        "0.31.0",
        _b("backends.py:215", "Compiling a graph for compile range (1, 8192) takes 28.5 s"),
        {"graph_compile_s": 28.5},
        "vllm_compile_time",
    ),
    V(
        "warmup_run",
        "0.18.0",
        "0.31.0",
        _b("gpu_worker.py:410", "Initial profiling/warmup run took 3.12 s"),
        {"warmup_s": 3.12},
        "vllm_compile_time",
    ),
    V(
        "kv_hybrid_disabled",
        "0.9.1",
        LAST,
        "WARNING 06-12 09:00:05 [config.py:4800] Hybrid KV cache manager is disabled for this hybrid model, This means we do not enable any optimizations for saving KV cache memory.",
        {},
        "vllm_kv_note",
    ),
    V(
        "graph_notice_extra_memory",
        "0.4.0",
        "0.6.3.post1",
        _o(
            "model_runner.py:1304",
            "CUDA graphs can take additional 1~3 GiB memory per GPU. If you are running out of memory, consider decreasing `gpu_memory_utilization` or enforcing eager mode.",
        ),
        {},
        "vllm_graph_note",
    ),
    V(
        "graph_notice_cudagraphs",
        "0.6.4",
        "0.6.5",
        _o(
            "model_runner.py:1400",
            "Capturing cudagraphs for decoding. This may lead to unexpected consequences if the model is not static.",
        ),
        {},
        "vllm_graph_note",
    ),
    V(
        "blocks_cpu_backend",
        "0.4.2",
        "0.6.6.post1",
        _o("cpu_executor.py:200", "# CPU blocks: 8192"),
        {"gpu_blocks": 8192, "device": "CPU"},
        "vllm_blocks",
    ),
    V(
        "external_weights_too_large",
        "0.32.0",
        LAST,
        "ValueError: Externally held weights on device cuda:0 (80.10/79.19 GiB) exceed the desired GPU memory utilization (0.92, 72.86 GiB). Increase GPU memory utilization or reduce GPU memory used by other processes.",
        {},
        "vllm_failure",
    ),
    V(
        "preempted",
        "0.4.3",
        "0.10.2",
        "WARNING 09-01 10:00:00 scheduler.py:1089] Sequence group chat-9a1 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can affect the end-to-end performance. Increase gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption=1",
        {},
        "vllm_preempted",
        False,
    ),
    # ---------------------------------------------------------------- runtime (§2.9), uvicorn: do not date
    V(
        "stats_engine",
        "0.8.3",
        LAST,
        _b(
            "loggers.py:123",
            "Engine 000: Avg prompt throughput: 812.4 tokens/s, Avg generation throughput: 402.0 tokens/s, Running: 12 reqs, Waiting: 0 reqs, GPU KV cache usage: 31.5%, Prefix cache hit rate: 12.0%",
        ),
        {"running": 12, "kv_usage_pct": 31.5},
        "vllm_stats",
        False,
    ),
    V(
        "stats_v0",
        "0.4.3",
        "0.6.4.post1",
        _o(
            "metrics.py:351",
            "Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 88.1 tokens/s, Running: 4 reqs, Swapped: 0 reqs, Pending: 1 reqs, GPU KV cache usage: 2.3%, CPU KV cache usage: 0.0%.",
        ),
        {"waiting": 1, "kv_usage_pct": 2.3},
        "vllm_stats",
        False,
    ),
    V(
        "uvicorn_startup_complete_tagged",
        "0.10.1",
        "0.30.0",
        "(APIServer pid=7) INFO:     Application startup complete.",
        {},
        "uvicorn",
        False,
    ),
]


def signature(kind: str, form: str | None, fields: dict[str, Any]) -> tuple:
    """What identifies a wording: kind, form and which fields are present."""
    return (kind, form, frozenset(k for k in fields if k not in ("exception", "detail")))


@lru_cache(maxsize=1)
def _index() -> dict[tuple, list[Variant]]:
    from logparse.grammar.vllm_line import parse_line

    out: dict[tuple, list[Variant]] = {}
    for v in VARIANTS:
        if not v.dates or v.name.startswith("prefix_"):
            continue
        _, _, (kind, fields, form) = parse_line(v.sample)
        out.setdefault(signature(kind, form, fields), []).append(v)
    return out


def match(kind: str, form: str | None, fields: dict[str, Any]) -> list[Variant]:
    return _index().get(signature(kind, form, fields), [])


def _union(vs: Iterable[Variant]) -> vv.Range:
    vs = list(vs)
    lo = min(vs, key=lambda v: vv.index(v.since)).since
    hi = max(vs, key=lambda v: vv.index(v.until)).until
    return (lo, hi)


def evidence_for_events(events) -> list[tuple[str, vv.Range]]:
    """Release ranges implied by the wording of a launch's vLLM lines (one item per wording) and by
    their line prefix and process tags; the line numbers are apart (:func:`line_number_evidence`)."""
    out: list[tuple[str, vv.Range]] = []
    seen: set = set()
    for ev in events:
        if not ev.kind.startswith("vllm_"):
            continue
        sig = signature(ev.kind, ev.form, ev.fields)
        if sig in seen:
            continue
        seen.add(sig)
        vs = match(ev.kind, ev.form, ev.fields)
        if vs:
            ev.variant = vs[0].name
            out.append((f"'{_short(ev.text)}' ({'/'.join(v.name for v in vs)})", _union(vs)))
    out.extend(prefix_evidence(events))
    return out


def _short(text: str, n: int = 48) -> str:
    _, _, _, end = split_head(text)
    body = text[end:]
    return body if len(body) <= n else body[:n] + "…"


#: Process-tag names and the releases that print them (catalogue §1.3.3, §7).
_TAG_RANGES: tuple[tuple[str, str, vv.Range], ...] = (
    ("VllmWorkerProcess", "(VllmWorkerProcess pid=N)", ("0.4.2", "0.10.2")),
    ("VllmWorker rank=", "(VllmWorker rank=R pid=N)", ("0.6.5", "0.10.0")),
    ("VllmWorker TP", "(VllmWorker TPn pid=N)", ("0.10.1", "0.10.1.1")),
    ("Worker_", "(Worker_TPn pid=N)", ("0.10.2", LAST)),
    ("EngineCore_DP", "(EngineCore_DPn pid=N)", ("0.10.2", LAST)),
    ("APIServer", "(APIServer pid=N)", ("0.10.1", LAST)),
    ("MainProcess", "(MainProcess pid=N)", ("0.31.0", LAST)),
)


def prefix_evidence(events) -> list[tuple[str, vv.Range]]:
    """The formatter era of the lines (bare ``file.py:N]`` vs ``[file.py:N]``) and the process tags."""
    out: list[tuple[str, vv.Range]] = []
    bare = bracketed = False
    names: set[str] = set()
    for ev in events[:400]:
        tags, _, lp, _ = split_head(ev.text)
        names.update(n for n, _, _ in tags if n)
        if lp is not None:
            bare = bare or lp.group("bare_loc") is not None
            bracketed = bracketed or lp.group("loc") is not None
    if bare and not bracketed:
        out.append(("line prefix 'file.py:N]' (no bracket)", ("0.4.0", "0.7.3")))
    elif bracketed and not bare:
        out.append(("line prefix '[file.py:N]'", ("0.8.0", LAST)))
    for start, label, rng in _TAG_RANGES:
        if any(n.startswith(start) for n in names):
            out.append((f"process tag {label}", rng))
    return out


# --------------------------------------------------------------------------- line-number fingerprints
#: (kind, form) -> the family of Appendix A's line numbers (form None: any form of the kind).
_FAMILY_OF: dict[tuple[str, str | None], str] = {
    ("vllm_version", "logo"): "version_banner",
    ("vllm_version", "server"): "version_banner",
    ("vllm_version", "api_server"): "api_server_version",
    ("vllm_args", "non_default"): "non_default_args",
    ("vllm_engine_init", None): "engine_init",
    ("vllm_weights", None): "weights",
    ("vllm_load_time", None): "load_time",
    ("vllm_profile", "time"): "v0_profile",
    ("vllm_profile", "budget"): "v0_profile",
    ("vllm_profile", "terms"): "v0_profile",
    ("vllm_blocks", None): "blocks",
    ("vllm_kv_memory", None): "kv_memory",
    ("vllm_kv_memory", "fixed"): "kv_memory",
    ("vllm_kv_memory", "rounded"): "kv_memory",
    ("vllm_kv_tokens", None): "kv_tokens",
    ("vllm_concurrency", None): "concurrency",
    ("vllm_graph", None): "graph",
    ("vllm_init_engine", None): "init_engine",
}


@lru_cache(maxsize=1)
def line_numbers() -> dict[str, dict[str, list[list[str]]]]:
    """Appendix A of the vLLM catalogue (``data/vllm_line_numbers.json``, built by
    ``tools/build_vllm_line_numbers.py``): family -> ``file.py:N`` -> release ranges."""
    import json
    from importlib import resources

    with resources.files("logparse.data").joinpath("vllm_line_numbers.json").open("r", encoding="utf-8") as fh:
        return json.load(fh)


def _family(ev) -> str | None:
    return _FAMILY_OF.get((ev.kind, ev.form)) or _FAMILY_OF.get((ev.kind, None))


def line_number_evidence(events) -> list[tuple[str, vv.Range]]:
    """The releases whose source has each key line at the ``[file.py:N]`` the log shows (a release prints
    a different N for almost every key line: catalogue Appendix A).  A line number no release has (a dev
    build, a patched image) says nothing."""
    out: list[tuple[str, vv.Range]] = []
    seen: set[tuple[str, str]] = set()
    table = line_numbers()
    for ev in events:
        family = _family(ev) if ev.kind.startswith("vllm_") else None
        if family is None:
            continue
        _, _, lp, _ = split_head(ev.text)
        loc = (lp.group("loc") or lp.group("bare_loc")) if lp is not None else None
        if not loc:
            continue
        loc = loc.rsplit("/", 1)[-1]
        ranges = table.get(family, {}).get(loc)
        if ranges is None or (family, loc) in seen:
            continue
        seen.add((family, loc))
        lo = min((r[0] for r in ranges), key=vv.index)
        hi = max((r[1] for r in ranges), key=vv.index)
        out.append((f"line number {loc} of '{family.replace('_', ' ')}'", (lo, hi)))
    return out
