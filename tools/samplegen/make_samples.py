"""Generate the logparse sample logs in samples/ (run: python tools/samplegen/make_samples.py).

All numbers are invented; every memory figure comes out of SGLang's sizing formula of
the imitated release (catalogue section 4).  check_samples.py re-derives them from the
written files.  Output is deterministic.
"""

from __future__ import annotations

import datetime as dt
import os
import random

from sg import (
    ORDER_025,
    Clocks,
    GiB,
    Log,
    capture_bar,
    f2,
    kv_tokens_era_a,
    kv_tokens_era_bc,
    mha_sizes,
    mla_size,
    old_order,
    page_round,
    r,
    server_args_dataclass,
    server_args_dict,
    shards_bar,
)

SAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "samples")


def write(rel: str, text: str):
    path = os.path.join(SAMPLES, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    print(f"{rel}: {text.count(chr(10))} lines")


def warn(path: str, line: int, category: str, msg: str, src: str) -> str:
    """Python `warnings` output: `file:line: Category: msg` + the source line."""
    return f"{path}:{line}: {category}: {msg}\n  {src}"


# =============================================================================
# 0. 0.1.12, TP=2, Llama-2-13B  (router era: "Rank N: " lines, format "%(message)s", no memory figure,
#    no ready line: uvicorn starts once every rank has loaded the model)
# =============================================================================


def sample_0112():
    tp, ctx = 2, 4096
    f = 0.85  # 0.1.12's default fraction for tp_size >= 2
    layers, kv_heads, head_dim = 40, 40, 128
    m_pre, m_post = 78.12, 65.93  # free GiB (min over ranks) before / after the weights: not printed
    cell = kv_heads // tp * head_dim * layers * 2 * 2
    tokens = int((m_post * GiB - m_pre * GiB * (1 - f)) // cell)  # ModelRunner.profile_max_num_token
    prefill = max(ctx, tokens // 6)
    py = "/opt/conda/lib/python3.10/site-packages"
    out = [
        warn(
            f"{py}/transformers/utils/hub.py",
            124,
            "FutureWarning",
            "Using `TRANSFORMERS_CACHE` is deprecated and will be removed in v5 of Transformers. Use `HF_HOME` instead.",
            "warnings.warn(",
        ),
        "Rank 1: load weight begin.",
        "Rank 0: load weight begin.",
        "Rank 0: load weight end.",
        "Rank 1: load weight end.",
    ]
    for rank in range(tp):
        out.append(
            f"Rank {rank}: max_total_num_token={tokens}, max_prefill_num_token={prefill}, context_len={ctx}, model_mode=[]"
        )
    out += [
        "INFO:     Started server process [31574]",
        "INFO:     Waiting for application startup.",
        "INFO:     Application startup complete.",
        "INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)",
        'INFO:     127.0.0.1:41872 - "GET /get_model_info HTTP/1.1" 200 OK',
        "new fill batch. #seq: 1. #cached_token: 0. #new_token: 8. #remaining_req: 0. #running_req: 0. tree_cache_hit_rate: 0.00%.",
        'INFO:     127.0.0.1:41880 - "POST /generate HTTP/1.1" 200 OK',
        "new fill batch. #seq: 3. #cached_token: 6. #new_token: 1274. #remaining_req: 0. #running_req: 0. tree_cache_hit_rate: 0.47%.",
    ]
    for used in (1352, 1412, 1472):
        out.append(f"#running-req: 3, #token: {used}, token usage: {used / tokens:.2f}, #queue-req: 0")
    out += [
        'INFO:     10.20.3.17:52210 - "POST /generate HTTP/1.1" 200 OK',
        'INFO:     10.20.3.17:52214 - "POST /generate HTTP/1.1" 200 OK',
        "new fill batch. #seq: 2. #cached_token: 512. #new_token: 930. #remaining_req: 0. #running_req: 1. tree_cache_hit_rate: 19.86%.",
        f"#running-req: 3, #token: 2617, token usage: {2617 / tokens:.2f}, #queue-req: 0",
        'INFO:     10.20.3.17:52214 - "POST /generate HTTP/1.1" 200 OK',
        'INFO:     10.20.3.17:52218 - "POST /generate HTTP/1.1" 200 OK',
        'INFO:     10.20.3.17:52210 - "POST /generate HTTP/1.1" 200 OK',
    ]
    write("sglang-0.1/llama-tp2-0.1.12.log", "\n".join(out) + "\n")
    return {"tokens": tokens, "max_prefill": prefill}


# =============================================================================
# 1. 0.2.5, TP=2, Llama-2-13B  (no bracket prefix, [gpu_id=N] inside messages)
# =============================================================================


def sample_025():
    rng = random.Random(25)
    L = Log(dt.datetime(2024, 7, 22, 10, 14, 2), "none", seed=25)
    py = "/opt/conda/lib/python3.10/site-packages"
    model = "/data/models/Llama-2-13b-chat-hf"
    tp, f, ctx = 2, 0.88, 4096
    layers, kv_heads, head_dim = 40, 40, 128
    cell = (kv_heads // tp) * head_dim * layers * 2 * 2  # K+V, fp16
    m_pre = [78.1712, 78.1893]
    weights = [12.2364, 12.2364]
    m_post = [a - w for a, w in zip(m_pre, weights)]
    T = kv_tokens_era_a(min(m_post), min(m_pre), f, cell)
    max_num_reqs = max(int(T / ctx * 512), 2048)
    req_pool = max_num_reqs * (ctx + 1) * 4 / GiB  # int32 req_to_token rows
    kv_gib = (T + 1) * cell / GiB

    L.raw(
        0.0,
        warn(
            f"{py}/transformers/utils/hub.py",
            124,
            "FutureWarning",
            "Using `TRANSFORMERS_CACHE` is deprecated and will be removed in v5 of Transformers. Use `HF_HOME` instead.",
            "warnings.warn(",
        ),
    )
    sa = server_args_dataclass(
        "0.2.5",
        ORDER_025,
        {
            "model_path": r(model),
            "tokenizer_path": r(model),
            "host": r("0.0.0.0"),
            "port": "30000",
            "additional_ports": "[30001, 30002, 30003, 30004]",
            "mem_fraction_static": "0.88",
            "max_prefill_tokens": "16384",
            "tp_size": "2",
            "random_seed": "297410334",
            "stream_interval": "8",
            "log_level": r("info"),
            "load_format": r("auto"),
            "dtype": r("auto"),
            "trust_remote_code": "False",
            "context_length": "None",
            "quantization": "None",
            "chat_template": "None",
            "max_running_requests": "None",
            "schedule_conservativeness": "1.0",
            "log_level_http": "None",
            "log_requests": "False",
            "show_time_cost": "False",
            "api_key": "''",
            "dp_size": "1",
            "load_balance_method": r("round_robin"),
            "nnodes": "1",
            "node_rank": "None",
            "disable_radix_cache": "False",
            "disable_cuda_graph": "False",
            "enable_torch_compile": "False",
            "enable_p2p_check": "False",
            "tokenizer_mode": r("auto"),
        },
    )
    L.log(0.6, sa)
    t0 = [3.1, 3.5]
    for g in range(tp):
        L.log(t0[g], f"[gpu_id={g}] Init nccl begin.")
        L.vllm(
            t0[g] + 0.9,
            "INFO",
            "custom_all_reduce_utils.py:232",
            "reading GPU P2P access cache from /root/.cache/vllm/gpu_p2p_access_cache_for_0,1.json",
        )
    for g in range(tp):
        tb = 6.2 + 0.3 * g
        L.log(tb, f"[gpu_id={g}] Load weight begin. avail mem={f2(m_pre[g])} GB")
        L.vllm(tb + 0.1, "INFO", "weight_utils.py:218", "Using model weights format ['*.safetensors']")
        te = 27.4 + 0.6 * g
        L.log(
            te,
            f"[gpu_id={g}] Load weight end. type=LlamaForCausalLM, dtype=torch.float16, avail mem={f2(m_post[g])} GB",
        )
        after_pool = m_post[g] - kv_gib - req_pool - 0.0123
        L.log(te + 1.3, f"[gpu_id={g}] Memory pool end. avail mem={f2(after_pool)} GB")
        L.log(te + 1.6, f"[gpu_id={g}] Capture cuda graph begin. This can take up to several minutes.")
        L.log(
            te + 14.2 + 0.2 * g,
            f"[gpu_id={g}] max_total_num_tokens={T}, max_prefill_tokens=16384, "
            f"max_running_requests={max_num_reqs - 1}, context_len={ctx}",
        )
    L.raw(27.39, shards_bar(3, 20.5, rng=rng))
    L.uvicorn(43.0, "Started server process [4182]")
    L.uvicorn(43.0, "Waiting for application startup.")
    L.uvicorn(43.1, "Application startup complete.")
    L.uvicorn(43.1, "Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)")
    L.uvicorn(44.1, '127.0.0.1:50412 - "GET /get_model_info HTTP/1.1" 200 OK')
    L.log(
        44.3,
        "[gpu_id=0] Prefill batch. #new-seq: 1, #new-token: 7, #cached-token: 0, cache hit rate: 0.00%, #running-req: 0, #queue-req: 0",
    )
    L.uvicorn(44.9, '127.0.0.1:50420 - "POST /generate HTTP/1.1" 200 OK')
    L.log(45.0, "The server is fired up and ready to roll!")
    # a little traffic
    L.log(
        71.2,
        "[gpu_id=0] Prefill batch. #new-seq: 2, #new-token: 913, #cached-token: 6, cache hit rate: 0.65%, #running-req: 0, #queue-req: 0",
    )
    L.log(
        71.9,
        "[gpu_id=0] Prefill batch. #new-seq: 1, #new-token: 388, #cached-token: 41, cache hit rate: 3.02%, #running-req: 2, #queue-req: 0",
    )
    used = 913 + 6 + 388 + 41
    for i, (dtk, thr) in enumerate([(120, 74.18), (120, 81.40), (120, 80.92)]):
        used += dtk
        L.log(
            73.5 + 1.6 * i,
            f"[gpu_id=0] Decode batch. #running-req: 3, #token: {used}, token usage: {used / T:.2f}, gen throughput (token/s): {thr:.2f}, #queue-req: 0",
        )
    L.uvicorn(78.6, '10.20.4.17:38814 - "POST /generate HTTP/1.1" 200 OK')
    L.uvicorn(79.0, '10.20.4.17:38806 - "POST /generate HTTP/1.1" 200 OK')
    L.uvicorn(79.4, '10.20.4.17:38822 - "POST /generate HTTP/1.1" 200 OK')
    write("sglang-0.2/llama-tp2-0.2.5.log", L.render())
    return {"T": T}


# =============================================================================
# 2a. 0.3.2, TP=4, Qwen2-72B  ([HH:MM:SS TPn] prefix, `Init nccl begin.`)
# =============================================================================


def sample_032():
    rng = random.Random(32)
    L = Log(dt.datetime(2024, 10, 9, 16, 41, 7), "hms", seed=32)
    py = "/usr/local/lib/python3.10/dist-packages"
    model = "/mnt/models/Qwen2-72B-Instruct"
    tp, f, ctx = 4, 0.85, 32768
    layers, kv_heads, head_dim = 80, 8, 128
    cell = (kv_heads // tp) * head_dim * layers * 2 * 2
    m_pre = [77.9812, 78.0044, 78.0031, 77.9968]
    w = 33.9471
    m_post = [m - w - d for m, d in zip(m_pre, [0.0, 0.0012, 0.0008, 0.0011])]
    T = kv_tokens_era_a(min(m_post), min(m_pre), f, cell)
    max_num_reqs = min(max(int(T / ctx * 512), 2048), 4096)
    req_pool = (max_num_reqs + 1) * ctx * 4 / GiB
    kv_gib = (T + 1) * cell / GiB

    L.raw(
        0.0,
        warn(
            f"{py}/transformers/utils/hub.py",
            127,
            "FutureWarning",
            "Using `TRANSFORMERS_CACHE` is deprecated and will be removed in v5 of Transformers. Use `HF_HOME` instead.",
            "warnings.warn(",
        ),
    )
    sa = server_args_dataclass(
        "0.3.2",
        old_order(),
        {
            "model_path": r(model),
            "tokenizer_path": r(model),
            "host": r("0.0.0.0"),
            "port": "30000",
            "additional_ports": "[30001, 30002, 30003, 30004]",
            "mem_fraction_static": "0.85",
            "tp_size": "4",
            "random_seed": "614907215",
            "served_model_name": r("qwen2-72b-instruct"),
            "schedule_policy": r("lpm"),
            "chunked_prefill_size": "8192",
            "max_prefill_tokens": "16384",
            "stream_interval": "1",
            "log_level": r("info"),
            "attention_backend": r("flashinfer"),
            "sampling_backend": r("flashinfer"),
            "max_loras_per_batch": "8",
            "lora_paths": "None",
            "json_model_override_args": r("{}"),
            "torchao_config": r(""),
            "max_torch_compile_bs": "32",
            "nccl_init_addr": "None",
            "nnodes": "1",
            "node_rank": "None",
            "api_key": "None",
            "file_storage_pth": r("SGLang_storage"),
            "dp_size": "1",
            "load_balance_method": r("round_robin"),
            "constrained_json_whitespace_pattern": "None",
            "kv_cache_dtype": r("auto"),
        },
    )
    L.log(0.4, sa)
    ranks = range(tp)
    jit = [0.0, 0.21, 0.37, 0.12]
    for g in ranks:
        L.log(4.8 + jit[g], "Init nccl begin.", f"TP{g}")
        pid = 2291 + 37 * g
        if g == 0:
            L.raw(5.3, f"gpu-node-03:{pid}:{pid} [0] NCCL INFO Bootstrap : Using eth0:10.1.0.23<0>")
            L.raw(
                5.31,
                f"gpu-node-03:{pid}:{pid} [0] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such file or directory No plugin found (libnccl-net.so), using internal implementation",
            )
            L.raw(5.32, f"gpu-node-03:{pid}:{pid} [0] NCCL INFO cudaDriverVersion 12040")
            L.raw(5.33, "NCCL version 2.20.5+cuda12.4")
        L.raw(
            5.6 + jit[g],
            f"gpu-node-03:{pid}:{pid + 381} [{g}] NCCL INFO comm 0x{0x55D1A3C0 + 0x1F40 * g:x} rank {g} nranks 4 cudaDev {g} nvmlDev {g} busId {['18000', '2a000', '3a000', '5d000'][g]} commId 0x6e1b7f0a44c2d915 - Init COMPLETE",
        )
        L.vllm(
            6.1 + jit[g],
            "INFO",
            "custom_all_reduce_utils.py:242",
            "reading GPU P2P access cache from /root/.cache/vllm/gpu_p2p_access_cache_for_0,1,2,3.json",
        )
    for g in ranks:
        tb = 7.3 + jit[g]
        L.log(tb, f"Load weight begin. avail mem={f2(m_pre[g])} GB", f"TP{g}")
        te = 61.2 + 1.7 * jit[g]
        L.log(
            te, f"Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem={f2(m_post[g])} GB", f"TP{g}"
        )
        pool_end = m_post[g] - kv_gib - req_pool - 0.0191
        L.log(te + 0.9, f"Memory pool end. avail mem={f2(pool_end)} GB", f"TP{g}")
        L.log(te + 1.5, "Capture cuda graph begin. This can take up to several minutes.", f"TP{g}")
        L.log(
            te + 19.8 + jit[g],
            f"max_total_num_tokens={T}, max_prefill_tokens=16384, max_running_requests={max_num_reqs}, context_len={ctx}",
            f"TP{g}",
        )
    L.raw(61.19, shards_bar(37, 53.4, rng=rng))
    L.uvicorn(83.6, "Started server process [2218]")
    L.uvicorn(83.6, "Waiting for application startup.")
    L.uvicorn(83.7, "Application startup complete.")
    L.uvicorn(83.7, "Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)")
    L.uvicorn(84.8, '127.0.0.1:41736 - "GET /get_model_info HTTP/1.1" 200 OK')
    L.log(
        85.1,
        "Prefill batch. #new-seq: 1, #new-token: 7, #cached-token: 0, cache hit rate: 0.00%, token usage: 0.00, #running-req: 0, #queue-req: 0",
        "TP0",
    )
    L.uvicorn(85.9, '127.0.0.1:41738 - "POST /generate HTTP/1.1" 200 OK')
    L.log(86.0, "The server is fired up and ready to roll!")
    L.log(
        140.3,
        "Prefill batch. #new-seq: 1, #new-token: 1436, #cached-token: 2, cache hit rate: 0.12%, token usage: 0.00, #running-req: 0, #queue-req: 0",
        "TP0",
    )
    L.log(
        141.0,
        "Prefill batch. #new-seq: 3, #new-token: 3871, #cached-token: 1411, cache hit rate: 24.75%, token usage: 0.01, #running-req: 1, #queue-req: 0",
        "TP0",
    )
    used = 1438 + 3871 + 1411
    for i, thr in enumerate([88.16, 101.47, 100.93]):
        used += 160
        L.log(
            142.6 + 1.6 * i,
            f"Decode batch. #running-req: 4, #token: {used}, token usage: {used / T:.2f}, gen throughput (token/s): {thr:.2f}, #queue-req: 0",
            "TP0",
        )
    L.uvicorn(148.1, '172.17.0.1:52018 - "POST /v1/chat/completions HTTP/1.1" 200 OK')
    write("sglang-0.3/qwen-tp4-0.3.2.log", L.render())
    return {"T": T}


# =============================================================================
# 2b. 0.3.6, single GPU, Llama-3.1-8B  (the `DP-1 TP0` tag bug)
# =============================================================================


def sample_036():
    rng = random.Random(36)
    L = Log(dt.datetime(2024, 11, 28, 9, 3, 51), "ymd", seed=36)
    py = "/home/svc/venv/lib/python3.10/site-packages"
    model = "/srv/hf/Meta-Llama-3.1-8B-Instruct"
    f, ctx = 0.85, 131072
    layers, kv_heads, head_dim = 32, 8, 128
    cell = kv_heads * head_dim * layers * 2 * 2
    m_pre = 44.3817
    m_post = m_pre - 14.9903
    T = kv_tokens_era_a(m_post, m_pre, f, cell)
    max_num_reqs = min(max(int(T / ctx * 512), 2048), 4096)
    req_pool = (max_num_reqs + 1) * ctx * 4 / GiB
    kv_gib = (T + 1) * cell / GiB
    tag = "DP-1 TP0"

    L.raw(
        0.0,
        warn(
            f"{py}/transformers/utils/hub.py",
            128,
            "FutureWarning",
            "Using `TRANSFORMERS_CACHE` is deprecated and will be removed in v5 of Transformers. Use `HF_HOME` instead.",
            "warnings.warn(",
        ),
    )
    sa = server_args_dataclass(
        "0.3.6",
        old_order(),
        {
            "model_path": r(model),
            "tokenizer_path": r(model),
            "host": r("127.0.0.1"),
            "port": "30000",
            "mem_fraction_static": "0.85",
            "tp_size": "1",
            "random_seed": "90213377",
            "served_model_name": r(model),
            "schedule_policy": r("lpm"),
            "chunked_prefill_size": "8192",
            "max_prefill_tokens": "16384",
            "stream_interval": "1",
            "attention_backend": r("flashinfer"),
            "sampling_backend": r("flashinfer"),
            "grammar_backend": r("outlines"),
            "lora_paths": "None",
            "json_model_override_args": r("{}"),
            "torchao_config": r(""),
            "file_storage_pth": r("SGLang_storage"),
            "cuda_graph_max_bs": "160",
            "torch_compile_max_bs": "32",
            "watchdog_timeout": "300",
            "decode_log_interval": "40",
            "kv_cache_dtype": r("auto"),
            "api_key": "None",
            "node_rank": "0",
            "dist_init_addr": "None",
            "download_dir": "None",
            "base_gpu_id": "0",
            "constrained_json_whitespace_pattern": "None",
        },
    )
    L.log(0.3, sa)
    L.log(5.2, "Init torch distributed begin.", tag)
    L.log(6.0, f"Load weight begin. avail mem={f2(m_pre)} GB", tag)
    L.raw(10.4, shards_bar(4, 4.3, rng=rng))
    L.log(10.5, f"Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem={f2(m_post)} GB", tag)
    L.log(10.9, f"Memory pool end. avail mem={f2(m_post - kv_gib - req_pool - 0.0107)} GB", tag)
    L.log(11.4, "Capture cuda graph begin. This can take up to several minutes.", tag)
    L.log(
        19.8,
        f"max_total_num_tokens={T}, max_prefill_tokens=16384, max_running_requests={max_num_reqs}, context_len={ctx}",
        tag,
    )
    L.uvicorn(20.1, "Started server process [77310]")
    L.uvicorn(20.1, "Waiting for application startup.")
    L.uvicorn(20.1, "Application startup complete.")
    L.uvicorn(20.1, "Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)")
    L.uvicorn(21.2, '127.0.0.1:36214 - "GET /get_model_info HTTP/1.1" 200 OK')
    L.log(
        21.4,
        "Prefill batch. #new-seq: 1, #new-token: 7, #cached-token: 0, cache hit rate: 0.00%, token usage: 0.00, #running-req: 0, #queue-req: 0",
        tag,
    )
    L.uvicorn(21.7, '127.0.0.1:36230 - "POST /generate HTTP/1.1" 200 OK')
    L.log(21.7, "The server is fired up and ready to roll!")
    L.log(
        33.0,
        "Prefill batch. #new-seq: 1, #new-token: 52, #cached-token: 1, cache hit rate: 1.56%, token usage: 0.00, #running-req: 0, #queue-req: 0",
        tag,
    )
    L.log(
        33.3,
        "Prefill batch. #new-seq: 1, #new-token: 31, #cached-token: 22, cache hit rate: 24.47%, token usage: 0.00, #running-req: 1, #queue-req: 0",
        tag,
    )
    used = 106
    for i, thr in enumerate([96.04, 178.52]):
        used += 80
        L.log(
            34.1 + 0.5 * i,
            f"Decode batch. #running-req: 2, #token: {used}, token usage: {used / T:.2f}, gen throughput (token/s): {thr:.2f}, #queue-req: 0",
            tag,
        )
    L.uvicorn(35.2, '127.0.0.1:36244 - "POST /v1/chat/completions HTTP/1.1" 200 OK')
    L.uvicorn(35.6, '127.0.0.1:36252 - "POST /v1/chat/completions HTTP/1.1" 200 OK')
    write("sglang-0.3/llama-0.3.6-dp-minus-one.log", L.render())
    return {"T": T}


# =============================================================================
# 3. 0.4.7, TP=8, DeepSeek-V3 + EAGLE (NextN draft), MLA
# =============================================================================


def sample_047():
    rng = random.Random(47)
    L = Log(dt.datetime(2025, 6, 14, 8, 20, 11), "ymd", seed=47)
    py = "/usr/local/lib/python3.10/dist-packages"
    model = "/models/DeepSeek-V3-0324"
    draft = "/models/DeepSeek-V3-0324-NextN"
    tp, f, ctx, page = 8, 0.81, 163840, 1
    steps, topk, ndraft, mrr = 3, 1, 4, 64
    latent, layers = 512 + 64, 61
    cell = latent * layers * 2
    bs_list = [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64]
    m_pre = [139.2906, 139.2988, 139.3011, 139.2816, 139.2953, 139.3034, 139.2970, 139.2927]
    w = [80.9347 + d for d in (0.0, 0.0011, 0.0006, 0.0014, 0.0003, 0.0009, 0.0012, 0.0004)]
    m_post = [a - b for a, b in zip(m_pre, w)]
    T = kv_tokens_era_a(min(m_post), min(m_pre), f, cell)
    T1 = page_round(T + mrr * steps * topk + mrr * ndraft + 100, page)  # EAGLE headroom (0.4.3.post3-0.5.6.post2)
    kv = mla_size(T1, page, latent, layers, 2)
    kv_draft = mla_size(T1, page, latent, 1, 2)
    req_pool = (mrr + 1) * (ctx + 4) * 4 / GiB

    L.raw(
        0.0,
        warn(
            f"{py}/torch/cuda/__init__.py",
            61,
            "FutureWarning",
            "The pynvml package is deprecated. Please install nvidia-ml-py instead. If you did not install pynvml directly, please report this to the maintainers of the package that installed pynvml for you.",
            "import pynvml  # type: ignore[import]",
        ),
    )
    L.raw(1.9, "Overlap scheduler is disabled because of using eagle speculative decoding.")
    sa = server_args_dataclass(
        "0.4.7",
        old_order(),
        {
            "model_path": r(model),
            "tokenizer_path": r(model),
            "host": r("0.0.0.0"),
            "port": "30000",
            "trust_remote_code": "True",
            "mem_fraction_static": "0.81",
            "max_running_requests": "64",
            "chunked_prefill_size": "8192",
            "max_prefill_tokens": "16384",
            "schedule_policy": r("fcfs"),
            "tp_size": "8",
            "random_seed": "771230918",
            "served_model_name": r("deepseek-v3"),
            "page_size": "1",
            "attention_backend": "None",
            "sampling_backend": r("flashinfer"),
            "grammar_backend": r("xgrammar"),
            "lora_backend": r("triton"),
            "speculative_algorithm": r("EAGLE"),
            "speculative_draft_model_path": r(draft),
            "speculative_num_steps": "3",
            "speculative_eagle_topk": "1",
            "speculative_num_draft_tokens": "4",
            "disable_overlap_schedule": "True",
            "cuda_graph_max_bs": "64",
            "cuda_graph_bs": "None",
            "watchdog_timeout": "300",
            "decode_log_interval": "40",
            "file_storage_path": r("sglang_storage"),
            "json_model_override_args": r("{}"),
            "torchao_config": r(""),
            "mm_attention_backend": "None",
            "lora_paths": "None",
            "reasoning_parser": r("deepseek-r1"),
            "tool_call_parser": "None",
            "kv_cache_dtype": r("auto"),
            "enable_ep_moe": "False",
            "ep_size": "1",
            "moe_dense_tp_size": "None",
            "dist_init_addr": "None",
            "node_rank": "0",
            "hicache_ratio": "2.0",
            "hicache_size": "0",
            "hicache_write_policy": r("write_through_selective"),
            "warmups": "None",
        },
    )
    L.log(2.3, sa)
    C = Clocks(tp, 13.3, 1.1, rng)
    tl = {}
    final = {}
    for g in range(tp):
        tag = f"TP{g}"
        L.log(C.step(g, 0.0, 0.05), "Attention backend not set. Use fa3 backend by default.", tag)
        L.log(C.step(g, 0.0, 0.03), "Init torch distributed begin.", tag)
        L.raw(
            C.step(g, 1.1, 1.9),
            f"[Gloo] Rank {g} is connected to 7 peer ranks. Expected number of connected peer ranks is : 7",
        )
    C.sync(0.0, 0.4)
    L.log(C.t[0] - 0.2, "sglang is using nccl==2.21.5", "TP0")
    for g in range(tp):
        tag = f"TP{g}"
        L.log(C.step(g, 0.9, 1.4), f"Init torch distributed ends. mem usage={0.6 + 0.0031 * g + 0.012:.2f} GB", tag)
        L.log(C.step(g, 0.3, 0.7), f"Load weight begin. avail mem={f2(m_pre[g])} GB", tag)
    C.sync(195.0, 197.5)
    for g in range(tp):
        tag = f"TP{g}"
        L.log(
            C.step(g, 0.0, 0.6),
            f"Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem={f2(m_post[g])} GB, mem usage={f2(w[g])} GB.",
            tag,
        )
    L.raw(C.t[0] - 0.01, shards_bar(163, 195.2, rng=rng, every=3))
    C.sync(0.2, 0.6)
    for g in range(tp):
        tag = f"TP{g}"
        L.log(C.step(g, 0.1, 0.4), f"KV Cache is allocated. #tokens: {T1}, KV size: {f2(kv)} GB", tag)
        pool_end = m_post[g] - kv - req_pool - 0.0109
        L.log(C.step(g, 0.02, 0.1), f"Memory pool end. avail mem={f2(pool_end)} GB", tag)
        cb = pool_end - 0.0512
        tb = C.step(g, 0.5, 0.9)
        L.log(tb, f"Capture cuda graph begin. This can take up to several minutes. avail mem={f2(cb)} GB", tag)
        final[g] = [tb, cb]
    C.sync(40.8, 41.4)
    for g in range(tp):
        tag = f"TP{g}"
        tb, cb = final[g]
        gu = 1.8714 + 0.0023 * (g % 3)
        ce = cb - gu
        te = C.t[g]
        if g == 0:
            L.log(tb + 0.1, f"Capture cuda graph bs {bs_list}", tag)
            mems = [cb - gu * k / len(bs_list) for k in range(len(bs_list))]
            L.raw(te - 0.05, capture_bar(bs_list[::-1], mems, te - tb - 0.4, "avail"))
        L.log(
            te,
            f"Capture cuda graph end. Time elapsed: {te - tb:.2f} s. mem usage={f2(gu)} GB. avail mem={f2(ce)} GB.",
            tag,
        )
        # draft (NextN) worker
        db = ce - 0.0021
        dw = 1.6312 + 0.0004 * (g % 2)
        de = db - dw
        L.log(C.step(g, 0.3, 0.6), f"Load weight begin. avail mem={f2(db)} GB", tag)
        L.log(
            C.step(g, 5.8, 7.1),
            f"Load weight end. type=DeepseekV3ForCausalLMNextN, dtype=torch.bfloat16, avail mem={f2(de)} GB, mem usage={f2(db - de)} GB.",
            tag,
        )
        L.log(C.step(g, 0.2, 0.5), f"KV Cache is allocated. #tokens: {T1}, KV size: {f2(kv_draft)} GB", tag)
        dpe = de - kv_draft - 0.0038
        L.log(C.step(g, 0.02, 0.1), f"Memory pool end. avail mem={f2(dpe)} GB", tag)
        b1 = dpe - 0.0104
        final[g] = [C.step(g, 0.5, 0.8), b1]
        L.log(
            final[g][0],
            f"Capture draft cuda graph begin. This can take up to several minutes. avail mem={f2(b1)} GB",
            tag,
        )
    C.sync(17.0, 17.6)
    for g in range(tp):
        tag = f"TP{g}"
        tb, b1 = final[g]
        u1 = 0.5817 + 0.0011 * (g % 4)
        te = C.t[g]
        L.log(
            te,
            f"Capture draft cuda graph end. Time elapsed: {te - tb:.2f} s. avail mem={f2(b1 - u1)} GB. mem usage={f2(u1)} GB.",
            tag,
        )
        b2 = b1 - u1
        final[g] = [C.step(g, 0.05, 0.2), b2]
        L.log(
            final[g][0],
            f"Capture draft extend cuda graph begin. This can take up to several minutes. avail mem={f2(b2)} GB",
            tag,
        )
    C.sync(8.6, 9.2)
    for g in range(tp):
        tag = f"TP{g}"
        tb, b2 = final[g]
        u2 = 0.3566 + 0.0009 * (g % 3)
        te = C.t[g]
        L.log(
            te,
            f"Capture draft extend cuda graph end. Time elapsed: {te - tb:.2f} s. avail mem={f2(b2 - u2)} GB. mem usage={f2(u2)} GB.",
            tag,
        )
        tl[g] = (te, b2 - u2)
    t_end = max(v[0] for v in tl.values())
    L.log(
        t_end + 0.3,
        f"max_total_num_tokens={T1}, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests={mrr}, context_len={ctx}, available_gpu_mem={f2(tl[0][1])} GB",
        "TP0",
    )
    t = t_end + 1.2
    L.uvicorn(t, "Started server process [1]")
    L.uvicorn(t, "Waiting for application startup.")
    L.uvicorn(t + 0.1, "Application startup complete.")
    L.uvicorn(t + 0.1, "Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)")
    L.uvicorn(t + 1.1, '127.0.0.1:47882 - "GET /get_model_info HTTP/1.1" 200 OK')
    L.log(
        t + 1.4,
        "Prefill batch. #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0",
        "TP0",
    )
    L.uvicorn(t + 3.0, '127.0.0.1:47896 - "POST /generate HTTP/1.1" 200 OK')
    L.log(t + 3.0, "The server is fired up and ready to roll!")
    t += 55
    L.log(
        t,
        "Prefill batch. #new-seq: 1, #new-token: 2315, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0",
        "TP0",
    )
    L.log(
        t + 0.6,
        "Prefill batch. #new-seq: 4, #new-token: 6120, #cached-token: 2304, token usage: 0.02, #running-req: 1, #queue-req: 0",
        "TP0",
    )
    used = 2315 + 6120 + 2304
    for i, (al, thr) in enumerate([(2.81, 214.77), (2.93, 268.12), (2.74, 259.40)]):
        used += int(40 * 5 * al)
        L.log(
            t + 2.2 + 1.5 * i,
            f"Decode batch. #running-req: 5, #token: {used}, token usage: {used / T1:.2f}, accept len: {al:.2f}, cuda graph: True, gen throughput (token/s): {thr:.2f}, #queue-req: 0",
            "TP0",
        )
    L.uvicorn(t + 7.3, '10.0.12.31:51880 - "POST /v1/chat/completions HTTP/1.1" 200 OK')
    write("sglang-0.4/deepseek-v3-tp8-eagle-0.4.7.log", L.render())
    return {"T_formula": T, "T_logged": T1, "kv": kv}


# =============================================================================
# 4. 0.4.9, DP attention (--enable-dp-attention --dp-size 4 --tp-size 4), DeepSeek-V2-Lite
# =============================================================================


def sample_049():
    rng = random.Random(49)
    L = Log(dt.datetime(2025, 7, 9, 13, 5, 40), "ymd", seed=49)
    py = "/usr/local/lib/python3.10/dist-packages"
    model = "/models/DeepSeek-V2-Lite-Chat"
    tp, dp, f, ctx, page = 4, 4, 0.8, 163840, 1
    latent, layers = 512 + 64, 27
    cell = latent * layers * 2
    bs_list = [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128]
    m_pre = [78.0213, 78.0338, 78.0297, 78.0351]
    w = [7.7817, 7.7824, 7.7820, 7.7826]
    m_post = [a - b for a, b in zip(m_pre, w)]
    T = page_round(kv_tokens_era_a(min(m_post), min(m_pre), f, cell), page)
    mrr = 1024 // dp
    kv = mla_size(T, page, latent, layers, 2)
    req_pool = (mrr + 1) * (ctx + 4) * 4 / GiB

    L.raw(
        0.0,
        warn(
            f"{py}/torch/cuda/__init__.py",
            63,
            "FutureWarning",
            "The pynvml package is deprecated. Please install nvidia-ml-py instead. If you did not install pynvml directly, please report this to the maintainers of the package that installed pynvml for you.",
            "import pynvml  # type: ignore[import]",
        ),
    )
    sa = server_args_dataclass(
        "0.4.9",
        old_order(),
        {
            "model_path": r(model),
            "tokenizer_path": r(model),
            "host": r("0.0.0.0"),
            "port": "30000",
            "trust_remote_code": "True",
            "mem_fraction_static": "0.8",
            "max_running_requests": "1024",
            "chunked_prefill_size": "2048",
            "max_prefill_tokens": "16384",
            "schedule_policy": r("fcfs"),
            "tp_size": "4",
            "dp_size": "4",
            "enable_dp_attention": "True",
            "random_seed": "148822067",
            "served_model_name": r("dsv2-lite"),
            "page_size": "1",
            "attention_backend": "None",
            "sampling_backend": r("flashinfer"),
            "grammar_backend": r("xgrammar"),
            "lora_backend": r("triton"),
            "cuda_graph_max_bs": "128",
            "cuda_graph_bs": "None",
            "watchdog_timeout": "300",
            "file_storage_path": r("sglang_storage"),
            "json_model_override_args": r("{}"),
            "torchao_config": r(""),
            "lora_paths": "None",
            "kv_cache_dtype": r("auto"),
            "ep_size": "1",
            "dist_init_addr": "None",
            "node_rank": "0",
            "hicache_ratio": "2.0",
            "hicache_size": "0",
            "hicache_write_policy": r("write_through_selective"),
            "warmups": "None",
            "disaggregation_mode": r("null"),
        },
    )
    L.log(1.6, sa)
    C = Clocks(tp, 9.8, 0.9, rng)
    tags = [f"DP{g} TP{g}" for g in range(tp)]
    for g in range(tp):
        L.log(C.step(g, 0.0, 0.05), "Attention backend not set. Use fa3 backend by default.", tags[g])
        L.log(C.step(g, 0.0, 0.03), "Init torch distributed begin.", tags[g])
        L.raw(
            C.step(g, 0.8, 1.3),
            f"[Gloo] Rank {g} is connected to 3 peer ranks. Expected number of connected peer ranks is : 3",
        )
    C.sync(0.0, 0.3)
    L.log(C.t[0] - 0.3, "sglang is using nccl==2.21.5", tags[0])
    for g in range(tp):
        L.log(C.step(g, 0.7, 1.1), f"Init torch distributed ends. mem usage={0.53 + 0.004 * g:.2f} GB", tags[g])
        L.log(C.step(g, 0.2, 0.5), f"Load weight begin. avail mem={f2(m_pre[g])} GB", tags[g])
    C.sync(7.1, 8.4)
    for g in range(tp):
        L.log(
            C.step(g, 0.0, 0.4),
            f"Load weight end. type=DeepseekV2ForCausalLM, dtype=torch.bfloat16, avail mem={f2(m_post[g])} GB, mem usage={f2(w[g])} GB.",
            tags[g],
        )
    L.raw(C.t[0] - 0.01, shards_bar(4, 7.4, rng=rng))
    C.sync(0.2, 0.5)
    cap = {}
    for g in range(tp):
        L.log(C.step(g, 0.1, 0.3), f"KV Cache is allocated. #tokens: {T}, KV size: {f2(kv)} GB", tags[g])
        pe = m_post[g] - kv - req_pool - 0.0087
        L.log(C.step(g, 0.02, 0.08), f"Memory pool end. avail mem={f2(pe)} GB", tags[g])
        cb = pe - 0.0211
        cap[g] = (C.step(g, 0.3, 0.6), cb)
        L.log(
            cap[g][0], f"Capture cuda graph begin. This can take up to several minutes. avail mem={f2(cb)} GB", tags[g]
        )
    C.sync(23.5, 24.3)
    finals = {}
    for g in range(tp):
        tb, cb = cap[g]
        gu = 0.9133 + 0.0017 * g
        te = C.t[g]
        if g == 0:
            L.log(tb + 0.1, f"Capture cuda graph bs {bs_list}", tags[g])
            mems = [cb - gu * k / len(bs_list) for k in range(len(bs_list))]
            L.raw(te - 0.05, capture_bar(bs_list[::-1], mems, te - tb - 0.5, "bs"))
        L.log(
            te,
            f"Capture cuda graph end. Time elapsed: {te - tb:.2f} s. mem usage={f2(gu)} GB. avail mem={f2(cb - gu)} GB.",
            tags[g],
        )
        finals[g] = cb - gu
    t = max(C.t) + 0.2
    L.log(
        t,
        f"max_total_num_tokens={T}, chunked_prefill_size=2048, max_prefill_tokens=16384, max_running_requests={mrr}, context_len={ctx}, available_gpu_mem={f2(finals[0])} GB",
        tags[0],
    )
    t += 1.0
    L.uvicorn(t, "Started server process [52160]")
    L.uvicorn(t, "Waiting for application startup.")
    L.uvicorn(t + 0.1, "Application startup complete.")
    L.uvicorn(t + 0.1, "Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)")
    L.uvicorn(t + 1.1, '127.0.0.1:33904 - "GET /get_model_info HTTP/1.1" 200 OK')
    L.log(
        t + 1.3,
        "Prefill batch. #new-seq: 1, #new-token: 7, #cached-token: 0, #token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0",
        tags[0],
    )
    L.uvicorn(t + 2.0, '127.0.0.1:33918 - "POST /generate HTTP/1.1" 200 OK')
    L.log(t + 2.0, "The server is fired up and ready to roll!")
    t += 30
    used = {0: 0, 1: 0, 2: 0, 3: 0}
    for g, (n, c) in enumerate([(1843, 0), (1920, 1024), (1711, 0), (2048, 512)]):
        L.log(
            t + 0.2 * g,
            f"Prefill batch. #new-seq: 2, #new-token: {n}, #cached-token: {c}, #token: {used[g]}, token usage: {used[g] / T:.2f}, #running-req: 0, #queue-req: 0",
            tags[g],
        )
        used[g] = n + c
    for step_i in range(2):
        for g in (0, 2, 1, 3):
            used[g] += 80
            thr = [74.15, 73.88, 75.02, 72.61][g] + 9.7 * step_i
            L.log(
                t + 2.4 + 1.1 * step_i + 0.05 * g,
                f"Decode batch. #running-req: 2, #token: {used[g]}, token usage: {used[g] / T:.2f}, cuda graph: True, gen throughput (token/s): {thr:.2f}, #queue-req: 0",
                tags[g],
            )
    for k, port in enumerate([40112, 40118, 40124, 40130]):
        L.uvicorn(t + 4.9 + 0.1 * k, f'10.1.3.9:{port} - "POST /v1/chat/completions HTTP/1.1" 200 OK')
    write("sglang-0.4/dp-attention-0.4.9.log", L.render())
    return {"T": T}


# =============================================================================
# 5. 0.5.9, single GPU, Llama-3.1-8B (dataclass server_args, elapsed= in Load weight end)
# =============================================================================


#: The prefill CUDA-graph batch sizes 0.5.x prints by default (steps of 4, 16, 32, 64, 256, 512).
PREFILL_GRAPH_BS = [
    *range(4, 33, 4),
    *range(48, 257, 16),
    *range(288, 513, 32),
    *range(576, 1025, 64),
    *range(1280, 4097, 256),
    *range(4608, 8193, 512),
]


def bs_default(max_bs: int) -> list[int]:
    """The 0.5.x default capture list: 1, 2, 4, 8, 12, 16, 24, then +8 up to 256, then +16."""
    out = [1, 2, 4, 8, 12, 16, 24] + list(range(32, 257, 8)) + list(range(272, 513, 16))
    return [b for b in out if b <= max_bs]


def sample_059():
    rng = random.Random(59)
    L = Log(dt.datetime(2026, 3, 2, 11, 47, 19), "ymd", seed=59)
    py = "/opt/venvs/sglang/lib/python3.12/site-packages"
    model = "/data/llm/Meta-Llama-3.1-8B-Instruct"
    f, ctx, page = 0.835, 131072, 1
    layers, kv_heads, head_dim = 32, 8, 128
    cell = kv_heads * (head_dim + head_dim) * layers * 2
    m_pre = 78.7134
    w = 14.9922
    m_post = m_pre - w
    T = page_round(kv_tokens_era_bc(m_post, m_pre, f, cell), page)
    est = min(max(int(T / ctx * 512), 2048), 4096)
    mrr = min(est, T // 2)
    req_pool = (est + 1) * (ctx + 4) * 4 / GiB
    k, v = mha_sizes(T, page, kv_heads, head_dim, layers, 2)
    bs = bs_default(256)

    L.raw(
        0.0,
        warn(
            f"{py}/torch/cuda/__init__.py",
            63,
            "FutureWarning",
            "The pynvml package is deprecated. Please install nvidia-ml-py instead. If you did not install pynvml directly, please report this to the maintainers of the package that installed pynvml for you.",
            "import pynvml  # type: ignore[import]",
        ),
    )
    sa = server_args_dataclass(
        "0.5.9",
        "0.5.9-dev",
        {
            "model_path": r(model),
            "tokenizer_path": r(model),
            "host": r("0.0.0.0"),
            "port": "8000",
            "mem_fraction_static": "0.835",
            "chunked_prefill_size": "8192",
            "max_prefill_tokens": "16384",
            "random_seed": "431552170",
            "served_model_name": r("llama-3.1-8b"),
            "attention_backend": r("flashinfer"),
            "sampling_backend": r("flashinfer"),
            "cuda_graph_max_bs": "256",
            "cuda_graph_bs": r(bs),
            "device": r("cuda"),
            "tp_size": "1",
            "kv_cache_dtype": r("auto"),
            "mamba_backend": r("triton"),
            "fp4_gemm_runner_backend": r("auto"),
            "nsa_prefill_backend": "None",
            "nsa_decode_backend": "None",
            "triton_attention_num_kv_splits": "8",
            "enable_metrics": "True",
            "log_requests": "False",
        },
    )
    L.log(0.4, sa)
    L.log(0.5, "Using default HuggingFace chat template with detected content format: string")
    L.log(6.8, "Init torch distributed begin.")
    L.log(7.1, "Init torch distributed ends. elapsed=0.27 s, mem usage=0.09 GB")
    L.log(7.9, f"Load weight begin. avail mem={f2(m_pre)} GB")
    L.raw(11.6, shards_bar(4, 3.6, rng=rng, repeat_last=True))
    L.log(
        11.7,
        f"Load weight end. elapsed=3.82 s, type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem={f2(m_post)} GB, mem usage={f2(w)} GB.",
    )
    L.log(11.8, "Using KV cache dtype: torch.bfloat16")
    L.log(12.3, f"KV Cache is allocated. #tokens: {T}, K size: {f2(k)} GB, V size: {f2(v)} GB")
    pe = m_post - k - v - req_pool - 0.0137
    L.log(12.4, f"Memory pool end. avail mem={f2(pe)} GB")
    cb = pe - 0.0703
    L.log(13.0, f"Capture cuda graph begin. This can take up to several minutes. avail mem={f2(cb)} GB")
    L.log(13.1, f"Capture cuda graph bs {bs}")
    gu = 0.6814
    mems = [cb - gu * i / len(bs) for i in range(len(bs))]
    L.raw(21.4, capture_bar(bs[::-1], mems, 8.1, "bs"))
    L.log(21.5, f"Capture cuda graph end. Time elapsed: 8.47 s. mem usage={f2(gu)} GB. avail mem={f2(cb - gu)} GB.")
    L.log(
        21.9,
        f"max_total_num_tokens={T}, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests={mrr}, context_len={ctx}, available_gpu_mem={f2(cb - gu)} GB",
    )
    L.uvicorn(22.3, "Started server process [3391]")
    L.uvicorn(22.3, "Waiting for application startup.")
    L.uvicorn(22.4, "Application startup complete.")
    L.uvicorn(22.4, "Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)")
    L.uvicorn(23.4, '127.0.0.1:60418 - "GET /model_info HTTP/1.1" 200 OK')
    L.log(
        23.6,
        "Prefill batch, #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, input throughput (token/s): 0.00, cuda graph: False",
    )
    L.uvicorn(24.1, '127.0.0.1:60430 - "POST /generate HTTP/1.1" 200 OK')
    L.log(24.1, "The server is fired up and ready to roll!")
    L.uvicorn(30.7, '10.8.0.4:45210 - "GET /health HTTP/1.1" 200 OK')
    L.log(
        41.2,
        "Prefill batch, #new-seq: 1, #new-token: 611, #cached-token: 1, token usage: 0.00, #running-req: 0, #queue-req: 0, input throughput (token/s): 35.41, cuda graph: False",
    )
    L.log(
        41.5,
        "Prefill batch, #new-seq: 2, #new-token: 1227, #cached-token: 598, token usage: 0.00, #running-req: 1, #queue-req: 0, input throughput (token/s): 6083.90, cuda graph: False",
    )
    used = 612 + 1227 + 598
    for i, thr in enumerate([341.06, 398.77, 401.52]):
        used += 120
        L.log(
            42.1 + 0.3 * i,
            f"Decode batch, #running-req: 3, #token: {used}, token usage: {used / T:.2f}, cuda graph: True, gen throughput (token/s): {thr:.2f}, #queue-req: 0",
        )
    for k2, port in enumerate([45214, 45230, 45236]):
        L.uvicorn(43.4 + 0.2 * k2, f'10.8.0.4:{port} - "POST /v1/chat/completions HTTP/1.1" 200 OK')
    write("sglang-0.5/llama-0.5.9-dataclass.log", L.render())
    return {"T": T, "mrr": mrr}


# =============================================================================
# 6. 0.5.22, TP=2, Qwen3-32B (dict-form server_args, Init parallel, target decode CUDA graph)
# =============================================================================


def sample_0522():
    rng = random.Random(522)
    L = Log(dt.datetime(2026, 10, 20, 7, 58, 3), "ymd", seed=522)
    py = "/usr/local/lib/python3.12/dist-packages"
    model = "/models/Qwen3-32B"
    tp, f, ctx, page = 2, 0.833, 40960, 1
    layers, kv_heads, head_dim = 64, 8, 128
    h = kv_heads // tp
    cell = h * (head_dim + head_dim) * layers * 2
    m_pre = [78.2981, 78.3117]
    w = [30.6152, 30.6152]
    m_post = [a - b for a, b in zip(m_pre, w)]
    T = page_round(kv_tokens_era_bc(min(m_post), min(m_pre), f, cell), page)
    est = min(max(int(T / ctx * 512), 2048), 4096)
    mrr = min(est, T // 2)
    req_pool = (est + 1) * (ctx + 4) * 4 / GiB
    k, v = mha_sizes(T, page, h, head_dim, layers, 2)
    bs = bs_default(256)
    pbs = PREFILL_GRAPH_BS
    cgc = {
        "decode": {
            "backend": "full",
            "max_bs": 256,
            "bs": bs,
            "tc_compiler": "eager",
            "full_prefill_max_req": None,
            "full_prefill_prefix_chunk_tokens": None,
            "max_seq_len": None,
        },
        "prefill": {
            "backend": "disabled",
            "max_bs": 8192,
            "bs": pbs,
            "tc_compiler": "eager",
            "full_prefill_max_req": None,
            "full_prefill_prefix_chunk_tokens": None,
            "max_seq_len": None,
        },
    }

    L.raw(
        0.0,
        warn(
            f"{py}/torch/cuda/__init__.py",
            63,
            "FutureWarning",
            "The pynvml package is deprecated. Please install nvidia-ml-py instead. If you did not install pynvml directly, please report this to the maintainers of the package that installed pynvml for you.",
            "import pynvml  # type: ignore[import]",
        ),
    )
    L.log(0.8, "Attention backend not specified. Use fa3 backend by default.")
    sa = server_args_dict(
        "0.5.22",
        "0.5.23",
        {
            "model_path": r(model),
            "tokenizer_path": r(model),
            "host": r("0.0.0.0"),
            "port": "30000",
            "mem_fraction_static": r(f),
            "chunked_prefill_size": "8192",
            "tp_size": "2",
            "random_seed": "552908314",
            "served_model_name": r("qwen3-32b"),
            "attention_backend": r("fa3"),
            "sampling_backend": r("flashinfer"),
            "cuda_graph_config": r(cgc),
            "reasoning_parser": r("qwen3"),
            "tool_call_parser": r("qwen25"),
            "context_length": "None",
            "enable_metrics": "True",
            "hicache_mem_layout": r("page_first"),
        },
    )
    L.log(1.9, sa)
    L.log(2.0, "Using default HuggingFace chat template with detected content format: string")
    C = Clocks(tp, 31.4, 0.6, rng)
    tags = ["TP0", "TP1"]
    for g in range(tp):
        L.log(C.step(g, 0.0, 0.02), "Init parallel begin.", tags[g])
        L.raw(
            C.step(g, 0.4, 0.7),
            f"[Gloo] Rank {g} is connected to 1 peer ranks. Expected number of connected peer ranks is : 1",
        )
    C.sync(0.0, 0.2)
    for g in range(tp):
        L.log(C.step(g, 0.3, 0.5), f"Init parallel ends. elapsed={C.t[g] - 31.4:.2f} s", tags[g])
        L.log(C.step(g, 0.05, 0.2), f"Memory baseline taken. mem usage={0.79 + 0.013 * g:.2f} GB", tags[g])
        L.log(C.step(g, 1.1, 1.6), f"Load weight begin. avail mem={f2(m_pre[g])} GB", tags[g])
    lt0 = C.t[:]
    C.sync(9.0, 9.6)
    lw_elapsed = C.t[0] - lt0[0]
    for g in range(tp):
        L.log(
            C.step(g, 0.0, 0.3),
            f"Load weight end. elapsed={C.t[g] - lt0[g]:.2f} s, type=Qwen3ForCausalLM, avail mem={f2(m_post[g])} GB, mem usage={f2(w[g])} GB.",
            tags[g],
        )
    L.raw(C.t[0] - 0.01, shards_bar(17, 9.1, rng=rng))
    C.sync(0.2, 0.4)
    cap = {}
    for g in range(tp):
        L.log(
            C.step(g, 0.3, 0.6),
            f"KV Cache is allocated. dtype: torch.bfloat16, #tokens: {T}, K size: {f2(k)} GB, V size: {f2(v)} GB",
            tags[g],
        )
        pe = m_post[g] - k - v - req_pool - 0.0122
        L.log(C.step(g, 0.02, 0.08), f"Memory pool end. avail mem={f2(pe)} GB", tags[g])
        L.log(
            C.step(g, 0.1, 0.2),
            "Disable prefill CUDA graph because cuda_graph_config resolved prefill.backend='disabled' (e.g. via --cuda-graph-backend-prefill=disabled or auto-disable rules).",
            tags[g],
        )
        cb = pe - 0.0547
        cap[g] = (C.step(g, 0.2, 0.4), cb)
        L.log(
            cap[g][0],
            f"Capture target decode CUDA graph begin. backend=full, num_tokens_per_req=1, avail mem={f2(cb)} GB",
            tags[g],
        )
    C.sync(7.6, 8.1)
    final = []
    for g in range(tp):
        tb, cb = cap[g]
        gu = 0.6127 + 0.0031 * g
        te = C.t[g]
        if g == 0:
            mems = [cb - gu * i / len(bs) for i in range(len(bs))]
            L.raw(te - 0.05, capture_bar(bs[::-1], mems, te - tb - 0.3, "bs"))
        L.log(
            te,
            f"Capture target decode CUDA graph end. bs={bs}, elapsed={te - tb:.2f} s, mem usage={f2(gu)} GB, avail mem={f2(cb - gu)} GB.",
            tags[g],
        )
        final.append(cb - gu)
    t = max(C.t) + 0.2
    L.log(
        t,
        f"max_total_num_tokens={T}, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests={mrr}, context_len={ctx}, available_gpu_mem={f2(final[0])} GB",
        "TP0",
    )
    dec = max(C.t) - min(v2[0] for v2 in cap.values())
    L.log(
        t + 0.4,
        f"Engine startup timings (s): load_weight={lw_elapsed:.2f}, kv_cache_allocation=1.37, scheduler_e2e={t - 31.4:.2f}, cuda_graph={{prefill=0.00, decode={dec:.2f}, target_verify=0.00, draft_prefill=0.00, draft_decode=0.00, draft_extend=0.00}}, tokenizer_e2e={t + 0.4:.2f}",
    )
    t += 0.6
    L.uvicorn(t, "Started server process [20817]")
    L.uvicorn(t, "Waiting for application startup.")
    L.uvicorn(t, "Application startup complete.")
    L.uvicorn(t, "Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)")
    L.uvicorn(t + 1.0, '127.0.0.1:55204 - "GET /model_info HTTP/1.1" 200 OK')
    L.log(
        t + 1.3,
        "Prefill batch, #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, #pending-token: 0, cuda graph: False, input throughput (token/s): 0.00",
        "TP0",
    )
    L.uvicorn(t + 1.9, '127.0.0.1:55210 - "POST /generate HTTP/1.1" 200 OK')
    L.uvicorn(t + 2.0, '127.0.0.1:55222 - "POST /freeze_gc HTTP/1.1" 200 OK')
    L.log(t + 2.0, "The server is fired up and ready to roll!")
    t += 20
    L.log(
        t,
        "Prefill batch, #new-seq: 1, #new-token: 3188, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, #pending-token: 0, cuda graph: False, input throughput (token/s): 158.21",
        "TP0",
    )
    L.log(
        t + 0.5,
        "Prefill batch, #new-seq: 1, #new-token: 402, #cached-token: 3186, token usage: 0.01, #running-req: 1, #queue-req: 0, #pending-token: 0, cuda graph: False, input throughput (token/s): 7391.44",
        "TP0",
    )
    used = 3188 + 402 + 3186
    for i, thr in enumerate([61.72, 66.35]):
        used += 80
        L.log(
            t + 1.9 + 1.2 * i,
            f"Decode batch, #running-req: 2, #token: {used}, token usage: {used / T:.2f}, cuda graph: True, gen throughput (token/s): {thr:.2f}, #queue-req: 0",
            "TP0",
        )
    L.uvicorn(t + 4.4, '10.44.0.12:37118 - "POST /v1/chat/completions HTTP/1.1" 200 OK')
    L.uvicorn(t + 4.6, '10.44.0.12:37120 - "POST /v1/chat/completions HTTP/1.1" 200 OK')
    write("sglang-0.5/qwen-tp2-0.5.22-dict.log", L.render())
    return {"T": T, "mrr": mrr}


# =============================================================================
# 7. 0.5.12, three launches of one deployment (mem-fraction change, then fp8 KV)
# =============================================================================


def sample_0512():
    rng = random.Random(512)
    py = "/srv/sglang/.venv/lib/python3.11/site-packages"
    model = "/srv/models/Qwen2.5-14B-Instruct"
    ctx, page = 32768, 1
    layers, kv_heads, head_dim = 48, 8, 128
    bs = bs_default(256)
    launches = [
        # start, mem_fraction_static, kv_cache_dtype, dtype name, bytes, m_pre, seed, pid
        (dt.datetime(2026, 5, 18, 9, 12, 4), 0.8, "auto", "torch.bfloat16", 2, 78.6217, 204481733, 11872),
        (dt.datetime(2026, 5, 18, 9, 41, 37), 0.88, "auto", "torch.bfloat16", 2, 78.6135, 873102264, 14530),
        (dt.datetime(2026, 5, 18, 10, 5, 52), 0.88, "fp8_e4m3", "torch.float8_e4m3fn", 1, 78.6261, 51873390, 16994),
    ]
    w = 27.5108
    text = []
    out = []
    for i, (start, f, kvd, dtn, nb, m_pre, seed, pid) in enumerate(launches):
        L = Log(start, "ymd", seed=512 + i)
        cell = kv_heads * (head_dim + head_dim) * layers * nb
        m_post = m_pre - w - 0.0007 * i
        T = page_round(kv_tokens_era_bc(m_post, m_pre, f, cell), page)
        est = min(max(int(T / ctx * 512), 2048), 4096)
        mrr = min(est, T // 2)
        req_pool = (est + 1) * (ctx + 4) * 4 / GiB
        k, v = mha_sizes(T, page, kv_heads, head_dim, layers, nb)
        L.raw(
            0.0,
            f"{py}/sglang/launch_server.py:54: UserWarning: 'python -m sglang.launch_server' is still supported, but 'sglang serve' is the recommended entrypoint.\n"
            "  Example: sglang serve --model-path <model> [options]\n  warnings.warn(",
        )
        L.log(3.1, "Attention backend not specified. Use flashinfer backend by default.")
        sa = server_args_dataclass(
            "0.5.12",
            "0.5.14",
            {
                "model_path": r(model),
                "tokenizer_path": r(model),
                "host": r("0.0.0.0"),
                "port": "30000",
                "mem_fraction_static": r(f),
                "kv_cache_dtype": r(kvd),
                "random_seed": str(seed),
                "served_model_name": r("qwen2.5-14b"),
                "attention_backend": r("flashinfer"),
                "sampling_backend": r("flashinfer"),
                "cuda_graph_max_bs": "256",
                "cuda_graph_bs": r(bs),
                "disable_piecewise_cuda_graph": "True",
                "tool_call_parser": r("qwen25"),
                "enable_metrics": "True",
                "hicache_mem_layout": r("layer_first"),
            },
        )
        L.log(3.4, sa)
        L.log(3.5, "Using default HuggingFace chat template with detected content format: string")
        t = 9.2 + 0.3 * i
        L.log(t, "Init torch distributed begin.")
        L.log(t + 0.31, f"Init torch distributed ends. elapsed=0.{29 + i} s, mem usage=0.02 GB")
        L.log(t + 1.0, f"Load weight begin. avail mem={f2(m_pre)} GB")
        el = 7.61 + 0.37 * i
        if kvd != "auto":
            L.log(
                t + 1.0 + el - 0.02,
                "Using FP8 KV cache but no scaling factors provided. Defaulting to scaling factors of 1.0. This may lead to less accurate results!",
            )
        L.raw(t + 1.0 + el - 0.05, shards_bar(8, el - 0.2, rng=rng))
        L.log(
            t + 1.0 + el,
            f"Load weight end. elapsed={el:.2f} s, type=Qwen2ForCausalLM, avail mem={f2(m_post)} GB, mem usage={f2(m_pre - m_post)} GB.",
        )
        t += 1.2 + el
        L.log(t, f"Using KV cache dtype: {dtn}")
        L.log(t + 0.5, f"KV Cache is allocated. #tokens: {T}, K size: {f2(k)} GB, V size: {f2(v)} GB")
        pe = m_post - k - v - req_pool - 0.0129
        L.log(t + 0.6, f"Memory pool end. avail mem={f2(pe)} GB")
        cb = pe - 0.0702
        L.log(t + 1.1, f"Capture cuda graph begin. This can take up to several minutes. avail mem={f2(cb)} GB")
        L.log(t + 1.2, f"Capture cuda graph bs {bs}")
        gu = [0.8412, 0.8409, 0.8431][i]
        cap_s = [10.84, 10.62, 11.07][i]
        mems = [cb - gu * j / len(bs) for j in range(len(bs))]
        L.raw(t + 1.1 + cap_s - 0.05, capture_bar(bs[::-1], mems, cap_s - 0.3, "bs"))
        L.log(
            t + 1.1 + cap_s,
            f"Capture cuda graph end. Time elapsed: {cap_s:.2f} s. mem usage={f2(gu)} GB. avail mem={f2(cb - gu)} GB.",
        )
        t += 1.5 + cap_s
        L.log(
            t,
            f"max_total_num_tokens={T}, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests={mrr}, context_len={ctx}, available_gpu_mem={f2(cb - gu)} GB",
        )
        L.uvicorn(t + 0.3, f"Started server process [{pid}]")
        L.uvicorn(t + 0.3, "Waiting for application startup.")
        L.uvicorn(t + 0.3, "Application startup complete.")
        L.uvicorn(t + 0.3, "Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)")
        L.uvicorn(t + 1.3, f'127.0.0.1:{48112 + 40 * i} - "GET /model_info HTTP/1.1" 200 OK')
        L.log(
            t + 1.6,
            "Prefill batch, #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, #pending-token: 0, cuda graph: False, input throughput (token/s): 0.00",
        )
        L.uvicorn(t + 2.1, f'127.0.0.1:{48120 + 40 * i} - "POST /generate HTTP/1.1" 200 OK')
        L.log(t + 2.1, "The server is fired up and ready to roll!")
        t += 14
        new, cached = [(5120, 0), (4876, 1190), (6004, 2310)][i]
        L.log(
            t,
            f"Prefill batch, #new-seq: 3, #new-token: {new}, #cached-token: {cached}, token usage: {(new + cached) / T:.2f}, #running-req: 0, #queue-req: 0, #pending-token: 0, cuda graph: False, input throughput (token/s): {[412.09, 388.51, 440.13][i]:.2f}",
        )
        used = new + cached
        for j in range(2):
            used += 120
            thr = [171.34, 168.92, 176.05][i] + 11.8 * j
            L.log(
                t + 1.8 + 1.6 * j,
                f"Decode batch, #running-req: 3, #token: {used}, token usage: {used / T:.2f}, cuda graph: True, gen throughput (token/s): {thr:.2f}, #queue-req: 0",
            )
        for j in range(3):
            L.uvicorn(
                t + 5.2 + 0.3 * j, f'10.3.7.21:{51020 + 13 * j + 100 * i} - "POST /v1/chat/completions HTTP/1.1" 200 OK'
            )
        stop = [1588.0, 1351.0, 722.0][i]
        L.log(stop, "SIGTERM received. signum=None frame=None. Draining requests and shutting down...")
        L.log(stop + 3.0, "Gracefully exiting... Remaining number of requests 0. Remaining requests remaining_rids=[].")
        text.append(L.render())
        out.append((f, kvd, T, round(k + v, 2)))
    write("sglang-0.5/restarts-0.5.12.log", "".join(text))
    return out


# =============================================================================
# 8. Failures: 0.5.6 not-enough-memory, 0.5.18 CUDA-graph OOM (TP2), 0.5.16 weights leave no memory
# =============================================================================


def frame(path: str, line: int, func: str, code: str, caret_from: str | None = None) -> str:
    """One traceback frame as Python 3.11+ prints it (carets under the call when partial)."""
    out = f'  File "{path}", line {line}, in {func}\n    {code}'
    if caret_from is not None:
        col = code.index(caret_from)
        out += "\n    " + " " * col + "^" * (len(code) - col)
    return out


def sample_056_crash():
    L = Log(dt.datetime(2025, 12, 11, 15, 32, 48), "ymd", seed=56)
    sg = "/sgl-workspace/sglang/python/sglang"
    py = "/usr/local/lib/python3.12/dist-packages"
    model = "/models/Qwen2.5-32B-Instruct"
    f = 0.55
    layers, kv_heads, head_dim = 64, 8, 128
    cell = kv_heads * head_dim * layers * 2 * 2
    m_pre = 78.9307
    w = 61.0356
    m_post = m_pre - w
    T = kv_tokens_era_a(m_post, m_pre, f, cell)
    assert T <= 0
    L.raw(
        0.0,
        warn(
            f"{py}/torch/cuda/__init__.py",
            63,
            "FutureWarning",
            "The pynvml package is deprecated. Please install nvidia-ml-py instead. If you did not install pynvml directly, please report this to the maintainers of the package that installed pynvml for you.",
            "import pynvml  # type: ignore[import]",
        ),
    )
    sa = server_args_dataclass(
        "0.5.6",
        "0.5.9-dev",
        {
            "model_path": r(model),
            "tokenizer_path": r(model),
            "host": r("0.0.0.0"),
            "port": "30000",
            "mem_fraction_static": r(f),
            "random_seed": "385120457",
            "served_model_name": r(model),
            "attention_backend": r("fa3"),
            "sampling_backend": r("flashinfer"),
            "cuda_graph_max_bs": "256",
            "cuda_graph_bs": r(bs_default(256)),
        },
    )
    L.log(1.2, sa)
    L.log(1.3, "Using default HuggingFace chat template with detected content format: string")
    L.log(8.4, "Init torch distributed begin.")
    L.log(8.7, "Init torch distributed ends. mem usage=0.00 GB")
    L.log(9.5, f"Load weight begin. avail mem={f2(m_pre)} GB")
    L.raw(24.0, shards_bar(17, 14.3, rng=random.Random(56)))
    L.log(
        24.1,
        f"Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem={f2(m_post)} GB, mem usage={f2(w)} GB.",
    )
    L.log(24.2, "Using KV cache dtype: torch.bfloat16")
    tb = "\n".join(
        [
            "Traceback (most recent call last):",
            frame(
                f"{sg}/srt/managers/scheduler.py", 2798, "run_scheduler_process", "scheduler = Scheduler(", "Scheduler("
            ),
            frame(f"{sg}/srt/managers/scheduler.py", 331, "__init__", "self.init_model_worker()"),
            frame(
                f"{sg}/srt/managers/scheduler.py",
                486,
                "init_model_worker",
                "self.tp_worker = TpModelWorker(",
                "TpModelWorker(",
            ),
            frame(
                f"{sg}/srt/managers/tp_worker.py", 251, "__init__", "self._model_runner = ModelRunner(", "ModelRunner("
            ),
            frame(f"{sg}/srt/model_executor/model_runner.py", 347, "__init__", "self.initialize(min_per_gpu_memory)"),
            frame(f"{sg}/srt/model_executor/model_runner.py", 461, "initialize", "self.init_memory_pool("),
            frame(f"{sg}/srt/model_executor/model_runner.py", 1874, "init_memory_pool", "raise RuntimeError("),
            f"RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: self.server_args.mem_fraction_static={f!r}",
            "",
        ]
    )
    L.log(24.6, "Scheduler hit an exception: " + tb)
    L.log(24.7, "Received sigquit from a child process. It usually means the child failed.")
    write("sglang-0.5/crash-oom-0.5.6.log", L.render())
    return {"rest": m_post - m_pre * (1 - f), "T": T}


def sample_0518_cuda_oom():
    rng = random.Random(518)
    L = Log(dt.datetime(2026, 8, 3, 22, 14, 9), "ymd", seed=518)
    py = "/opt/sglang/venv/lib/python3.12/site-packages"
    sg = f"{py}/sglang"
    model = "/models/Llama-3.3-70B-Instruct"
    tp, f, ctx, page = 2, 0.96, 131072, 1
    layers, kv_heads, head_dim = 80, 8, 128
    h = kv_heads // tp
    cell = h * (head_dim + head_dim) * layers * 2
    m_pre = [78.3712, 78.1608]  # GPU1 also holds 210 MiB of another process
    w = [65.7641, 65.7641]
    m_post = [a - b for a, b in zip(m_pre, w)]
    T = page_round(kv_tokens_era_bc(min(m_post), min(m_pre), f, cell), page)
    est = min(max(int(T / ctx * 512), 2048), 4096)
    req_pool = (est + 1) * (ctx + 4) * 4 / GiB
    k, v = mha_sizes(T, page, h, head_dim, layers, 2)
    bs = bs_default(256)
    pbs = PREFILL_GRAPH_BS
    cgc = (
        f"CudaGraphConfig(decode=PhaseConfig(backend='full', max_bs=256, bs={bs}, tc_compiler='eager', "
        f"full_prefill_max_req=None, full_prefill_prefix_chunk_tokens=None), prefill=PhaseConfig("
        f"backend='disabled', max_bs=8192, bs={pbs}, tc_compiler='eager', full_prefill_max_req=None, "
        f"full_prefill_prefix_chunk_tokens=None))"
    )
    L.raw(
        0.0,
        f"{sg}/launch_server.py:57: UserWarning: 'python -m sglang.launch_server' is still supported, but 'sglang serve' is the recommended entrypoint.\n"
        "  Example: sglang serve --model-path <model> [options]\n  warnings.warn(",
    )
    L.log(2.6, "Attention backend not specified. Use fa3 backend by default.")
    sa = server_args_dataclass(
        "0.5.18",
        "0.5.19",
        {
            "model_path": r(model),
            "tokenizer_path": r(model),
            "host": r("0.0.0.0"),
            "port": "30000",
            "mem_fraction_static": r(f),
            "tp_size": "2",
            "random_seed": "699014727",
            "served_model_name": r("llama-3.3-70b"),
            "attention_backend": r("fa3"),
            "sampling_backend": r("flashinfer"),
            "cuda_graph_config": cgc,
            "tool_call_parser": r("llama3"),
        },
    )
    L.log(2.9, sa)
    L.log(3.0, "Using default HuggingFace chat template with detected content format: string")
    C = Clocks(tp, 27.8, 0.5, rng)
    tags = ["TP0", "TP1"]
    for g in range(tp):
        L.log(C.step(g, 0.0, 0.02), "Init torch distributed begin.", tags[g])
        L.raw(
            C.step(g, 0.4, 0.7),
            f"[Gloo] Rank {g} is connected to 1 peer ranks. Expected number of connected peer ranks is : 1",
        )
    C.sync(0.0, 0.2)
    for g in range(tp):
        L.log(
            C.step(g, 0.3, 0.4),
            f"Init torch distributed ends. elapsed={C.t[g] - 27.8:.2f} s, mem usage={0.81 + 0.01 * g:.2f} GB",
            tags[g],
        )
        L.log(C.step(g, 0.9, 1.3), f"Load weight begin. avail mem={f2(m_pre[g])} GB", tags[g])
    lt0 = C.t[:]
    C.sync(21.0, 22.5)
    for g in range(tp):
        L.log(
            C.step(g, 0.0, 0.3),
            f"Load weight end. elapsed={C.t[g] - lt0[g]:.2f} s, type=LlamaForCausalLM, avail mem={f2(m_post[g])} GB, mem usage={f2(w[g])} GB.",
            tags[g],
        )
    L.raw(C.t[0] - 0.01, shards_bar(30, 21.4, rng=rng, every=2))
    C.sync(0.2, 0.4)
    cap = {}
    for g in range(tp):
        L.log(
            C.step(g, 0.3, 0.5),
            f"KV Cache is allocated. dtype: torch.bfloat16, #tokens: {T}, K size: {f2(k)} GB, V size: {f2(v)} GB",
            tags[g],
        )
        pe = m_post[g] - k - v - req_pool - 0.0114
        L.log(C.step(g, 0.02, 0.08), f"Memory pool end. avail mem={f2(pe)} GB", tags[g])
        L.log(
            C.step(g, 0.1, 0.2),
            "Disable prefill CUDA graph because cuda_graph_config resolved prefill.backend='disabled' (e.g. via --cuda-graph-backend-prefill=disabled or auto-disable rules).",
            tags[g],
        )
        cb = pe - 0.0533
        cap[g] = (C.step(g, 0.2, 0.3), cb)
        L.log(
            cap[g][0],
            f"Capture target decode CUDA graph begin. backend=full, num_tokens_per_req=1, bs={bs}, avail mem={f2(cb)} GB",
            tags[g],
        )
    # TP0's bar stops where TP1 dies (bs=120 is the 18th of 36 sizes)
    tfail = max(C.t) + 6.3
    done = 17
    rev = bs[::-1]
    per_bs = 2.02 / done
    mems = [cap[0][1] - per_bs * i for i in range(done + 1)]
    from sg import tqdm_line, tqdm_state

    states = [tqdm_state(0, len(bs), 0.0)]
    for i in range(done + 1):
        states.append(tqdm_state(i, len(bs), 0.35 * i, f"Capturing batches (bs={rev[i]} avail_mem={mems[i]:.2f} GB)"))
    L.raw(tfail - 0.1, tqdm_line(states))
    oom = (
        "CUDA out of memory. Tried to allocate 58.72 MiB. GPU 1 has a total capacity of 79.19 GiB of which 41.88 MiB is free. "
        "Process 3813 has 210.00 MiB memory in use. Including non-PyTorch memory, this process has 78.94 GiB memory in use. "
        "Of the allocated memory 77.46 GiB is allocated by PyTorch, with 1.97 GiB allocated in private pools (e.g., CUDA Graphs), "
        "and 602.31 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  "
        "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"
    )
    msg = (
        "Possible solutions:\n1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
        "2. set --cuda-graph-max-bs-decode to a smaller value (e.g., 16)\n"
        "3. disable decode CUDA graph by --cuda-graph-backend-decode=disabled. (Not recommended. Huge performance loss)\n"
        "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose \n"
    )
    run = f"{sg}/srt/model_executor/runner/decode_cuda_graph_runner.py"
    tb = "\n".join(
        [
            "Traceback (most recent call last):",
            frame(run, 433, "__init__", "self.capture()"),
            frame(
                run,
                598,
                "capture",
                ") = self.capture_one_batch_size(bs, forward, stream_idx)",
                "self.capture_one_batch_size(",
            ),
            frame(run, 781, "capture_one_batch_size", "run_once()"),
            frame(run, 762, "run_once", "logits_output_or_pp_proxy_tensors = forward(", "forward("),
            frame(
                f"{py}/torch/utils/_contextlib.py",
                120,
                "decorate_context",
                "return func(*args, **kwargs)",
                "func(*args, **kwargs)",
            ),
            frame(
                f"{sg}/srt/models/llama.py", 487, "forward", "return self.logits_processor(", "self.logits_processor("
            ),
            frame(
                f"{py}/torch/nn/modules/module.py",
                1775,
                "_wrapped_call_impl",
                "return self._call_impl(*args, **kwargs)",
                "self._call_impl(*args, **kwargs)",
            ),
            frame(
                f"{py}/torch/nn/modules/module.py",
                1786,
                "_call_impl",
                "return forward_call(*args, **kwargs)",
                "forward_call(*args, **kwargs)",
            ),
            frame(
                f"{sg}/srt/layers/logits_processor.py",
                402,
                "forward",
                "logits = self._get_logits(pruned_states, lm_head, logits_metadata)",
                "self._get_logits(pruned_states, lm_head, logits_metadata)",
            ),
            frame(
                f"{sg}/srt/layers/logits_processor.py",
                619,
                "_get_logits",
                "logits = tensor_model_parallel_all_gather(logits)",
                "tensor_model_parallel_all_gather(logits)",
            ),
            frame(
                f"{sg}/srt/distributed/communication_op.py",
                23,
                "tensor_model_parallel_all_gather",
                "return get_tp_group().all_gather(input_, dim)",
                "get_tp_group().all_gather(input_, dim)",
            ),
            frame(
                f"{sg}/srt/distributed/parallel_state.py",
                940,
                "all_gather",
                "output_tensor = torch.empty(",
                "torch.empty(",
            ),
            f"torch.OutOfMemoryError: {oom}",
            "",
            "During handling of the above exception, another exception occurred:",
            "",
            "Traceback (most recent call last):",
            frame(
                f"{sg}/srt/managers/scheduler.py", 4106, "run_scheduler_process", "scheduler = Scheduler(", "Scheduler("
            ),
            frame(f"{sg}/srt/managers/scheduler.py", 412, "__init__", "self.init_model_worker()"),
            frame(f"{sg}/srt/managers/scheduler.py", 688, "init_model_worker", "self.init_tp_model_worker()"),
            frame(
                f"{sg}/srt/managers/scheduler.py",
                641,
                "init_tp_model_worker",
                "self.tp_worker = TpModelWorker(**worker_kwargs)",
                "TpModelWorker(**worker_kwargs)",
            ),
            frame(f"{sg}/srt/managers/tp_worker.py", 272, "__init__", "self._init_model_runner()"),
            frame(
                f"{sg}/srt/managers/tp_worker.py",
                355,
                "_init_model_runner",
                "self._model_runner = ModelRunner(",
                "ModelRunner(",
            ),
            frame(
                f"{sg}/srt/model_executor/model_runner.py", 452, "__init__", "self.initialize(pre_model_load_memory)"
            ),
            frame(f"{sg}/srt/model_executor/model_runner.py", 701, "initialize", "self.init_device_graphs()"),
            frame(f"{sg}/srt/model_executor/model_runner.py", 1377, "init_device_graphs", "capture_decode_graph(self)"),
            frame(
                f"{sg}/srt/model_executor/model_runner_components/cuda_graph_setup.py",
                141,
                "capture_decode_graph",
                "runner = DecodeCudaGraphRunner(model_runner)",
                "DecodeCudaGraphRunner(model_runner)",
            ),
            frame(run, 435, "__init__", "raise Exception("),
            f"Exception: Capture cuda graph failed: {oom}\n{msg}",
            "",
        ]
    )
    L.log(tfail, "Scheduler hit an exception: " + tb, "TP1")
    L.log(tfail + 0.2, "Received sigquit from a child process. It usually means the child failed.")
    write("sglang-0.5/crash-cuda-oom-0.5.18.log", L.render())
    return {"T": T, "cap_begin": [round(cap[g][1], 2) for g in range(tp)]}


def sample_0516_no_memory():
    rng = random.Random(516)
    L = Log(dt.datetime(2026, 7, 7, 6, 55, 31), "ymd", seed=516)
    py = "/home/ml/miniforge3/envs/sglang/lib/python3.12/site-packages"
    sg = f"{py}/sglang"
    model = "/nfs/models/Mixtral-8x7B-Instruct-v0.1"
    tp, f = 2, 0.5
    m_pre = [78.6623, 78.6481]
    w = [43.5396, 43.5396]
    m_post = [a - b for a, b in zip(m_pre, w)]
    pre, post = min(m_pre), min(m_post)
    minimum = 1 - post / pre
    assert post - pre * (1 - f) <= 0
    bs = bs_default(256)
    pbs = PREFILL_GRAPH_BS
    cgc = (
        f"CudaGraphConfig(decode=PhaseConfig(backend='full', max_bs=256, bs={bs}, tc_compiler='eager', "
        f"full_prefill_max_req=None), prefill=PhaseConfig(backend='disabled', max_bs=8192, bs={pbs}, "
        f"tc_compiler='eager', full_prefill_max_req=None))"
    )
    L.raw(
        0.0,
        f"{sg}/launch_server.py:56: UserWarning: 'python -m sglang.launch_server' is still supported, but 'sglang serve' is the recommended entrypoint.\n"
        "  Example: sglang serve --model-path <model> [options]\n  warnings.warn(",
    )
    L.log(2.2, "Attention backend not specified. Use flashinfer backend by default.")
    sa = server_args_dataclass(
        "0.5.16",
        "0.5.19",
        {
            "model_path": r(model),
            "tokenizer_path": r(model),
            "host": r("127.0.0.1"),
            "port": "30000",
            "mem_fraction_static": r(f),
            "tp_size": "2",
            "random_seed": "18813672",
            "served_model_name": r(model),
            "attention_backend": r("flashinfer"),
            "sampling_backend": r("flashinfer"),
            "cuda_graph_config": cgc,
        },
    )
    L.log(2.5, sa)
    L.log(2.6, "Using default HuggingFace chat template with detected content format: string")
    C = Clocks(tp, 19.6, 0.4, rng)
    tags = ["TP0", "TP1"]
    for g in range(tp):
        L.log(C.step(g, 0.0, 0.02), "Init torch distributed begin.", tags[g])
        L.raw(
            C.step(g, 0.4, 0.6),
            f"[Gloo] Rank {g} is connected to 1 peer ranks. Expected number of connected peer ranks is : 1",
        )
    C.sync(0.0, 0.2)
    for g in range(tp):
        L.log(
            C.step(g, 0.3, 0.4),
            f"Init torch distributed ends. elapsed={C.t[g] - 19.6:.2f} s, mem usage={0.68 + 0.01 * g:.2f} GB",
            tags[g],
        )
        L.log(C.step(g, 0.8, 1.1), f"Load weight begin. avail mem={f2(m_pre[g])} GB", tags[g])
    lt0 = C.t[:]
    C.sync(44.0, 46.0)
    for g in range(tp):
        L.log(
            C.step(g, 0.0, 0.4),
            f"Load weight end. elapsed={C.t[g] - lt0[g]:.2f} s, type=MixtralForCausalLM, avail mem={f2(m_post[g])} GB, mem usage={f2(w[g])} GB.",
            tags[g],
        )
    L.raw(C.t[0] - 0.01, shards_bar(19, 44.3, rng=rng))
    C.sync(0.1, 0.3)
    kvc = f"{sg}/srt/mem_cache/kv_cache_configurator.py"
    err = (
        f"ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static={f}. "
        f"Raise --mem-fraction-static above {minimum + 0.00049:.3f} (minimum viable = 1 - available/pre = {minimum:.4f}). "
        "If using speculative decoding, draft weights are now counted."
    )
    for g in range(tp):
        tb = "\n".join(
            [
                "Traceback (most recent call last):",
                frame(
                    f"{sg}/srt/managers/scheduler.py",
                    3987,
                    "run_scheduler_process",
                    "scheduler = Scheduler(",
                    "Scheduler(",
                ),
                frame(f"{sg}/srt/managers/scheduler.py", 405, "__init__", "self.init_model_worker()"),
                frame(f"{sg}/srt/managers/scheduler.py", 671, "init_model_worker", "self.init_tp_model_worker()"),
                frame(
                    f"{sg}/srt/managers/scheduler.py",
                    626,
                    "init_tp_model_worker",
                    "self.tp_worker = TpModelWorker(**worker_kwargs)",
                    "TpModelWorker(**worker_kwargs)",
                ),
                frame(f"{sg}/srt/managers/tp_worker.py", 270, "__init__", "self._init_model_runner()"),
                frame(
                    f"{sg}/srt/managers/tp_worker.py",
                    353,
                    "_init_model_runner",
                    "self._model_runner = ModelRunner(",
                    "ModelRunner(",
                ),
                frame(
                    f"{sg}/srt/model_executor/model_runner.py",
                    449,
                    "__init__",
                    "self.initialize(pre_model_load_memory)",
                ),
                frame(
                    f"{sg}/srt/model_executor/model_runner.py",
                    664,
                    "initialize",
                    "self.init_memory_pool(pre_model_load_memory)",
                ),
                frame(
                    f"{sg}/srt/model_executor/model_runner.py",
                    1215,
                    "init_memory_pool",
                    "result = self.kv_cache_configurator.configure(",
                    "self.kv_cache_configurator.configure(",
                ),
                frame(
                    kvc,
                    431,
                    "configure",
                    "config = self._resolve_memory_pool_config(pre_model_load_memory)",
                    "self._resolve_memory_pool_config(pre_model_load_memory)",
                ),
                frame(
                    kvc,
                    2944,
                    "_resolve_memory_pool_config",
                    "available_bytes = self._profile_available_bytes(pre_model_load_memory)",
                    "self._profile_available_bytes(pre_model_load_memory)",
                ),
                frame(kvc, 2821, "_profile_available_bytes", "raise ValueError("),
                err,
                "",
            ]
        )
        L.log(C.step(g, 0.05, 0.2), "Scheduler hit an exception: " + tb, tags[g])
    L.log(max(C.t) + 0.1, "Received sigquit from a child process. It usually means the child failed.")
    write("sglang-0.5/fail-weights-leave-no-memory-0.5.16.log", L.render())
    return {"minimum": minimum, "pre": pre, "post": post}


# =============================================================================
# 9. The seed scenario: Kimi-K2.5 INT4 on 8 x 96 GB, TP8, EAGLE-3, 0.5.10.post1
# =============================================================================

KIMI = {
    "f": 0.88,
    "mrr": 48,
    "ctx": 262144,
    "page": 1,
    "latent": 576,
    "layers": 61,
    # per-rank free GiB before the target weights (TP5 is the tightest GPU)
    "m_pre": [94.0512, 94.0587, 94.0553, 94.0609, 94.0531, 94.0400, 94.0576, 94.0498],
    "w": [72.33142, 72.33121, 72.33158, 72.33117, 72.33133, 72.33114, 72.33149, 72.33127],
    # free GiB wanted after the last (draft extend) graph capture
    "final": [7.4327, 7.4468, 7.4513, 7.4581, 7.4419, 7.4302, 7.4552, 7.4436],
    "draft_w": 1.9013,
    "draft_kv_heads": 1,
    "draft_head_dim": 128,
}


def kimi_numbers():
    K = KIMI
    cell = K["latent"] * K["layers"] * 2
    m_post = [a - b for a, b in zip(K["m_pre"], K["w"])]
    T = page_round(kv_tokens_era_bc(min(m_post), min(K["m_pre"]), K["f"], cell), K["page"])
    kv = mla_size(T, K["page"], K["latent"], K["layers"], 2)
    dk, dv = mha_sizes(T, K["page"], K["draft_kv_heads"], K["draft_head_dim"], 1, 2)
    req_pool = (K["mrr"] + 1) * (K["ctx"] + 4) * 4 / GiB
    host_tokens = (int(T * 2.0) // K["page"] + 1) * K["page"]
    host_gb = host_tokens * cell / 1e9
    ranks = []
    for g in range(8):
        r_ = {"pre": K["m_pre"][g], "post": m_post[g]}
        r_["pool_end"] = m_post[g] - kv - req_pool - 0.0061
        r_["cap_begin"] = r_["pool_end"] - 0.1187
        r_["draft_begin"] = None
        fixed = 0.0013 + K["draft_w"] + dk + dv + 0.0019 + 0.0087
        slack = r_["cap_begin"] - fixed - K["final"][g]
        r_["g_target"] = slack * 0.641
        r_["g_draft"] = slack * 0.229
        r_["g_extend"] = slack - r_["g_target"] - r_["g_draft"]
        r_["cap_end"] = r_["cap_begin"] - r_["g_target"]
        r_["draft_begin"] = r_["cap_end"] - 0.0013
        r_["draft_end"] = r_["draft_begin"] - K["draft_w"]
        r_["draft_pool_end"] = r_["draft_end"] - dk - dv - 0.0019
        r_["d_begin"] = r_["draft_pool_end"] - 0.0087
        r_["d_end"] = r_["d_begin"] - r_["g_draft"]
        r_["e_end"] = r_["d_end"] - r_["g_extend"]
        assert abs(r_["e_end"] - K["final"][g]) < 1e-9
        ranks.append(r_)
    return {
        "cell": cell,
        "T": T,
        "kv": kv,
        "dk": dk,
        "dv": dv,
        "ranks": ranks,
        "host_tokens": host_tokens,
        "host_gb": host_gb,
        "req_pool": req_pool,
    }


def kimi_launch(start: dt.datetime, hicache: bool, seed: int, pid: int) -> str:
    K = KIMI
    N = kimi_numbers()
    T = N["T"]
    assert T == 159277, T
    rng = random.Random(seed)
    L = Log(start, "ymd", seed=seed)
    py = "/opt/sglang/.venv/lib/python3.12/site-packages"
    model = "/models/Kimi-K2.5-INT4"
    draft = "/models/Kimi-K2.5-Eagle3"
    tp = 8
    bs = list(range(1, 17)) + list(range(18, 33, 2)) + [40, 48]
    L.raw(
        0.0,
        f"{py}/sglang/launch_server.py:51: UserWarning: 'python -m sglang.launch_server' is still supported, but 'sglang serve' is the recommended entrypoint.\n"
        "  Example: sglang serve --model-path <model> [options]\n  warnings.warn(",
    )
    L.raw(
        0.1,
        warn(
            f"{py}/torch/cuda/__init__.py",
            63,
            "FutureWarning",
            "The pynvml package is deprecated. Please install nvidia-ml-py instead. If you did not install pynvml directly, please report this to the maintainers of the package that installed pynvml for you.",
            "import pynvml  # type: ignore[import]",
        ),
    )
    L.raw(2.7, "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1")
    ov = {
        "model_path": r(model),
        "tokenizer_path": r(model),
        "host": r("0.0.0.0"),
        "port": "30000",
        "trust_remote_code": "True",
        "mem_fraction_static": r(K["f"]),
        "max_running_requests": str(K["mrr"]),
        "chunked_prefill_size": "8192",
        "max_prefill_tokens": "16384",
        "page_size": "1",
        "tp_size": "8",
        "random_seed": str(seed * 7919 % 1000000007),
        "served_model_name": r("kimi-k2.5"),
        "attention_backend": r("fa3"),
        "sampling_backend": r("flashinfer"),
        "kv_cache_dtype": r("auto"),
        "speculative_algorithm": r("EAGLE3"),
        "speculative_draft_model_path": r(draft),
        "speculative_num_steps": "3",
        "speculative_eagle_topk": "1",
        "speculative_num_draft_tokens": "4",
        "cuda_graph_max_bs": "48",
        "cuda_graph_bs": r(bs),
        "disable_piecewise_cuda_graph": "True",
        "pre_warm_nccl": "True",
        "reasoning_parser": r("kimi_k2"),
        "tool_call_parser": r("kimi_k2"),
        "enable_metrics": "True",
        "watchdog_timeout": "900",
        "dist_timeout": "3600",
        "hicache_mem_layout": r("layer_first"),
    }
    if hicache:
        ov.update(
            {
                "enable_hierarchical_cache": "True",
                "hicache_ratio": "2.0",
                "hicache_write_policy": r("write_through"),
                "hicache_io_backend": r("kernel"),
            }
        )
    L.log(3.0, server_args_dataclass("0.5.10.post1", "0.5.10.post1", ov))
    L.log(3.1, "Using default HuggingFace chat template with detected content format: openai")
    C = Clocks(tp, 41.2, 1.6, rng)
    tags = [f"TP{g}" for g in range(tp)]
    R = N["ranks"]
    for g in range(tp):
        L.log(C.step(g, 0.0, 0.05), "Init torch distributed begin.", tags[g])
        L.raw(
            C.step(g, 1.4, 2.2),
            f"[Gloo] Rank {g} is connected to 7 peer ranks. Expected number of connected peer ranks is : 7",
        )
    C.sync(0.0, 0.3)
    L.log(C.t[0] - 0.4, "sglang is using nccl==2.27.3", tags[0])
    t_init = C.t[:]
    for g in range(tp):
        L.log(
            C.step(g, 0.35, 0.5),
            f"NCCL/RCCL warmup completed in {C.t[g] - t_init[g] + 0.018:.3f}s (tp_size=8, pp_size=1, ep_size=1)",
            tags[g],
        )
        L.log(
            C.step(g, 0.05, 0.2),
            f"Init torch distributed ends. elapsed={C.t[g] - 41.2 + 0.4:.2f} s, mem usage={0.93 + 0.004 * g:.2f} GB",
            tags[g],
        )
        L.log(C.step(g, 0.6, 1.1), f"Load weight begin. avail mem={f2(R[g]['pre'])} GB", tags[g])
    lt0 = C.t[:]
    C.sync(296.0, 301.0)
    for g in range(tp):
        L.log(
            C.step(g, 0.0, 0.8),
            f"Load weight end. elapsed={C.t[g] - lt0[g]:.2f} s, type=KimiK25ForConditionalGeneration, quant=compressed-tensors, fmt=pack-quantized, avail mem={f2(R[g]['post'])} GB, mem usage={f2(R[g]['pre'] - R[g]['post'])} GB.",
            tags[g],
        )
    L.raw(C.t[0] - 0.01, shards_bar(64, C.t[0] - lt0[0] - 0.3, rng=rng, every=2))
    C.sync(0.3, 0.7)
    L.log(C.t[0] - 0.05, "Using KV cache dtype: torch.bfloat16", tags[0])
    cap = {}
    for g in range(tp):
        L.log(C.step(g, 0.1, 0.3), f"KV Cache is allocated. #tokens: {T}, KV size: {f2(N['kv'])} GB", tags[g])
        L.log(C.step(g, 0.02, 0.08), f"Memory pool end. avail mem={f2(R[g]['pool_end'])} GB", tags[g])
        L.log(
            C.step(g, 0.02, 0.05), "Disable piecewise CUDA graph because --disable-piecewise-cuda-graph is set", tags[g]
        )
        cap[g] = C.step(g, 0.4, 0.8)
        L.log(
            cap[g],
            f"Capture cuda graph begin. This can take up to several minutes. avail mem={f2(R[g]['cap_begin'])} GB",
            tags[g],
        )
    C.sync(37.0, 38.2)
    for g in range(tp):
        te = C.t[g]
        if g == 0:
            L.log(cap[g] + 0.1, f"Capture cuda graph bs {bs}", tags[g])
            mems = [R[0]["cap_begin"] - R[0]["g_target"] * i / len(bs) for i in range(len(bs))]
            L.raw(te - 0.05, capture_bar(bs[::-1], mems, te - cap[g] - 0.4, "bs"))
        L.log(
            te,
            f"Capture cuda graph end. Time elapsed: {te - cap[g]:.2f} s. mem usage={f2(R[g]['g_target'])} GB. avail mem={f2(R[g]['cap_end'])} GB.",
            tags[g],
        )
        L.log(C.step(g, 0.3, 0.6), f"Load weight begin. avail mem={f2(R[g]['draft_begin'])} GB", tags[g])
        cap[g] = C.t[g]
    C.sync(3.6, 4.4)
    for g in range(tp):
        L.log(
            C.step(g, 0.0, 0.3),
            f"Load weight end. elapsed={C.t[g] - cap[g]:.2f} s, type=LlamaForCausalLMEagle3, avail mem={f2(R[g]['draft_end'])} GB, mem usage={f2(R[g]['draft_begin'] - R[g]['draft_end'])} GB.",
            tags[g],
        )
    C.sync(0.1, 0.4)
    L.log(C.t[0] - 0.03, "Using KV cache dtype: torch.bfloat16", tags[0])
    for g in range(tp):
        L.log(
            C.step(g, 0.05, 0.15),
            f"KV Cache is allocated. #tokens: {T}, K size: {f2(N['dk'])} GB, V size: {f2(N['dv'])} GB",
            tags[g],
        )
        L.log(C.step(g, 0.02, 0.06), f"Memory pool end. avail mem={f2(R[g]['draft_pool_end'])} GB", tags[g])
        cap[g] = C.step(g, 0.3, 0.5)
        L.log(
            cap[g],
            f"Capture draft cuda graph begin. This can take up to several minutes. avail mem={f2(R[g]['d_begin'])} GB",
            tags[g],
        )
    C.sync(13.1, 13.8)
    for g in range(tp):
        te = C.t[g]
        L.log(
            te,
            f"Capture draft cuda graph end. Time elapsed: {te - cap[g]:.2f} s. mem usage={f2(R[g]['d_begin'] - R[g]['d_end'])} GB. avail mem={f2(R[g]['d_end'])} GB.",
            tags[g],
        )
        cap[g] = C.step(g, 0.05, 0.15)
        L.log(
            cap[g],
            f"Capture draft extend cuda graph begin. This can take up to several minutes. avail mem={f2(R[g]['d_end'])} GB",
            tags[g],
        )
    C.sync(8.4, 9.1)
    for g in range(tp):
        te = C.t[g]
        L.log(
            te,
            f"Capture draft extend cuda graph end. Time elapsed: {te - cap[g]:.2f} s. mem usage={f2(R[g]['d_end'] - R[g]['e_end'])} GB. avail mem={f2(R[g]['e_end'])} GB.",
            tags[g],
        )
    t = max(C.t) + 0.3
    L.log(
        t,
        f"max_total_num_tokens={T}, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests={K['mrr']}, context_len={K['ctx']}, available_gpu_mem={f2(R[0]['e_end'])} GB",
        tags[0],
    )
    if hicache:
        C.sync(0.4, 0.9, at=t)
        for g in range(tp):
            L.log(
                C.step(g, 0.0, 0.2), f"Allocating {N['host_gb']:.2f} GB host memory for hierarchical KV cache.", tags[g]
            )
        t = max(C.t) + 6.8  # pinning ~180 GB of host memory takes a while
    t += 0.8
    L.uvicorn(t, f"Started server process [{pid}]")
    L.uvicorn(t, "Waiting for application startup.")
    L.uvicorn(t + 0.1, "Application startup complete.")
    L.uvicorn(t + 0.1, "Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)")
    L.uvicorn(t + 1.1, f'127.0.0.1:{51210 + seed % 97} - "GET /model_info HTTP/1.1" 200 OK')
    L.log(
        t + 1.5,
        "Prefill batch, #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, cuda graph: False, input throughput (token/s): 0.00",
        tags[0],
    )
    L.uvicorn(t + 3.2, f'127.0.0.1:{51226 + seed % 97} - "POST /generate HTTP/1.1" 200 OK')
    L.log(t + 3.2, "The server is fired up and ready to roll!")
    t += 41.0
    if not hicache:
        prefill = [(1, 18344, 0, 0), (3, 41210, 2311, 1), (2, 27455, 18102, 4)]
        decode = [(6, 2.84, 0.71, 187.44), (6, 2.97, 0.74, 204.91), (6, 2.79, 0.70, 198.36)]
    else:
        prefill = [(1, 18408, 0, 0), (3, 15771, 43904, 1), (2, 9310, 36096, 4)]
        decode = [(6, 2.91, 0.73, 201.18), (6, 2.86, 0.72, 207.52), (6, 3.02, 0.76, 211.09)]
    used = 0
    for i, (n, new, cached, running) in enumerate(prefill):
        used += new + cached
        L.log(
            t + 2.6 * i,
            f"Prefill batch, #new-seq: {n}, #new-token: {new}, #cached-token: {cached}, token usage: {used / T:.2f}, #running-req: {running}, #queue-req: 0, cuda graph: False, input throughput (token/s): {new / (2.4 + i):.2f}",
            tags[0],
        )
    t += 8.3
    for i, (n, al, ar, thr) in enumerate(decode):
        used += int(40 * n * al)
        L.log(
            t + 1.4 * i,
            f"Decode batch, #running-req: {n}, #token: {used}, token usage: {used / T:.2f}, accept len: {al:.2f}, accept rate: {ar:.2f}, cuda graph: True, gen throughput (token/s): {thr:.2f}, #queue-req: 0",
            tags[0],
        )
    for k2 in range(3):
        L.uvicorn(
            t + 5.0 + 0.4 * k2, f'10.16.2.{31 + k2}:{40800 + 17 * k2} - "POST /v1/chat/completions HTTP/1.1" 200 OK'
        )
    if not hicache:
        t += 3481.0
        L.log(t, "SIGTERM received. signum=None frame=None. Draining requests and shutting down...")
        L.log(t + 4.0, "Gracefully exiting... Remaining number of requests 0. Remaining requests remaining_rids=[].")
        for g in rng.sample(range(tp), tp):
            ts = start + dt.timedelta(seconds=t + 5.0 + 0.1 * g)
            L.raw(
                t + 5.0 + 0.1 * g,
                f"[rank{g}]:[W{ts.month}{ts.strftime('%d %H:%M:%S')}.{rng.randrange(10**9):09d} ProcessGroupNCCL.cpp:1538] Warning: WARNING: destroy_process_group() was not called before program exit, which can leak resources. For more info, please see https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())",
            )
    return L.render()


def sample_kimi():
    write("kimi-k25/launch-1-baseline.log", kimi_launch(dt.datetime(2026, 4, 8, 10, 2, 11), False, 1101, 48213))
    write("kimi-k25/launch-2-hicache.log", kimi_launch(dt.datetime(2026, 4, 8, 11, 26, 40), True, 2207, 61877))
    N = kimi_numbers()
    return {k: v for k, v in N.items() if k != "ranks"}


# ==== MAIN ====

if __name__ == "__main__":
    import sys

    for name in sys.argv[1:] or [n for n in dir() if n.startswith("sample_")]:
        print(name, globals()[name]())
