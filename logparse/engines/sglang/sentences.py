"""The sentences of ``logparse explain`` of an SGLang launch: one small function per question a user asks.

Each reads the launch, its budget (and the HiCache figures) and returns zero or more sentences; figures are printed as the budget holds
them (two decimals of GiB), so text and tables never disagree.  Two facts of an SGLang launch that the
what-ifs and the advice read too are defined here: whether its release is at least one
(:func:`from_release_after`) and what one more pool token costs in headroom (:func:`headroom_cell`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from logparse.budget.model import Budget
from logparse.engines.sglang import formula as fm
from logparse.engines.sglang import formula_inputs as fi
from logparse.engines.sglang import versions
from logparse.engines.sglang.formula import GiB
from logparse.launches.model import Launch, RankMemory
from logparse.reports.launch_facts import quote

UNIT = "GiB"


def from_release_after(launch: Launch, release: str) -> bool:
    """Is the newest release the launch may be at least ``release``?"""
    rng = launch.version_range
    return rng is not None and versions.index(rng[1]) >= versions.index(release)


def headroom_cell(li: fi.LaunchInputs, has_draft: bool) -> float | None:
    """Bytes of headroom one more pool token costs (draft KV grows with the pool outside the budget)."""
    inp = li.inputs
    if inp is None or inp.cell is None:
        return None
    c = inp.cell
    if has_draft and not li.features.draft_in_budget and li.draft_bpt.value is not None:
        c += li.draft_bpt.value
    return c


def _gb(v: float | None) -> str:
    return "?" if v is None else f"{v:.2f}"


@dataclass(frozen=True)
class Sized:
    """The formula's parts of a launch it could size, checked once and read by every sentence."""

    li: fi.LaunchInputs
    inp: fm.Inputs
    pred: fm.Prediction
    m_pre: float  # the budget's printed figures (GiB, two decimals)
    m_post: float
    reserved: float
    rest: float


def sized(b: Budget) -> Sized | None:
    """The budget's formula parts, or None when the log lacks what the formula needs."""
    li, pred = b.inputs, b.prediction
    figures = (b.pre_load_avail_gb, b.post_load_avail_gb, b.reserved_gb, b.rest_gb)
    if li is None or li.inputs is None or pred is None or any(v is None for v in figures):
        return None
    m_pre, m_post, reserved, rest = (float(v or 0.0) for v in figures)
    return Sized(li, li.inputs, pred, m_pre, m_post, reserved, rest)


def sentences(launch: Launch, b: Budget, hicache: dict[str, Any]) -> list[str]:
    out = _backend(b) + _era(launch, b)
    s = sized(b)
    if s is None:
        out.append(
            "The log lacks the figures the formula needs (Load weight begin/end and mem_fraction_static); "
            "nothing can be predicted."
        )
        return out + sizing_notes(launch, b) + _failure(launch)
    for step in (_fraction, _prediction, _cap, _pool_meaning, _rank_spread, _speculative, _held_back):
        out += step(launch, b, s)
    return out + sizing_notes(launch, b) + _hicache(b, hicache) + _failure(launch)


def _backend(b: Budget) -> list[str]:
    if b.memory_kind != "cpu":
        return []
    return [
        "CPU backend: every figure is system memory (available_cpu_mem), shared with every other process "
        "on the machine, so it can move between SGLang's measurements."
    ]


def _era(launch: Launch, b: Budget) -> list[str]:
    era = b.inputs.features.era if b.inputs else None
    where = f" ({era.where})" if era else ""
    ver = f"version range {launch.sglang_version_range}." if launch.sglang_version_range else "version unknown."
    notes = " ".join(n[0].upper() + n[1:] + "." for n in b.formula_notes)
    return [f"Sized with SGLang's {b.era_label} formula{where}; {ver}" + (" " + notes if notes else "")]


