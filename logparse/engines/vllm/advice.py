"""vLLM's levers for one launch: gpu_memory_utilization (inside vLLM's own ceiling and the production
margin of :mod:`logparse.engines.vllm.reserve`), --kv-cache-memory, fp8 KV and max_model_len;
:func:`levers` lists them with vLLM's levers of :mod:`logparse.reports.levers`.  The advice's lines on
what sets the pool and on vLLM's own reserve are vLLM's too."""

from __future__ import annotations

from typing import Any

from logparse.budget.model import Budget
from logparse.budget.pools import GiB
from logparse.budget.refusals import kv_fit_refusal
from logparse.engines.vllm import levers as lv
from logparse.engines.vllm.flags import vllm_has, vllm_release
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
    reserve_words,
    risk,
)  # fmt: skip


# --------------------------------------------------------------------------- vLLM
def vllm_kv(launch: Launch) -> tuple[Any, float | None]:
    from logparse.engines.vllm.explain import binding_rank

    rank = binding_rank(launch)
    return rank, (rank.kv_size_gb if rank is not None else None)


def scaled_tokens(launch: Launch, kv_gb: float | None, new_gb: float) -> int | None:
    """vLLM's tokens for a pool of ``new_gb``: in proportion to the logged pool (whole blocks of B)."""
    if not launch.kv_tokens or not kv_gb or kv_gb <= 0 or new_gb <= 0:
        return None
    block = launch.block_size or 16
    return int(launch.kv_tokens * new_gb / kv_gb) // block * block


def vllm_utilization(ctx: Ctx, reserve: Any) -> list[Recommendation]:
    from logparse.engines.vllm.explain import total_gb

    launch = ctx.launch
    rank, kv = vllm_kv(launch)
    u, total = launch.gpu_memory_utilization, reserve.gpu_memory_gb or total_gb(launch, rank)
    flag = "--gpu-memory-utilization"
    if u is not None and total is None and launch.outcome == "failed" and launch.error_kind == "no_kv_memory":
        return failed_start_utilization(ctx, u)
    if u is None or total is None or kv is None:
        return [not_possible("utilization", "change gpu_memory_utilization", [flag],
                             "needs the utilization, the GPU's total memory and the KV pool in GiB; the total is "
                             "printed by V0 0.6.4–0.10.2 and by V1's budget report (0.10.2, 0.26.0+)")]  # fmt: skip
    free = reserve.free_gb if reserve.free_gb is not None else total - 1.0
    outside = 0.0 if reserve.graphs_in_budget else (rank.graph_gb or (rank.extra or {}).get("graph_estimate_gb") or 0.0)
    new_u = _target_utilization(ctx, reserve, u, kv, total, free, outside)
    if isinstance(new_u, str):
        return [not_possible("utilization", "change gpu_memory_utilization", [flag], new_u)]
    if abs(new_u - u) < 0.0005:
        return [not_possible("utilization", f"keep gpu_memory_utilization {u:g}", [],
                             f"it already keeps the {reserve.margin_gb:.2f} GiB production margin at vLLM's ceiling")]  # fmt: skip
    new_kv = kv + (new_u - u) * total
    if new_kv <= 0:
        return [not_possible("utilization", f"gpu_memory_utilization {u:g} → {new_u:g}", [f"{flag} {new_u:g}"],
                             "the pool would be empty: weights and the profile take the whole budget")]  # fmt: skip
    rec = _vllm_utilization_rec(ctx, u, new_u, (kv, new_kv), total, free, outside)
    per = kv * GiB / launch.kv_tokens if launch.kv_tokens else None
    refused = kv_fit_refusal("vllm", rec.kv_tokens, launch.max_model_len, per)
    if refused is not None:
        return [not_possible("utilization", rec.action, rec.flags, refused.text())]
    return [rec]


def _target_utilization(
    ctx: Ctx, reserve: Any, u: float, kv: float, total: float, free: float, outside: float
) -> float | str:
    """The utilization to recommend: the user's margin, a 2 GiB pool after a failed start (inside the
    ceiling), else the ceiling that keeps the production margin; a string says why there is none."""
    if ctx.margin is not None:
        new_u = floor3((free - outside - ctx.margin) / total)
    elif reserve.max_utilization is None:
        return "vLLM's own ceiling needs the GPU's total memory and the free memory at start"
    elif ctx.launch.outcome == "failed" and kv <= 0:
        new_u = round(u + (2.0 - kv) / total, 3)  # a 2 GiB pool
        if new_u > reserve.max_utilization:
            return (f"a 2 GiB pool needs gpu_memory_utilization {new_u:g}, above {reserve.max_utilization:g}, the most "
                    f"that leaves the {reserve.margin_gb:.2f} GiB production margin outside the instance")  # fmt: skip
    else:
        new_u = reserve.max_utilization
    if not 0.0 < new_u < 1.0:
        return f"it would need gpu_memory_utilization = {new_u:.3f}, outside (0, 1)"
    return new_u


