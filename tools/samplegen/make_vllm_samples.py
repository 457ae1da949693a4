"""Write the vLLM sample logs (run: python tools/samplegen/make_vllm_samples.py).

Every line is written by us in the format of the release named (the vLLM log catalogue,
``../shared/vllm-log-catalogue.md``: prefixes §1, wordings §2, sizing formula §4), with invented
models, paths, pids, times and numbers.  The memory figures come out of vLLM's formula of the era:
KV = u·T − (weights + activation + non-torch [+ graphs]) per rank, blocks = KV // block bytes, the
engine takes the minimum over ranks; tokens and concurrency follow §4.8.  check_vllm_samples.py
re-derives them from the written text.
"""

from __future__ import annotations

import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(os.path.dirname(HERE)), "samples", "vllm")
GiB = 1 << 30
CYAN, RESET = "\x1b[1;36m", "\x1b[0;0m"  # the process tag's colour, always emitted 0.4.2-0.11.2


def gib2(x: float) -> str:
    return f"{x:.2f}"


def fmt_gib(x: float) -> str:
    """vLLM's format_gib (0.14.0+): str(round(x, 2))."""
    return str(round(x, 2))


def cfg(model: str, max_len: int, tp: int, dtype: str = "auto", dp: int | None = None) -> str:
    dp_part = f"data_parallel_size={dp}, " if dp is not None else ""
    return (
        f"model='{model}', speculative_config=None, tokenizer='{model}', skip_tokenizer_init=False, "
        f"tokenizer_mode=auto, revision=None, trust_remote_code=False, dtype=torch.bfloat16, max_seq_len={max_len}, "
        f"download_dir=None, load_format=auto, tensor_parallel_size={tp}, pipeline_parallel_size=1, {dp_part}"
        f"disable_custom_all_reduce=False, quantization=None, enforce_eager=False, kv_cache_dtype={dtype}, "
        f"device_config=cuda, seed=0, served_model_name={model}, enable_prefix_caching=False"
    )


