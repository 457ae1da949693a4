"""Advice an operator can act on: a short answer and ranked, bounded recommendations for one launch.

:func:`advise` returns plain data (:class:`Advice`) that every surface shows as it is: ``explain``
(text and ``--json``), the HTML report and ``watch``'s block.  Each recommendation names its exact
flags, the KV tokens it predicts and the context and concurrency they allow, its cost (GPU memory,
host memory, accuracy, throughput), its risk and why, and the evidence it rests on:

* the engine's own reserve for that release, computed from the launch's own arguments
  (:mod:`logparse.budget.reserve`, :mod:`logparse.budget.vllm_reserve`): a recommended fraction never
  holds back less than it, unless the user asked for a headroom with ``--margin``;
* the launch's budget (:func:`logparse.budget.model.launch_budget`): the formula of its era replayed
  with the changed flag, and its observed headroom;
* what the run did: peak token usage, retractions and the queue from the runtime lines.

Every what-if is bounded: a fraction stays inside (0, 1), tokens are never negative, and what cannot
be done is a recommendation with ``possible: false`` and the reason.  Flags are offered only where the
launch's release range has them (SGLang's ServerArgs fields per release; vLLM's per release below).
"""

from __future__ import annotations

from typing import Any

from logparse.budget import formula as fm
from logparse.budget.model import Budget
from logparse.budget.reserve import EngineReserve, launch_reserve
from logparse.launches.model import Launch
from logparse.reports import advice_sglang as sg
from logparse.reports import advice_vllm as av
from logparse.reports import levers as lv
from logparse.reports.advice_core import (
    FAILURE_WORDS,
    RISK_ORDER,
    VLLM_FLAGS,
    Advice,
    Ctx,
    Recommendation,
    allows,
    flag_field,
    reserve_words,
    runtime_verdict,
    sglang_fp8_dtype,
    sglang_from,
    sglang_has,
    vllm_has,
    vllm_release,
)  # fmt: skip
from logparse.reports.advice_sglang import default_words, fraction_result, held_back, is_engine_default
from logparse.reports.launch_facts import failure_kind

__all__ = [
    "VLLM_FLAGS", "Advice", "Recommendation", "advise", "allows", "bound_by", "flag_field", "fraction_result",
    "rank", "runtime_verdict", "sglang_from", "sglang_has", "vllm_has", "vllm_release",
]  # fmt: skip


# --------------------------------------------------------------------------- ranking and the answer
def _pressure(ctx: Ctx) -> bool:
    """Evidence that memory, not KV, is short: an out-of-memory failure or almost no headroom."""
    b = ctx.b
    return failure_kind(ctx.launch, b) == "oom" or (b.headroom_gb is not None and b.headroom_gb < 1.0)


def rank(recs: list[Recommendation], *, pressure: bool, failed: bool = False) -> list[Recommendation]:
    """Best first.  After a failed start: the options that start it, safest first, then those asking
    least (memory settings, then accuracy, then more GPUs or host memory), then by capacity.
    Otherwise: actions that gain tokens (safest first), then those that keep them, then those that cost
    tokens (first under memory pressure), then what is not possible."""

    def key(r: Recommendation) -> tuple:
        level = RISK_ORDER.get(r.risk.get("level", "high"), 2)
        if not r.possible:
            return (4, 0, 0)
        if failed:
            return (0 if r.starts else 2, level, _tier(r), -(r.kv_tokens or 0), -(r.kv_gb or 0.0))
        gain = r.gain_tokens
        if (r.kind == "fraction" and (gain or 0) < 0) or (
            r.value is not None and r.kind == "utilization" and (gain or 0) < 0
        ):
            group = 0 if pressure else 3
        elif gain is None or gain > 0:
            group = 1
        else:
            group = 2
        return (group, level, -(gain or 0))

    return sorted(recs, key=key)


def _tier(r: Recommendation) -> int:
    """What an option that starts a failed launch asks for: 0 memory settings only, 1 accuracy, 2 more
    GPUs or host memory."""
    c = r.cost
    if c.get("more_gpus") or c.get("host_memory_gb"):
        return 2
    return 1 if c.get("accuracy") not in (None, "", "none") else 0


def needed(recs: list[Recommendation], verdict: dict[str, Any]) -> list[Recommendation]:
    """Drop the capacity cuts a run whose pool never limited it does not need, unless they fix a named risk."""
    if verdict.get("pool_limited") is not False:
        return recs
    return [r for r in recs if not (r.possible and (r.gain_tokens or 0) < 0 and not r.fixes)]


