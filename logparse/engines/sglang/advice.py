"""SGLang's levers for one launch: the fraction (against the engine's own reserve), the token cap,
chunked prefill, fp8 KV, HiCache, page size, context length, mamba state slots and the request cap.
Each returns :class:`~logparse.reports.advice_core.Recommendation` records (see :mod:`logparse.reports.advice`);
:func:`levers` lists them with the levers of :mod:`logparse.reports.levers`.  The advice's lines on what
sets the pool, on SGLang's own reserve and on a draft model outside it are SGLang's too."""

from __future__ import annotations

import math
from typing import Any

from logparse.budget.model import Budget
from logparse.engines.sglang import formula as fm
from logparse.engines.sglang import formula_inputs as fi
from logparse.engines.sglang import levers as lv
from logparse.engines.sglang.flags import sglang_fp8_dtype, sglang_has
from logparse.engines.sglang.formula import GiB
from logparse.engines.sglang.reserve import EngineReserve, reserve_inputs, sglang_reserve
from logparse.engines.sglang.sentences import headroom_cell
from logparse.launches.model import Launch
from logparse.reports.advice_core import (
    FP8_ACCURACY,
    FP8_FORMATS,
    ROOMY_USAGE,
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
from logparse.reports.launch_facts import failure_kind, is_low_precision_kv


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
    kv_gb = r2(fm.pool_gb(p.tokens, inp.page_size, li.bpt.value or inp.cell))
    head, now = None, (b.headroom_gb if headroom is None else headroom)
    if now is not None and pred.tokens is not None:
        ch = headroom_cell(li, has_draft) or inp.cell
        head = now - (p.tokens - pred.tokens) * ch / GiB
        if head < 0:
            return f"at {f_new:g} the pool would take {-head:.2f} GiB more than was free after startup (out of memory at start)"
    return p.tokens, kv_gb, r2(head)


def fraction_for_margin(b: Budget, margin: float, *, has_draft: bool, oom: bool) -> float | str:
    """The fraction that leaves ``margin`` GiB of headroom after startup (or, after an out-of-memory
    failure, ``margin`` GiB more than it had)."""
    li = b.inputs
    if li is None or li.inputs is None:
        return "the log lacks the memory figures the formula needs"
    inp = li.inputs
    if b.headroom_gb is None and not oom:
        return "no headroom figure: " + b.unknown.get("headroom_gb", "no free-memory figure after startup")
    if oom or b.headroom_gb is None:
        f_new = floor3(inp.f - margin / inp.m_pre_gb)
    else:
        ch = headroom_cell(li, has_draft) or inp.cell
        ratio = (inp.cell / ch) if inp.cell and ch else 1.0
        f_new = floor3(inp.f + (b.headroom_gb - margin) * ratio / inp.m_pre_gb)
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


def default_words(reserve: EngineReserve | None) -> str:
    if reserve is None or reserve.default_fraction is None:
        return "not known"
    lo, hi = reserve.default_fraction_lo, reserve.default_fraction_hi
    return f"{lo:g}–{hi:g}" if lo is not None and hi is not None and lo != hi else f"{reserve.default_fraction:g}"


def held_back(f: float, m_pre: float) -> float:
    return (1.0 - f) * m_pre


def sglang_fraction(ctx: Ctx) -> list[Recommendation]:
    b, reserve = ctx.b, ctx.reserve
    inp = b.inputs.inputs if b.inputs is not None else None
    if inp is None or b.prediction is None:
        return [not_possible("fraction", "change mem_fraction_static", [], "the log lacks the memory figures "
                             "the formula needs (Load weight begin/end and mem_fraction_static)")]  # fmt: skip
    has_draft = b.draft_bytes_per_token is not None
    cap = reserve.fraction_keeping_reserve(inp.m_pre_gb) if reserve is not None else None
    oom = failure_kind(ctx.launch, b) == "oom"
    if ctx.margin is not None:
        target: float | str = fraction_for_margin(b, ctx.margin, has_draft=has_draft, oom=oom)
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
                             f"it is SGLang's own default for this GPU and these arguments ({default_words(reserve)}): "
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
    ctx: Ctx, inp: fm.Inputs, f_new: float, cap: float | None, has_draft: bool
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
    held = held_back(f_new, inp.m_pre_gb)
    rec = Recommendation(
        "fraction", action, flag, tokens, kv_gb, head,
        cost((f_new - inp.f) * inp.m_pre_gb, 0.0, "none",
              "" if up else "fewer KV tokens: less concurrency or context"),
        risk("low", ""), reason="", value=f_new, below_reserve=below, left_gb=r2(held),
    )  # fmt: skip
    rec.gain_tokens = tokens - b.kv_tokens if tokens is not None and b.kv_tokens is not None else None
    rec.allows = allows(ctx.launch, tokens, ctx.verdict)
    _fraction_words(ctx, rec, inp, held, up, below)
    return rec


def _fraction_words(ctx: Ctx, rec: Recommendation, inp: fm.Inputs, held: float, up: bool, below: bool) -> None:
    """The action's label, risk and evidence: the engine's reserve, the headroom, the run."""
    reserve, b = ctx.reserve, ctx.b
    rgb = reserve.reserve_gb_hi if reserve is not None and reserve.reserve_gb_hi is not None else None
    now = held_back(inp.f, inp.m_pre_gb)
    if ctx.margin is not None:
        rec.action += f" (leaves {ctx.margin:.2f} GiB of headroom, as asked with --margin)"
        rec.fixes = "the headroom asked with --margin"
    elif up:
        rec.action += f" (keeps SGLang's own reserve of {rgb:.2f} GiB)"
    else:
        rec.action += f" (restores SGLang's own reserve of {rgb:.2f} GiB)"
        rec.fixes = f"the launch holds back {now:.2f} GiB, less than SGLang's own reserve of {rgb:.2f} GiB"
    if below and rgb is not None:
        rec.risk = risk("high", f"holds back {held:.2f} GiB, less than the {rgb:.2f} GiB SGLang's own default logic "
                         "reserves for activations, CUDA graphs and the draft: it can start and then run out of "
                         "memory under a large prefill")  # fmt: skip
    elif up:
        exact = reserve is not None and reserve.exact
        rec.risk = risk("low" if exact else "medium", f"holds back {held:.2f} GiB ≥ the {rgb:.2f} GiB SGLang's own "
                         "logic reserves" + ("" if exact else " (this release's reserve is not known exactly)"))  # fmt: skip
    else:
        rec.risk = risk(
            "low", f"holds back {held:.2f} GiB instead of {now:.2f}: fewer tokens, more room for activations"
        )
    bits = []
    if reserve is not None and reserve.reserve_gb is not None:
        bits.append(f"{reserve.rule_label}: {reserve_words(reserve)} for this launch's arguments")
        bits += [n for n in reserve.notes if "multimodal" in n or "not verified" in n or "not re-derived" in n]
    bits.append(f"it now holds back (1 − {inp.f:g}) × {inp.m_pre_gb:.2f} = {now:.2f} GiB")
    if b.headroom_gb is not None:
        bits.append(f"{b.headroom_gb:.2f} GiB was free after startup")
    bits.append("this run: " + ctx.verdict.get("evidence", "no runtime lines"))
    rec.reason = "; ".join(bits)


# --------------------------------------------------------------------------- SGLang: the other actions
def sglang_chunked(ctx: Ctx) -> list[Recommendation]:
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
        head, cost((new_cap - inp.f) * inp.m_pre_gb, 0.0, "none",
                    f"long prompts prefill in chunks of {new_chunk:,} tokens: slower time to first token for them"),
        risk("medium", f"keeps SGLang's own reserve for the smaller chunk ({smaller.reserve_gb:.2f} GiB); a prefill "
              f"chunk's activations are what the {saved:.2f} GiB it no longer reserves was for"),
        reason=f"the engine's reserve holds 1.5 MiB per prefill-chunk token: {chunk:,} → {new_chunk:,} tokens frees "
        f"{saved:.2f} GiB of it ({reserve_words(smaller)})", value=new_cap,
        fixes="the launch holds back less than SGLang's own reserve" if new_cap < inp.f else None,
        left_gb=r2((1 - new_cap) * inp.m_pre_gb),
    )  # fmt: skip
    rec.gain_tokens = tokens - b.kv_tokens if tokens is not None and b.kv_tokens is not None else None
    rec.allows = allows(launch, tokens, ctx.verdict)
    return [rec]