def per_token_bytes(layers: int, kv_heads: int, head_dim: int, tp: int, elem: int) -> int:
    """KV bytes of one token on one rank: K and V of every layer (catalogue §4.3, §4.8)."""
    return layers * 2 * max(1, kv_heads // tp) * head_dim * elem


def blocks_of(kv_gib: float, block_bytes: int) -> int:
    return max(0, int(kv_gib * GiB) // block_bytes)


# --------------------------------------------------------------------------- 1. V0 0.6.6.post1, TP=2
def v0_tp2() -> str:
    """V0 API server, mp workers: rank 0 untagged, rank 1 ``(VllmWorkerProcess pid=N)`` in colour."""
    T, u, L = 79.19, 0.90, 8192
    W, A, N = (7.48, 7.48), (1.38, 1.38), (0.62, 0.58)
    ptb = per_token_bytes(32, 8, 128, 2, 2)
    budget = round(u * T, 2)
    kv = [round(budget - W[r] - A[r] - N[r], 2) for r in range(2)]
    blocks = min(blocks_of(k, 16 * ptb) for k in kv)
    conc = blocks * 16 / L
    tag = f"{CYAN}(VllmWorkerProcess pid=4120){RESET} "
    p = "INFO 01-15 12:30:{:02d} {}] "
    lines = [
        p.format(1, "api_server.py:712") + "vLLM API server version 0.6.6.post1",
        p.format(1, "api_server.py:713")
        + "args: Namespace(host=None, port=8000, uvicorn_log_level='info', model='/models/llama-3.1-8b-instruct', "
        "tokenizer=None, dtype='auto', kv_cache_dtype='auto', max_model_len=None, block_size=16, swap_space=4, "
        "tensor_parallel_size=2, gpu_memory_utilization=0.9, max_num_seqs=256, enforce_eager=False)",
        p.format(2, "api_server.py:199") + "Started engine process with PID 4111",
        p.format(6, "config.py:510")
        + "This model supports multiple tasks: {'generate', 'embed'}. Defaulting to 'generate'.",
        p.format(7, "llm_engine.py:234")
        + f"Initializing an LLM engine (v0.6.6.post1) with config: {cfg('/models/llama-3.1-8b-instruct', L, 2)}, use_cached_outputs=True, ",
        tag + p.format(9, "multiproc_worker_utils.py:222") + "Worker ready; awaiting tasks",
        p.format(10, "model_runner.py:1094") + "Starting to load model /models/llama-3.1-8b-instruct...",
        tag + p.format(10, "model_runner.py:1094") + "Starting to load model /models/llama-3.1-8b-instruct...",
        "Loading safetensors checkpoint shards:   0% Completed | 0/4 [00:00<?, ?it/s]",
        "Loading safetensors checkpoint shards: 100% Completed | 4/4 [00:09<00:00,  2.31s/it]",
        p.format(20, "model_runner.py:1099") + f"Loading model weights took {W[0] + 0.0007:.4f} GB",
        tag + p.format(20, "model_runner.py:1099") + f"Loading model weights took {W[1] + 0.0007:.4f} GB",
    ]
    for r, pre in ((0, ""), (1, tag)):
        lines += [
            pre + p.format(22, "worker.py:241") + f"Memory profiling takes {1.83 + 0.02 * r:.2f} seconds",
            pre
            + p.format(22, "worker.py:241")
            + f"the current vLLM instance can use total_gpu_memory ({gib2(T)}GiB) x gpu_memory_utilization ({u:.2f}) = {gib2(budget)}GiB",
            pre
            + p.format(22, "worker.py:241")
            + f"model weights take {gib2(W[r])}GiB; non_torch_memory takes {gib2(N[r])}GiB; PyTorch activation peak memory takes {gib2(A[r])}GiB; the rest of the memory reserved for KV Cache is {gib2(kv[r])}GiB.",
        ]
    cpu_blocks = 4 * GiB // (16 * ptb)
    lines += [
        p.format(23, "distributed_gpu_executor.py:57") + f"# GPU blocks: {blocks}, # CPU blocks: {cpu_blocks}",
        p.format(23, "distributed_gpu_executor.py:61") + f"Maximum concurrency for {L} tokens per request: {conc:.2f}x",
        p.format(24, "model_runner.py:1415")
        + "Capturing cudagraphs for decoding. This may lead to unexpected consequences if the model is not static. "
        "To run the model in eager mode, set 'enforce_eager=True' or use '--enforce-eager' in the CLI. If out-of-memory "
        "error occurs during cudagraph capture, consider decreasing `gpu_memory_utilization` or switching to eager mode. "
        "You can also reduce the `max_num_seqs` as needed to decrease memory usage.",
        tag + p.format(41, "model_runner.py:1535") + "Graph capturing finished in 17 secs, took 0.31 GiB",
        p.format(41, "model_runner.py:1535") + "Graph capturing finished in 17 secs, took 0.31 GiB",
        p.format(41, "llm_engine.py:431") + "init engine (profile, create kv cache, warmup model) took 21.40 seconds",
        p.format(42, "launcher.py:19") + "Available routes are:",
        p.format(42, "launcher.py:27") + "Route: /v1/chat/completions, Methods: POST",
        "INFO:     Started server process [4100]",
        "INFO:     Waiting for application startup.",
        "INFO:     Application startup complete.",
        "INFO:     Uvicorn running on socket ('0.0.0.0', 8000) (Press CTRL+C to quit)",
        p.format(52, "metrics.py:467")
        + "Avg prompt throughput: 412.6 tokens/s, Avg generation throughput: 95.2 tokens/s, Running: 6 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 1.9%, CPU KV cache usage: 0.0%.",
        'INFO:     10.3.0.7:51234 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
    ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- 2. V1 0.10.1.1, TP=2, per-worker lines
def v1_tp2_per_worker() -> str:
    """0.10.1.1: ``(VllmWorker TPn pid=N)`` workers, ``(EngineCore_0 pid=N)``, ``(APIServer pid=N)``; each
    worker's own KV lines before the minimum (catalogue §1.4)."""
    T, u, L, B = 79.19, 0.85, 32768, 16
    W, A, N = (15.26, 15.26), (2.31, 2.31), (0.71, 0.93)
    ptb = per_token_bytes(48, 8, 128, 2, 2)  # a 48-layer model, 8 KV heads, TP=2
    kv = [u * T - W[r] - A[r] - N[r] for r in range(2)]
    blocks = [blocks_of(round(k, 2), B * ptb) for k in kv]
    api, core = f"{CYAN}(APIServer pid=6100){RESET} ", f"{CYAN}(EngineCore_0 pid=6230){RESET} "
    wk = [f"{CYAN}(VllmWorker TP{r} pid={6301 + r}){RESET} " for r in range(2)]
    p = "INFO 08-21 14:02:{:02d} [{}] "
    model = "org/chat-30b"
    lines = [
        "INFO 08-21 14:01:58 [__init__.py:241] Automatically detected platform cuda.",
        api + p.format(2, "api_server.py:1805") + "vLLM API server version 0.10.1.1",
        api
        + p.format(2, "utils.py:326")
        + f"non-default args: {{'model_tag': '{model}', 'model': '{model}', 'max_model_len': {L}, 'tensor_parallel_size': 2, 'gpu_memory_utilization': {u}}}",
        api + p.format(8, "__init__.py:711") + "Resolved architecture: Qwen2ForCausalLM",
        api + p.format(8, "__init__.py:1750") + f"Using max model len {L}",
        core
        + p.format(12, "core.py:74")
        + f'Initializing a V1 LLM engine (v0.10.1.1) with config: {cfg(model, L, 2)}, chunked_prefill_enabled=True, use_async_output_proc=True, pooler_config=None, compilation_config={{"level":3,"cudagraph_capture_sizes":[512,256,8,4,2,1]}}',
    ]
    for r in range(2):
        lines.append(
            wk[r]
            + p.format(15, "parallel_state.py:1134")
            + f"rank {r} in world size 2 is assigned as DP rank 0, PP rank 0, TP rank {r}, EP rank {r}"
        )
    lines.append(wk[0] + p.format(16, "gpu_model_runner.py:1953") + f"Starting to load model {model}...")
    for r in range(2):
        lines.append(
            wk[r] + p.format(27 + r, "default_loader.py:262") + f"Loading weights took {9.8 + r * 0.07:.2f} seconds"
        )
        lines.append(
            wk[r]
            + p.format(28 + r, "gpu_model_runner.py:2007")
            + f"Model loading took {W[r] + 0.0031:.4f} GiB and {11.2 + r * 0.1:.6f} seconds"
        )
    for r in range(2):
        lines.append(wk[r] + p.format(44, "gpu_worker.py:276") + f"Available KV cache memory: {kv[r]:.2f} GiB")
    for r in range(2):
        tokens = blocks[r] * B
        lines.append(core + p.format(45, "kv_cache_utils.py:849") + f"GPU KV cache size: {tokens:,} tokens")
        lines.append(
            core
            + p.format(45, "kv_cache_utils.py:853")
            + f"Maximum concurrency for {L:,} tokens per request: {tokens / L:.2f}x"
        )
    for r in range(2):
        lines.append(
            wk[r]
            + "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|██████████| 67/67 [00:06<00:00, 10.52it/s]"
        )
        lines.append(
            wk[r] + p.format(53, "gpu_model_runner.py:2708") + "Graph capturing finished in 8 secs, took 0.54 GiB"
        )
    lines += [
        core + p.format(53, "core.py:214") + "init engine (profile, create kv cache, warmup model) took 24.71 seconds",
        api + p.format(54, "api_server.py:1611") + "Supported_tasks: ['generate']",
        api + p.format(54, "api_server.py:1880") + "Starting vLLM API server 0 on http://0.0.0.0:8000",
        api + p.format(54, "launcher.py:29") + "Available routes are:",
        api + "INFO:     Started server process [6100]",
        api + "INFO:     Waiting for application startup.",
        api + "INFO:     Application startup complete.",
    ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- 3. V1 0.20.2, TP=1, logo, defaults
def v1_020() -> str:
    """0.20.2: the logo, ``non-default args`` without gpu_memory_utilization (the 0.92 default), the
    CUDA-graph estimate inside the budget (default on from 0.20.0), tokens = concurrency × max_model_len."""
    T, u, L, B = 79.19, 0.92, 65536, 16
    W, A, N, G = 15.32, 3.87, 0.54, 0.98
    ptb = per_token_bytes(32, 8, 128, 1, 2)
    R = math.ceil(u * T * GiB) / GiB
    kv = R - W - A - N - G
    nblocks = blocks_of(kv, B * ptb)
    conc = nblocks / math.ceil(L / B)
    tokens = int(conc * L)
    api, core = "(APIServer pid=900) ", "(EngineCore pid=1024) "
    p = "INFO 05-12 07:40:{:02d} [{}] "
    model = "meta/llama-3.1-8b"
    logo = "utils.py:299"
    lines = [
        api + p.format(1, logo) + " ",
        api + p.format(1, logo) + "       █     █     █▄   ▄█",
        api + p.format(1, logo) + " ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.20.2",
        api + p.format(1, logo) + f"  █▄█▀ █     █     █     █  model   {model}",
        api + p.format(1, logo) + "   ▀▀  ▀▀▀▀▀ ▀▀▀▀▀ ▀     ▀",
        api + p.format(1, logo) + " ",
        api
        + p.format(1, "utils.py:233")
        + f"non-default args: {{'model_tag': '{model}', 'model': '{model}', 'max_model_len': {L}}}",
        api + p.format(6, "model.py:1745") + f"Using max model len {L}",
        core
        + p.format(9, "core.py:109")
        + f"Initializing a V1 LLM engine (v0.20.2) with config: {cfg(model, L, 1, dp=1)}",
        core + p.format(11, "gpu_model_runner.py:4290") + f"Starting to load model {model}...",
        core + p.format(19, "default_loader.py:384") + "Loading weights took 6.02 seconds",
        core
        + p.format(20, "gpu_model_runner.py:4879")
        + f"Model loading took {fmt_gib(W)} GiB memory and 7.118054 seconds",
        core + p.format(31, "monitor.py:40") + "torch.compile took 10.64 s in total",
        core
        + p.format(33, "gpu_model_runner.py:5990")
        + "Profiling CUDA graph memory: PIECEWISE=51 (largest=512), FULL=35 (largest=256)",
        core + p.format(35, "gpu_model_runner.py:6010") + f"Estimated CUDA graph memory: {G:.2f} GiB total",
        core + p.format(35, "gpu_worker.py:440") + f"Available KV cache memory: {fmt_gib(kv)} GiB",
        core
        + p.format(35, "gpu_worker.py:452")
        + f"CUDA graph memory profiling is enabled (default since v0.21.0). The current --gpu-memory-utilization={u:.4f} is equivalent to --gpu-memory-utilization={u - G / T:.4f} without CUDA graph memory profiling. To maintain the same effective KV cache size as before, increase --gpu-memory-utilization to {u + G / T:.4f}. To disable, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0.",
        core + p.format(36, "kv_cache_utils.py:1708") + f"GPU KV cache size: {tokens:,} tokens",
        core
        + p.format(36, "kv_cache_utils.py:1709")
        + f"Maximum concurrency for {L:,} tokens per request: {conc:.2f}x",
        core
        + "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|██████████| 51/51 [00:04<00:00, 11.90it/s]",
        core + p.format(43, "gpu_model_runner.py:6133") + "Graph capturing finished in 7 secs, took 0.91 GiB",
        core
        + p.format(43, "gpu_worker.py:600")
        + f"CUDA graph pool memory: 0.91 GiB (actual), {G:.2f} GiB (estimated), difference: -0.07 GiB (-7.7%).",
        core
        + p.format(43, "core.py:299")
        + "init engine (profile, create kv cache, warmup model) took 23.31 s (compilation: 10.64 s)",
        api + p.format(44, "api_server.py:1100") + "Starting vLLM server on http://0.0.0.0:8000",
        api + "INFO:     Started server process [900]",
        api + "INFO:     Waiting for application startup.",
        api + "INFO:     Application startup complete.",
    ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- 4. V1 0.31.0, TP=2, tags in the format
def v1_031() -> str:
    """0.31.0: every vLLM record carries ``(Name pid=N)`` from the format (``MainProcess`` before the API
    server names itself); uvicorn lines carry none; per-rank lines once per node; the budget report at
    INFO (0.26.0+) with consumed memory (0.27.0+); the combined token/concurrency line."""
    T, u, L, B = 139.8, 0.9, 131072, 16
    C, H, G = 36.05, 2.94, 1.42  # consumed (weights + non-torch), transient activation, graph estimate
    ptb = per_token_bytes(64, 8, 128, 2, 1)  # fp8 KV cache: one byte per element
    R = math.ceil(u * T * GiB) / GiB
    kv = R - C - H - G
    nblocks = blocks_of(kv, B * ptb)
    conc = nblocks / math.ceil(L / B)
    tokens = int(conc * L)
    main, api, core = "(MainProcess pid=300) ", "(APIServer pid=300) ", "(EngineCore pid=512) "
    wk = [f"(Worker_TP{r} pid={601 + r}) " for r in range(2)]
    p = "INFO 10-09 22:15:{:02d} [{}] "
    model = "org/chat-70b-fp8"
    lines = [
        main + "WARNING 10-09 22:15:00 [arg_utils.py:1700] The global random seed is set to 0.",
        api + p.format(1, "api_utils.py:347") + f"vLLM server version 0.31.0, serving model {model}",
        api
        + p.format(1, "api_utils.py:286")
        + f"non-default args: {{'model_tag': '{model}', 'model': '{model}', 'tensor_parallel_size': 2, 'gpu_memory_utilization': 0.9, 'api_key': '***'}}",
        core
        + p.format(9, "core.py:129")
        + f"Initializing a V1 LLM engine (v0.31.0) with config: {cfg(model, L, 2, 'fp8', dp=1)}",
        wk[0] + p.format(14, "gpu_model_runner.py:5020") + f"Starting to load model {model}...",
        "Loading safetensors checkpoint shards: 100% Completed | 15/15 [00:31<00:00,  2.07s/it]",
        wk[0] + p.format(47, "default_loader.py:484") + "Loading weights took 31.20 seconds",
        wk[0] + p.format(48, "gpu_model_runner.py:5354") + "Model loading took 34.81 GiB memory and 33.905120 seconds",
    ]
    for r in range(2):
        lines.append(
            wk[r] + p.format(55, "gpu_model_runner.py:6700") + f"Estimated CUDA graph memory: {G:.2f} GiB total"
        )
    lines.append(wk[0] + p.format(55, "gpu_worker.py:692") + f"Available KV cache memory: {fmt_gib(kv)} GiB")
    lines.append(
        core
        + p.format(56, "kv_cache_utils.py:2464")
        + f"GPU KV cache size: {tokens:,} tokens, Maximum concurrency for {L:,} tokens per request: {conc:.2f}x"
    )
    for r in range(2):
        lines.append(
            wk[r] + p.format(58, "gpu_model_runner.py:6854") + "Graph capturing finished in 9 secs, took 1.31 GiB"
        )
        lines.append(
            wk[r]
            + p.format(58, "gpu_worker.py:720")
            + f"Free memory on device (139.05/{fmt_gib(T)} GiB) on startup. Desired GPU memory utilization is ({u}, {fmt_gib(R)} GiB). "
            f"Actual usage is {fmt_gib(C)} GiB for consumed memory (weights + non-torch), {fmt_gib(H)} GiB for peak activation, and {fmt_gib(G)} GiB for CUDAGraph memory. "
            f"Replace gpu_memory_utilization config with `--kv-cache-memory={int((R - C - H - G) * GiB) - 150 * (1 << 20)}` "
            f"({fmt_gib(R - C - H - G - 150 / 1024)} GiB) to fit into requested memory, or `--kv-cache-memory={int((139.05 - C - H - G) * GiB) - 150 * (1 << 20)}` "
            f"({fmt_gib(139.05 - C - H - G - 150 / 1024)} GiB) to fully utilize gpu memory. Current kv cache memory in use is {fmt_gib(kv)} GiB."
        )
    lines += [
        core
        + p.format(59, "core.py:373")
        + "init engine (profile, create kv cache, warmup model) took 39.77 s (compilation: 14.02 s)",
        api + p.format(59, "entry.py:61") + "Starting vLLM server on http://0.0.0.0:8000",
        "INFO:     Started server process [300]",
        "INFO:     Waiting for application startup.",
        "INFO:     Application startup complete.",
        api
        + "INFO 10-09 22:16:10 [loggers.py:130] Engine 000: Avg prompt throughput: 905.1 tokens/s, Avg generation throughput: 211.4 tokens/s, Running: 9 reqs, Waiting: 0 reqs, GPU KV cache usage: 4.1%, Prefix cache hit rate: 37.5%",
    ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- 5. V0 0.6.3 max_len failure (docker --timestamps)
def v0_max_len_fail() -> str:
    """0.6.3 (nothing of the profile is logged) on a 24 GB card with the model's full 128k context:
    the blocks give fewer tokens than one request needs.  Captured with ``docker logs --timestamps``."""
    L, ntok_blocks = 131072, 6104  # blocks from the era-A profile (not printed); tokens = blocks × 16
    tokens = ntok_blocks * 16
    stamp = "2024-10-20T08:11:{:02d}.{:06d}000Z "
    p = "INFO 10-20 08:11:{:02d} {}] "
    body = [
        (1, p.format(1, "api_server.py:528") + "vLLM API server version 0.6.3"),
        (
            1,
            p.format(1, "api_server.py:529")
            + "args: Namespace(host=None, port=8000, model='/models/llama-3.1-8b-instruct', tokenizer=None, max_model_len=None, block_size=16, tensor_parallel_size=1, gpu_memory_utilization=0.9, swap_space=4)",
        ),
        (2, p.format(2, "api_server.py:166") + "Multiprocessing frontend to use ipc:///tmp/8f1e2a4c for IPC Path."),
        (2, p.format(2, "api_server.py:179") + "Started engine process with PID 88"),
        (
            6,
            p.format(6, "llm_engine.py:237")
            + f"Initializing an LLM engine (v0.6.3) with config: {cfg('/models/llama-3.1-8b-instruct', L, 1)})",
        ),
        (8, p.format(8, "model_runner.py:1060") + "Starting to load model /models/llama-3.1-8b-instruct..."),
        (18, p.format(18, "model_runner.py:1071") + "Loading model weights took 14.9888 GB"),
        (20, p.format(20, "gpu_executor.py:122") + f"# GPU blocks: {ntok_blocks}, # CPU blocks: 2048"),
        (
            20,
            p.format(20, "gpu_executor.py:126") + f"Maximum concurrency for {L} tokens per request: {tokens / L:.2f}x",
        ),
        (20, "Process SpawnProcess-1:"),
        (20, "Traceback (most recent call last):"),
        (
            20,
            '  File "/usr/local/lib/python3.12/dist-packages/vllm/engine/multiprocessing/engine.py", line 390, in run_mp_engine',
        ),
        (20, "    engine = MQLLMEngine.from_engine_args(engine_args=engine_args,"),
        (
            20,
            '  File "/usr/local/lib/python3.12/dist-packages/vllm/worker/worker.py", line 487, in raise_if_cache_size_invalid',
        ),
        (20, "    raise ValueError("),
        (
            20,
            f"ValueError: The model's max seq len ({L}) is larger than the maximum number of tokens that can be stored in KV cache ({tokens}). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
        ),
    ]
    return "".join(stamp.format(s, 100000 + 1000 * i) + text + "\n" for i, (s, text) in enumerate(body))


# --------------------------------------------------------------------------- 6. V1 0.9.2 no KV memory (journal short-iso)
def v1_no_kv_memory() -> str:
    """0.9.2 on one GPU, u=0.80: weights 61.03 + activation + non-torch exceed u·T, so the pool is negative
    and the EngineCore fails; the API server then says engine core initialization failed.  A journal
    rendered with ``journalctl -o short-iso``; the EngineCore's exception is logged (each line prefixed)."""
    T, u = 79.19, 0.80
    W, A, N = 61.03, 5.12, 1.2
    kv = u * T - W - A - N
    j = "2025-07-10T09:{:02d}:{:02d}+0000 gpu-node-2 vllm[4100]: "
    p = "{} 07-10 09:{:02d}:{:02d} [{}] "
    err = ("ERROR", 3, 12, "core.py:586")
    rows = [
        ((2, 1), p.format("INFO", 2, 1, "__init__.py:244") + "Automatically detected platform cuda."),
        ((2, 4), p.format("INFO", 2, 4, "api_server.py:1395") + "vLLM API server version 0.9.2"),
        (
            (2, 4),
            p.format("INFO", 2, 4, "cli_args.py:325")
            + "non-default args: {'model': 'org/big-32b', 'gpu_memory_utilization': 0.8}",
        ),
        (
            (2, 15),
            p.format("INFO", 2, 15, "core.py:69")
            + f"Initializing a V1 LLM engine (v0.9.2) with config: {cfg('org/big-32b', 32768, 1)}",
        ),
        ((2, 18), p.format("INFO", 2, 18, "gpu_model_runner.py:1770") + "Starting to load model org/big-32b..."),
        ((2, 58), p.format("INFO", 2, 58, "default_loader.py:272") + "Loading weights took 38.44 seconds"),
        (
            (2, 59),
            p.format("INFO", 2, 59, "gpu_model_runner.py:1801")
            + f"Model loading took {W:.4f} GiB and 39.510277 seconds",
        ),
        ((3, 12), p.format("INFO", 3, 12, "gpu_worker.py:232") + f"Available KV cache memory: {kv:.2f} GiB"),
        ((3, 12), p.format(*err) + "EngineCore failed to start."),
        ((3, 12), p.format(*err) + "Traceback (most recent call last):"),
        (
            (3, 12),
            p.format(*err)
            + '  File "/opt/venv/lib/python3.12/site-packages/vllm/v1/engine/core.py", line 577, in run_engine_core',
        ),
        ((3, 12), p.format(*err) + "    engine_core = EngineCoreProc(*args, **kwargs)"),
        (
            (3, 12),
            p.format(*err)
            + '  File "/opt/venv/lib/python3.12/site-packages/vllm/v1/core/kv_cache_utils.py", line 580, in check_enough_kv_cache_memory',
        ),
        ((3, 12), p.format(*err) + '    raise ValueError("No available memory for the cache blocks. "'),
        (
            (3, 12),
            p.format(*err)
            + "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.",
        ),
        ((3, 13), "Process EngineCore_0:"),
        ((3, 13), "Traceback (most recent call last):"),
        (
            (3, 13),
            '  File "/opt/venv/lib/python3.12/site-packages/vllm/v1/core/kv_cache_utils.py", line 580, in check_enough_kv_cache_memory',
        ),
        (
            (3, 13),
            "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.",
        ),
        ((3, 14), "Traceback (most recent call last):"),
        (
            (3, 14),
            '  File "/opt/venv/lib/python3.12/site-packages/vllm/v1/engine/core_client.py", line 430, in __init__',
        ),
        ((3, 14), "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}"),
    ]
    return "".join(j.format(m, s) + text + "\n" for (m, s), text in rows)


SAMPLES = {
    "v0-llama-tp2-0.6.6.post1.log": v0_tp2,
    "v1-tp2-per-worker-0.10.1.1.log": v1_tp2_per_worker,
    "v1-defaults-0.20.2.log": v1_020,
    "v1-tags-in-format-0.31.0.log": v1_031,
    "fail-max-len-docker-0.6.3.log": v0_max_len_fail,
    "fail-no-kv-memory-journal-0.9.2.log": v1_no_kv_memory,
}


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    for name, make in SAMPLES.items():
        with open(os.path.join(OUT, name), "w", encoding="utf-8", newline="\n") as fh:
            fh.write(make())
    print(f"wrote {len(SAMPLES)} vLLM samples to {OUT}")


if __name__ == "__main__":
    main()
