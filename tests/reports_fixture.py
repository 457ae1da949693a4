"""A small stand-in for the seed scenario (Kimi-K2.5 INT4, TP8, EAGLE-3, SGLang 0.5.10.post1).

The numbers are the operator's story: ~94.04 GiB free before weights, 72.33 GiB of weights,
mem_fraction_static 0.88, an MLA cache of 61 layers × 576 values × 2 bytes = 70,272 bytes per
token, 7.43 GiB left after the draft model and CUDA graphs.  The token count comes out of the
Era B formula.  Line formats are SGLang 0.5.10.post1's; the ``server_args`` line carries exactly
the 0.5.10.post1 ServerArgs field set (from logparse's version data) so the launch is dated
0.5.10–0.5.10.post1 like a real log.
"""

from __future__ import annotations

from logparse.engines.sglang import versions

GiB = 1 << 30
CELL = 61 * 576 * 2  # 70,272 bytes per token
M_PRE = [94.05, 94.06, 94.06, 94.06, 94.05, 94.04, 94.06, 94.05]
WEIGHTS = 72.33
F = 0.88


def kv_tokens() -> int:
    rest = min(M_PRE) - WEIGHTS - min(M_PRE) * (1 - F)
    return int(rest * GiB) // CELL


def _server_args(hicache: bool) -> str:
    fields = sorted(versions.field_sets()["0.5.10.post1"])
    vals = {
        "model_path": "'/models/Kimi-K2.5-INT4'",
        "tokenizer_path": "'/models/Kimi-K2.5-INT4'",
        "tp_size": "8",
        "dp_size": "1",
        "pp_size": "1",
        "ep_size": "1",
        "mem_fraction_static": "0.88",
        "max_running_requests": "48",
        "page_size": "1",
        "kv_cache_dtype": "'auto'",
        "dtype": "'auto'",
        "chunked_prefill_size": "8192",
        "max_prefill_tokens": "16384",
        "port": "30000",
        "host": "'0.0.0.0'",
        "random_seed": "1234" if not hicache else "98765",
        "device": "'cuda'",
        "trust_remote_code": "True",
        "speculative_algorithm": "'EAGLE3'",
        "speculative_draft_model_path": "'/models/Kimi-K2.5-Eagle3'",
        "speculative_num_steps": "3",
        "speculative_eagle_topk": "1",
        "speculative_num_draft_tokens": "4",
        "enable_hierarchical_cache": "True" if hicache else "False",
        "hicache_ratio": "2.0",
        "hicache_size": "0",
        "hicache_write_policy": "'write_through'",
        "hicache_io_backend": "'kernel'",
        "enable_dp_attention": "False",
        "cuda_graph_max_bs": "48",
        "context_length": "None",
    }
    return "server_args=ServerArgs(" + ", ".join(f"{k}={vals.get(k, 'None')}" for k in fields) + ")"