def sglang_cap(ctx: Ctx) -> list[Recommendation]:
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
        tokens, None, r2(head), cost(max((b.rest_gb or 0.0) - (b.kv_pool_gb or 0.0), 0.0), 0.0, "none",
                                        ""),
        cap_risk(ctx),
        reason=f"the formula's budget of {b.rest_gb:.2f} GiB holds {tokens:,} tokens; the cap keeps {cap:,}",
        gain_tokens=tokens - (b.kv_tokens or cap),
    )  # fmt: skip
    rec.allows = allows(launch, tokens, ctx.verdict)
    return [rec]


def cap_risk(ctx: Ctx) -> dict[str, str]:
    """Dropping the cap is low-risk only when the fraction holds back SGLang's own reserve: the pool then
    takes a budget the engine itself would set aside; below the reserve it grows into the activations' room."""
    inp = ctx.b.inputs.inputs if ctx.b.inputs is not None else None
    r = ctx.reserve
    hi = (r.reserve_gb_hi or r.reserve_gb) if r is not None else None
    if inp is None or hi is None:
        return risk(
            "medium", "the pool then takes the KV budget at this fraction; SGLang's reserve for it is not known"
        )
    held = held_back(inp.f, inp.m_pre_gb)
    if held < hi - 0.005 and not is_engine_default(r, inp.f):
        return risk("high", f"the fraction holds back {held:.2f} GiB, less than SGLang's own reserve of {hi:.2f} GiB: "
                    "without the cap the pool grows into the room the activations and CUDA graphs need")  # fmt: skip
    return risk("low", f"the pool then takes the KV budget SGLang already set aside at this fraction (it holds back "
                f"{held:.2f} GiB ≥ the {hi:.2f} GiB reserve): nothing else moves")  # fmt: skip