def utilization_risk(left: float, margin: float, assumed: bool, outside: float) -> dict[str, str]:
    """Low only when the free memory was measured and the margin is kept; never low on an assumption."""
    where = f"leaves {left:.2f} GiB of the GPU outside the instance" + (
        "" if outside == 0 else f" after {outside:.2f} GiB of CUDA graphs captured outside the budget"
    )
    start = "; from 0.9.1 vLLM starts only if u × T is free at start, so any other process must fit in the rest"
    if left < margin:
        return risk("high", where + f", less than the {margin:.2f} GiB production margin (CUDA context of another "
                    "process, non-torch growth, fragmentation, the profile's underestimate)" + start)  # fmt: skip
    if assumed:
        return risk("medium", "risk unknown/medium: the free memory at start is not in the log, assumed total − "
                    f"1 GiB; on that assumption it {where}" + start)  # fmt: skip
    return risk("low", where + f" (≥ the {margin:.2f} GiB production margin)" + start)


def _vllm_utilization_rec(ctx: Ctx, u: float, new_u: float, kvs: tuple[float, float], total: float,
                          free: float, outside: float) -> Recommendation:  # fmt: skip
    launch, reserve = ctx.launch, ctx.reserve
    kv, new_kv = kvs
    tokens = scaled_tokens(launch, kv, new_kv)
    left = free - new_u * total - outside
    up = new_u > u
    margin, assumed = getattr(reserve, "margin_gb", 1.0), bool(getattr(reserve, "free_assumed", True))
    rec = Recommendation(
        "utilization", f"{'raise' if up else 'lower'} gpu_memory_utilization {u:g} → {new_u:g}",
        [f"--gpu-memory-utilization {new_u:g}"], tokens, r2(new_kv), None,
        cost((new_u - u) * total, 0.0, "none", "" if up else "fewer KV blocks"),
        utilization_risk(left, margin, assumed, outside),
        reason=f"vLLM sizes KV as u × T minus its profile: {new_u - u:+.3f} × {total:.2f} GiB = {new_kv - kv:+.2f} GiB "
        f"of KV per rank; the ceiling keeps a {margin:.2f} GiB production margin (vLLM's start check, another CUDA "
        "context, TP buffers, its 150 MiB buffer)" + (" and the CUDA graphs captured outside the budget" if outside else "")
        + "".join("; " + n for n in getattr(reserve, "notes", [])[1:]),
        value=new_u, gain_tokens=(tokens - launch.kv_tokens) if tokens and launch.kv_tokens else None,
        left_gb=r2(left), below_reserve=left < margin,
        fixes="the margin asked with --margin" if ctx.margin is not None else None,
    )  # fmt: skip
    rec.allows = allows(launch, tokens, ctx.verdict)
    return rec


def failed_start_utilization(ctx: Ctx, u: float) -> list[Recommendation]:
    """vLLM's own advice when no memory was left for the KV cache ("Try increasing
    `gpu_memory_utilization`"): by how much, from what the log printed (the weights, the negative KV
    figure) and the least total memory they imply; the GPU's total is not printed by these releases."""
    launch = ctx.launch
    rank = launch.ranks[0] if launch.ranks else None
    avail = next((e.fields["kv_gb"] for e in launch.events if e.kind == "vllm_kv_memory"
                  and e.fields.get("kv_gb") is not None), None)  # fmt: skip
    weights = rank.weights_gb if rank is not None else None
    flag = "--gpu-memory-utilization"
    if avail is None or weights is None or avail >= 0:
        return [not_possible("utilization", "raise gpu_memory_utilization", [flag], "vLLM says to raise it, but the "
                             "log lacks the weights and the available KV figure to say by how much")]  # fmt: skip
    t_lo = (weights + avail) / u  # u × T = weights + profile + KV and the profile is ≥ 0
    new_u = round(u + (2.0 - avail) / t_lo + 0.0005, 3)  # a 2 GiB pool on the smallest GPU the log allows
    margin = float(getattr(ctx.reserve, "margin_gb", 1.0))
    left = t_lo * (1 - new_u) - 1.0
    if not 0 < new_u < 1 or left < margin:
        return [not_possible("utilization", f"raise gpu_memory_utilization {u:g}", [flag], f"a 2 GiB pool needs "
                             f"{new_u:g} of a GPU of at least {t_lo:.1f} GiB: it leaves less than the {margin:.2f} "
                             "GiB production margin; more GPUs or smaller weights are the way out")]  # fmt: skip
    return [Recommendation(
        "utilization", f"raise gpu_memory_utilization {u:g} → {new_u:g} (vLLM's own advice in its error)",
        [f"{flag} {new_u:g}"], None, 2.0, None, cost((new_u - u) * t_lo, 0.0, "none", ""),
        risk("medium", f"risk unknown/medium: the GPU's total is not in the log ({launch.engine_version or 'this release'} "
             f"does not print it); at least {t_lo:.1f} GiB follows from u × T ≥ weights {weights:.2f} + KV "
             f"{avail:.2f} GiB, and on such a GPU with total − 1 GiB free it leaves {left:.2f} GiB outside the instance"),
        reason=f"the profile left {avail:.2f} GiB for KV at {u:g}: {2.0 - avail:.2f} GiB more gives a 2 GiB pool; "
        f"each 0.01 adds at least {0.01 * t_lo:.2f} GiB; vLLM's error: 'Try increasing gpu_memory_utilization'",
        value=new_u, gain_tokens=None, left_gb=r2(left),
    )]  # fmt: skip