def kimi_log(
    hicache: bool = False, *, tokens: int | None = None, fraction: float | None = None, minute: int = 2
) -> str:
    """The text of one launch.  ``tokens``/``fraction`` override the pool (to make regressed copies)."""
    t = kv_tokens() if tokens is None else tokens
    kv_gb = (t + 1) * CELL / GiB
    draft_kv_half = (t + 1) * 256 / GiB
    ts = f"2026-04-08 10:{minute:02d}"
    out = [
        f"[{ts}:14] "
        + _server_args(hicache).replace("mem_fraction_static=0.88", f"mem_fraction_static={fraction or F}")
    ]
    for r in range(8):
        out.append(f"[{ts}:52 TP{r}] Init torch distributed begin.")
    for r in range(8):
        out.append(f"[{ts}:56 TP{r}] Init torch distributed ends. elapsed=4.6{r} s, mem usage=0.94 GB")
    for r in range(8):
        out.append(f"[{ts}:57 TP{r}] Load weight begin. avail mem={M_PRE[r]:.2f} GB")
    for r in range(8):
        out.append(
            f"[{ts}:58 TP{r}] Load weight end. elapsed=29{r}.10 s, type=KimiK25ForConditionalGeneration, "
            f"quant=compressed-tensors, fmt=pack-quantized, avail mem={M_PRE[r] - WEIGHTS:.2f} GB, "
            f"mem usage={WEIGHTS:.2f} GB."
        )
    out.append(f"[{ts}:59 TP0] Using KV cache dtype: torch.bfloat16")
    after_pool = []
    for r in range(8):
        ap = M_PRE[r] - WEIGHTS - kv_gb - 0.06
        after_pool.append(ap)
        out.append(f"[{ts}:59 TP{r}] KV Cache is allocated. #tokens: {t}, KV size: {kv_gb:.2f} GB")
        out.append(f"[{ts}:59 TP{r}] Memory pool end. avail mem={ap:.2f} GB")
    for r in range(8):
        out.append(
            f"[{ts}:59 TP{r}] Capture cuda graph begin. This can take up to several minutes. "
            f"avail mem={after_pool[r] - 0.12:.2f} GB"
        )
    out.append(f"[{ts}:59 TP0] Capture cuda graph bs [1, 2, 4, 8, 16, 24, 32, 40, 48]")
    after_graph = []
    for r in range(8):
        ag = after_pool[r] - 0.12 - 1.09
        after_graph.append(ag)
        out.append(
            f"[{ts}:59 TP{r}] Capture cuda graph end. Time elapsed: 37.{r}0 s. mem usage=1.09 GB. "
            f"avail mem={ag:.2f} GB."
        )
    for r in range(8):
        out.append(f"[{ts}:59 TP{r}] Load weight begin. avail mem={after_graph[r]:.2f} GB")
        out.append(
            f"[{ts}:59 TP{r}] Load weight end. elapsed=4.{r}8 s, type=LlamaForCausalLMEagle3, "
            f"avail mem={after_graph[r] - 1.90:.2f} GB, mem usage=1.90 GB."
        )
    for r in range(8):
        dp = after_graph[r] - 1.90 - 2 * draft_kv_half
        out.append(
            f"[{ts}:59 TP{r}] KV Cache is allocated. #tokens: {t}, K size: {draft_kv_half:.2f} GB, "
            f"V size: {draft_kv_half:.2f} GB"
        )
        out.append(f"[{ts}:59 TP{r}] Memory pool end. avail mem={dp:.2f} GB")
        out.append(
            f"[{ts}:59 TP{r}] Capture draft cuda graph begin. This can take up to several minutes. "
            f"avail mem={dp:.2f} GB"
        )
        out.append(
            f"[{ts}:59 TP{r}] Capture draft cuda graph end. Time elapsed: 13.50 s. mem usage=0.39 GB. "
            f"avail mem={dp - 0.39:.2f} GB."
        )
        out.append(
            f"[{ts}:59 TP{r}] Capture draft extend cuda graph begin. This can take up to several minutes. "
            f"avail mem={dp - 0.39:.2f} GB"
        )
        out.append(
            f"[{ts}:59 TP{r}] Capture draft extend cuda graph end. Time elapsed: 8.80 s. mem usage=0.22 GB. "
            f"avail mem={dp - 0.61:.2f} GB."
        )
    final = min(after_graph) - 1.90 - 2 * draft_kv_half - 0.61
    if hicache:
        host_tokens = (t * 2 // 1 + 1) * 1
        for r in range(8):
            out.append(
                f"[{ts}:59 TP{r}] Allocating {host_tokens * CELL / 1e9:.2f} GB host memory for hierarchical KV cache."
            )
    out.append(
        f"[{ts}:59 TP0] max_total_num_tokens={t}, chunked_prefill_size=8192, max_prefill_tokens=16384, "
        f"max_running_requests=48, context_len=262144, available_gpu_mem={final:.2f} GB"
    )
    out.append(f"[2026-04-08 10:{minute + 1:02d}:11] The server is fired up and ready to roll!")
    return "\n".join(out) + "\n"
