"""vLLM's levers for one launch: gpu_memory_utilization (inside vLLM's own ceiling and the production
margin of :mod:`logparse.budget.vllm_reserve`), --kv-cache-memory, fp8 KV and max_model_len."""

from __future__ import annotations

from typing import Any

from logparse.budget.formula import GiB
from logparse.launches.model import Launch
from logparse.reports.advice_core import (
    FP8_ACCURACY,
    Ctx,
    Recommendation,
    allows,
    context_value,
    cost,
    floor3,
    not_possible,
    r2,
    risk,
    vllm_has,
    vllm_release,
)  # fmt: skip


# --------------------------------------------------------------------------- vLLM
def vllm_kv(launch: Launch) -> tuple[Any, float | None]:
    from logparse.reports.explain_vllm import binding_rank

    rank = binding_rank(launch)
    return rank, (rank.kv_size_gb if rank is not None else None)


def scaled_tokens(launch: Launch, kv_gb: float | None, new_gb: float) -> int | None:
    """vLLM's tokens for a pool of ``new_gb``: in proportion to the logged pool (whole blocks of B)."""
    if not launch.kv_tokens or not kv_gb or kv_gb <= 0 or new_gb <= 0:
        return None
    block = launch.block_size or 16
    return int(launch.kv_tokens * new_gb / kv_gb) // block * block


def vllm_utilization(ctx: Ctx, reserve: Any) -> list[Recommendation]:
    from logparse.reports.explain_vllm import total_gb

    launch = ctx.launch
    rank, kv = vllm_kv(launch)
    u, total = launch.gpu_memory_utilization, total_gb(launch, rank)
    flag = "--gpu-memory-utilization"
    if u is None or total is None or kv is None:
        return [not_possible("utilization", "change gpu_memory_utilization", [flag],
                             "needs the utilization, the GPU's total memory and the KV pool in GiB; the total is "
                             "printed by V0 0.6.4–0.10.2 and by V1's budget report (0.10.2, 0.26.0+)")]  # fmt: skip
    x = (rank.extra if rank is not None else None) or {}
    free = float(x["free_gb"]) if x.get("free_gb") is not None else float(total)
    outside = 0.0 if reserve.graphs_in_budget else (rank.graph_gb or x.get("graph_estimate_gb") or 0.0)
    if ctx.margin is not None:
        new_u = floor3((free - outside - ctx.margin) / total)
    elif launch.outcome == "failed" and kv <= 0:
        new_u = round(u + (2.0 - kv) / total, 3)  # a 2 GiB pool
    elif reserve.max_utilization is None:
        return [not_possible("utilization", "raise gpu_memory_utilization", [flag],
                             "vLLM's own ceiling needs the GPU's total memory and the free memory at start")]  # fmt: skip
    else:
        new_u = reserve.max_utilization
    if not 0.0 < new_u < 1.0:
        return [not_possible("utilization", "change gpu_memory_utilization", [flag],
                             f"it would need gpu_memory_utilization = {new_u:.3f}, outside (0, 1)")]  # fmt: skip
    if abs(new_u - u) < 0.0005:
        return [not_possible("utilization", f"keep gpu_memory_utilization {u:g}", [],
                             "it is already at vLLM's own ceiling for this GPU")]  # fmt: skip
    new_kv = kv + (new_u - u) * total
    if new_kv <= 0:
        return [not_possible("utilization", f"gpu_memory_utilization {u:g} → {new_u:g}", [f"{flag} {new_u:g}"],
                             "the pool would be empty: weights and the profile take the whole budget")]  # fmt: skip
    return [_vllm_utilization_rec(ctx, u, new_u, kv, new_kv, total, free, outside)]


def _vllm_utilization_rec(ctx: Ctx, u: float, new_u: float, kv: float, new_kv: float, total: float,
                          free: float, outside: float) -> Recommendation:  # fmt: skip
    launch = ctx.launch
    tokens = scaled_tokens(launch, kv, new_kv)
    left = free - new_u * total - outside
    up = new_u > u
    rec = Recommendation(
        "utilization", f"{'raise' if up else 'lower'} gpu_memory_utilization {u:g} → {new_u:g}",
        [f"--gpu-memory-utilization {new_u:g}"], tokens, r2(new_kv), None,
        cost((new_u - u) * total, 0.0, "none", "more KV blocks, no per-token cost" if up else "fewer KV blocks"),
        risk("low" if left >= 0.14 else "high", f"leaves {left:.2f} GiB of the GPU outside the instance"
              + ("" if outside == 0 else f" after {outside:.2f} GiB of CUDA graphs captured outside the budget")
              + "; from 0.9.1 vLLM starts only if u × T is free, so another tenant must fit in the rest"),
        reason=f"vLLM sizes KV as u × T minus its profile: {new_u - u:+.3f} × {total:.2f} GiB = {new_kv - kv:+.2f} GiB "
        f"of KV per rank; its own ceiling keeps the graphs outside the budget and 150 MiB"
        + "".join("; " + n for n in getattr(ctx.reserve, "notes", [])[1:]),
        value=new_u, gain_tokens=(tokens - launch.kv_tokens) if tokens and launch.kv_tokens else None,
    )  # fmt: skip
    rec.allows = allows(launch, tokens, ctx.verdict)
    return rec