def _fraction(launch: Launch, b: Budget, s: Sized) -> list[str]:
    inp, pred, li = s.inp, s.pred, s.li
    mem = "system memory" if b.memory_kind == "cpu" else "GPU memory"
    f = inp.f
    m_pre, m_post = s.m_pre, s.m_post
    text = (
        f"mem_fraction_static={f:g} is not {f:.0%} of the {mem} left after the weights (that would be "
        f"{f:g} × {m_post:.2f} = {f * m_post:.2f} {UNIT} of KV). SGLang holds back (1 − {f:g}) = "
        f"{1 - f:.0%} of the memory that was free BEFORE the weights loaded ({m_pre:.2f} {UNIT} on "
        f"{_rank(li.m_pre_rank)}, the smallest rank) = {b.reserved_gb:.2f} {UNIT}, and the KV cache gets what "
        f"is left after the weights: {m_post:.2f} − {b.reserved_gb:.2f}{_other_terms(s.inp)} = {b.rest_gb:.2f} {UNIT}. "
        f"In other words weights + KV may take {f:g} × {m_pre:.2f} = {f * m_pre:.2f} {UNIT}, and the "
        f"weights took {m_pre - m_post:.2f} of it."
    )
    if pred.rest_gb <= 0:
        text += " That is negative: nothing is left for the KV cache, so SGLang cannot start with this fraction."
    if "default" in (b.mem_fraction_static_source or ""):
        text += f" ({b.mem_fraction_static_source}.)"
    out = [text]
    if li.features.draft_in_budget and li.m_post_rank is not None and li.m_post_rank.worker != "target":
        out.append(
            "From 0.5.14 the draft weights are counted: the free memory after the draft model loaded "
            f"({m_post:.2f} {UNIT}) is the starting point."
        )
    return out


def _other_terms(inp: fm.Inputs) -> str:
    """The terms SGLang takes out of the KV budget before the pool, as they appear in the sum."""
    terms = (("Mamba state", inp.mamba_gb), ("multimodal reservation", inp.mm_reservation_gb))
    return "".join(f" − {name} {gb:.2f}" for name, gb in terms if gb)


def _rank(r: RankMemory | None) -> str:
    return "?" if r is None else r.label()


def _prediction(launch: Launch, b: Budget, s: Sized) -> list[str]:
    if b.predicted_kv_tokens is None or b.kv_tokens is None:
        return []
    if b.within_rounding:
        verdict = "within the rounding of the printed figures"
    else:
        verdict = f"{b.kv_tokens_diff or 0:+,} tokens ({b.kv_tokens_diff_pct or 0.0:+.2f}%)"
    resize = fi.capture_resize(launch)
    if resize is not None:
        return _prediction_resized(b, resize, verdict)
    out = [
        f"The formula predicts {b.predicted_kv_tokens:,} tokens ({_gb(b.predicted_kv_gb)} {UNIT}); "
        f"the log says {b.kv_tokens:,} ({_gb(b.kv_pool_gb)} {UNIT}): {verdict}."
    ]
    pct = b.kv_tokens_diff_pct or 0.0
    mismatch = not b.within_rounding and abs(pct) > 0.5 and not b.capped_by_max_total_tokens
    if mismatch and s.inp.cell is not None:
        out.append(_mismatch(launch, b, s, _pool_budget_gb(b.kv_tokens, s.inp.cell, s)))
    return out


def _prediction_resized(b: Budget, resize: tuple[int | None, int], verdict: str) -> list[str]:
    """Post-capture KV sizing: the formula sizes the reservation; the pool is what the resize left."""
    pre, post = resize
    text = (
        f"The formula predicts {b.predicted_kv_tokens:,} tokens for the reservation SGLang makes before the "
        "CUDA-graph capture (post-capture KV sizing, SGLANG_ENABLE_POST_CAPTURE_KV_SIZING)"
    )
    text += f"; the log reserved {pre:,}: {verdict}." if pre else "; the log does not print the reservation."
    pool = f" ({_gb(b.kv_pool_gb)} {UNIT})" if b.kv_pool_gb is not None else ""
    text += (
        f" After the capture SGLang resized the pool to {post:,} tokens{pool}: what the memory free after the "
        "capture allows once M_pre × (1 − f) (and its headrooms) is held back. That last count is the pool."
    )
    return [text]