def _starting(ctx: Ctx, recs: list[Recommendation]) -> list[Recommendation]:
    """After a failed start: mark the options that start it, and add fp8 KV on top of each (SGLang)."""
    if ctx.launch.outcome != "failed":
        return recs
    for r in recs:
        if (
            r.possible
            and r.starts is None
            and r.value is not None
            and r.kind in ("fraction", "chunked_prefill", "utilization")
        ):
            r.starts = True
    if ctx.launch.engine == "vllm" or not sglang_has(ctx.launch, "kv_cache_dtype"):
        return recs
    dtype = sglang_fp8_dtype(ctx.launch)
    if dtype is None:
        return recs
    extra = [lv.fp8_kv_on(ctx, r, dtype) for r in recs if r.starts and r.kind in ("fraction", "chunked_prefill")]
    return recs + [x for x in extra if x is not None]


def bound_by(launch: Launch, b: Budget) -> str:
    """What sets the launch's KV tokens, in words."""
    if launch.outcome == "failed" and b.kv_tokens is None:
        return "the start failed before the KV pool was sized"
    if b.capped_by_max_total_tokens:
        unc = b.uncapped_kv_tokens or b.uncapped_kv_tokens_at_least
        more = f" (memory would allow {'at least ' if not b.uncapped_kv_tokens else ''}{unc:,})" if unc else ""
        return f"the cap --max-total-tokens {launch.max_total_tokens:,}{more}"
    if launch.engine == "vllm":
        u = launch.gpu_memory_utilization
        kv = b.kv_pool_gb
        return (
            f"memory: gpu_memory_utilization {u:g} of the GPU, less weights and the profile, leaves "
            + (f"{kv:.2f} GiB of KV per rank" if kv is not None else "the pool")
            if u is not None
            else "memory (vLLM's profile)"
        )
    if fm.capture_resize(launch) is not None:
        return (
            "the memory free after the CUDA-graph capture (post-capture KV sizing resized the pool), less "
            f"mem_fraction_static {b.mem_fraction_static:g}'s held-back share"
            if b.mem_fraction_static is not None
            else "the memory free after the CUDA-graph capture (post-capture KV sizing resized the pool)"
        )
    if b.mem_fraction_static is not None and b.rest_gb is not None and b.weights_gb is not None:
        return (
            f"memory: mem_fraction_static {b.mem_fraction_static:g} leaves {b.rest_gb:.2f} GiB for KV after "
            f"{b.weights_gb:.2f} GiB of weights ({b.binding_rank})"
        )
    return "memory (the log lacks the figures to say more)"


def _headline(launch: Launch, b: Budget) -> str:
    if b.kv_tokens is None:
        return f"KV: not known ({b.unknown.get('kv_tokens', 'no pool line')}); " + bound_by(launch, b) + "."
    pool = (
        "" if b.kv_pool_gb is None else f" ({b.kv_pool_gb:.2f} GiB per rank)" if b.kv_pool_gb else " (under 0.01 GiB)"
    )
    return f"KV: {b.kv_tokens:,} tokens{pool}, set by {bound_by(launch, b)}."


def _reserve_line(ctx: Ctx) -> str | None:
    r, b = ctx.reserve, ctx.b
    inp = b.inputs.inputs if b.inputs is not None else None
    if r is None or r.reserve_gb is None:
        return None
    if r.engine == "vllm":
        kv = getattr(r, "max_kv_gb", None)
        top = f"; its own ceiling for the pool is {kv:.2f} GiB" if kv is not None else ""
        return f"vLLM keeps {reserve_words(r)} beside the weights and the KV pool{top}."
    if inp is None:
        return f"SGLang's own default logic would hold back {reserve_words(r)}."
    held = held_back(inp.f, inp.m_pre_gb)
    hi = r.reserve_gb_hi if r.reserve_gb_hi is not None else r.reserve_gb
    if is_engine_default(r, inp.f):
        return (
            f"SGLang's own default logic holds back {reserve_words(r)}: mem_fraction_static {inp.f:g} is its own "
            f"default for this GPU ({default_words(r)}), so the launch holds back what the engine would."
        )
    cmp = (
        f"{hi - held:.2f} GiB less: raising the fraction is not advised"
        if held < hi
        else f"{held - hi:.2f} GiB more: the fraction can rise that far"
    )
    f_default = f" (default fraction {r.default_fraction:g})" if r.default_fraction is not None else ""
    return (
        f"SGLang's own default logic would hold back {reserve_words(r)}{f_default}; this launch holds back "
        f"{held:.2f} GiB, {cmp}."
    )


def draft_line(ctx: Ctx) -> str | None:
    """The draft model's weights against the share SGLang's reserve sets aside for speculative decoding,
    when they exceed it (the rest then comes out of what the reserve keeps for activations)."""
    r, draft = ctx.reserve, ctx.b.draft_weights_gb
    term = next((t for t in (r.terms if r is not None else []) if t.counted and "speculative" in t.name), None)
    if r is None or r.engine == "vllm" or term is None or not draft or draft <= term.gb + 0.005:
        return None
    return (
        f"The draft model's weights ({draft:.2f} GiB per rank) exceed the {term.gb:.2f} GiB SGLang's reserve sets "
        f"aside for speculative decoding: the other {draft - term.gb:.2f} GiB come out of what it keeps for "
        "activations and CUDA graphs."
    )