def sglang_fp8(ctx: Ctx) -> list[Recommendation]:
    launch, b = ctx.launch, ctx.b
    if launch.outcome == "failed" or is_low_precision_kv(launch):
        return []  # it does not lead out of a failed start; an 8-bit cache is already there
    dtype = sglang_fp8_dtype(launch)
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
        r2(fm.pool_gb(p8.tokens, inp.page_size, (li.bpt.value or cell) / 2)), b.headroom_gb,
        cost(0.0, 0.0, accuracy, "the attention backend must support an fp8 KV cache (some reject it at start)"),
        risk("medium", "accuracy is the cost; the attention backend must accept an fp8 KV cache"),
        reason=f"the same KV budget ({b.rest_gb:.2f} GiB) at half of {li.bpt.value or cell:,.0f} bytes per token "
        f"({li.features.era.label} formula); GPU memory and headroom unchanged",
        value=None,
    )  # fmt: skip
    if p8.capped:
        rec.reason += f"; --max-total-tokens {inp.max_total_tokens:,} still caps the pool"
    rec.gain_tokens = p8.tokens - b.kv_tokens if b.kv_tokens is not None else None
    rec.allows = allows(ctx.launch, p8.tokens, ctx.verdict)
    return [rec]


def sglang_hicache(ctx: Ctx) -> list[Recommendation]:
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
    level = "medium"  # the host's free RAM is not in the log
    enabled = bool(launch.enable_hierarchical_cache)
    rec = Recommendation(
        "hicache", ("raise the HiCache ratio to " + ratio) if enabled else f"HiCache with a host pool of {ratio} × the GPU pool",
        flags, b.kv_tokens, b.kv_pool_gb, b.headroom_gb,
        cost(0.0, total, "none", "copies between GPU and host memory over PCIe (writes with the write policy, "
              "loads on a hit)"),
        risk(level, f"pins {total:,.2f} GB (decimal) of host RAM across the ranks: the machine must have it free "
             "(its free RAM is not in the log)"),
        reason=f"the GPU pool stays {b.kv_tokens:,} tokens; the host pool keeps {item['host_tokens']:,} more cached "
        f"tokens per rank ({item['host_gb']:.2f} GB, decimal): prefix hits come back over PCIe instead of being "
        "recomputed; only reused prefixes (multi-turn chats, shared prompts) gain"
        + ("; this run never filled the pool, so the gain is prefixes kept longer" if ctx.verdict.get("pool_limited") is False else ""),
        gain_tokens=0,
    )  # fmt: skip
    rec.allows = allows(launch, b.kv_tokens, ctx.verdict) | {"host_cache_tokens": item["host_tokens"]}
    return [rec]