def _pool_budget_gb(tokens: int, cell: float, s: Sized) -> float:
    """The KV budget the printed pool implies (EAGLE's inflation taken out), in GiB."""
    pred = s.pred
    if pred.tokens_spec is not None and pred.tokens_memory is not None:
        tokens -= pred.tokens_spec - pred.tokens_memory
    return tokens * cell / GiB + (s.inp.mamba_gb or 0.0) + (s.inp.mm_reservation_gb or 0.0)


def _mismatch(launch: Launch, b: Budget, s: Sized, rest_actual: float) -> str:
    inp = s.inp
    text = f"The pool implies a budget of {rest_actual:.2f} {UNIT} instead of {s.rest:.2f}"
    if inp.f < 1:
        implied = (inp.m_post_gb - rest_actual) / (1 - inp.f)
        text += (
            f", i.e. SGLang measured {implied:.2f} {UNIT} free before the weights where 'Load weight begin' "
            f"printed {s.m_pre:.2f}"
        )
    text += "."
    rng = launch.version_range
    if rng and versions.index(rng[1]) >= versions.index("0.5.21"):
        text += (
            " From 0.5.21 SGLang takes that measurement at 'Memory baseline taken' (which prints only the "
            "usage, not the free memory), earlier than 'Load weight begin'."
        )
    if b.memory_kind == "cpu":
        text += " On the CPU backend other processes allocate in between, so the two measurements differ."
    else:
        text += " Another process allocating or freeing memory on the GPU between the measurements does this."
    return text


def _cap(launch: Launch, b: Budget, s: Sized) -> list[str]:
    cap = launch.max_total_tokens
    tokens = b.kv_tokens
    if b.capped_by_max_total_tokens and tokens is not None:
        if b.uncapped_kv_tokens:
            return [
                f"--max-total-tokens {cap:,} caps the pool: the memory budget would hold {b.uncapped_kv_tokens:,} "
                f"tokens, SGLang allocated {tokens:,}."
            ]
        return [
            f"--max-total-tokens {cap:,} caps the pool: the pool printed is too small to measure its bytes per "
            f"token exactly (at most {b.bytes_per_token_at_most or 0:,.0f} B/token), but even then the "
            f"{b.rest_gb:.2f} {UNIT} budget holds at least {b.uncapped_kv_tokens_at_least or 0:,} tokens, "
            f"so the cap, not memory, set the size ({tokens:,})."
        ]
    if s.pred.cap_not_binding and cap:
        return [f"--max-total-tokens {cap:,} is larger than what memory allows: SGLang used the profiled value."]
    return []


def pool_layout(launch: Launch) -> str | None:
    """``MLA`` (one latent per token, the same on every TP rank), ``MHA`` (K and V, split over the KV heads)."""
    pr = fi.pool_rank([r for r in launch.ranks if r.worker == "target"])
    if pr is None:
        return None
    pools = [p for p in (pr.extra or {}).get("pools", []) if p.get("kv_gb") is not None]
    if pools:
        return "MHA" if any(p.get("k_gb") is not None for p in pools) else "MLA"
    if pr.k_size_gb is not None:
        return "MHA"
    return "MLA" if pr.kv_size_gb is not None else None


