"""``logparse explain``: where a launch's memory went, and why the KV pool has the size it has.

:func:`explain_launch` returns a plain dict (the ``--json`` document); :func:`render_explain`
prints it with rich.  Everything is computed from the launch's own figures with SGLang's
formula for the launch's era (:mod:`logparse.budget.formula`).

Units: device figures are GiB (SGLang's "GB"); HiCache host figures are decimal GB (10^9).
"""

from __future__ import annotations

import math
import re
from typing import Any

from logparse.budget import formula as fm
from logparse.budget.formula import GiB

#: Headroom left after startup that the default what-if aims for (GiB).
DEFAULT_MARGIN_GB = 2.0


def _r(v: float | None, nd: int = 2) -> float | None:
    return None if v is None else round(float(v), nd)


def _fmt_gb(v: float | None) -> str:
    return "?" if v is None else f"{v:.2f}"


def _pct(a: float, b: float) -> float | None:
    return None if not b else (a - b) / b * 100.0


def rank_name(r) -> str:
    return fm._rank_name(r)


def _phys_key(r) -> tuple:
    return (r.dp_rank, r.pp_rank, r.tp_rank, r.ep_rank)


def _sort_key(k: tuple) -> tuple:
    return tuple(-1 if x is None else x for x in k)


# --------------------------------------------------------------------------- per-rank budget
def rank_budget(target, draft) -> dict[str, Any]:
    """The memory waterfall of one physical rank (target and draft worker) from its own lines."""
    t, d = target, draft
    before = t.avail_before_load_gb if t else None
    after_load = t.avail_after_load_gb if t else None
    weights = t.weights_gb if t else None
    if weights is None and before is not None and after_load is not None:
        weights = before - after_load
    kv = None
    if t is not None:
        total, _, _, _ = fm.pool_figures(t)
        kv = total if total is not None else t.kv_size_gb
    other_pools = None
    if after_load is not None and t is not None and t.avail_after_pool_gb is not None:
        other_pools = max(after_load - (kv or 0.0) - t.avail_after_pool_gb, 0.0)
    tgraph = t.graph_gb if t else None
    dweights = d.weights_gb if d else None
    dkv = None
    if d is not None:
        total, _, _, _ = fm.pool_figures(d)
        dkv = total if total is not None else d.kv_size_gb
    dgraph = d.graph_gb if d else None
    # Headroom: the lowest free figure this rank printed during startup (memory only goes down).
    avails = []
    for r in (t, d):
        if r is None:
            continue
        avails += [r.avail_before_load_gb, r.avail_after_load_gb, r.avail_after_pool_gb, r.avail_after_graph_gb]
        for g in (r.extra or {}).get("graphs", []) or []:
            avails.append(g.get("avail_gb"))
    avails = [a for a in avails if a is not None]
    headroom = min(avails) if avails else None
    spent = sum(x for x in (kv, other_pools, tgraph, dweights, dkv, dgraph) if x)
    other = None
    if after_load is not None and headroom is not None:
        other = after_load - headroom - spent
        if abs(other) < 0.005:
            other = 0.0
    return {
        "pre_load_avail_gb": before,
        "weights_gb": weights,
        "post_load_avail_gb": after_load,
        "actual_kv_gb": kv,
        "other_pools_gb": other_pools,
        "target_graph_gb": tgraph,
        "draft_weights_gb": dweights,
        "draft_kv_gb": dkv,
        "draft_graph_gb": dgraph,
        "graph_gb": (tgraph or 0.0) + (dgraph or 0.0) if (tgraph is not None or dgraph is not None) else None,
        "other_gb": other,
        "headroom_gb": headroom,
    }


def waterfall(
    b: dict[str, Any], reserved: float | None, predicted_kv: float | None, outcome: str = "ready"
) -> list[dict[str, Any]]:
    """Ordered steps: start, deductions, subtotals and the end, for text and plots."""
    steps: list[dict[str, Any]] = []

    def add(kind, label, gb, **kw):
        if gb is None:
            return
        steps.append({"kind": kind, "label": label, "gb": _r(gb), **kw})

    add("start", "free before weights", b["pre_load_avail_gb"])
    add("minus", "weights", b["weights_gb"])
    add("subtotal", "free after weights", b["post_load_avail_gb"])
    if reserved is not None and b["post_load_avail_gb"] is not None:
        add("note", "held back: (1 − f) × M_pre", reserved)
        add("note", "KV budget: the rest", b["post_load_avail_gb"] - reserved)
    add("minus", "KV pool", b["actual_kv_gb"], predicted_gb=_r(predicted_kv))
    if b["other_pools_gb"]:
        add("minus", "other pools (req-to-token, Mamba…)", b["other_pools_gb"])
    add("minus", "CUDA graphs", b["target_graph_gb"])
    add("minus", "draft weights", b["draft_weights_gb"])
    add("minus", "draft KV", b["draft_kv_gb"])
    add("minus", "draft CUDA graphs", b["draft_graph_gb"])
    if b["other_gb"]:
        add("minus", "other (workspace, allocator)", b["other_gb"])
    add(
        "end",
        {"ready": "headroom left", "failed": "free when it failed"}.get(outcome, "free at the end of the log"),
        b["headroom_gb"],
    )
    return steps


# --------------------------------------------------------------------------- explain
def _is_fp8(launch, bpt_rank) -> bool:
    d = (launch.kv_cache_dtype or "") + " " + (getattr(bpt_rank, "kv_dtype", None) or "")
    return "fp8" in d or "float8" in d


def _is_fp4(launch, bpt_rank) -> bool:
    d = (launch.kv_cache_dtype or "") + " " + (getattr(bpt_rank, "kv_dtype", None) or "")
    return "fp4" in d or "float4" in d


