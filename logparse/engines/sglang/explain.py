"""``logparse explain`` of an SGLang launch: the waterfall of each rank's budget (the share held back,
``(1 − f) × M_pre``, and the rest), the questions SGLang's formula answers
(:mod:`logparse.engines.sglang.sentences`), data-parallel groups, the what-ifs of the fraction, the token
cap and fp8 KV by the launch's own formula, and the HiCache host pool.

Units: device figures are GiB (SGLang's "GB"); HiCache host figures are decimal GB (10^9).
"""

from __future__ import annotations

import math
import re
from typing import Any

from logparse.budget.model import Budget, RankBudget, physical_ranks
from logparse.budget.model_config import ModelConfig
from logparse.engines.sglang import formula as fm
from logparse.engines.sglang import formula_inputs as fi
from logparse.engines.sglang.advice import fraction_result
from logparse.engines.sglang.formula import GiB
from logparse.engines.sglang.sentences import from_release_after, headroom_cell, sentences
from logparse.launches.model import Launch
from logparse.reports.advice import Advice, advise
from logparse.reports.explain import DEFAULT_MARGIN_GB, Explanation, advised_what_if, launch_head, unsupported
from logparse.reports.launch_facts import failure_kind, is_low_precision_kv, target_rank_count

_SGLANG_MINIMUM_RE = re.compile(r"Raise --mem-fraction-static above ([0-9.]+)")
_MIN_VIABLE_RE = re.compile(r"minimum viable = 1 - available/pre = ([0-9.]+)")
#: The fraction SGLang's error says the start was made with (``... under --mem-fraction-static=0.5.``).
_UNDER_FRACTION_RE = re.compile(r"under --mem-fraction-static=([0-9]*\.?[0-9]+)")


def _r(v: float | None, nd: int = 2) -> float | None:
    return None if v is None else round(float(v), nd)


# --------------------------------------------------------------------------- waterfall
def waterfall(rb: RankBudget, reserved: float | None, predicted_kv: float | None, outcome: str) -> list[dict[str, Any]]:
    """Ordered steps of one rank's budget: start, deductions, subtotals and the end."""
    steps: list[dict[str, Any]] = []

    def add(kind: str, label: str, gb: float | None, **kw: Any) -> None:
        if gb is not None:
            steps.append({"kind": kind, "label": label, "gb": _r(gb), **kw})

    add("start", "free before weights", rb.free_before_weights_gb)
    add("minus", "weights", rb.weights_gb)
    add("subtotal", "free after weights", rb.free_after_weights_gb)
    if reserved is not None and rb.free_after_weights_gb is not None:
        add("note", "held back: (1 − f) × M_pre", reserved)
        add("note", "KV budget: the rest", rb.free_after_weights_gb - reserved)
    add("minus", "KV pool", rb.kv_pool_gb, predicted_gb=_r(predicted_kv))
    if rb.other_pools_gb:
        add("minus", "other pools (req-to-token, Mamba…)", rb.other_pools_gb)
    add("minus", "CUDA graphs", rb.graph_gb)
    add("minus", "draft weights", rb.draft_weights_gb)
    add("minus", "draft KV", rb.draft_kv_gb)
    add("minus", "draft CUDA graphs", rb.draft_graph_gb)
    if rb.other_gb:
        add("minus", "other (workspace, allocator, measurement drift)", rb.other_gb)
    end = "headroom left" if rb.headroom_gb is not None else _end_label(outcome)
    add("end", end, rb.headroom_gb if rb.headroom_gb is not None else rb.lowest_free_gb)
    return steps


def _end_label(outcome: str) -> str:
    return {"failed": "free when it failed"}.get(outcome, "free at the end of the log")


