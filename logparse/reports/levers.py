"""What the levers operators pull beyond the fraction share, whatever the engine: more GPUs (the next TP
the engine accepts), fp8 weights (are the weights 16-bit?), CPU offload's cost, and fp8 KV on top of an
option that starts a failed launch.  Each engine's own levers (``logparse.engines.<engine>.levers``)
price them by its own formula and reserve; TP sizes the engine would refuse are never offered
(:mod:`logparse.budget.refusals`).  What the log does not say (the heads, whether weights are 16-bit,
the attention weights) comes from the model config when there is one, else it is named as an
assumption and the risk is not "low".
"""

from __future__ import annotations

from logparse import engines
from logparse.budget.refusals import tp_refusal
from logparse.reports.advice_core import Ctx, Recommendation, allows, risk

#: fp8 weights hold 1 byte per weight for the linear layers; embeddings, lm_head and norms stay 16-bit.
FP8_WEIGHT_SHARE = (0.5, 0.6)
FP8_WEIGHT_ACCURACY = "weights rounded to 8 bits (online fp8): usually a small quality loss; check your eval"


def failed(ctx: Ctx) -> bool:
    return ctx.launch.outcome == "failed"


# --------------------------------------------------------------------------- more GPUs
def heads_words(ctx: Ctx) -> tuple[int | None, int | None, str]:
    cfg = ctx.cfg
    if cfg is None:
        return None, None, "the heads are not in the log: a power-of-two TP is assumed to divide them"
    return (
        cfg.num_attention_heads,
        cfg.num_kv_heads,
        f"{cfg.num_attention_heads} heads, {cfg.num_kv_heads} KV heads (config)",
    )


def next_tp(ctx: Ctx, tp: int, mla: bool) -> int | None:
    """The next TP size (× 2, else × 4, at most 16) the launch's engine would not refuse."""
    heads, kv, _ = heads_words(ctx)
    engine = engines.of(ctx.launch).name
    for t in (tp * 2, tp * 4):
        if t <= 16 and tp_refusal(engine, t, heads, kv, mla=mla) is None:
            return t
    return None


# --------------------------------------------------------------------------- fp8 weights
def weights_16bit(ctx: Ctx) -> tuple[bool | None, str]:
    """Are the weights 16-bit (so fp8 halves them)?  From the config, else what the log's load line says."""
    cfg, launch = ctx.cfg, ctx.launch
    if cfg is not None:
        ok = cfg.quantization is None and cfg.dtype_bytes == 2
        return ok, f"the config: {cfg.dtype}, " + (
            "not quantized" if cfg.quantization is None else cfg.quantization.method
        )
    if (launch.server_args or {}).get("quantization"):
        return False, "--quantization is set"
    ranks = [r for r in launch.ranks if r.worker == "target"]
    if any((r.extra or {}).get("quant") for r in ranks):
        return False, "the load line names the checkpoint's quantization"
    unquantized = engines.of(launch).unquantized_load_line(launch)
    if unquantized is not None:
        return True, unquantized
    return None, "the log does not say whether the checkpoint is quantized"


# --------------------------------------------------------------------------- fp8 KV to start a failed launch
def fp8_kv_on(ctx: Ctx, base: Recommendation, dtype: str) -> Recommendation | None:
    """fp8 KV on top of an option that starts a failed launch: the same pool at half the bytes."""
    if base.kv_tokens is None or not base.possible or base.kind in ("fp8", "fp8_kv_start"):
        return None
    tokens = base.kv_tokens * 2
    rec = Recommendation(
        "fp8_kv_start", f"{base.action}, with kv_cache_dtype {dtype}", base.flags + [f"--kv-cache-dtype {dtype}"],
        tokens, base.kv_gb, base.headroom_gb, dict(base.cost, accuracy="keys and values rounded to 8 bits: check "
        "your eval" + ("; " + base.cost["accuracy"] if base.cost.get("accuracy") not in (None, "", "none") else "")),
        risk("medium", "accuracy is the cost; the attention backend must accept an fp8 KV cache; " + base.risk["why"]),
        reason=f"{base.reason}; at one byte per element the same pool holds twice the tokens", value=base.value,
        left_gb=base.left_gb, starts=base.starts,
    )  # fmt: skip
    rec.gain_tokens = tokens - ctx.b.kv_tokens if ctx.b.kv_tokens is not None else None
    rec.allows = allows(ctx.launch, tokens, ctx.verdict)
    return rec


# --------------------------------------------------------------------------- weights offloaded to the host
OFFLOAD_THROUGHPUT = "every forward pass streams the offloaded weights over PCIe: decode is much slower"