_OOM_RE = re.compile(r"out of memory|OutOfMemory|OOM", re.I)
_TOO_SMALL_RE = re.compile(r"Not enough memory|leave no GPU memory|increase --mem-fraction-static", re.I)
_MIN_VIABLE_RE = re.compile(r"minimum viable = 1 - available/pre = ([0-9.]+)")


def explain_launch(launch, margin_gb: float = DEFAULT_MARGIN_GB) -> dict[str, Any]:
    """The explain report of one launch (a JSON-ready dict)."""
    grps = fm.groups(launch)
    li = fm.best_inputs(launch, grps[0])
    feat = li.features
    cpu = launch.available_mem_kind == "cpu" or (launch.device or "") == "cpu"
    mem = "system memory" if cpu else "GPU memory"

    # ---- ranks
    phys: dict[tuple, dict[str, Any]] = {}
    for r in launch.ranks:
        slot = phys.setdefault(_phys_key(r), {"target": None, "draft": None})
        if r.worker == "target":
            slot["target"] = r
        elif slot["draft"] is None:
            slot["draft"] = r

    inp = li.inputs
    pred = fm.predict(inp, feat) if inp is not None else None
    page = inp.page_size if inp else (launch.page_size or 1)
    pool_rank = fm._pool_rank(grps[0].targets)
    actual_tokens = pool_rank.kv_tokens if pool_rank is not None else launch.max_total_num_tokens
    if actual_tokens is None:
        actual_tokens = launch.max_total_num_tokens
    actual_kv = fm.pool_figures(pool_rank)[0] if pool_rank is not None else None
    cell_t = li.bpt.value
    cell = inp.cell if inp else None
    predicted_kv = None
    if pred is not None and pred.tokens is not None and pred.tokens > 0 and cell_t is not None:
        predicted_kv = fm.pool_gb(pred.tokens, page, cell_t)
    lo_t, hi_t = fm.token_interval(inp, feat, li.bpt) if inp is not None else (None, None)

    reserved = pred.reserved_gb if pred else None
    ranks_out = []
    budgets = []
    for key in sorted(phys, key=_sort_key):
        t, d = phys[key]["target"], phys[key]["draft"]
        b = rank_budget(t, d)
        budgets.append((key, t, d, b))
    head_min = min((b["headroom_gb"] for *_, b in budgets if b["headroom_gb"] is not None), default=None)

    report: dict[str, Any] = {
        "launch_id": launch.launch_id,
        "source": launch.source,
        "outcome": launch.outcome,
        "error": launch.error,
        "sglang_version_range": launch.sglang_version_range,
        "model_path": launch.model_path,
        "tp_size": launch.tp_size,
        "dp_size": launch.dp_size,
        "memory_kind": "cpu" if cpu else "gpu",
        "era": feat.era.key,
        "era_label": feat.era.label,
        "assumed_version": feat.version,
        "formula": feat.era.formula,
        "formula_features": feat.describe(),
        "formula_notes": list(feat.notes) + list(li.notes),
        "mem_fraction_static": inp.f if inp else launch.mem_fraction_static,
        "mem_fraction_static_source": li.f_source,
        "pre_load_avail_gb": _r(inp.m_pre_gb) if inp else None,
        "pre_load_source": li.m_pre_source,
        "post_load_avail_gb": _r(inp.m_post_gb) if inp else None,
        "post_load_source": li.m_post_source,
    }
    wrank = li.m_post_rank if li.m_post_rank is not None and li.m_post_rank.worker == "target" else li.m_pre_rank
    report["weights_gb"] = (
        _r(wrank.weights_gb)
        if wrank is not None and wrank.weights_gb is not None
        else (_r(inp.m_pre_gb - inp.m_post_gb) if inp else None)
    )
    report.update(
        {
            "reserved_gb": _r(reserved),
            "rest_gb": _r(pred.rest_gb) if pred else None,
            "predicted_kv_tokens": pred.tokens if pred and cell is not None else None,
            "predicted_kv_tokens_range": [lo_t, hi_t] if lo_t is not None else None,
            "predicted_kv_gb": _r(predicted_kv),
            "actual_kv_gb": _r(actual_kv),
            "kv_tokens": actual_tokens,
            "bytes_per_token": _r(cell_t, 1),
            "bytes_per_token_source": li.bpt.source,
            "draft_bytes_per_token": _r(li.draft_bpt.value, 1),
            "page_size": page,
            "max_total_tokens": launch.max_total_tokens,
            "capped_by_max_total_tokens": False,
            "derivation": list(pred.steps) if pred else [],
        }
    )
    if pred is not None and actual_tokens is not None and report["predicted_kv_tokens"] is not None:
        diff = actual_tokens - pred.tokens
        report["kv_tokens_diff"] = diff
        report["kv_tokens_diff_pct"] = _r(_pct(actual_tokens, pred.tokens), 3)
        report["within_rounding"] = lo_t is not None and lo_t <= actual_tokens <= hi_t
    report["kv_diff_gb"] = _r(actual_kv - predicted_kv) if actual_kv is not None and predicted_kv is not None else None

    # cap detection, also when the bytes per token are too small to measure
    cap_info = _cap_analysis(launch, inp, feat, li, pred, actual_tokens)
    report.update(cap_info)

    # launch-level spend: the worst rank
    def agg(name, fn=max):
        vals = [b[name] for *_, b in budgets if b[name] is not None]
        return fn(vals) if vals else None

    report["draft_weights_gb"] = _r(agg("draft_weights_gb"))
    report["draft_kv_gb"] = _r(agg("draft_kv_gb"))
    report["target_graph_gb"] = _r(agg("target_graph_gb"))
    report["draft_graph_gb"] = _r(agg("draft_graph_gb"))
    report["graph_gb"] = _r(agg("graph_gb"))
    report["other_gb"] = _r(agg("other_gb"))
    report["headroom_gb"] = _r(head_min)
    if launch.available_mem_gb is not None:
        report["summary_available_gb"] = launch.available_mem_gb

    # per rank
    for key, t, d, b in budgets:
        row = {
            "rank": rank_name(t or d),
            "dp_rank": key[0],
            "pp_rank": key[1],
            "tp_rank": key[2],
            "ep_rank": key[3],
            "mem_fraction_static": inp.f if inp else None,
        }
        row.update({k: _r(v) for k, v in b.items()})
        row["reserved_gb"] = _r(reserved)
        row["predicted_kv_gb"] = _r(predicted_kv)
        row["kv_tokens"] = t.kv_tokens if t else None
        bpt = fm.bytes_per_token(t, page) if t else None
        row["bytes_per_token"] = _r(bpt.value, 1) if bpt else None
        row["what_if"] = [_margin_what_if(li, pred, b["headroom_gb"], margin_gb, has_draft=d is not None)]
        row["waterfall"] = waterfall(b, reserved, predicted_kv, launch.outcome)
        ranks_out.append(row)
    report["ranks"] = ranks_out
    # the launch waterfall: the rank with the least headroom
    worst = min(
        budgets,
        key=lambda kb: (
            kb[3]["headroom_gb"] if kb[3]["headroom_gb"] is not None else math.inf,
            kb[3]["pre_load_avail_gb"] if kb[3]["pre_load_avail_gb"] is not None else math.inf,
        ),
        default=None,
    )
    report["min_rank"] = rank_name(worst[1] or worst[2]) if worst else None
    report["waterfall"] = waterfall(worst[3], reserved, predicted_kv, launch.outcome) if worst else []
    report["_min_budget"] = worst[3] if worst else None

    if len(grps) > 1:
        report["groups"] = _group_reports(launch, grps)

    report["hicache"] = _hicache(launch, pred, li, actual_tokens, page)
    report["what_if"] = _what_ifs(launch, li, pred, head_min, margin_gb, actual_tokens, pool_rank, report)
    report["sentences"] = _sentences(launch, report, li, pred, budgets, cpu, mem)
    report["warnings"] = list(launch.warnings)
    report.pop("_min_budget", None)
    return report