def explain(launch: Launch, b: Budget, margin_gb: float | None, cfg: ModelConfig | None) -> Explanation:
    """SGLang's explanation of a launch (see the module documentation)."""
    binding = b.rank(b.binding_rank)
    head = {
        **launch_head(launch),
        "sglang_version_range": launch.sglang_version_range,
        "model_path": launch.model_path,
        "tp_size": launch.tp_size,
        "dp_size": launch.dp_size,
        "page_size": b.inputs.inputs.page_size if b.inputs and b.inputs.inputs else (launch.page_size or 1),
        "max_total_tokens": launch.max_total_tokens,
        "summary_available_gb": launch.available_mem_gb,
    }
    hc = _hicache(launch, b)
    adv = advise(launch, b, margin_gb=margin_gb, hicache_what_ifs=hc.get("what_if"), cfg=cfg)
    exp = Explanation(
        launch=head,
        budget=b,
        waterfall=waterfall(binding, b.reserved_gb, b.predicted_kv_gb, launch.outcome) if binding else [],
        ranks=_rank_rows(launch, b, margin_gb, adv),
        hicache=hc,
        what_if=_what_ifs(launch, b, margin_gb, adv) + _hicache_what_ifs(launch, hc.pop("what_if", [])),
        sentences=[],
        warnings=list(launch.warnings),
        groups=_group_reports(launch),
        advice=adv,
    )
    exp.sentences = sentences(launch, b, hc)
    return exp


def _rank_rows(launch: Launch, b: Budget, margin_gb: float | None, adv: Advice) -> list[dict[str, Any]]:
    rows = []
    for (_, draft), rb in zip(physical_ranks(launch), b.ranks):
        row = rb.to_dict()
        row.update(
            mem_fraction_static=b.mem_fraction_static, reserved_gb=b.reserved_gb, predicted_kv_gb=b.predicted_kv_gb
        )
        row["what_if"] = [
            _margin_what_if(b, rb.headroom_gb, margin_gb, has_draft=draft is not None)
            if margin_gb is not None
            else _rank_fraction_what_if(adv, b, rb.headroom_gb, has_draft=draft is not None)
        ]
        row["waterfall"] = waterfall(rb, b.reserved_gb, b.predicted_kv_gb, launch.outcome)
        rows.append(row)
    return rows


def _group_reports(launch: Launch) -> list[dict[str, Any]]:
    """Plain data parallelism: each replica sizes its own pool."""
    grps = fi.groups(launch)
    if len(grps) < 2:
        return []
    out = []
    for g in grps:
        li = fi.best_inputs(launch, g)
        p = fm.predict(li.inputs, li.features) if li.inputs else None
        pr = fi.pool_rank(g.targets)
        out.append(
            {
                "group": g.name,
                "pre_load_avail_gb": _r(li.inputs.m_pre_gb) if li.inputs else None,
                "post_load_avail_gb": _r(li.inputs.m_post_gb) if li.inputs else None,
                "predicted_kv_tokens": p.tokens if p and li.inputs and li.inputs.cell else None,
                "kv_tokens": pr.kv_tokens if pr else None,
                "capped": bool(p and p.capped),
            }
        )
    return out


# --------------------------------------------------------------------------- what-ifs
def _floor3(x: float) -> float:
    return math.floor(x * 1000 + 1e-9) / 1000


def _ceil3(x: float) -> float:
    return math.ceil(x * 1000 - 1e-9) / 1000


