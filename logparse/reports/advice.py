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

import math
from dataclasses import dataclass, field
from typing import Any

from logparse.budget import formula as fm
from logparse.budget.formula import GiB
from logparse.budget.model import Budget
from logparse.budget.reserve import EngineReserve, launch_reserve, reserve_inputs, sglang_reserve
from logparse.grammar import versions
from logparse.grammar import vllm_versions as vv
from logparse.launches.model import Launch
from logparse.reports.launch_facts import failure_kind, headroom_cell, is_low_precision_kv

RISK_ORDER = {"low": 0, "medium": 1, "high": 2}
FAILURE_WORDS = {
    "too_small": "the weights left no memory for the KV pool at this fraction",
    "oom": "out of memory after the KV pool was allocated (CUDA graphs, activations or the draft did not fit)",
    "no_kv_memory": "weights and the profile took the whole budget: no memory for the KV cache",
    "max_len_exceeds_kv": "one request of max_model_len needs more KV than the pool holds",
    "free_memory_at_start": "less than u × T was free at start (another process holds memory)",
}
#: Peak token usage from which the pool counts as full (SGLang's ``token usage``, 0–1).
FULL_USAGE = 0.95
#: Below this the pool had room to spare (a queue then comes from the request cap, not from KV).
ROOMY_USAGE = 0.90
FP8_ACCURACY = "keys and values rounded to 8 bits: usually a small quality loss, more on long contexts; check your eval"
FP8_FORMATS = {
    "fp8_e4m3": "e4m3 keeps 3 mantissa bits; scale 1.0 unless --quantization-param-path gives scales",
    "fp8_e5m2": "e5m2 keeps only 2 mantissa bits (coarser than e4m3)",
}


# --------------------------------------------------------------------------- data
@dataclass
class Recommendation:
    """One action (see the module documentation); ``to_dict`` is its JSON object."""

    kind: str
    action: str
    flags: list[str]
    kv_tokens: int | None
    kv_gb: float | None
    headroom_gb: float | None
    cost: dict[str, Any]
    risk: dict[str, str]
    reason: str
    possible: bool = True
    allows: dict[str, Any] = field(default_factory=dict)
    gain_tokens: int | None = None
    value: float | None = None
    #: the fraction leaves less than the engine's reserve (only with ``--margin``)
    below_reserve: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Advice:
    """The short answer, the run's verdict, the engine's reserve and the ranked recommendations."""

    answer: list[str]
    verdict: dict[str, Any]
    reserve: EngineReserve | None
    recommendations: list[Recommendation]

    def to_dict(self) -> dict[str, Any]:
        r = self.reserve
        return {
            "answer": list(self.answer),
            "runtime_verdict": dict(self.verdict),
            "engine_reserve_gb": r.reserve_gb if r is not None else None,
            "engine_reserve_terms": [t.to_dict() for t in r.terms] if r is not None else [],
            "engine_reserve": r.to_dict() if r is not None else None,
            "recommendations": [x.to_dict() for x in self.recommendations],
        }


@dataclass
class _Ctx:
    launch: Launch
    b: Budget
    margin: float | None
    reserve: EngineReserve | None
    verdict: dict[str, Any]
    hicache: list[dict[str, Any]] = field(default_factory=list)


def _r2(v: float | None) -> float | None:
    return None if v is None else round(float(v), 2)


def _floor3(x: float) -> float:
    return math.floor(x * 1000 + 1e-9) / 1000


def _cost(
    gpu_gb: float | None = 0.0, host_gb: float | None = 0.0, accuracy: str = "none", throughput: str = ""
) -> dict:
    """GPU memory (GiB per rank; positive = more used), host memory (decimal GB, all ranks), accuracy, throughput."""
    return {
        "gpu_memory_gb": _r2(gpu_gb),
        "host_memory_gb": _r2(host_gb),
        "accuracy": accuracy,
        "throughput": throughput,
    }


def _risk(level: str, why: str) -> dict[str, str]:
    return {"level": level, "why": why}


def not_possible(kind: str, action: str, flags: list[str], why: str, reason: str = "") -> Recommendation:
    """An action that cannot be taken, with the reason (no figures)."""
    return Recommendation(
        kind, action, flags, None, None, None, _cost(None, None, "", ""), _risk("high", "not possible: " + why),
        reason=reason or why, possible=False,
    )  # fmt: skip


# --------------------------------------------------------------------------- flags per release
#: vLLM flags and the first release that has them (the vLLM log catalogue §2.1.3, §2.3.4, §4.9).
VLLM_FLAGS = {
    "--gpu-memory-utilization": "0.4.0",
    "--max-model-len": "0.4.0",
    "--kv-cache-dtype": "0.4.0",
    "--max-num-seqs": "0.4.0",
    "--kv-cache-memory": "0.10.2",
}
#: SGLang ``--kv-cache-dtype`` values and the first release that accepts them.
SGLANG_KV_DTYPES = {"fp8_e5m2": "0.2.14", "fp8_e4m3": "0.4.1.post6"}


def sglang_has(launch: Launch, field_name: str) -> bool:
    """Does every release the launch may be have the ServerArgs field (the newest when undated)?"""
    rng = launch.version_range
    sets = versions.field_sets()
    if not rng or versions.is_empty(rng):
        return field_name in sets[versions.last()]
    lo, hi = versions.index(rng[0]), versions.index(rng[1])
    return all(field_name in sets[v] for v in versions.releases()[lo : hi + 1])


def sglang_from(launch: Launch, release: str) -> bool:
    """Is every release the launch may be at least ``release``?"""
    rng = launch.version_range
    first = rng[0] if rng and not versions.is_empty(rng) else versions.last()
    return versions.index(first) >= versions.index(release)


def vllm_release(launch: Launch) -> str | None:
    if launch.engine_version and vv.is_release(launch.engine_version):
        return launch.engine_version
    rng = launch.version_range
    return rng[0] if rng and not vv.is_empty(rng) else None


def vllm_has(launch: Launch, flag: str) -> bool:
    """Does the launch's (earliest possible) vLLM release have the flag?"""
    rel = vllm_release(launch)
    first = VLLM_FLAGS.get(flag)
    return first is not None and rel is not None and vv.at_least(rel, first)