def _group_reports(launch, grps) -> list[dict[str, Any]]:
    out = []
    for g in grps:
        li = fm.best_inputs(launch, g)
        p = fm.predict(li.inputs, li.features) if li.inputs else None
        pr = fm._pool_rank(g.targets)
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


def _cap_analysis(launch, inp, feat, li, pred, actual_tokens) -> dict[str, Any]:
    """Is the pool set by --max-total-tokens?  Works with bounds when bytes/token are unmeasurable."""
    cap = launch.max_total_tokens
    out: dict[str, Any] = {"capped_by_max_total_tokens": False}
    if cap is None or inp is None:
        return out
    # lowest memory-derived T: the largest bytes per token compatible with the printed pool
    hi_cell = li.bpt.hi if li.bpt.hi else None
    if feat.draft_in_budget and li.draft_bpt.hi:
        hi_cell = (hi_cell or 0) + li.draft_bpt.hi
    if hi_cell:
        p_lo = fm.predict(
            inp.with_(
                max_total_tokens=None,
                cell=hi_cell,
                m_post_gb=inp.m_post_gb - fm.ROUND_GB,
                m_pre_gb=inp.m_pre_gb + fm.ROUND_GB,
            ),
            feat,
        )
        t_min = p_lo.tokens_spec if p_lo.tokens_spec is not None else p_lo.tokens
        out["uncapped_kv_tokens_at_least"] = t_min
        out["bytes_per_token_at_most"] = _r(hi_cell, 1)
        page = inp.page_size or 1
        cap_r = cap // page * page if feat.page_rounding else cap
        if t_min is not None and t_min >= cap and actual_tokens in (cap, cap_r):
            out["capped_by_max_total_tokens"] = True
    if pred is not None and pred.capped and inp.cell is not None:
        out["capped_by_max_total_tokens"] = True
        out["uncapped_kv_tokens"] = pred.tokens_spec
    return out


# --------------------------------------------------------------------------- what-ifs
def _headroom_cell(li, has_draft: bool) -> float | None:
    """Bytes of headroom one more pool token costs (draft KV grows with the pool outside the budget)."""
    inp = li.inputs
    if inp is None or inp.cell is None:
        return None
    c = inp.cell
    if has_draft and not li.features.draft_in_budget and li.draft_bpt.value is not None:
        c += li.draft_bpt.value
    return c