def sglang_page(ctx: Ctx) -> list[Recommendation]:
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
        pred.tokens + lost, b.kv_pool_gb, b.headroom_gb, cost(0.0, 0.0, "none", "smaller pages: more page-table work"),
        risk("medium", "some attention backends need their page size (FlashMLA 64, TRT-LLM 32/64): check yours"),
        reason=f"the formula rounds {before:,} tokens down to a multiple of {inp.page_size}", gain_tokens=lost,
    )]  # fmt: skip


def sglang_context(ctx: Ctx) -> list[Recommendation]:
    launch, b = ctx.launch, ctx.b
    ctx_len, tokens = launch.context_len or launch.context_length, b.kv_tokens
    if not ctx_len or not tokens or tokens >= ctx_len or launch.outcome == "failed":
        return []
    value = context_value(tokens)
    if not sglang_has(launch, "context_length") or value >= ctx_len:
        return []
    return [Recommendation(
        "context", f"context length {ctx_len:,} → {value:,} (a full-context request fits the pool)",
        [f"--context-length {value}"], tokens, b.kv_pool_gb, b.headroom_gb,
        cost(0.0, 0.0, "none", ""),
        risk("medium", f"rejects requests over {value:,} tokens (prompt + output); SGLang already limits them to "
              f"{tokens - 1:,}, the pool"),
        reason=f"the pool ({tokens:,} tokens) is smaller than the context length {ctx_len:,}: not one request of "
        f"the full context fits, so the advertised context is not servable; {tokens / value:.2f} requests of the new "
        f"length fit at once (now {tokens / ctx_len:.2f} of the full context)", gain_tokens=0,
        allows=allows(launch, tokens, ctx.verdict) | {"full_context_requests": round(tokens / value, 2)},
    )]  # fmt: skip


def mamba_cap(launch: Launch) -> dict[str, Any] | None:
    """``max_running_requests is capped to N by the mamba state cache (...)`` (0.5.17+), as a rank kept it."""
    for r in launch.ranks:
        cap = (r.extra or {}).get("max_running_capped")
        if isinstance(cap, dict) and cap.get("cause") == "mamba":
            return {**cap, "mamba": (r.extra or {}).get("mamba") or {}}
    return None


def sglang_mamba_slots(ctx: Ctx) -> list[Recommendation]:
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
    state = fi.mamba_gb(next((r for r in launch.ranks if (r.extra or {}).get("mamba")), None))
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
        flags, p.tokens, r2(fm.pool_gb(p.tokens, li.inputs.page_size, li.bpt.value or li.inputs.cell or 0.0)),
        b.headroom_gb, cost(0.0, 0.0, "none", "fewer KV tokens for the running requests"),
        risk("medium", "the state slots come out of the KV budget: fewer tokens for each running request"),
        reason=f"SGLang capped max_running_requests to {n} by the mamba state cache ({size} slots, {k} per request; "
        f"its warning suggests --max-mamba-cache-size or --mamba-full-memory-ratio); {slots - size} more slots "
        f"≈ {more:.2f} GiB of state per rank ({state:.2f} GiB for {size + 1} slots now)",
        gain_tokens=(p.tokens - b.kv_tokens) if b.kv_tokens else None, value=float(slots),
        fixes=f"SGLang capped max_running_requests to {n} (asked {asked})",
    )]  # fmt: skip