def flag_field(flag: str) -> str:
    """The ServerArgs field of a command-line flag (``--kv-cache-dtype`` → ``kv_cache_dtype``)."""
    return flag.split()[0].lstrip("-").replace("-", "_")


# --------------------------------------------------------------------------- the run's verdict
def runtime_verdict(launch: Launch) -> dict[str, Any]:
    """Was the KV pool ever the limit in this launch's runtime?  From its batch and retraction lines."""
    rt = launch.runtime or {}
    usage, retract = rt.get("peak_token_usage"), rt.get("retractions") or 0
    queue, running, tokens = rt.get("peak_queue_req"), rt.get("peak_running_req"), rt.get("peak_tokens")
    out: dict[str, Any] = {
        "peak_token_usage": usage,
        "retractions": retract,
        "peak_queue_req": queue,
        "peak_running_req": running,
        "peak_tokens": tokens,
        "batch_lines": rt.get("batch_lines") or 0,
        "pool_limited": None,
    }
    if not rt.get("batch_lines") and not retract:
        out["evidence"] = "no runtime lines with KV usage in the log: whether the pool ever limited it is not known"
        return out
    if retract:
        out["pool_limited"], why = True, f"SGLang retracted {retract:,} request(s): the pool ran out"
    elif usage is not None and usage >= FULL_USAGE:
        out["pool_limited"], why = True, f"the pool filled (peak token usage {usage:.0%})"
    elif usage is not None and usage >= ROOMY_USAGE and queue:
        out["pool_limited"], why = True, f"requests queued ({queue:,}) while the pool was {usage:.0%} full"
    else:
        out["pool_limited"], why = False, "the pool never limited it"
    bits = [f"peak token usage {usage:.0%}" if usage is not None else "token usage not printed"]
    bits += [f"{retract:,} retraction(s)", f"queue peak {queue if queue is not None else '?'}"]
    if running is not None:
        bits.append(f"peak {running:g} running request(s)")
    out["evidence"] = f"{why} ({', '.join(bits)}; {out['batch_lines']:,} batch line(s))"
    out["tokens_per_request"] = int(tokens / running) if tokens and running else None
    return out