def _margin_what_if(li, pred, headroom, margin, has_draft=True) -> dict[str, Any]:
    change = f"mem_fraction_static for {margin:.2f} GB of headroom"
    inp = li.inputs
    base = {"change": change, "kv_tokens": None, "kv_gb": None, "headroom_gb": None}
    if inp is None or pred is None:
        return {**base, "supported": False, "reason": "the log lacks the memory figures (load lines, server_args)"}
    if headroom is None:
        return {**base, "supported": False, "reason": "no free-memory figure after startup"}
    if pred.capped or (
        li.inputs.max_total_tokens is not None and li.bpt.value is None and pred.tokens == li.inputs.max_total_tokens
    ):
        return {
            **base,
            "supported": False,
            "reason": f"the pool is capped by --max-total-tokens {inp.max_total_tokens:,}: mem_fraction_static does "
            "not change it while the cap holds (see the 'without --max-total-tokens' what-if)",
        }
    ch = _headroom_cell(li, has_draft)
    if ch is None or pred.tokens is None or pred.tokens <= 0:
        # without bytes per token: the fraction is still known, the tokens are not
        dgb = headroom - margin
        f_new = min(_floor3(inp.f + dgb / inp.m_pre_gb), 0.999)
        return {
            **base,
            "change": f"mem_fraction_static {inp.f:g} → {f_new:g} ({margin:.2f} GB headroom)",
            "mem_fraction_static": f_new,
            "headroom_gb": _r(margin),
            "supported": False,
            "reason": "bytes per token unknown (the KV pool line is missing or too small "
            "to measure), so the tokens it gives cannot be computed",
        }
    d_gb = headroom - margin
    d_tokens = d_gb * GiB / ch
    d_rest = d_tokens * inp.cell / GiB
    f_new = _floor3(inp.f + d_rest / inp.m_pre_gb)
    if f_new >= 1.0:
        f_new = 0.999
    p_new = fm.predict(inp.with_(f=f_new), li.features)
    cur = pred.tokens
    new_t = p_new.tokens if p_new.tokens is not None else cur
    new_head = headroom - (new_t - cur) * ch / GiB
    cell_t = li.bpt.value or inp.cell
    out = {
        "change": f"mem_fraction_static {inp.f:g} → {f_new:g} (leave {margin:.2f} GB)",
        "mem_fraction_static": f_new,
        "kv_tokens": new_t,
        "kv_gb": _r(fm.pool_gb(new_t, inp.page_size, cell_t)) if new_t and new_t > 0 else None,
        "headroom_gb": _r(new_head),
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


def _floor3(x: float) -> float:
    return math.floor(x * 1000 + 1e-9) / 1000


def _ceil3(x: float) -> float:
    return math.ceil(x * 1000 - 1e-9) / 1000


def _what_ifs(launch, li, pred, headroom, margin, actual_tokens, pool_rank, report) -> list[dict[str, Any]]:
    inp = li.inputs
    out: list[dict[str, Any]] = []
    failed_small = bool(launch.error and _TOO_SMALL_RE.search(launch.error)) or bool(pred and pred.not_enough)
    failed_oom = bool(launch.error and _OOM_RE.search(launch.error)) and not failed_small
    # 1. a fraction for the safety margin
    if not failed_small:
        out.append(_margin_what_if(li, pred, headroom, margin, has_draft=bool(li.draft_bpt.value is not None)))
    # 2. the smallest fraction that would have started (KV budget <= 0)
    if failed_small and inp is not None:
        m = _MIN_VIABLE_RE.search(launch.error or "")
        need_gb = (inp.page_size * inp.cell / GiB) if inp.cell else 0.0
        f_min = _ceil3(fm.fraction_for_rest(inp, need_gb) + 1e-6)
        item = {
            "change": f"mem_fraction_static {inp.f:g} → {f_min:g} (smallest that starts)",
            "mem_fraction_static": f_min,
            "kv_tokens": None,
            "kv_gb": None,
            "headroom_gb": None,
            "supported": True,
        }
        if m:
            item["sglang_says_minimum"] = float(m.group(1))
        if inp.cell:
            item["kv_tokens"] = inp.page_size
            item["note"] = "every 0.01 above it adds " + f"{int(0.01 * inp.m_pre_gb * GiB // inp.cell):,} tokens"
        else:
            item["note"] = (
                "bytes per token unknown: no KV pool line was printed, so the tokens it would give cannot be computed"
            )
        # what headroom would be left: the held-back share at that fraction (nothing else was allocated yet)
        item["headroom_gb"] = _r(inp.m_pre_gb * (1 - f_min))
        out.append(item)
    if failed_oom and inp is not None and pred is not None:
        f_new = _floor3(inp.f - margin / inp.m_pre_gb)
        p_new = fm.predict(inp.with_(f=f_new), li.features)
        cell_t = li.bpt.value
        out.append(
            {
                "change": f"mem_fraction_static {inp.f:g} → {f_new:g} (out of memory after the pool: "
                f"{margin:.2f} GB more for CUDA graphs and activations)",
                "mem_fraction_static": f_new,
                "kv_tokens": p_new.tokens if inp.cell else None,
                "kv_gb": _r(fm.pool_gb(p_new.tokens, inp.page_size, cell_t))
                if (cell_t and p_new.tokens and p_new.tokens > 0)
                else None,
                "headroom_gb": _r((headroom or 0) + margin) if headroom is not None else None,
                "supported": True,
            }
        )
    # 2b. the cap lifted
    if inp is not None and inp.max_total_tokens is not None and report.get("capped_by_max_total_tokens"):
        item = {
            "change": f"without --max-total-tokens (now {inp.max_total_tokens:,})",
            "kv_tokens": None,
            "kv_gb": None,
            "headroom_gb": None,
            "supported": True,
        }
        unc = report.get("uncapped_kv_tokens")
        if unc is not None and li.bpt.value:
            item["kv_tokens"] = unc
            item["kv_gb"] = _r(fm.pool_gb(unc, inp.page_size, li.bpt.value))
            if headroom is not None:
                ch = _headroom_cell(li, li.draft_bpt.value is not None) or li.bpt.value
                item["headroom_gb"] = _r(headroom - (unc - inp.max_total_tokens) * ch / GiB)
        else:
            least = report.get("uncapped_kv_tokens_at_least")
            item["kv_tokens_at_least"] = least
            item["note"] = (
                f"at least {least:,} tokens: the capped pool is too small to measure bytes per token"
                if least
                else "bytes per token unknown"
            )
            if headroom is not None and pred is not None:
                item["headroom_gb"] = _r(max(headroom - max(pred.rest_gb, 0.0), 0.0))
                item["note"] += "; headroom falls to about the held-back share"
        out.append(item)
    # 3. fp8 KV cache
    if inp is not None and pred is not None:
        if _is_fp8(launch, pool_rank) or _is_fp4(launch, pool_rank):
            out.append(
                {
                    "change": "kv_cache_dtype fp8_e4m3",
                    "kv_tokens": actual_tokens,
                    "kv_gb": report.get("actual_kv_gb"),
                    "headroom_gb": _r(headroom),
                    "supported": True,
                    "note": "the KV cache is already 8-bit (or smaller)",
                }
            )
        elif inp.cell is None:
            out.append(
                {
                    "change": "kv_cache_dtype fp8_e4m3 (half the bytes per token)",
                    "kv_tokens": None,
                    "kv_gb": None,
                    "headroom_gb": None,
                    "supported": False,
                    "reason": "bytes per token unknown (no measurable KV pool line)",
                }
            )
        else:
            p8 = fm.predict(inp.with_(cell=inp.cell / 2), li.features)
            cell_t = (li.bpt.value or inp.cell) / 2
            item = {
                "change": "kv_cache_dtype fp8_e4m3 (half the bytes per token)",
                "kv_tokens": p8.tokens,
                "kv_gb": _r(fm.pool_gb(p8.tokens, inp.page_size, cell_t)) if p8.tokens and p8.tokens > 0 else None,
                "headroom_gb": _r(headroom),
                "supported": True,
            }
            if p8.capped:
                item["note"] = f"--max-total-tokens {inp.max_total_tokens:,} still caps the pool"
            out.append(item)
    # 4. HiCache host pool
    hc = report.get("hicache") or {}
    if hc.get("what_if"):
        out.extend(hc.pop("what_if"))
    return out


def _hicache(launch, pred, li, actual_tokens, page) -> dict[str, Any] | None:
    """Host pool: tokens = device pool × ratio, rounded up to a page (+1 page); bytes in decimal GB."""
    cell = li.bpt.value
    enabled = bool(launch.enable_hierarchical_cache)
    ratio = launch.hicache_ratio or 2.0
    size_gb = launch.hicache_size or 0
    n_ranks = len({_phys_key(r) for r in launch.ranks if r.worker == "target"}) or 1
    out: dict[str, Any] = {
        "enabled": enabled,
        "hicache_ratio": launch.hicache_ratio,
        "hicache_size": launch.hicache_size,
        "logged_host_gb": launch.hicache_host_gb,
        "logged_host_tokens": launch.hicache_host_tokens,
    }

    def host(tokens: int | None, r: float) -> tuple[int | None, float | None]:
        if tokens is None or tokens <= 0 or cell is None:
            return None, None
        if size_gb and size_gb > 0:
            ht = int(size_gb * 1e9 // cell)
        else:
            ht = int(tokens * r)
        ht = (ht // page + 1) * page
        return ht, ht * cell / 1e9

    if enabled:
        ht, hgb = host(actual_tokens, ratio)
        out["predicted_host_tokens"] = ht
        out["predicted_host_gb"] = _r(hgb)
        out["ranks"] = n_ranks
        out["total_host_gb"] = (
            _r(hgb * n_ranks)
            if hgb is not None
            else (_r(launch.hicache_host_gb * n_ranks) if launch.hicache_host_gb else None)
        )
    wi = []
    ratios = [ratio, ratio * 2] if enabled else [2.0, 4.0]
    for r in ratios:
        ht, hgb = host(actual_tokens, r)
        item = {
            "change": f"--enable-hierarchical-cache --hicache-ratio {r:g}"
            + (" (as launched)" if enabled and r == ratio else ""),
            "kv_tokens": actual_tokens,
            "kv_gb": None,
            "headroom_gb": None,
            "host_tokens": ht,
            "host_gb": _r(hgb),
            "host_gb_all_ranks": _r(hgb * n_ranks) if hgb else None,
            "supported": hgb is not None,
        }
        if hgb is None:
            item["reason"] = "bytes per token unknown: the host pool size cannot be computed"
        item["note"] = "host (CPU) memory in decimal GB; the GPU pool stays the same"
        wi.append(item)
    out["what_if"] = wi
    return out


# --------------------------------------------------------------------------- sentences
def _sentences(launch, rep, li, pred, budgets, cpu, mem) -> list[str]:
    s: list[str] = []
    inp = li.inputs
    feat = li.features
    unit = "GiB"
    if cpu:
        s.append(
            "CPU backend: every figure is system memory (available_cpu_mem), shared with every other process "
            "on the machine, so it can move between SGLang's measurements."
        )
    s.append(
        f"Sized with SGLang's {feat.era.label} formula ({feat.era.where}); "
        + (f"version range {launch.sglang_version_range}." if launch.sglang_version_range else "version unknown.")
        + (" " + " ".join(n[0].upper() + n[1:] + "." for n in rep["formula_notes"]) if rep["formula_notes"] else "")
    )
    if inp is None:
        s.append(
            "The log lacks the figures the formula needs (Load weight begin/end and mem_fraction_static); "
            "nothing can be predicted."
        )
        return s
    f = inp.f
    neg = (
        " That is negative: nothing is left for the KV cache, so SGLang cannot start with this fraction."
        if pred.rest_gb <= 0
        else ""
    )
    s.append(
        f"mem_fraction_static={f:g} is not {f:.0%} of the {mem} left after the weights (that would be "
        f"{f:g} × {inp.m_post_gb:.2f} = {f * inp.m_post_gb:.2f} {unit} of KV). SGLang holds back (1 − {f:g}) = "
        f"{1 - f:.0%} of the memory that was free BEFORE the weights loaded ({inp.m_pre_gb:.2f} {unit} on "
        f"{rank_name(li.m_pre_rank)}, the smallest rank) = {pred.reserved_gb:.2f} {unit}, and the KV cache gets what "
        f"is left after the weights: {inp.m_post_gb:.2f} − {pred.reserved_gb:.2f} = {pred.rest_gb:.2f} {unit}. "
        f"In other words weights + KV may take {f:g} × {inp.m_pre_gb:.2f} = {f * inp.m_pre_gb:.2f} {unit}, and the "
        f"weights took {inp.m_pre_gb - inp.m_post_gb:.2f} of it."
        + neg
        + (f" ({rep['mem_fraction_static_source']}.)" if "default" in rep["mem_fraction_static_source"] else "")
    )
    if li.features.draft_in_budget and li.m_post_rank is not None and li.m_post_rank.worker != "target":
        s.append(
            "From 0.5.14 the draft weights are counted: the free memory after the draft model loaded "
            f"({inp.m_post_gb:.2f} {unit}) is the starting point."
        )
    tokens = rep["kv_tokens"]
    bpt = rep["bytes_per_token"]
    if rep.get("predicted_kv_tokens") is not None and tokens is not None:
        d = rep.get("kv_tokens_diff") or 0
        pct = rep.get("kv_tokens_diff_pct") or 0.0
        verdict = (
            "within the rounding of the printed figures"
            if rep.get("within_rounding")
            else f"{d:+,} tokens ({pct:+.2f}%)"
        )
        s.append(
            f"The formula predicts {rep['predicted_kv_tokens']:,} tokens ({_fmt_gb(rep['predicted_kv_gb'])} {unit}); "
            f"the log says {tokens:,} ({_fmt_gb(rep['actual_kv_gb'])} {unit}): {verdict}."
        )
        if not rep.get("within_rounding") and abs(pct) > 0.5 and not rep.get("capped_by_max_total_tokens"):
            s.append(_mismatch_sentence(launch, rep, li, pred))
    if rep.get("capped_by_max_total_tokens"):
        cap = launch.max_total_tokens
        if rep.get("uncapped_kv_tokens"):
            s.append(
                f"--max-total-tokens {cap:,} caps the pool: the memory budget would hold {rep['uncapped_kv_tokens']:,} "
                f"tokens, SGLang allocated {tokens:,}."
            )
        else:
            s.append(
                f"--max-total-tokens {cap:,} caps the pool: the pool printed is too small to measure its bytes per "
                f"token exactly (at most {rep.get('bytes_per_token_at_most', 0):,.0f} B/token), but even then the "
                f"{pred.rest_gb:.2f} {unit} budget holds at least {rep.get('uncapped_kv_tokens_at_least', 0):,} tokens, "
                f"so the cap, not memory, set the size ({tokens:,})."
            )
    elif pred.cap_not_binding and launch.max_total_tokens:
        s.append(
            f"--max-total-tokens {launch.max_total_tokens:,} is larger than what memory allows: SGLang used the "
            "profiled value."
        )
    # what max_total_num_tokens means
    if tokens:
        dp = launch.dp_size or 1
        per = "per DP rank" if (dp > 1) else "for the whole replica"
        tp = launch.tp_size or 1
        txt = (
            f"max_total_num_tokens={tokens:,} is the KV pool {per}: every request's tokens (prompt and output) of that "
        )
        txt += "replica share it" if dp > 1 else "server share it"
        if tp > 1:
            txt += (
                f"; each of the {tp} TP ranks holds all {tokens:,} tokens (its share of the KV heads, or the whole "
                "MLA latent, which is replicated)"
            )
        txt += "."
        if bpt:
            txt += f" One token costs ≈{bpt:,.0f} bytes per rank (from the pool: {rep['bytes_per_token_source']})."
        ctx = launch.context_len or launch.context_length
        if ctx:
            n = tokens / ctx
            if n >= 1:
                txt += f" {int(n):,} request(s) of the full context ({ctx:,} tokens) fit at once."
            else:
                txt += (
                    f" Not even one request of the full context ({ctx:,} tokens) fits: the pool holds {n:.2f} of one."
                )
        mrr = launch.max_running_requests_effective or launch.max_running_requests
        if mrr:
            txt += f" With max_running_requests={mrr:,} running together, each gets {tokens // max(mrr, 1):,} tokens on average."
        s.append(txt)
        if ctx and tokens < ctx:
            s.append(
                f"Inputs are capped below the context length: one request can never hold more tokens than the "
                f"pool ({tokens:,} < context_len {ctx:,}), so SGLang limits a request to about "
                f"min(context_len, max_total_num_tokens) − 1 = {tokens - 1:,} tokens and rejects longer prompts."
            )
    # least-memory rank
    pre = [
        (b["pre_load_avail_gb"], t) for _, t, _, b in budgets if t is not None and b["pre_load_avail_gb"] is not None
    ]
    if len(pre) > 1:
        lo = min(pre, key=lambda x: x[0])
        hi = max(pre, key=lambda x: x[0])
        spread = hi[0] - lo[0]
        if spread > 0:
            if len(fm.groups(launch)) > 1:
                who = (
                    "Each DP replica sizes its own pool from the minimum over its own ranks, so up to "
                    f"{spread:.2f} {unit} differs between ranks."
                )
            else:
                who = (
                    f"SGLang sizes every rank from the minimum, so up to {spread:.2f} {unit} stays unused on the "
                    "other ranks."
                )
            txt = (
                f"{rank_name(lo[1])} has the least free memory before weights ({lo[0]:.2f} {unit}; "
                f"{rank_name(hi[1])} has {hi[0]:.2f}, {spread:.2f} {unit} more). " + who
            )
            if spread >= 1.0 or spread / hi[0] >= 0.05:
                txt += (
                    f" That is unbalanced: something else (another process, a leftover context) holds memory on "
                    f"{rank_name(lo[1])}."
                )
            s.append(txt)
        else:
            s.append(f"All {len(pre)} ranks had the same free memory before weights ({lo[0]:.2f} {unit}).")
    # speculative decoding
    dw, dk, dg = rep.get("draft_weights_gb"), rep.get("draft_kv_gb"), rep.get("draft_graph_gb")
    if li.spec or dw is not None:
        cost = sum(x for x in (dw, dk, dg) if x)
        txt = f"Speculative decoding ({li.spec or 'draft model'}) costs {cost:.2f} {unit} per rank: "
        txt += ", ".join(
            f"{n} {v:.2f}"
            for n, v in (("draft weights", dw), ("draft KV", dk), ("draft CUDA graphs", dg))
            if v is not None
        )
        if li.features.draft_in_budget:
            txt += ". From 0.5.14 the draft KV is inside the KV budget and the draft weights are counted before sizing, so it costs KV tokens rather than headroom."
        else:
            txt += (
                f". In this release none of it is in the formula: it comes out of the {pred.reserved_gb:.2f} {unit} "
                "held back."
            )
        if li.features.eagle_inflation and pred.tokens_spec and pred.tokens_memory:
            txt += (
                f" The pool is also inflated by {pred.tokens_spec - pred.tokens_memory:,} tokens for EAGLE's draft "
                "and verify steps (R·steps·topk + R·draft_tokens + 100, 0.4.3.post3–0.5.6.post2)."
            )
        s.append(txt)
    # where the held-back share went
    h = rep.get("headroom_gb")
    wb = rep.get("_min_budget") or rep
    if h is not None and pred.reserved_gb:
        parts = []
        for name, key in (
            ("other pools", "other_pools_gb"),
            ("CUDA graphs", "target_graph_gb"),
            ("draft weights", "draft_weights_gb"),
            ("draft KV", "draft_kv_gb"),
            ("draft CUDA graphs", "draft_graph_gb"),
            ("other allocations", "other_gb"),
        ):
            v = wb.get(key)
            if v:
                parts.append(f"{name} {v:.2f}")
        when = (
            "is left free after startup"
            if launch.outcome == "ready"
            else "was free when the log ends"
            if launch.outcome == "incomplete"
            else "was free when the start failed"
        )
        if rep.get("capped_by_max_total_tokens"):
            s.append(
                f"{h:.2f} {unit} {when} ({rep.get('min_rank')}): the cap left most of the {pred.rest_gb:.2f} {unit} "
                f"KV budget unused, on top of the {pred.reserved_gb:.2f} {unit} held back"
                + (" (spent: " + ", ".join(parts) + ")" if parts else "")
                + "."
            )
        else:
            s.append(
                f"{h:.2f} {unit} {when} ({rep.get('min_rank')}): what remains of the "
                f"{pred.reserved_gb:.2f} {unit} held back"
                + (" after " + ", ".join(parts) if parts else "")
                + ". Runtime activations and fragmentation must fit in it."
            )
    # HiCache
    hc = rep.get("hicache") or {}
    if hc.get("enabled"):
        hgb = hc.get("logged_host_gb") or hc.get("predicted_host_gb")
        ht = hc.get("logged_host_tokens") or hc.get("predicted_host_tokens")
        txt = (
            f"HiCache adds host (CPU) memory, not GPU tokens: {_fmt_gb(hgb)} GB (decimal, 10^9 bytes) per rank"
            + (
                f" = {ht:,} tokens ({hc.get('hicache_ratio') or 2.0:g} × {tokens:,}, rounded up to a page)"
                if ht and tokens
                else ""
            )
            + (
                f", {hc['total_host_gb']:.2f} GB across {hc['ranks']} ranks"
                if hc.get("total_host_gb") and hc.get("ranks", 1) > 1
                else ""
            )
            + f"; max_total_num_tokens stays {tokens:,}."
            if tokens
            else "."
        )
        if hc.get("predicted_host_gb") is not None and hc.get("logged_host_gb") is not None:
            txt += f" (Predicted {hc['predicted_host_gb']:.2f} GB from the device pool.)"
        s.append(txt)
    # failures
    if launch.outcome == "failed" and launch.error:
        s.append("The launch failed: " + launch.error.splitlines()[0][:300])
    return s


def _mismatch_sentence(launch, rep, li, pred) -> str:
    inp = li.inputs
    tokens = rep["kv_tokens"]
    t_mem = tokens
    if pred.tokens_spec is not None and pred.tokens_memory is not None:
        t_mem = tokens - (pred.tokens_spec - pred.tokens_memory)
    rest_actual = t_mem * inp.cell / GiB + (inp.mamba_gb or 0.0)
    m_pre_implied = (inp.m_post_gb - rest_actual) / (1 - inp.f) if inp.f < 1 else None
    txt = f"The pool implies a budget of {rest_actual:.2f} GiB instead of {pred.rest_gb:.2f}"
    if m_pre_implied is not None:
        txt += (
            f", i.e. SGLang measured {m_pre_implied:.2f} GiB free before the weights where 'Load weight begin' "
            f"printed {inp.m_pre_gb:.2f}"
        )
    txt += "."
    ver = launch.version_range
    from logparse.grammar import versions

    if ver and versions.index(ver[1]) >= versions.index("0.5.21"):
        txt += (
            " From 0.5.21 SGLang takes that measurement at 'Memory baseline taken' (which prints only the "
            "usage, not the free memory), earlier than 'Load weight begin'."
        )
    if rep.get("memory_kind") == "cpu":
        txt += " On the CPU backend other processes allocate in between, so the two measurements differ."
    else:
        txt += " Another process allocating or freeing memory on the GPU between the measurements does this."
    return txt


# --------------------------------------------------------------------------- rendering
def render_explain(rep: dict[str, Any], console) -> None:
    from rich.table import Table
    from rich.text import Text

    head = Text()
    head.append(f"launch {rep['launch_id']}  ", style="bold")
    head.append(rep["outcome"], style={"ready": "bold green", "failed": "bold red"}.get(rep["outcome"], "bold yellow"))
    head.append(f"  SGLang {rep.get('sglang_version_range') or 'unknown'}  {rep.get('model_path') or ''}")
    if rep.get("tp_size"):
        head.append(f"  tp={rep['tp_size']}" + (f" dp={rep['dp_size']}" if (rep.get("dp_size") or 1) > 1 else ""))
    console.print(head)
    console.print(f"  {rep['source']}", style="dim")
    console.print(f"  formula: {rep['formula_features']}", style="dim")
    unit = "GiB" + (" (system memory)" if rep["memory_kind"] == "cpu" else "")

    wf = rep.get("waterfall") or []
    if wf:
        t = Table(
            title=f"memory budget, {rep.get('min_rank')} (least headroom), {unit}",
            title_justify="left",
            show_edge=False,
            pad_edge=False,
        )
        t.add_column("step")
        t.add_column("GiB", justify="right")
        t.add_column("", justify="left")
        for st in wf:
            lab, gb = st["label"], st["gb"]
            if st["kind"] == "start":
                t.add_row(lab, f"{gb:.2f}", "")
            elif st["kind"] == "minus":
                extra = ""
                if lab == "KV pool" and st.get("predicted_gb") is not None:
                    extra = f"predicted {st['predicted_gb']:.2f}, Δ {gb - st['predicted_gb']:+.2f}"
                t.add_row(f"  − {lab}", f"{gb:.2f}", extra)
            elif st["kind"] == "subtotal":
                t.add_row(Text(f"  = {lab}", style="bold"), Text(f"{gb:.2f}", style="bold"), "")
            elif st["kind"] == "note":
                t.add_row(Text(f"      {lab}", style="dim"), Text(f"{gb:.2f}", style="dim"), "")
            else:
                t.add_row(Text(f"  = {lab}", style="bold green"), Text(f"{gb:.2f}", style="bold green"), "")
        console.print(t)

    kv = Table(title="KV pool", title_justify="left", show_edge=False, pad_edge=False, show_header=False)
    kv.add_column("")
    kv.add_column("", justify="right")
    rows = [
        ("mem_fraction_static", rep.get("mem_fraction_static")),
        ("free before weights (M_pre, min rank)", rep.get("pre_load_avail_gb")),
        ("free after weights (M_post, min rank)", rep.get("post_load_avail_gb")),
        ("held back (1 − f) × M_pre", rep.get("reserved_gb")),
        ("KV budget (rest)", rep.get("rest_gb")),
        ("bytes per token", round(rep["bytes_per_token"]) if rep.get("bytes_per_token") else None),
        ("predicted tokens", rep.get("predicted_kv_tokens")),
        ("logged tokens", rep.get("kv_tokens")),
        ("predicted KV GiB", rep.get("predicted_kv_gb")),
        ("logged KV GiB", rep.get("actual_kv_gb")),
        ("headroom left (min rank)", rep.get("headroom_gb")),
    ]
    for k, v in rows:
        if v is None:
            continue
        kv.add_row(
            k,
            f"{v:,}"
            if isinstance(v, int)
            else (
                f"{v:,.2f}"
                if isinstance(v, float) and k != "bytes per token"
                else f"{v:,.1f}"
                if isinstance(v, float)
                else str(v)
            ),
        )
    console.print(kv)
    if rep.get("derivation"):
        for line in rep["derivation"]:
            console.print(f"    {line}", style="dim")

    ranks = rep.get("ranks") or []
    if len(ranks) > 1:
        rt = Table(title=f"per rank ({unit})", title_justify="left", show_edge=False, pad_edge=False)
        cols = [
            ("rank", "rank"),
            ("before", "pre_load_avail_gb"),
            ("weights", "weights_gb"),
            ("after", "post_load_avail_gb"),
            ("KV", "actual_kv_gb"),
            ("graphs (all)", "graph_gb"),
            ("draft w", "draft_weights_gb"),
            ("draft KV", "draft_kv_gb"),
            ("other", "other_gb"),
            ("headroom", "headroom_gb"),
        ]
        present = [(h, k) for h, k in cols if k == "rank" or any(r.get(k) is not None for r in ranks)]
        for h, _ in present:
            rt.add_column(h, justify="left" if h == "rank" else "right")
        for r in ranks:
            rt.add_row(
                *[str(r[k]) if k == "rank" else ("—" if r.get(k) is None else f"{r[k]:.2f}") for _, k in present]
            )
        console.print(rt)

    console.print(Text("Why", style="bold"))
    for line in rep.get("sentences") or []:
        console.print(Text("  • " + line))
    wi = rep.get("what_if") or []
    if wi:
        console.print(Text("What if", style="bold"))
        for w in wi:
            bits = []
            if w.get("kv_tokens") is not None:
                bits.append(f"{w['kv_tokens']:,} tokens")
            if w.get("kv_gb") is not None:
                bits.append(f"KV {w['kv_gb']:.2f} GiB")
            if w.get("headroom_gb") is not None:
                bits.append(f"headroom {w['headroom_gb']:.2f} GiB")
            if w.get("host_gb") is not None:
                bits.append(
                    f"host pool {w['host_gb']:.2f} GB/rank ({w['host_tokens']:,} tokens)"
                    + (f", {w['host_gb_all_ranks']:.2f} GB on all ranks" if w.get("host_gb_all_ranks") else "")
                )
            line = f"  • {w['change']}: " + (", ".join(bits) if bits else "")
            if not w.get("supported", True):
                line += f" — not computable: {w.get('reason')}"
            elif w.get("note"):
                line += f" ({w['note']})"
            console.print(Text(line))
    for wmsg in rep.get("warnings") or []:
        console.print(Text("  warning: " + wmsg, style="yellow"))