def _mamba_requests_that_fit(ctx: Ctx, per_slot: float, k: int, size: int) -> int:
    """The most running requests whose state slots still leave the KV pool one full-context request."""
    li, ctx_len = ctx.b.inputs, ctx.launch.context_len or ctx.launch.context_length or 0
    if li is None or li.inputs is None or not li.inputs.cell or ctx.b.rest_gb is None or per_slot <= 0:
        return 0
    spare = ctx.b.rest_gb - ctx_len * li.inputs.cell / GiB
    return max(0, int((size + spare / per_slot) // k)) if spare > 0 else 0


def sglang_requests(ctx: Ctx) -> list[Recommendation]:
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
        return [_requests_rec(ctx, mrr, fit, "requests wait in the queue instead (fewer retractions)",
                              f"{v['retractions']:,} retraction(s) at {per:,} tokens per request")]  # fmt: skip
    if v.get("peak_queue_req") and usage < ROOMY_USAGE and (v.get("peak_running_req") or 0) >= mrr and fit > mrr:
        return [_requests_rec(ctx, mrr, fit, "more requests share each decode step: higher per-token latency",
                              f"requests queued at {usage:.0%} pool usage with {mrr} running (the cap)")]  # fmt: skip
    return []


def _requests_rec(ctx: Ctx, mrr: int, new: int, effect: str, why: str) -> Recommendation:
    b = ctx.b
    up = new > mrr
    return Recommendation(
        "requests", f"{'raise' if up else 'lower'} max_running_requests {mrr:,} → {new:,}",
        [f"--max-running-requests {new}"], b.kv_tokens, b.kv_pool_gb, b.headroom_gb,
        cost(0.0, 0.0, "none", effect),
        risk("medium", "sized from this run's mean request; longer requests than observed fill the pool sooner"),
        reason=f"{why}; {new:,} requests of that size fill {ROOMY_USAGE:.0%} of the pool ({b.kv_tokens:,} tokens)",
        gain_tokens=0, value=float(new),
    )  # fmt: skip


# --------------------------------------------------------------------------- the advice of an SGLang launch
def levers(ctx: Ctx) -> list[Recommendation]:
    """Every SGLang lever for the launch, in the advice's order before ranking."""
    return (sglang_fraction(ctx) + sglang_cap(ctx) + sglang_chunked(ctx) + sglang_fp8(ctx) + sglang_hicache(ctx)
            + sglang_context(ctx) + sglang_requests(ctx) + sglang_mamba_slots(ctx) + sglang_page(ctx)
            + lv.sglang_dp_attention(ctx) + lv.sglang_tp(ctx) + lv.sglang_fp8_weights(ctx) + lv.sglang_graph_bs(ctx)
            + lv.sglang_cpu_offload(ctx))  # fmt: skip


def fp8_kv_to_start(launch: Launch) -> str | None:
    """The 8-bit KV dtype added on top of each option that starts a failed launch, when its releases have
    ``--kv-cache-dtype`` and accept one."""
    return sglang_fp8_dtype(launch) if sglang_has(launch, "kv_cache_dtype") else None


def kv_bound_words(launch: Launch, b: Budget) -> str | None:
    """What sets the launch's KV tokens by SGLang's formula: the memory after a post-capture resize, or
    the fraction's rest after the weights; None when the log lacks the figures."""
    if fi.capture_resize(launch) is not None:
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
    return None


def reserve_line(ctx: Ctx) -> str | None:
    """SGLang's own reserve (``ctx.reserve``, known) against what the launch holds back."""
    r, b = ctx.reserve, ctx.b
    if r is None or r.reserve_gb is None:
        return None
    inp = b.inputs.inputs if b.inputs is not None else None
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
    if r is None or term is None or not draft or draft <= term.gb + 0.005:
        return None
    return (
        f"The draft model's weights ({draft:.2f} GiB per rank) exceed the {term.gb:.2f} GiB SGLang's reserve sets "
        f"aside for speculative decoding: the other {draft - term.gb:.2f} GiB come out of what it keeps for "
        "activations and CUDA graphs."
    )