def _margin_what_if(b: Budget, headroom: float | None, margin: float, has_draft: bool = True) -> dict[str, Any]:
    """The mem_fraction_static that leaves ``margin`` GiB of headroom."""
    li, pred = b.inputs, b.prediction
    change = f"mem_fraction_static for {margin:.2f} GiB of headroom"
    if li is None or li.inputs is None or pred is None:
        return unsupported(change, "the log lacks the memory figures (load lines, server_args)")
    inp = li.inputs
    if headroom is None:
        return unsupported(
            change, "no headroom: " + b.unknown.get("headroom_gb", "no free-memory figure after startup")
        )
    if pred.capped or (
        inp.max_total_tokens is not None and li.bpt.value is None and pred.tokens == inp.max_total_tokens
    ):
        return unsupported(
            change,
            f"the pool is capped by --max-total-tokens {inp.max_total_tokens:,}: mem_fraction_static does "
            "not change it while the cap holds (see the 'without --max-total-tokens' what-if)",
        )
    ch = headroom_cell(li, has_draft)
    if ch is None or inp.cell is None or pred.tokens is None or pred.tokens <= 0:
        f_new = max(min(_floor3(inp.f + (headroom - margin) / inp.m_pre_gb), 0.999), 0.001)
        return unsupported(
            f"mem_fraction_static {inp.f:g} → {f_new:g} (leave {margin:.2f} GiB)",
            "bytes per token unknown (the KV pool line is missing or too small to measure), so the tokens it "
            "gives cannot be computed",
            mem_fraction_static=f_new,
            headroom_gb=_r(margin),
        )
    d_rest = (headroom - margin) * GiB / ch * inp.cell / GiB
    f_new = min(_floor3(inp.f + d_rest / inp.m_pre_gb), 0.999)
    if f_new <= 0:
        return unsupported(change, f"{margin:.2f} GiB of headroom is more than any fraction can leave (f ≤ 0)")
    p_new = fm.predict(inp.with_(f=f_new), li.features)
    if p_new.tokens is None or p_new.tokens <= 0:
        return unsupported(
            f"mem_fraction_static {inp.f:g} → {f_new:g} (leave {margin:.2f} GiB)",
            f"not possible: at {f_new:g} the weights leave nothing for the KV pool",
            mem_fraction_static=f_new,
        )
    new_t = p_new.tokens if p_new.tokens is not None else pred.tokens
    cell_t = li.bpt.value or inp.cell
    out = {
        "change": f"mem_fraction_static {inp.f:g} → {f_new:g} (leave {margin:.2f} GiB)",
        "mem_fraction_static": f_new,
        "kv_tokens": new_t,
        "kv_gb": _r(fm.pool_gb(new_t, inp.page_size, cell_t)) if new_t and new_t > 0 else None,
        "headroom_gb": _r(headroom - (new_t - pred.tokens) * ch / GiB),
        "supported": True,
    }
    if pred.capped or p_new.capped:
        out["note"] = (
            f"the pool stays at --max-total-tokens {inp.max_total_tokens:,}: a different fraction "
            "changes nothing unless the cap is raised or removed"
        )
        out["kv_tokens"] = p_new.tokens
        out["headroom_gb"] = _r(headroom)
    return out


def _what_ifs(launch: Launch, b: Budget, margin: float | None, adv: Advice) -> list[dict[str, Any]]:
    kind = failure_kind(launch, b)
    out: list[dict[str, Any]] = []
    if kind == "too_small":
        out += _smallest_start(launch, b)
    elif kind == "oom":
        out += _oom_way_out(b, DEFAULT_MARGIN_GB if margin is None else margin)
    else:
        out.append(advised_what_if(adv, "fraction"))
    out += _cap_lifted(launch, b)
    return out + _unless_failed(launch, _fp8(launch, b))


def _rank_fraction_what_if(adv: Advice, b: Budget, headroom: float | None, *, has_draft: bool) -> dict[str, Any]:
    """One rank at the advised fraction: its own headroom after the change."""
    item = advised_what_if(adv, "fraction")
    f_new = item.get("mem_fraction_static")
    if not item.get("supported") or f_new is None or headroom is None:
        return item
    res = fraction_result(b, f_new, has_draft=has_draft, headroom=headroom)
    if isinstance(res, str):
        return unsupported(item["change"], res)
    return item | {"headroom_gb": res[2]}