def _pool_meaning(launch: Launch, b: Budget, s: Sized) -> list[str]:
    tokens = b.kv_tokens
    if not tokens:
        return []
    dp, tp = launch.dp_size or 1, launch.tp_size or 1
    per = "per DP rank" if dp > 1 else "for the whole replica"
    who = "replica share it" if dp > 1 else "server share it"
    text = f"max_total_num_tokens={tokens:,} is the KV pool {per}: every request's tokens (prompt and output) of that {who}"
    if tp > 1:
        layout = pool_layout(launch)
        if layout == "MLA":
            text += f"; each of the {tp} TP ranks holds all {tokens:,} tokens (an MLA pool: the latent is replicated)"
        elif layout == "MHA":
            text += f"; each of the {tp} TP ranks holds all {tokens:,} tokens (an MHA pool: its share of the KV heads)"
        else:
            text += f"; each of the {tp} TP ranks holds all {tokens:,} tokens"
    text += "."
    if b.bytes_per_token:
        text += (
            f" One token costs ≈{b.bytes_per_token:,.0f} bytes per rank (from the pool: {b.bytes_per_token_source})."
        )
    ctx = launch.context_len or launch.context_length
    if ctx:
        n = tokens / ctx
        if n >= 1:
            text += f" {int(n):,} request(s) of the full context ({ctx:,} tokens) fit at once."
        else:
            text += f" Not even one request of the full context ({ctx:,} tokens) fits: the pool holds {n:.2f} of one."
    mrr = launch.max_running_requests_effective or launch.max_running_requests
    if mrr:
        text += f" With max_running_requests={mrr:,} running together, each gets {tokens // max(mrr, 1):,} tokens on average."
    out = [text]
    if ctx and tokens < ctx:
        out.append(
            f"Inputs are capped below the context length: one request can never hold more tokens than the "
            f"pool ({tokens:,} < context_len {ctx:,}), so SGLang limits a request to about "
            f"min(context_len, max_total_num_tokens) − 1 = {tokens - 1:,} tokens and rejects longer prompts."
        )
    return out


def _rank_spread(launch: Launch, b: Budget, s: Sized) -> list[str]:
    pre = [(r.free_before_weights_gb, r.rank) for r in b.ranks if r.free_before_weights_gb is not None]
    if len(pre) < 2:
        return []
    lo, hi = min(pre), max(pre)
    spread = round(hi[0] - lo[0], 2)
    if spread <= 0:
        return [f"All {len(pre)} ranks had the same free memory before weights ({lo[0]:.2f} {UNIT})."]
    if len(fi.groups(launch)) > 1:
        who = f"Each DP replica sizes its own pool from the minimum over its own ranks, so up to {spread:.2f} {UNIT} differs between ranks."
    else:
        who = f"SGLang sizes every rank from the minimum, so up to {spread:.2f} {UNIT} stays unused on the other ranks."
    text = (
        f"{lo[1]} has the least free memory before weights ({lo[0]:.2f} {UNIT}; "
        f"{hi[1]} has {hi[0]:.2f}, {spread:.2f} {UNIT} more). " + who
    )
    if spread >= 1.0 or spread / hi[0] >= 0.05:
        text += f" That is unbalanced: something else (another process, a leftover context) holds memory on {lo[1]}."
    return [text]


def _speculative(launch: Launch, b: Budget, s: Sized) -> list[str]:
    li, pred = s.li, s.pred
    dw, dk, dg = b.draft_weights_gb, b.draft_kv_gb, b.draft_graph_gb
    if not (li.spec or dw is not None):
        return []
    cost = sum(x for x in (dw, dk, dg) if x)
    parts = ", ".join(
        f"{n} {v:.2f}" for n, v in (("draft weights", dw), ("draft KV", dk), ("draft CUDA graphs", dg)) if v is not None
    )
    text = f"Speculative decoding ({li.spec or 'draft model'}) costs {cost:.2f} {UNIT} on {b.binding_rank}: {parts}"
    if li.features.draft_in_budget:
        text += (
            ". From 0.5.14 the draft KV is inside the KV budget and the draft weights are counted before sizing, "
            "so it costs KV tokens rather than headroom."
        )
    else:
        text += (
            f". In this release none of it is in the formula: it comes out of the {b.reserved_gb:.2f} {UNIT} held back."
        )
    if li.features.eagle_inflation and pred.tokens_spec and pred.tokens_memory:
        text += (
            f" The pool is also inflated by {pred.tokens_spec - pred.tokens_memory:,} tokens for EAGLE's draft "
            "and verify steps (R·steps·topk + R·draft_tokens + 100, 0.4.3.post3–0.5.6.post2)."
        )
    return [text]


_SPENT = (
    ("other pools", "other_pools_gb"),
    ("CUDA graphs", "graph_gb"),
    ("draft weights", "draft_weights_gb"),
    ("draft KV", "draft_kv_gb"),
    ("draft CUDA graphs", "draft_graph_gb"),
    ("other allocations and drift", "other_gb"),
)