def _best_line(ctx: Ctx, recs: list[Recommendation]) -> str:
    possible = [r for r in recs if r.possible]
    if not possible:
        return "Best safe action: none of the usual actions is possible here (see why below)."

    def said(r: Recommendation) -> str:
        figs = f" → {r.kv_tokens:,} tokens" if r.kv_tokens is not None else ""
        cost = r.cost.get("accuracy")
        return (" ".join(r.flags) or r.action) + figs + (" (accuracy cost)" if cost and cost != "none" else "")

    if ctx.verdict.get("pool_limited") is False and ctx.launch.outcome != "failed":
        more = next((r for r in possible if (r.gain_tokens or 0) > 0), None)
        tail = (
            f"for more KV tokens: {said(more)}"
            if more
            else f"nothing adds KV tokens safely; first: {said(possible[0])}"
        )
        return f"Best safe action: none needed for capacity; {tail}."
    return f"Best safe action: {said(possible[0])} — {possible[0].action}."


def _answer(ctx: Ctx, recs: list[Recommendation]) -> list[str]:
    lines = [_headline(ctx.launch, ctx.b)]
    v = ctx.verdict
    if ctx.launch.outcome == "failed":
        kind = failure_kind(ctx.launch, ctx.b) or ctx.launch.error_kind
        lines.append("This start failed: " + FAILURE_WORDS.get(kind or "", kind or "see the error") + ".")
    else:
        lines.append("This run: " + v.get("evidence", "no runtime lines") + ".")
    reserve = _reserve_line(ctx)
    if reserve:
        lines.append(reserve)
    draft = draft_line(ctx)
    if draft:
        lines.append(draft)
    lines.append(_best_line(ctx, recs))
    return lines


# --------------------------------------------------------------------------- the entry point
def advise(
    launch: Launch,
    b: Budget,
    *,
    margin_gb: float | None = None,
    hicache_what_ifs: list[dict[str, Any]] | None = None,
    cfg: Any = None,
) -> Advice:
    """The advice for one launch.  ``margin_gb``: the headroom (GiB) the user asks the fraction to
    leave, below the engine's reserve if need be; None keeps the engine's reserve.  ``hicache_what_ifs``:
    explain's HiCache what-ifs (the host pool sizes), reused here.  ``cfg``: the model's config
    (:class:`~logparse.budget.model_config.ModelConfig`), when known: the heads, the weights' dtype and
    the attention weights the levers of :mod:`logparse.reports.levers` need."""
    verdict = runtime_verdict(launch)
    if launch.engine == "vllm":
        from logparse.budget.vllm_reserve import launch_vllm_reserve
        from logparse.reports.explain_vllm import total_gb, total_gb_range

        rank_, _ = av.vllm_kv(launch)
        span = total_gb_range(launch, rank_)  # an inferred total: its low end, the safe side of every ceiling
        total = span[1] if span is not None else total_gb(launch, rank_)
        reserve: EngineReserve | None = launch_vllm_reserve(launch, rank_, total)
    else:
        reserve = launch_reserve(launch, b.pre_load_avail_gb or b.least_free_before_weights_gb)
    ctx = Ctx(launch, b, margin_gb, reserve, verdict, list(hicache_what_ifs or []), cfg)
    if launch.engine == "vllm":
        recs = (av.vllm_utilization(ctx, reserve) + av.vllm_kv_cache_memory(ctx, reserve) + av.vllm_fp8(ctx)
                + av.vllm_max_model_len(ctx) + lv.vllm_tp(ctx) + lv.vllm_fp8_weights(ctx) + lv.vllm_cpu_offload(ctx))  # fmt: skip
    else:
        recs = (sg.sglang_fraction(ctx) + sg.sglang_cap(ctx) + sg.sglang_chunked(ctx) + sg.sglang_fp8(ctx) + sg.sglang_hicache(ctx)
                + sg.sglang_context(ctx) + sg.sglang_requests(ctx) + sg.sglang_mamba_slots(ctx) + sg.sglang_page(ctx)
                + lv.sglang_dp_attention(ctx) + lv.sglang_tp(ctx) + lv.sglang_fp8_weights(ctx) + lv.sglang_graph_bs(ctx) + lv.sglang_cpu_offload(ctx))  # fmt: skip
    recs = rank(needed(_starting(ctx, recs), verdict), pressure=_pressure(ctx), failed=launch.outcome == "failed")
    return Advice(_answer(ctx, recs), verdict, reserve, recs)