def vllm_kv_cache_memory(ctx: Ctx, reserve: Any) -> list[Recommendation]:
    launch = ctx.launch
    rel = vllm_release(launch) or "?"
    if not vllm_has(launch, "--kv-cache-memory"):
        return [not_possible("kv_cache_memory", "set the KV pool in bytes", ["--kv-cache-memory"],
                             f"--kv-cache-memory exists from vLLM 0.10.2 (this launch: {rel})")]  # fmt: skip
    if launch.outcome == "failed":
        return []
    _, kv = vllm_kv(launch)
    if reserve.safe_kv_gb is None or kv is None:
        return [not_possible("kv_cache_memory", "set the KV pool in bytes", ["--kv-cache-memory"],
                             "needs the free memory at start and every profile term (the budget report of 0.10.2 "
                             "and 0.26.0+ prints them)")]  # fmt: skip
    safe = reserve.safe_kv_gb
    size = int(safe * GiB)
    tokens = scaled_tokens(launch, kv, safe)
    if safe <= kv + 0.005:
        return [not_possible("kv_cache_memory", f"--kv-cache-memory {size}", [f"--kv-cache-memory {size}"],
                             f"the pool ({kv:.2f} GiB) already takes what leaves the {reserve.margin_gb:.2f} GiB "
                             "production margin free")]  # fmt: skip
    rec = Recommendation(
        "kv_cache_memory", f"--kv-cache-memory {size} ({safe:.2f} GiB: vLLM's own 'fully utilize' figure "
        f"{reserve.max_kv_gb:.2f} GiB less the {reserve.margin_gb:.2f} GiB production margin)",
        [f"--kv-cache-memory {size}"], tokens, safe, None,
        cost(safe - kv, 0.0, "none", "skips the memory profile at start"),
        risk("medium", f"leaves {reserve.margin_gb:.2f} GiB of the free memory at start; it bypasses "
             "gpu_memory_utilization and the profile: if the free memory at start or the activation peak grows "
             "(another process, longer inputs), it runs out of memory"),
        reason="free at start − (weights + activation + non-torch + CUDA graphs) − the production margin, from this "
        "launch's budget report (vLLM's own suggestion keeps only 150 MiB)", value=float(size),
        gain_tokens=(tokens - launch.kv_tokens) if tokens and launch.kv_tokens else None,
        left_gb=reserve.margin_gb,
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
        cost(0.0, 0.0, "none", ""),
        risk("medium", f"rejects requests over {value:,} tokens"),
        reason=why + (f"; {conc:.2f} requests of the new length fit at once" if conc else ""), gain_tokens=0,
        value=float(value),
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
              "the attention backend must support an fp8 KV cache"),
        risk("medium", "accuracy is the cost; the attention backend must accept an fp8 KV cache"),
        reason="the same pool at one byte per element holds twice the tokens", gain_tokens=tokens - launch.kv_tokens,
    )  # fmt: skip
    rec.allows = allows(launch, tokens, ctx.verdict)
    return [rec]


# --------------------------------------------------------------------------- the advice of a vLLM launch
def levers(ctx: Ctx) -> list[Recommendation]:
    """Every vLLM lever for the launch, in the advice's order before ranking."""
    reserve = ctx.reserve
    return (vllm_utilization(ctx, reserve) + vllm_kv_cache_memory(ctx, reserve) + vllm_fp8(ctx)
            + vllm_max_model_len(ctx) + lv.vllm_tp(ctx) + lv.vllm_fp8_weights(ctx) + lv.vllm_cpu_offload(ctx))  # fmt: skip


def kv_bound_words(launch: Launch, b: Budget) -> str:
    """What sets the launch's KV tokens: the utilization's share of the GPU less the weights and the profile."""
    u = launch.gpu_memory_utilization
    kv = b.kv_pool_gb
    return (
        f"memory: gpu_memory_utilization {u:g} of the GPU, less weights and the profile, leaves "
        + (f"{kv:.2f} GiB of KV per rank" if kv is not None else "the pool")
        if u is not None
        else "memory (vLLM's profile)"
    )


def reserve_line(ctx: Ctx) -> str | None:
    """What vLLM keeps beside the weights and the KV pool, and its own ceiling for the pool."""
    r = ctx.reserve
    if r is None or r.reserve_gb is None:
        return None
    kv = getattr(r, "max_kv_gb", None)
    top = f"; its own ceiling for the pool is {kv:.2f} GiB" if kv is not None else ""
    return f"vLLM keeps {reserve_words(r)} beside the weights and the KV pool{top}."