def _held_back(launch: Launch, b: Budget, s: Sized) -> list[str]:
    """Where the held-back share went: headroom after startup, or what was free when it stopped."""
    if not b.reserved_gb:
        return []
    spent = [f"{name} {getattr(b, key):.2f}" for name, key in _SPENT if getattr(b, key)]
    if b.headroom_gb is None:
        if b.lowest_free_gb is None:
            return []
        when = "when the start failed" if launch.outcome == "failed" else "when the log ends"
        return [
            f"There is no headroom figure: {b.unknown.get('headroom_gb')}. {b.lowest_free_gb:.2f} {UNIT} was free "
            f"{when} ({b.binding_rank}), of the {b.reserved_gb:.2f} {UNIT} held back"
            + (" after " + ", ".join(spent) if spent else "")
            + "."
        ]
    h = b.headroom_gb
    if b.capped_by_max_total_tokens:
        return [
            f"{h:.2f} {UNIT} is left free after startup ({b.binding_rank}): the cap left most of the {b.rest_gb:.2f} "
            f"{UNIT} KV budget unused, on top of the {b.reserved_gb:.2f} {UNIT} held back"
            + (" (spent: " + ", ".join(spent) + ")" if spent else "")
            + "."
        ]
    return [
        f"{h:.2f} {UNIT} is left free after startup ({b.binding_rank}, the binding rank): what remains of the "
        f"{b.reserved_gb:.2f} {UNIT} held back"
        + (" after " + ", ".join(spent) if spent else "")
        + ". Runtime activations and fragmentation must fit in it."
    ]


def _hicache(b: Budget, hc: dict[str, Any]) -> list[str]:
    tokens = b.kv_tokens
    if not hc.get("enabled"):
        return []
    hgb = hc.get("logged_host_gb") or hc.get("predicted_host_gb")
    ht = hc.get("logged_host_tokens") or hc.get("predicted_host_tokens")
    text = f"HiCache adds host (CPU) memory, not GPU tokens: {_gb(hgb)} GB (decimal, 10^9 bytes) per rank"
    if ht and tokens:
        text += f" = {ht:,} tokens ({hc.get('hicache_ratio') or 2.0:g} × {tokens:,}, rounded up to a page)"
    if hc.get("total_host_gb") and hc.get("ranks", 1) > 1:
        text += f", {hc['total_host_gb']:.2f} GB across {hc['ranks']} ranks"
    text += f"; max_total_num_tokens stays {tokens:,}." if tokens else "."
    if hc.get("predicted_host_gb") is not None and hc.get("logged_host_gb") is not None:
        text += f" (Predicted {hc['predicted_host_gb']:.2f} GB from the device pool.)"
    return [text]


def sizing_notes(launch: Launch, b: Budget) -> list[str]:
    """What the newest releases print about the pools beside the plain KV pool, and what bounded
    max_running_requests: sliding-window (SWA) and DeepSeek-V4 pools, the multimodal reservation, the
    mamba state cache's cap."""
    grp = fi.groups(launch)
    rank = (fi.pool_rank(grp[0].targets) or (grp[0].targets[0] if grp[0].targets else None)) if grp else None
    if rank is None:
        return []
    x = rank.extra or {}
    return _swa_note(b, x) + _dsv4_note(x) + _mm_note(x) + _max_running_note(launch, b, x)


def _count(v: Any) -> str:
    """A count as the sentences print it; a figure set aside as out of range (None) is ``?``."""
    return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else "?"


def _positive_count(v: Any) -> int | None:
    """A count above 0 (a figure set aside as out of range, or none, is None)."""
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None


def _swa_note(b: Budget, x: dict[str, Any]) -> list[str]:
    swa = x.get("post_capture_swa") or x.get("swa_tokens") or {}
    full, window = _positive_count(swa.get("full_tokens")), _positive_count(swa.get("swa_tokens"))
    if full is None or window is None:
        return []
    pool = f" ({_gb(b.kv_pool_gb)} {UNIT} for both)" if b.kv_pool_gb is not None else ""
    return [
        f"Hybrid sliding-window pools: the full-attention layers hold {full:,} tokens (max_total_num_tokens) and "
        f"the sliding-window layers {window:,} ({window / full:.2f} of it){pool}; a request's older tokens "
        "beyond the window need no SWA slot, so the full-attention pool is what bounds the context."
    ]