def _hicache_what_ifs(launch: Launch, what_ifs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """HiCache what-ifs, for a release that has HiCache (0.4.2.post1+) and a start that did not fail."""
    if launch.version_range and not from_release_after(launch, "0.4.2.post1"):
        return []
    return _unless_failed(launch, what_ifs)


def _unless_failed(launch: Launch, what_ifs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What-ifs that change the pool at the same fraction do not lead out of a failed start."""
    return [] if launch.outcome == "failed" else what_ifs


def _current_fraction(launch: Launch, inp: Any) -> str:
    """The fraction the start was made with: the formula's, the launch's, or the one SGLang's error names."""
    current = inp.f if inp is not None else launch.mem_fraction_static
    if current is None:
        under = _UNDER_FRACTION_RE.search(launch.error or "")
        current = float(under.group(1)) if under else None
    return f"{current:g}" if current is not None else "(not in the log)"


def _smallest_start(launch: Launch, b: Budget) -> list[dict[str, Any]]:
    """The smallest fraction that starts (KV budget of one page), agreeing with SGLang's own advice."""
    li = b.inputs
    inp = li.inputs if li else None
    err = launch.error or ""
    said = _SGLANG_MINIMUM_RE.search(err)
    viable = _MIN_VIABLE_RE.search(err)
    if inp is None and not said:
        return []
    ours = None
    if inp is not None:
        need_gb = (inp.page_size * inp.cell / GiB) if inp.cell else 0.0
        ours = _ceil3(fm.fraction_for_rest(inp, need_gb) + 1e-6)
    f_min = float(said.group(1)) if said else ours
    if f_min is None:
        return []
    item: dict[str, Any] = {
        "change": f"mem_fraction_static {_current_fraction(launch, inp)} → {f_min:g} (smallest that starts)",
        "mem_fraction_static": f_min,
        "kv_tokens": None,
        "kv_gb": None,
        "headroom_gb": None,
        "supported": True,
    }
    notes = []
    if said:
        item["sglang_says_minimum"] = float(viable.group(1)) if viable else f_min
        notes.append("SGLang's own figure from the error")
        if ours is not None and abs(ours - f_min) >= 0.002:
            notes.append(
                f"the formula with 'Load weight begin' gives {ours:g}: SGLang measured the memory before the weights "
                "at another moment"
            )
    if inp is not None and inp.cell:
        item["kv_tokens"] = inp.page_size
        notes.append(f"every 0.01 above it adds {int(0.01 * inp.m_pre_gb * GiB // inp.cell):,} tokens")
    else:
        notes.append(
            "bytes per token unknown: no KV pool line was printed, so the tokens it would give cannot be computed"
        )
    if inp is not None:
        # nothing else was allocated yet: what is left is the held-back share at that fraction
        item["headroom_gb"] = _r(inp.m_pre_gb * (1 - f_min))
    item["note"] = "; ".join(notes)
    return [item]


def _oom_way_out(b: Budget, margin: float) -> list[dict[str, Any]]:
    """Out of memory after the pool: a lower fraction leaves ``margin`` GiB more for graphs and activations."""
    li, pred = b.inputs, b.prediction
    if li is None or li.inputs is None or pred is None:
        return []
    inp = li.inputs
    f_new = _floor3(inp.f - margin / inp.m_pre_gb)
    if f_new <= 0:
        return [unsupported("lower mem_fraction_static", f"{margin:.2f} GiB more is more than any fraction can free")]
    p_new = fm.predict(inp.with_(f=f_new), li.features)
    if p_new.tokens is not None and p_new.tokens <= 0:
        return [
            unsupported(
                f"mem_fraction_static {inp.f:g} → {f_new:g}",
                f"not possible: at {f_new:g} the weights leave nothing for the KV pool (use --margin below {margin:.2f})",
                mem_fraction_static=f_new,
            )
        ]
    cell_t = li.bpt.value
    free = b.lowest_free_gb
    return [
        {
            "change": f"mem_fraction_static {inp.f:g} → {f_new:g} (out of memory after the pool: "
            f"{margin:.2f} GiB more for CUDA graphs and activations)",
            "mem_fraction_static": f_new,
            "kv_tokens": p_new.tokens if inp.cell else None,
            "kv_gb": _r(fm.pool_gb(p_new.tokens, inp.page_size, cell_t))
            if (cell_t and p_new.tokens and p_new.tokens > 0)
            else None,
            "headroom_gb": _r(free + margin) if free is not None else None,
            "supported": True,
            "note": f"{free:.2f} GiB was free when it failed" if free is not None else None,
        }
    ]


def _cap_lifted(launch: Launch, b: Budget) -> list[dict[str, Any]]:
    li, pred = b.inputs, b.prediction
    inp = li.inputs if li is not None else None
    cap = inp.max_total_tokens if inp is not None else None
    if li is None or inp is None or cap is None or not b.capped_by_max_total_tokens:
        return []
    item: dict[str, Any] = {
        "change": f"without --max-total-tokens (now {cap:,})",
        "kv_tokens": None,
        "kv_gb": None,
        "headroom_gb": None,
        "supported": True,
    }
    head = b.headroom_gb
    if b.uncapped_kv_tokens is not None and li.bpt.value:
        unc = b.uncapped_kv_tokens
        item["kv_tokens"] = unc
        item["kv_gb"] = _r(fm.pool_gb(unc, inp.page_size, li.bpt.value))
        if head is not None:
            ch = headroom_cell(li, li.draft_bpt.value is not None) or li.bpt.value
            item["headroom_gb"] = _r(head - (unc - cap) * ch / GiB)
    else:
        least = b.uncapped_kv_tokens_at_least
        item["kv_tokens_at_least"] = least
        item["note"] = (
            f"at least {least:,} tokens: the capped pool is too small to measure bytes per token"
            if least
            else "bytes per token unknown"
        )
        if head is not None and pred is not None:
            item["headroom_gb"] = _r(max(head - max(pred.rest_gb, 0.0), 0.0))
            item["note"] += "; headroom falls to about the held-back share"
    return [item]


def _fp8(launch: Launch, b: Budget) -> list[dict[str, Any]]:
    li, pred = b.inputs, b.prediction
    if li is None or li.inputs is None or pred is None:
        return []
    inp = li.inputs
    change = "kv_cache_dtype fp8_e4m3 (half the bytes per token)"
    if is_low_precision_kv(launch, b):
        return [
            {
                "change": "kv_cache_dtype fp8_e4m3",
                "kv_tokens": b.kv_tokens,
                "kv_gb": b.kv_pool_gb,
                "headroom_gb": b.headroom_gb,
                "supported": True,
                "note": "the KV cache is already 8-bit (or smaller)",
            }
        ]
    if inp.cell is None:
        return [unsupported(change, "bytes per token unknown (no measurable KV pool line)")]
    p8 = fm.predict(inp.with_(cell=inp.cell / 2), li.features)
    cell_t = (li.bpt.value or inp.cell) / 2
    item = {
        "change": change,
        "kv_tokens": p8.tokens,
        "kv_gb": _r(fm.pool_gb(p8.tokens, inp.page_size, cell_t)) if p8.tokens and p8.tokens > 0 else None,
        "headroom_gb": b.headroom_gb,
        "supported": True,
    }
    if p8.capped:
        item["note"] = f"--max-total-tokens {inp.max_total_tokens:,} still caps the pool"
    return [item]


# --------------------------------------------------------------------------- HiCache
def _host_pool(b: Budget, launch: Launch, tokens: int | None, ratio: float) -> tuple[int | None, float | None]:
    """Host tokens = device pool × ratio (or hicache_size / bytes), rounded to a page plus one page."""
    cell = b.inputs.bpt.value if b.inputs else None
    page = b.inputs.inputs.page_size if b.inputs and b.inputs.inputs else (launch.page_size or 1)
    if tokens is None or tokens <= 0 or cell is None:
        return None, None
    size_gb = launch.hicache_size or 0
    host = int(size_gb * 1e9 // cell) if size_gb and size_gb > 0 else int(tokens * ratio)
    host = (host // page + 1) * page
    return host, host * cell / 1e9


def _hicache(launch: Launch, b: Budget) -> dict[str, Any]:
    enabled = bool(launch.enable_hierarchical_cache)
    ratio = launch.hicache_ratio or 2.0
    n_ranks = target_rank_count(launch)
    out: dict[str, Any] = {
        "enabled": enabled,
        "hicache_ratio": launch.hicache_ratio,
        "hicache_size": launch.hicache_size,
        "logged_host_gb": launch.hicache_host_gb,
        "logged_host_tokens": launch.hicache_host_tokens,
    }
    if enabled:
        ht, hgb = _host_pool(b, launch, b.kv_tokens, ratio)
        out.update(predicted_host_tokens=ht, predicted_host_gb=_r(hgb), ranks=n_ranks)
        if hgb is not None:
            out["total_host_gb"] = _r(hgb * n_ranks)
        elif launch.hicache_host_gb:
            out["total_host_gb"] = _r(launch.hicache_host_gb * n_ranks)
        else:
            out["total_host_gb"] = None
    what_if = []
    for r in [ratio, ratio * 2] if enabled else [2.0, 4.0]:
        ht, hgb = _host_pool(b, launch, b.kv_tokens, r)
        launched = " (as launched)" if enabled and r == ratio else ""
        item = {
            "change": f"--enable-hierarchical-cache --hicache-ratio {r:g}{launched}",
            "kv_tokens": b.kv_tokens,
            "kv_gb": None,
            "headroom_gb": None,
            "host_tokens": ht,
            "host_gb": _r(hgb),
            "host_gb_all_ranks": _r(hgb * n_ranks) if hgb else None,
            "supported": hgb is not None,
            "note": "host (CPU) memory in decimal GB; the GPU pool stays the same",
        }
        if hgb is None:
            item["reason"] = "bytes per token unknown: the host pool size cannot be computed"
        what_if.append(item)
    out["what_if"] = what_if
    return out