def vllm_kv_cache_memory(ctx: Ctx, reserve: Any) -> list[Recommendation]:
    launch = ctx.launch
    rel = vllm_release(launch) or "?"
    if not vllm_has(launch, "--kv-cache-memory"):
        return [not_possible("kv_cache_memory", "set the KV pool in bytes", ["--kv-cache-memory"],
                             f"--kv-cache-memory exists from vLLM 0.10.2 (this launch: {rel})")]  # fmt: skip
    if launch.outcome == "failed":
        return []
    _, kv = vllm_kv(launch)
    if reserve.max_kv_gb is None or kv is None:
        return [not_possible("kv_cache_memory", "set the KV pool in bytes", ["--kv-cache-memory"],
                             "needs the free memory at start and every profile term (the budget report of 0.10.2 "
                             "and 0.26.0+ prints them)")]  # fmt: skip
    size = int(reserve.max_kv_gb * GiB)
    tokens = scaled_tokens(launch, kv, reserve.max_kv_gb)
    rec = Recommendation(
        "kv_cache_memory", f"--kv-cache-memory {size} ({reserve.max_kv_gb:.2f} GiB, vLLM's own 'fully utilize' figure)",
        [f"--kv-cache-memory {size}"], tokens, reserve.max_kv_gb, None,
        cost(reserve.max_kv_gb - kv, 0.0, "none", "skips the memory profile at start"),
        risk("medium", "bypasses gpu_memory_utilization and the profile: if the free memory at start or the "
              "activation peak grows (another process, longer inputs), it runs out of memory"),
        reason="free at start − (weights + activation + non-torch + CUDA graphs) − 150 MiB, from this launch's "
        "budget report", value=float(size),
        gain_tokens=(tokens - launch.kv_tokens) if tokens and launch.kv_tokens else None,
    )  # fmt: skip
    rec.allows = allows(launch, tokens, ctx.verdict)
    return [rec]


def vllm_max_model_len(ctx: Ctx) -> list[Recommendation]:
    launch = ctx.launch
    length, tokens = launch.max_model_len, launch.kv_tokens
    estimate = next(
        (e.fields["estimated_max_model_len"] for e in launch.events if e.fields.get("estimated_max_model_len")), None
    )
    if launch.error_kind == "max_len_exceeds_kv" and (estimate or tokens):
        value = int(estimate or (tokens or 0) // 16 * 16)
        why = "vLLM's own estimate of the longest request the KV memory holds" if estimate else "the pool's tokens"
    elif length and tokens and tokens < length and launch.outcome != "failed":
        value, why = context_value(tokens), "not one request of max_model_len fits the pool"
    else:
        return []
    if value <= 0 or not vllm_has(launch, "--max-model-len"):
        return []
    conc = round(tokens / value, 2) if tokens else None
    return [Recommendation(
        "max_model_len", f"max_model_len {length:,} → {value:,}" if length else f"--max-model-len {value}",
        [f"--max-model-len {value}"], tokens, None, None,
        cost(0.0, 0.0, "none", f"concurrency {conc:.2f}× at the new length" if conc else "the pool does not change"),
        risk("medium", f"rejects requests over {value:,} tokens"), reason=why, gain_tokens=0, value=float(value),
        allows={"max_request_tokens": value, "full_context_requests": conc} if conc else {"max_request_tokens": value},
    )]  # fmt: skip


def vllm_fp8(ctx: Ctx) -> list[Recommendation]:
    launch = ctx.launch
    if launch.outcome == "failed" or launch.kv_cache_dtype not in ("auto", "bfloat16", "float16", "half", None):
        return []
    if not launch.kv_tokens or not vllm_has(launch, "--kv-cache-dtype"):
        return [not_possible("fp8", "fp8 KV cache", ["--kv-cache-dtype fp8"], "no KV token count in the log")]
    _, kv = vllm_kv(launch)
    tokens = launch.kv_tokens * 2
    rec = Recommendation(
        "fp8", "kv_cache_dtype fp8 (half the bytes per token)", ["--kv-cache-dtype fp8"], tokens, kv, None,
        cost(0.0, 0.0, FP8_ACCURACY + "; vLLM's fp8 is e4m3 on CUDA (scales from the checkpoint, else 1.0)",
              "decode reads half the KV bytes; the attention backend must support an fp8 KV cache"),
        risk("medium", "accuracy is the cost; the attention backend must accept an fp8 KV cache"),
        reason="the same pool at one byte per element holds twice the tokens", gain_tokens=tokens - launch.kv_tokens,
    )  # fmt: skip
    rec.allows = allows(launch, tokens, ctx.verdict)
    return [rec]