def _dsv4_note(x: dict[str, Any]) -> list[str]:
    pools, sizing, calc = x.get("dsv4_pools"), x.get("dsv4_swa_sizing"), x.get("dsv4_memory") or {}
    if not isinstance(pools, dict):
        return []
    p = {k: _count(pools.get(k)) for k in ("full", "swa", "c4", "c128", "c4_state", "c128_state")}
    text = (
        f"DeepSeek-V4 pools: full {p['full']} tokens (max_total_num_tokens), SWA {p['swa']}, compressed c4 "
        f"{p['c4']} and c128 {p['c128']}, compression state c4 {p['c4_state']} and c128 {p['c128_state']} slots."
    )
    if isinstance(sizing, dict):
        text += f" The SWA pool is sized by mode {sizing.get('mode')} ({_count(sizing.get('swa_tokens'))} tokens)."
    solve = fi.dsv4_solve(_Extra(x))
    avail = calc.get("available_bytes") if isinstance(calc, dict) else None
    if solve is not None and isinstance(avail, (int, float)) and not isinstance(avail, bool):
        bpt = solve[0]
        text += (
            f" Its solve: {bpt:,.2f} bytes per full token (all pools per full-attention token) over "
            f"{avail:.2f} {UNIT} available, of which {solve[1]:.2f} {UNIT} are fixed pools."
        )
    return [text]


@dataclass(frozen=True)
class _Extra:
    """A rank's ``extra`` alone, for the formula's readers of one rank's lines."""

    extra: dict[str, Any]


def _mm_note(x: dict[str, Any]) -> list[str]:
    gb = x.get("mm_reservation_gb")
    if not isinstance(gb, (int, float)) or isinstance(gb, bool) or not gb > 0:
        return []
    return [
        f"{gb:.2f} {UNIT} of the KV budget is reserved for multimodal allocations made after sizing "
        "(feature-transport pools and the embedding cache: SGLANG_VLM_CACHE_SIZE_MB, plus "
        "SGLANG_MM_FEATURE_CACHE_MB with cuda_ipc/cuda_vmm transport); SGLang subtracts it before sizing the "
        "KV pool, so it costs KV tokens, not headroom."
    ]


def _max_running_note(launch: Launch, b: Budget, x: dict[str, Any]) -> list[str]:
    cap = x.get("max_running_capped")
    if not isinstance(cap, dict):
        return []
    n = cap.get("max_running_requests")
    if cap.get("cause") == "mamba":
        k, size = cap.get("slots_per_request"), cap.get("max_mamba_cache_size")
        text = (
            f"max_running_requests is capped to {_count(n)} by the mamba state cache: {_count(size)} state slots, "
            f"{_count(k)} per running request. Raising --max-running-requests does nothing; the state slots "
            "(--max-mamba-cache-size, or --mamba-full-memory-ratio) set concurrency"
        )
        want, kc, nc = (_positive_count(v) for v in (launch.max_running_requests, k, n))
        if want is not None and kc is not None and nc is not None and want > nc:
            text += f" ({want:,} requests need at least {want * kc:,} slots)"
        return [text + ", or --mamba-ssm-dtype bfloat16 halves the state (the engine's own advice)."]
    req = cap.get("requested")
    limit = f" = {b.kv_tokens // 2:,}" if b.kv_tokens else ""
    text = (
        f"max_running_requests was reduced from the requested {_count(req)} to {_count(n)} per DP worker by the KV cache: "
        f"SGLang runs at most max_total_num_tokens // 2{limit} requests at once."
    )
    if x.get("mamba"):
        text += " (0.5.14–0.5.16 print this line for the mamba state cache's cap too.)"
    return [text]


def _failure(launch: Launch) -> list[str]:
    if launch.outcome == "failed" and launch.error:
        return ["The launch failed: " + quote(launch.error)]
    return []