def allows(launch: Launch, kv_tokens: int | None, verdict: dict[str, Any]) -> dict[str, Any]:
    """The context and concurrency a pool of ``kv_tokens`` allows."""
    if not kv_tokens or kv_tokens <= 0:
        return {}
    ctx = launch.context_len or launch.context_length or launch.max_model_len
    out: dict[str, Any] = {"max_request_tokens": min(kv_tokens - 1, ctx) if ctx else kv_tokens - 1}
    if ctx:
        out["full_context_requests"] = round(kv_tokens / ctx, 2)
    per = verdict.get("tokens_per_request")
    if per:
        out["requests_at_observed_size"] = int(kv_tokens // per)
        out["observed_tokens_per_request"] = per
    return out


# --------------------------------------------------------------------------- SGLang: the fraction
def _reserve_words(reserve: EngineReserve) -> str:
    counted = [t for t in reserve.terms if t.counted and t.gb]
    terms = " + ".join(f"{t.name} {t.gb:.2f}" for t in counted)
    span = ""
    if reserve.reserve_gb_hi is not None and reserve.reserve_gb_lo != reserve.reserve_gb_hi:
        span = f" (range {reserve.reserve_gb_lo:.2f}–{reserve.reserve_gb_hi:.2f})"
    return f"{reserve.reserve_gb:.2f} GiB{span} = {terms}" if terms else f"{reserve.reserve_gb:.2f} GiB{span}"


def fraction_result(
    b: Budget, f_new: float, *, has_draft: bool, headroom: float | None = None
) -> tuple[int | None, float | None, float | None] | str:
    """(KV tokens, KV GiB, headroom GiB after startup) at ``mem_fraction_static = f_new``, by the
    launch's own formula (``headroom``: a rank's own, else the launch's); a string says why that
    fraction cannot work."""
    li, pred = b.inputs, b.prediction
    if li is None or li.inputs is None or pred is None:
        return "the log lacks the memory figures the formula needs"
    inp = li.inputs
    if not 0.0 < f_new < 1.0:
        return f"a fraction of {f_new:.3f} is outside (0, 1)"
    p = fm.predict(inp.with_(f=f_new), li.features)
    if p.rest_gb <= 0 or (p.tokens is not None and p.tokens <= 0):
        need = fm.fraction_for_rest(inp, 0.0)
        return (
            f"at {f_new:g} the weights leave nothing for the KV pool (SGLang stops with 'Not enough memory'; "
            f"any pool needs more than {need:.3f})"
        )
    if p.tokens is None or inp.cell is None:
        return None, None, None
    kv_gb = _r2(fm.pool_gb(p.tokens, inp.page_size, li.bpt.value or inp.cell))
    head, now = None, (b.headroom_gb if headroom is None else headroom)
    if now is not None and pred.tokens is not None:
        ch = headroom_cell(li, has_draft) or inp.cell
        head = now - (p.tokens - pred.tokens) * ch / GiB
        if head < 0:
            return f"at {f_new:g} the pool would take {-head:.2f} GiB more than was free after startup (out of memory at start)"
    return p.tokens, kv_gb, _r2(head)


def _fraction_for_margin(b: Budget, margin: float, *, has_draft: bool, oom: bool) -> float | str:
    """The fraction that leaves ``margin`` GiB of headroom after startup (or, after an out-of-memory
    failure, ``margin`` GiB more than it had)."""
    li = b.inputs
    if li is None or li.inputs is None:
        return "the log lacks the memory figures the formula needs"
    inp = li.inputs
    if b.headroom_gb is None and not oom:
        return "no headroom figure: " + b.unknown.get("headroom_gb", "no free-memory figure after startup")
    if oom or b.headroom_gb is None:
        f_new = _floor3(inp.f - margin / inp.m_pre_gb)
    else:
        ch = headroom_cell(li, has_draft) or inp.cell
        ratio = (inp.cell / ch) if inp.cell and ch else 1.0
        f_new = _floor3(inp.f + (b.headroom_gb - margin) * ratio / inp.m_pre_gb)
    if f_new <= 0:
        return f"{margin:.2f} GiB of headroom is more than any fraction can leave (it would need f ≤ 0)"
    if f_new >= 1:
        return f"leaving only {margin:.2f} GiB would need a fraction of 1 or more"
    return f_new


def is_engine_default(reserve: EngineReserve | None, f: float) -> bool:
    """Is ``f`` the fraction SGLang's own default logic picks (within the range the GPU's size allows)?"""
    if reserve is None or reserve.default_fraction_lo is None or reserve.default_fraction_hi is None:
        return False
    return reserve.default_fraction_lo - 0.0005 <= f <= reserve.default_fraction_hi + 0.0005


def _default_words(reserve: EngineReserve | None) -> str:
    if reserve is None or reserve.default_fraction is None:
        return "not known"
    lo, hi = reserve.default_fraction_lo, reserve.default_fraction_hi
    return f"{lo:g}–{hi:g}" if lo is not None and hi is not None and lo != hi else f"{reserve.default_fraction:g}"


def _held(f: float, m_pre: float) -> float:
    return (1.0 - f) * m_pre


def _sglang_fraction(ctx: _Ctx) -> list[Recommendation]:
    b, reserve = ctx.b, ctx.reserve
    inp = b.inputs.inputs if b.inputs is not None else None
    if inp is None or b.prediction is None:
        return [not_possible("fraction", "change mem_fraction_static", [], "the log lacks the memory figures "
                             "the formula needs (Load weight begin/end and mem_fraction_static)")]  # fmt: skip
    has_draft = b.draft_bytes_per_token is not None
    cap = reserve.fraction_keeping_reserve(inp.m_pre_gb) if reserve is not None else None
    oom = failure_kind(ctx.launch, b) == "oom"
    if ctx.margin is not None:
        target: float | str = _fraction_for_margin(b, ctx.margin, has_draft=has_draft, oom=oom)
    elif cap is None:
        why = "; ".join(reserve.notes) if reserve is not None else "not computed"
        return [
            not_possible("fraction", "change mem_fraction_static", [], f"the engine's reserve is not known ({why})")
        ]
    else:
        target = cap
    if isinstance(target, str):
        return [not_possible("fraction", "change mem_fraction_static", [], target)]
    if ctx.margin is None and is_engine_default(reserve, inp.f):
        return [not_possible("fraction", f"keep mem_fraction_static {inp.f:g}", [],
                             f"it is SGLang's own default for this GPU and these arguments ({_default_words(reserve)}): "
                             "it holds back what the engine's own logic would")]  # fmt: skip
    if abs(target - inp.f) < 0.0005:
        why = "it already holds back what SGLang's own logic would" if ctx.margin is None else "no change needed"
        return [not_possible("fraction", f"keep mem_fraction_static {inp.f:g}", [], why)]
    if target > inp.f and b.capped_by_max_total_tokens:
        return [not_possible("fraction", f"raise mem_fraction_static to {target:g}", [f"--mem-fraction-static {target:g}"],
                             f"--max-total-tokens {inp.max_total_tokens:,} caps the pool: a larger fraction changes "
                             "nothing while the cap holds")]  # fmt: skip
    return [_fraction_recommendation(ctx, inp, target, cap, has_draft)]


def _fraction_recommendation(
    ctx: _Ctx, inp: fm.Inputs, f_new: float, cap: float | None, has_draft: bool
) -> Recommendation:
    b = ctx.b
    up = f_new > inp.f
    verb = "raise" if up else "lower"
    flag = [f"--mem-fraction-static {f_new:g}"]
    res = fraction_result(b, f_new, has_draft=has_draft)
    action = f"{verb} mem_fraction_static {inp.f:g} → {f_new:g}"
    if isinstance(res, str):
        return not_possible("fraction", action, flag, res)
    tokens, kv_gb, head = res
    below = cap is not None and f_new > cap
    held = _held(f_new, inp.m_pre_gb)
    rec = Recommendation(
        "fraction", action, flag, tokens, kv_gb, head,
        _cost((f_new - inp.f) * inp.m_pre_gb, 0.0, "none",
              "more KV tokens in flight, no per-token cost" if up else "fewer KV tokens: less concurrency or context"),
        _risk("low", ""), reason="", value=f_new, below_reserve=below,
    )  # fmt: skip
    rec.gain_tokens = tokens - b.kv_tokens if tokens is not None and b.kv_tokens is not None else None
    rec.allows = allows(ctx.launch, tokens, ctx.verdict)
    _fraction_words(ctx, rec, inp, held, up, below)
    return rec


def _fraction_words(ctx: _Ctx, rec: Recommendation, inp: fm.Inputs, held: float, up: bool, below: bool) -> None:
    """The action's label, risk and evidence: the engine's reserve, the headroom, the run."""
    reserve, b = ctx.reserve, ctx.b
    rgb = reserve.reserve_gb_hi if reserve is not None and reserve.reserve_gb_hi is not None else None
    now = _held(inp.f, inp.m_pre_gb)
    if ctx.margin is not None:
        rec.action += f" (leaves {ctx.margin:.2f} GiB of headroom, as asked with --margin)"
    elif up:
        rec.action += f" (keeps SGLang's own reserve of {rgb:.2f} GiB)"
    else:
        rec.action += f" (restores SGLang's own reserve of {rgb:.2f} GiB)"
    if below and rgb is not None:
        rec.risk = _risk("high", f"holds back {held:.2f} GiB, less than the {rgb:.2f} GiB SGLang's own default logic "
                         "reserves for activations, CUDA graphs and the draft: it can start and then run out of "
                         "memory under a large prefill")  # fmt: skip
    elif up:
        exact = reserve is not None and reserve.exact
        rec.risk = _risk("low" if exact else "medium", f"holds back {held:.2f} GiB ≥ the {rgb:.2f} GiB SGLang's own "
                         "logic reserves" + ("" if exact else " (this release's reserve is not known exactly)"))  # fmt: skip
    else:
        rec.risk = _risk(
            "low", f"holds back {held:.2f} GiB instead of {now:.2f}: fewer tokens, more room for activations"
        )
    bits = []
    if reserve is not None and reserve.reserve_gb is not None:
        bits.append(f"{reserve.rule_label}: {_reserve_words(reserve)} for this launch's arguments")
        bits += [n for n in reserve.notes if "multimodal" in n or "not verified" in n or "not re-derived" in n]
    bits.append(f"it now holds back (1 − {inp.f:g}) × {inp.m_pre_gb:.2f} = {now:.2f} GiB")
    if b.headroom_gb is not None:
        bits.append(f"{b.headroom_gb:.2f} GiB was free after startup")
    bits.append("this run: " + ctx.verdict.get("evidence", "no runtime lines"))
    rec.reason = "; ".join(bits)


# --------------------------------------------------------------------------- SGLang: the other actions
def _sglang_chunked(ctx: _Ctx) -> list[Recommendation]:
    """A smaller ``--chunked-prefill-size`` shrinks the engine's own reserve (1.5 MiB per token of a
    prefill chunk), so the fraction can rise, or fall less, while still keeping it."""
    launch, b, reserve = ctx.launch, ctx.b, ctx.reserve
    inp = b.inputs.inputs if b.inputs is not None else None
    if (reserve is None or reserve.rule not in ("formula", "arg-groups") or inp is None or ctx.margin is not None
            or b.capped_by_max_total_tokens or not sglang_has(launch, "chunked_prefill_size")):  # fmt: skip
        return []
    args = reserve_inputs(launch)
    chunk = args.chunked_prefill_size
    if not chunk or chunk <= 2048:
        return []
    new_chunk = max(2048, chunk // 2 // inp.page_size * inp.page_size)
    smaller = sglang_reserve(launch.version_range, args.with_(chunked_prefill_size=new_chunk), m_pre_gb=inp.m_pre_gb)
    old_cap, new_cap = reserve.fraction_keeping_reserve(inp.m_pre_gb), smaller.fraction_keeping_reserve(inp.m_pre_gb)
    if new_cap is None or (old_cap is not None and new_cap <= old_cap) or abs(new_cap - inp.f) < 0.0005:
        return []
    flags = [f"--chunked-prefill-size {new_chunk}", f"--mem-fraction-static {new_cap:g}"]
    action = f"chunked_prefill_size {chunk:,} → {new_chunk:,} and mem_fraction_static {inp.f:g} → {new_cap:g}"
    res = fraction_result(b, new_cap, has_draft=b.draft_bytes_per_token is not None)
    if isinstance(res, str):
        return [not_possible("chunked_prefill", action, flags, res)]
    tokens, kv_gb, head = res
    saved = (reserve.reserve_gb or 0.0) - (smaller.reserve_gb or 0.0)
    rec = Recommendation(
        "chunked_prefill", action + f" (SGLang's reserve for it is {smaller.reserve_gb:.2f} GiB)", flags, tokens, kv_gb,
        head, _cost((new_cap - inp.f) * inp.m_pre_gb, 0.0, "none",
                    f"long prompts prefill in chunks of {new_chunk:,} tokens: slower time to first token for them"),
        _risk("medium", f"keeps SGLang's own reserve for the smaller chunk ({smaller.reserve_gb:.2f} GiB); a prefill "
              f"chunk's activations are what the {saved:.2f} GiB it no longer reserves was for"),
        reason=f"the engine's reserve holds 1.5 MiB per prefill-chunk token: {chunk:,} → {new_chunk:,} tokens frees "
        f"{saved:.2f} GiB of it ({_reserve_words(smaller)})", value=new_cap,
    )  # fmt: skip
    rec.gain_tokens = tokens - b.kv_tokens if tokens is not None and b.kv_tokens is not None else None
    rec.allows = allows(launch, tokens, ctx.verdict)
    return [rec]


def _sglang_cap(ctx: _Ctx) -> list[Recommendation]:
    """``--max-total-tokens`` sets the pool: dropping it gives what memory allows (the budget is unchanged)."""
    launch, b = ctx.launch, ctx.b
    cap = launch.max_total_tokens
    if not b.capped_by_max_total_tokens or not cap or launch.outcome == "failed":
        return []
    exact = b.uncapped_kv_tokens
    tokens = exact or b.uncapped_kv_tokens_at_least
    if not tokens or tokens <= cap:
        return []
    head = None
    if b.headroom_gb is not None and b.rest_gb is not None:
        head = max(b.headroom_gb - max(b.rest_gb - (b.kv_pool_gb or 0.0), 0.0), 0.0)
    rec = Recommendation(
        "cap", f"drop --max-total-tokens {cap:,} (memory allows {'' if exact else 'at least '}{tokens:,} tokens)", [],
        tokens, None, _r2(head), _cost(max((b.rest_gb or 0.0) - (b.kv_pool_gb or 0.0), 0.0), 0.0, "none",
                                        "more KV tokens in flight, no per-token cost"),
        _risk("low", "the pool then takes the KV budget SGLang already set aside at this fraction: nothing else moves"),
        reason=f"the formula's budget of {b.rest_gb:.2f} GiB holds {tokens:,} tokens; the cap keeps {cap:,}",
        gain_tokens=tokens - (b.kv_tokens or cap),
    )  # fmt: skip
    rec.allows = allows(launch, tokens, ctx.verdict)
    return [rec]


def _sglang_fp8(ctx: _Ctx) -> list[Recommendation]:
    launch, b = ctx.launch, ctx.b
    if launch.outcome == "failed" or is_low_precision_kv(launch):
        return []  # it does not lead out of a failed start; an 8-bit cache is already there
    dtype = next((d for d, first in SGLANG_KV_DTYPES.items() if d == "fp8_e4m3" and sglang_from(launch, first)), None)
    dtype = dtype or ("fp8_e5m2" if sglang_from(launch, SGLANG_KV_DTYPES["fp8_e5m2"]) else None)
    flag = [f"--kv-cache-dtype {dtype or 'fp8_e5m2'}"]
    if dtype is None or not sglang_has(launch, "kv_cache_dtype"):
        return [
            not_possible("fp8", "fp8 KV cache", flag, "this release has no fp8 KV cache (--kv-cache-dtype: 0.2.14+)")
        ]
    li, pred = b.inputs, b.prediction
    if li is None or li.inputs is None or pred is None or li.inputs.cell is None:
        return [
            not_possible("fp8", f"kv_cache_dtype {dtype}", flag, "bytes per token unknown (no measurable KV pool line)")
        ]
    inp, cell = li.inputs, float(li.inputs.cell)
    p8 = fm.predict(inp.with_(cell=cell / 2), li.features)
    if p8.tokens is None or p8.tokens <= 0:
        return [not_possible("fp8", f"kv_cache_dtype {dtype}", flag, "the formula gives no pool at half the bytes")]
    accuracy = FP8_ACCURACY + "; " + FP8_FORMATS[dtype]
    rec = Recommendation(
        "fp8", f"kv_cache_dtype {dtype} (half the bytes per token)", flag, p8.tokens,
        _r2(fm.pool_gb(p8.tokens, inp.page_size, (li.bpt.value or cell) / 2)), b.headroom_gb,
        _cost(0.0, 0.0, accuracy, "decode reads half the KV bytes (often faster at long context); the attention "
              "backend must support an fp8 KV cache (some reject it at start)"),
        _risk("medium", "accuracy is the cost; the attention backend must accept an fp8 KV cache"),
        reason=f"the same KV budget ({b.rest_gb:.2f} GiB) at half of {li.bpt.value or cell:,.0f} bytes per token "
        f"({li.features.era.label} formula); GPU memory and headroom unchanged",
        value=None,
    )  # fmt: skip
    if p8.capped:
        rec.reason += f"; --max-total-tokens {inp.max_total_tokens:,} still caps the pool"
    rec.gain_tokens = p8.tokens - b.kv_tokens if b.kv_tokens is not None else None
    rec.allows = allows(ctx.launch, p8.tokens, ctx.verdict)
    return [rec]


def _sglang_hicache(ctx: _Ctx) -> list[Recommendation]:
    launch, b = ctx.launch, ctx.b
    if launch.outcome == "failed":
        return []
    flags = ["--enable-hierarchical-cache"]
    if not sglang_has(launch, "enable_hierarchical_cache"):
        return [
            not_possible("hicache", "HiCache (host memory tier)", flags, "this release has no HiCache (0.4.2.post1+)")
        ]
    item = next((w for w in ctx.hicache if "as launched" not in w["change"]), None)
    if item is None or not item.get("supported"):
        why = item.get("reason") if item else "bytes per token unknown: the host pool size cannot be computed"
        return [not_possible("hicache", "HiCache (host memory tier)", flags, why or "not computable")]
    ratio = item["change"].split("--hicache-ratio ")[-1].split()[0]
    if sglang_has(launch, "hicache_ratio"):
        flags.append(f"--hicache-ratio {ratio}")
    total = item.get("host_gb_all_ranks") or item.get("host_gb")
    level = "low" if (total or 0) <= 64 else "medium"
    enabled = bool(launch.enable_hierarchical_cache)
    rec = Recommendation(
        "hicache", ("raise the HiCache ratio to " + ratio) if enabled else f"HiCache with a host pool of {ratio} × the GPU pool",
        flags, b.kv_tokens, b.kv_pool_gb, b.headroom_gb,
        _cost(0.0, total, "none", "prefix hits come back from host memory over PCIe instead of being recomputed; "
              "only reused prefixes (multi-turn chats, shared prompts) gain"),
        _risk(level, f"pins {total:,.2f} GB (decimal) of host RAM across the ranks: the machine must have it free"),
        reason=f"the GPU pool stays {b.kv_tokens:,} tokens; the host pool keeps {item['host_tokens']:,} more cached "
        f"tokens per rank ({item['host_gb']:.2f} GB, decimal)"
        + ("; this run never filled the pool, so the gain is prefixes kept longer" if ctx.verdict.get("pool_limited") is False else ""),
        gain_tokens=0,
    )  # fmt: skip
    rec.allows = allows(launch, b.kv_tokens, ctx.verdict) | {"host_cache_tokens": item["host_tokens"]}
    return [rec]


def _sglang_page(ctx: _Ctx) -> list[Recommendation]:
    """Page rounding loses up to a page of tokens: worth saying only when that is a visible share."""
    b = ctx.b
    inp, pred = (b.inputs.inputs if b.inputs else None), b.prediction
    if inp is None or pred is None or inp.page_size <= 1 or pred.tokens is None or ctx.launch.outcome == "failed":
        return []
    before = pred.tokens_spec if pred.tokens_spec is not None else pred.tokens_memory
    lost = (before or 0) - pred.tokens
    if pred.tokens <= 0 or lost <= 0 or lost / pred.tokens < 0.001 or pred.capped:
        return []
    return [Recommendation(
        "page", f"page size {inp.page_size} → 1 (page rounding drops {lost:,} tokens)", ["--page-size 1"],
        pred.tokens + lost, b.kv_pool_gb, b.headroom_gb, _cost(0.0, 0.0, "none", "smaller pages: more page-table work"),
        _risk("medium", "some attention backends need their page size (FlashMLA 64, TRT-LLM 32/64): check yours"),
        reason=f"the formula rounds {before:,} tokens down to a multiple of {inp.page_size}", gain_tokens=lost,
    )]  # fmt: skip


def _context_value(tokens: int) -> int:
    """The largest power of two (at least 1,024) a request of the pool can hold."""
    return max(1024, 1 << int(math.log2(max(tokens - 1, 2))))


def _sglang_context(ctx: _Ctx) -> list[Recommendation]:
    launch, b = ctx.launch, ctx.b
    ctx_len, tokens = launch.context_len or launch.context_length, b.kv_tokens
    if not ctx_len or not tokens or tokens >= ctx_len or launch.outcome == "failed":
        return []
    value = _context_value(tokens)
    if not sglang_has(launch, "context_length") or value >= ctx_len:
        return []
    return [Recommendation(
        "context", f"context length {ctx_len:,} → {value:,} (a full-context request fits the pool)",
        [f"--context-length {value}"], tokens, b.kv_pool_gb, b.headroom_gb,
        _cost(0.0, 0.0, "none", f"{tokens / value:.2f} full-context requests at once instead of {tokens / ctx_len:.2f}"),
        _risk("medium", f"rejects requests over {value:,} tokens (prompt + output); SGLang already limits them to "
              f"{tokens - 1:,}, the pool"),
        reason=f"the pool ({tokens:,} tokens) is smaller than the context length {ctx_len:,}: not one request of "
        "the full context fits, so the advertised context is not servable", gain_tokens=0,
        allows=allows(launch, tokens, ctx.verdict) | {"full_context_requests": round(tokens / value, 2)},
    )]  # fmt: skip


def mamba_cap(launch: Launch) -> dict[str, Any] | None:
    """``max_running_requests is capped to N by the mamba state cache (...)`` (0.5.17+), as a rank kept it."""
    for r in launch.ranks:
        cap = (r.extra or {}).get("max_running_capped")
        if isinstance(cap, dict) and cap.get("cause") == "mamba":
            return {**cap, "mamba": (r.extra or {}).get("mamba") or {}}
    return None


def _sglang_mamba_slots(ctx: _Ctx) -> list[Recommendation]:
    """The mamba state cache caps max_running_requests below what was asked: more state slots (the
    engine's own advice in its warning), paid for out of the KV budget."""
    launch, b = ctx.launch, ctx.b
    cap, want = mamba_cap(launch), launch.max_running_requests
    li = b.inputs
    if cap is None or not want or not sglang_has(launch, "max_mamba_cache_size"):
        return []
    counts = [cap.get(k) for k in ("max_running_requests", "slots_per_request", "max_mamba_cache_size")]
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in counts):
        return []  # a figure set aside as out of range, or none
    n, k, size = (int(v or 0) for v in counts)
    state = fm.mamba_gb(next((r for r in launch.ranks if (r.extra or {}).get("mamba")), None))
    if want <= n or not state > 0 or not math.isfinite(state) or li is None or li.inputs is None:
        return []
    per_slot = state / (size + 1)  # SGLang allocates max_mamba_cache_size + 1 slots
    asked, want = want, min(want, _mamba_requests_that_fit(ctx, per_slot, k, size))
    if want <= n:
        return [not_possible("mamba_slots", f"max_mamba_cache_size {size} → {asked * k}",
                             [f"--max-mamba-cache-size {asked * k}"],
                             f"{asked} requests × {k} state slots ({per_slot:.3f} GiB each) "
                             "leave the KV pool less than one full-context request")]  # fmt: skip
    slots = want * k
    more = (slots - size) * per_slot
    p = fm.predict(li.inputs.with_(mamba_gb=(li.inputs.mamba_gb or 0.0) + more), li.features)
    flags = [f"--max-mamba-cache-size {slots}"]
    if p.tokens is None or p.tokens <= 0:
        return []
    return [Recommendation(
        "mamba_slots", f"raise max_mamba_cache_size {size} → {slots} ({want} running requests × {k} state slots)",
        flags, p.tokens, _r2(fm.pool_gb(p.tokens, li.inputs.page_size, li.bpt.value or li.inputs.cell or 0.0)),
        b.headroom_gb, _cost(0.0, 0.0, "none", f"{want} requests at once instead of {n}; fewer KV tokens"),
        _risk("medium", "the state slots come out of the KV budget: fewer tokens for each running request"),
        reason=f"SGLang capped max_running_requests to {n} by the mamba state cache ({size} slots, {k} per request; "
        f"its warning suggests --max-mamba-cache-size or --mamba-full-memory-ratio); {slots - size} more slots "
        f"≈ {more:.2f} GiB of state per rank ({state:.2f} GiB for {size + 1} slots now)",
        gain_tokens=(p.tokens - b.kv_tokens) if b.kv_tokens else None, value=float(slots),
    )]  # fmt: skip


def _mamba_requests_that_fit(ctx: _Ctx, per_slot: float, k: int, size: int) -> int:
    """The most running requests whose state slots still leave the KV pool one full-context request."""
    li, ctx_len = ctx.b.inputs, ctx.launch.context_len or ctx.launch.context_length or 0
    if li is None or li.inputs is None or not li.inputs.cell or ctx.b.rest_gb is None or per_slot <= 0:
        return 0
    spare = ctx.b.rest_gb - ctx_len * li.inputs.cell / GiB
    return max(0, int((size + spare / per_slot) // k)) if spare > 0 else 0


def _sglang_requests(ctx: _Ctx) -> list[Recommendation]:
    """The request cap, when the run shows it (queue with room in the pool, or retractions)."""
    launch, b, v = ctx.launch, ctx.b, ctx.verdict
    mrr = launch.max_running_requests_effective or launch.max_running_requests
    per, tokens = v.get("tokens_per_request"), b.kv_tokens
    if not mrr or not per or not tokens or not sglang_has(launch, "max_running_requests"):
        return []
    if mamba_cap(launch) is not None:
        return []  # the mamba state cache sets the cap: --max-running-requests alone changes nothing
    fit = max(1, int(tokens * ROOMY_USAGE // per))
    usage = v.get("peak_token_usage") or 0.0
    if v.get("retractions") and fit < mrr:
        return [_requests_rec(ctx, mrr, fit, "fewer retractions: requests wait instead of being evicted",
                              f"{v['retractions']:,} retraction(s) at {per:,} tokens per request")]  # fmt: skip
    if v.get("peak_queue_req") and usage < ROOMY_USAGE and (v.get("peak_running_req") or 0) >= mrr and fit > mrr:
        return [_requests_rec(ctx, mrr, fit, "more requests at once: less queueing",
                              f"requests queued at {usage:.0%} pool usage with {mrr} running (the cap)")]  # fmt: skip
    return []


def _requests_rec(ctx: _Ctx, mrr: int, new: int, effect: str, why: str) -> Recommendation:
    b = ctx.b
    up = new > mrr
    return Recommendation(
        "requests", f"{'raise' if up else 'lower'} max_running_requests {mrr:,} → {new:,}",
        [f"--max-running-requests {new}"], b.kv_tokens, b.kv_pool_gb, b.headroom_gb,
        _cost(0.0, 0.0, "none", effect),
        _risk("medium", "sized from this run's mean request; longer requests than observed fill the pool sooner"),
        reason=f"{why}; {new:,} requests of that size fill {ROOMY_USAGE:.0%} of the pool ({b.kv_tokens:,} tokens)",
        gain_tokens=0, value=float(new),
    )  # fmt: skip


# --------------------------------------------------------------------------- vLLM
def _vllm_kv(launch: Launch) -> tuple[Any, float | None]:
    from logparse.reports.explain_vllm import binding_rank

    rank = binding_rank(launch)
    return rank, (rank.kv_size_gb if rank is not None else None)


def _scaled_tokens(launch: Launch, kv_gb: float | None, new_gb: float) -> int | None:
    """vLLM's tokens for a pool of ``new_gb``: in proportion to the logged pool (whole blocks of B)."""
    if not launch.kv_tokens or not kv_gb or kv_gb <= 0 or new_gb <= 0:
        return None
    block = launch.block_size or 16
    return int(launch.kv_tokens * new_gb / kv_gb) // block * block


def _vllm_utilization(ctx: _Ctx, reserve: Any) -> list[Recommendation]:
    from logparse.reports.explain_vllm import total_gb

    launch = ctx.launch
    rank, kv = _vllm_kv(launch)
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
        new_u = _floor3((free - outside - ctx.margin) / total)
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


def _vllm_utilization_rec(ctx: _Ctx, u: float, new_u: float, kv: float, new_kv: float, total: float,
                          free: float, outside: float) -> Recommendation:  # fmt: skip
    launch = ctx.launch
    tokens = _scaled_tokens(launch, kv, new_kv)
    left = free - new_u * total - outside
    up = new_u > u
    rec = Recommendation(
        "utilization", f"{'raise' if up else 'lower'} gpu_memory_utilization {u:g} → {new_u:g}",
        [f"--gpu-memory-utilization {new_u:g}"], tokens, _r2(new_kv), None,
        _cost((new_u - u) * total, 0.0, "none", "more KV blocks, no per-token cost" if up else "fewer KV blocks"),
        _risk("low" if left >= 0.14 else "high", f"leaves {left:.2f} GiB of the GPU outside the instance"
              + ("" if outside == 0 else f" after {outside:.2f} GiB of CUDA graphs captured outside the budget")
              + "; from 0.9.1 vLLM starts only if u × T is free, so another tenant must fit in the rest"),
        reason=f"vLLM sizes KV as u × T minus its profile: {new_u - u:+.3f} × {total:.2f} GiB = {new_kv - kv:+.2f} GiB "
        f"of KV per rank; its own ceiling keeps the graphs outside the budget and 150 MiB"
        + "".join("; " + n for n in getattr(ctx.reserve, "notes", [])[1:]),
        value=new_u, gain_tokens=(tokens - launch.kv_tokens) if tokens and launch.kv_tokens else None,
    )  # fmt: skip
    rec.allows = allows(launch, tokens, ctx.verdict)
    return rec


def _vllm_kv_cache_memory(ctx: _Ctx, reserve: Any) -> list[Recommendation]:
    launch = ctx.launch
    rel = vllm_release(launch) or "?"
    if not vllm_has(launch, "--kv-cache-memory"):
        return [not_possible("kv_cache_memory", "set the KV pool in bytes", ["--kv-cache-memory"],
                             f"--kv-cache-memory exists from vLLM 0.10.2 (this launch: {rel})")]  # fmt: skip
    if launch.outcome == "failed":
        return []
    _, kv = _vllm_kv(launch)
    if reserve.max_kv_gb is None or kv is None:
        return [not_possible("kv_cache_memory", "set the KV pool in bytes", ["--kv-cache-memory"],
                             "needs the free memory at start and every profile term (the budget report of 0.10.2 "
                             "and 0.26.0+ prints them)")]  # fmt: skip
    size = int(reserve.max_kv_gb * GiB)
    tokens = _scaled_tokens(launch, kv, reserve.max_kv_gb)
    rec = Recommendation(
        "kv_cache_memory", f"--kv-cache-memory {size} ({reserve.max_kv_gb:.2f} GiB, vLLM's own 'fully utilize' figure)",
        [f"--kv-cache-memory {size}"], tokens, reserve.max_kv_gb, None,
        _cost(reserve.max_kv_gb - kv, 0.0, "none", "skips the memory profile at start"),
        _risk("medium", "bypasses gpu_memory_utilization and the profile: if the free memory at start or the "
              "activation peak grows (another process, longer inputs), it runs out of memory"),
        reason="free at start − (weights + activation + non-torch + CUDA graphs) − 150 MiB, from this launch's "
        "budget report", value=float(size),
        gain_tokens=(tokens - launch.kv_tokens) if tokens and launch.kv_tokens else None,
    )  # fmt: skip
    rec.allows = allows(launch, tokens, ctx.verdict)
    return [rec]


def _vllm_max_model_len(ctx: _Ctx) -> list[Recommendation]:
    launch = ctx.launch
    length, tokens = launch.max_model_len, launch.kv_tokens
    estimate = next(
        (e.fields["estimated_max_model_len"] for e in launch.events if e.fields.get("estimated_max_model_len")), None
    )
    if launch.error_kind == "max_len_exceeds_kv" and (estimate or tokens):
        value = int(estimate or (tokens or 0) // 16 * 16)
        why = "vLLM's own estimate of the longest request the KV memory holds" if estimate else "the pool's tokens"
    elif length and tokens and tokens < length and launch.outcome != "failed":
        value, why = _context_value(tokens), "not one request of max_model_len fits the pool"
    else:
        return []
    if value <= 0 or not vllm_has(launch, "--max-model-len"):
        return []
    conc = round(tokens / value, 2) if tokens else None
    return [Recommendation(
        "max_model_len", f"max_model_len {length:,} → {value:,}" if length else f"--max-model-len {value}",
        [f"--max-model-len {value}"], tokens, None, None,
        _cost(0.0, 0.0, "none", f"concurrency {conc:.2f}× at the new length" if conc else "the pool does not change"),
        _risk("medium", f"rejects requests over {value:,} tokens"), reason=why, gain_tokens=0, value=float(value),
        allows={"max_request_tokens": value, "full_context_requests": conc} if conc else {"max_request_tokens": value},
    )]  # fmt: skip


def _vllm_fp8(ctx: _Ctx) -> list[Recommendation]:
    launch = ctx.launch
    if launch.outcome == "failed" or launch.kv_cache_dtype not in ("auto", "bfloat16", "float16", "half", None):
        return []
    if not launch.kv_tokens or not vllm_has(launch, "--kv-cache-dtype"):
        return [not_possible("fp8", "fp8 KV cache", ["--kv-cache-dtype fp8"], "no KV token count in the log")]
    _, kv = _vllm_kv(launch)
    tokens = launch.kv_tokens * 2
    rec = Recommendation(
        "fp8", "kv_cache_dtype fp8 (half the bytes per token)", ["--kv-cache-dtype fp8"], tokens, kv, None,
        _cost(0.0, 0.0, FP8_ACCURACY + "; vLLM's fp8 is e4m3 on CUDA (scales from the checkpoint, else 1.0)",
              "decode reads half the KV bytes; the attention backend must support an fp8 KV cache"),
        _risk("medium", "accuracy is the cost; the attention backend must accept an fp8 KV cache"),
        reason="the same pool at one byte per element holds twice the tokens", gain_tokens=tokens - launch.kv_tokens,
    )  # fmt: skip
    rec.allows = allows(launch, tokens, ctx.verdict)
    return [rec]


# --------------------------------------------------------------------------- ranking and the answer
def _pressure(ctx: _Ctx) -> bool:
    """Evidence that memory, not KV, is short: an out-of-memory failure or almost no headroom."""
    b = ctx.b
    return failure_kind(ctx.launch, b) == "oom" or (b.headroom_gb is not None and b.headroom_gb < 1.0)


def rank(recs: list[Recommendation], *, pressure: bool) -> list[Recommendation]:
    """Best first: actions that gain tokens (safest first), then those that keep them, then those that
    cost tokens (first under memory pressure), then what is not possible."""

    def key(r: Recommendation) -> tuple:
        if not r.possible:
            return (4, 0, 0)
        gain = r.gain_tokens
        if (r.kind == "fraction" and (gain or 0) < 0) or (
            r.value is not None and r.kind == "utilization" and (gain or 0) < 0
        ):
            group = 0 if pressure else 3
        elif gain is None or gain > 0:
            group = 1
        else:
            group = 2
        return (group, RISK_ORDER.get(r.risk.get("level", "high"), 2), -(gain or 0))

    return sorted(recs, key=key)


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


def _reserve_line(ctx: _Ctx) -> str | None:
    r, b = ctx.reserve, ctx.b
    inp = b.inputs.inputs if b.inputs is not None else None
    if r is None or r.reserve_gb is None:
        return None
    if r.engine == "vllm":
        kv = getattr(r, "max_kv_gb", None)
        top = f"; its own ceiling for the pool is {kv:.2f} GiB" if kv is not None else ""
        return f"vLLM keeps {_reserve_words(r)} beside the weights and the KV pool{top}."
    if inp is None:
        return f"SGLang's own default logic would hold back {_reserve_words(r)}."
    held = _held(inp.f, inp.m_pre_gb)
    hi = r.reserve_gb_hi if r.reserve_gb_hi is not None else r.reserve_gb
    if is_engine_default(r, inp.f):
        return (
            f"SGLang's own default logic holds back {_reserve_words(r)}: mem_fraction_static {inp.f:g} is its own "
            f"default for this GPU ({_default_words(r)}), so the launch holds back what the engine would."
        )
    cmp = (
        f"{hi - held:.2f} GiB less: raising the fraction is not advised"
        if held < hi
        else f"{held - hi:.2f} GiB more: the fraction can rise that far"
    )
    f_default = f" (default fraction {r.default_fraction:g})" if r.default_fraction is not None else ""
    return (
        f"SGLang's own default logic would hold back {_reserve_words(r)}{f_default}; this launch holds back "
        f"{held:.2f} GiB, {cmp}."
    )


def _best_line(ctx: _Ctx, recs: list[Recommendation]) -> str:
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


def _answer(ctx: _Ctx, recs: list[Recommendation]) -> list[str]:
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
    lines.append(_best_line(ctx, recs))
    return lines


# --------------------------------------------------------------------------- the entry point
def advise(
    launch: Launch,
    b: Budget,
    *,
    margin_gb: float | None = None,
    hicache_what_ifs: list[dict[str, Any]] | None = None,
) -> Advice:
    """The advice for one launch.  ``margin_gb``: the headroom (GiB) the user asks the fraction to
    leave, below the engine's reserve if need be; None keeps the engine's reserve.  ``hicache_what_ifs``:
    explain's HiCache what-ifs (the host pool sizes), reused here."""
    verdict = runtime_verdict(launch)
    if launch.engine == "vllm":
        from logparse.budget.vllm_reserve import launch_vllm_reserve
        from logparse.reports.explain_vllm import total_gb

        rank_, _ = _vllm_kv(launch)
        reserve: EngineReserve | None = launch_vllm_reserve(launch, rank_, total_gb(launch, rank_))
    else:
        reserve = launch_reserve(launch, b.pre_load_avail_gb or b.least_free_before_weights_gb)
    ctx = _Ctx(launch, b, margin_gb, reserve, verdict, list(hicache_what_ifs or []))
    if launch.engine == "vllm":
        recs = (_vllm_utilization(ctx, reserve) + _vllm_kv_cache_memory(ctx, reserve) + _vllm_fp8(ctx)
                + _vllm_max_model_len(ctx))  # fmt: skip
    else:
        recs = (_sglang_fraction(ctx) + _sglang_cap(ctx) + _sglang_chunked(ctx) + _sglang_fp8(ctx) + _sglang_hicache(ctx)
                + _sglang_context(ctx) + _sglang_requests(ctx) + _sglang_mamba_slots(ctx) + _sglang_page(ctx))  # fmt: skip
    recs = rank(recs, pressure=_pressure(ctx))
    return Advice(_answer(ctx, recs), verdict, reserve, recs)
