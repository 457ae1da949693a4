"""Advice an operator can act on: a short answer and ranked, bounded recommendations for one launch.

:func:`advise` returns plain data (:class:`Advice`) that every surface shows as it is: ``explain``
(text and ``--json``), the HTML report and ``watch``'s block.  Each recommendation names its exact
flags, the KV tokens it predicts and the context and concurrency they allow, its cost (GPU memory,
host memory, accuracy, throughput), its risk and why, and the evidence it rests on:

* the engine's own reserve for that release, computed from the launch's own arguments
  (:meth:`~logparse.engines.base.Engine.reserve`): a recommended fraction never holds back less than
  it, unless the user asked for a headroom with ``--margin``;
* the launch's budget (:func:`logparse.budget.model.launch_budget`): the formula of its era replayed
  with the changed flag, and its observed headroom;
* what the run did: peak token usage, retractions and the queue from the runtime lines.

Every what-if is bounded: a fraction stays inside (0, 1), tokens are never negative, and what cannot
be done is a recommendation with ``possible: false`` and the reason.  Flags are offered only where the
launch's release range has them.  The recommendations are the engine's
(:meth:`~logparse.engines.base.Engine.levers`); this module ranks them and writes the short answer.
"""

from __future__ import annotations

from typing import Any

from logparse import engines
from logparse.budget.model import Budget
from logparse.launches.model import Launch
from logparse.reports import levers as lv
from logparse.reports.advice_core import (
    FAILURE_WORDS,
    RISK_ORDER,
    Advice,
    Ctx,
    Recommendation,
    allows,
    flag_field,
    runtime_verdict,
)  # fmt: skip
from logparse.reports.launch_facts import failure_kind

__all__ = [
    "Advice", "Recommendation", "advise", "allows", "bound_by", "flag_field", "rank", "runtime_verdict",
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
    """After a failed start: mark the options that start it, and add fp8 KV on top of each (when the
    engine has one for the launch: :meth:`~logparse.engines.base.Engine.fp8_kv_to_start`)."""
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
    dtype = engines.of(ctx.launch).fp8_kv_to_start(ctx.launch)
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
    words = engines.of(launch).kv_bound_words(launch, b)
    return words if words is not None else "memory (the log lacks the figures to say more)"


def _headline(launch: Launch, b: Budget) -> str:
    if b.kv_tokens is None:
        return f"KV: not known ({b.unknown.get('kv_tokens', 'no pool line')}); " + bound_by(launch, b) + "."
    pool = (
        "" if b.kv_pool_gb is None else f" ({b.kv_pool_gb:.2f} GiB per rank)" if b.kv_pool_gb else " (under 0.01 GiB)"
    )
    return f"KV: {b.kv_tokens:,} tokens{pool}, set by {bound_by(launch, b)}."


def _reserve_line(ctx: Ctx) -> str | None:
    """The engine's own reserve against what the launch holds back, in the engine's words."""
    r = ctx.reserve
    if r is None or r.reserve_gb is None:
        return None
    return engines.get(r.engine).reserve_line(ctx)


def draft_line(ctx: Ctx) -> str | None:
    """A draft model that does not fit the share the engine's reserve sets aside for it, in words."""
    return engines.get(ctx.reserve.engine).draft_line(ctx) if ctx.reserve is not None else None


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
    engine = engines.of(launch)
    reserve = engine.reserve(launch, b)
    ctx = Ctx(launch, b, margin_gb, reserve, verdict, list(hicache_what_ifs or []), cfg)
    recs = engine.levers(ctx)
    recs = rank(needed(_starting(ctx, recs), verdict), pressure=_pressure(ctx), failed=launch.outcome == "failed")
    return Advice(_answer(ctx, recs), verdict, reserve, recs)
