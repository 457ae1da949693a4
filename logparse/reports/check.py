"""``logparse check``: a CI / upgrade gate for KV-cache capacity.

Two kinds of metrics:

* **Deterministic** ones follow from the arguments, the model and the memory budget: KV tokens,
  KV pool size, ``max_running_requests``, context length (and whether the launch started).
  They are compared with a *baseline* launch: the KV tokens and the pool size may drop by at
  most ``--kv-tokens-tolerance`` percent (default 1%); ``max_running_requests`` and the context
  length must not drop at all.  Increases are reported, never failed.
* **Noisy** ones depend on what else runs on the GPU and on the disks: free memory before the
  weights, headroom left after startup, weight-load, graph-capture and total startup time.
  They are judged against the deployment's *history* with the median and the median absolute
  deviation (MAD): a value is flagged when it is worse than the median by more than
  ``k · 1.4826 · MAD`` (k = ``--mad-k``, default 3.5; 1.4826·MAD estimates the standard deviation of
  normal data, and the median/MAD are not moved by a few outliers, so one noisy launch neither
  pages anyone nor hides the next).  At least ``--min-history`` (default 5) earlier launches are
  needed, otherwise the metric is skipped with a note.  A MAD of 0 (identical history) would flag
  any change, so the spread is floored at 1% of the median and at a per-metric minimum
  (0.05 GiB for memory, 1 s for times).  Only the bad direction is flagged (less memory, more time).

The history comes from ``--history`` log files (launches with the same host, unit, model, TP and DP
sizes) or from the store (``--db`` / ``$LOGPARSE_DB``: the launches of the same ``deployment``).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from logparse.budget import formula as fm


@dataclass
class Thresholds:
    kv_tokens_tolerance_pct: float = 1.0
    mad_k: float = 3.5
    min_history: int = 5


#: name, label, higher_is_better, floor of the spread, unit
NOISY = (
    ("pre_load_avail_gb", "free memory before weights (min rank)", True, 0.05, "GiB"),
    ("headroom_gb", "headroom left after startup (min rank)", True, 0.05, "GiB"),
    ("load_s", "weight load time (slowest rank)", False, 1.0, "s"),
    ("graph_s", "CUDA-graph capture time (slowest rank)", False, 1.0, "s"),
    ("startup_s", "startup time (first line to ready)", False, 1.0, "s"),
)
DETERMINISTIC = (
    ("kv_tokens", "KV tokens (max_total_num_tokens)", "tolerance"),
    ("kv_pool_gb", "KV pool size (GiB)", "tolerance"),
    ("max_running_requests", "max_running_requests", "exact"),
    ("context_len", "context length", "exact"),
)


def deployment_key(launch) -> tuple:
    return (launch.host, launch.unit, launch.model_path, launch.tp_size, launch.dp_size)


def metrics(launch) -> dict[str, Any]:
    """Every metric check uses, from one launch."""
    from logparse.reports.diff import _durations
    from logparse.reports.explain import rank_budget

    targets = [r for r in launch.ranks if r.worker == "target"]
    pr = fm._pool_rank(targets)
    kv_tokens = pr.kv_tokens if pr is not None and pr.kv_tokens is not None else launch.max_total_num_tokens
    pool = fm.pool_figures(pr)[0] if pr is not None else None
    pre = [r.avail_before_load_gb for r in targets if r.avail_before_load_gb is not None]
    heads = []
    phys: dict[tuple, dict] = {}
    for r in launch.ranks:
        phys.setdefault((r.dp_rank, r.pp_rank, r.tp_rank, r.ep_rank), {})[r.worker] = r
    for slot in phys.values():
        b = rank_budget(slot.get("target"), slot.get("draft"))
        if b["headroom_gb"] is not None:
            heads.append(b["headroom_gb"])
    d = _durations(launch)
    return {
        "outcome": launch.outcome,
        "kv_tokens": kv_tokens,
        "kv_pool_gb": pool,
        "max_running_requests": launch.max_running_requests_effective,
        "context_len": launch.context_len,
        "pre_load_avail_gb": min(pre) if pre else None,
        "headroom_gb": (min(heads) if heads else None) if launch.outcome == "ready" else None,
        "load_s": d.get("load_s"),
        "graph_s": d.get("graph_s"),
        "startup_s": d.get("startup_s"),
    }


def robust_judge(x: float, hist: list[float], k: float, floor_abs: float, higher_is_better: bool) -> dict[str, Any]:
    med = statistics.median(hist)
    mad = statistics.median([abs(h - med) for h in hist])
    scale = max(1.4826 * mad, 0.01 * abs(med), floor_abs)
    z = (x - med) / scale
    bad = (z < -k) if higher_is_better else (z > k)
    return {
        "median": round(med, 3),
        "mad": round(mad, 3),
        "scale": round(scale, 3),
        "robust_z": round(z, 2),
        "limit": round(med - k * scale if higher_is_better else med + k * scale, 3),
        "flag": bad,
    }


# --------------------------------------------------------------------------- store access
def _store(db: str | None):
    """(Store, '') or (None, why).  ``db`` None means: only when $LOGPARSE_DB names one."""
    import os

    try:
        from logparse.store import Store
        from logparse.store.db import resolve_db_path
    except ImportError:
        return None, "the store is not available in this build"
    if not db:
        db = os.environ.get("LOGPARSE_DB") or None
    if not db:
        try:
            default = resolve_db_path(None)
        except Exception:
            default = None
        if default is None or not os.path.exists(default):
            return None, "no store given (--db / $LOGPARSE_DB) and none at the default path"
        db = str(default)
    if not os.path.exists(db):
        return None, f"store {db} does not exist"
    try:
        return Store(db), ""
    except Exception as exc:
        return None, f"store {db} could not be opened: {exc}"


def _q(v: str) -> str:
    return "'" + str(v).replace("'", "''") + "'"


def store_deployment(store, launch) -> str:
    """The store's deployment label of a launch (its own row, else the store's default key)."""
    try:
        df = store.query(f"SELECT deployment FROM launches WHERE launch_id = {_q(launch.launch_id)}")
        rows = df.to_dicts()
        if rows and rows[0].get("deployment"):
            return rows[0]["deployment"]
    except Exception:
        pass
    try:
        from logparse.store.frames import deployment_key as dk
    except ImportError:  # pragma: no cover

        def dk(host, model, tp, dp, pp, ep):
            return f"{host or '?'}|{model or '?'}|tp={tp or 1}|dp={dp or 1}|pp={pp or 1}|ep={ep or 1}"

    return dk(launch.host, launch.model_path, launch.tp_size, launch.dp_size, launch.pp_size, launch.ep_size)


def _earlier_rows(store, launch, dep: str) -> list[dict]:
    """Launches of the deployment that started before ``launch`` (oldest first), with the noisy metrics."""
    sql = f"""
        SELECT l.launch_id, CAST(l.started_at AS VARCHAR) AS started_at, l.outcome,
               epoch(l.ready_at) - epoch(l.started_at) AS startup_s,
               min(r.avail_before_load_gb) FILTER (WHERE r.worker = 'target') AS pre_load_avail_gb,
               max(r.load_s) FILTER (WHERE r.worker = 'target') AS load_s,
               max(r.graph_s) FILTER (WHERE r.worker = 'target') AS graph_s,
               min(least(r.avail_before_load_gb, r.avail_after_load_gb, r.avail_after_pool_gb,
                         r.avail_after_graph_gb)) AS headroom_gb
        FROM launches l LEFT JOIN rank_memory r USING (launch_id)
        WHERE l.deployment = {_q(dep)} AND l.launch_id <> {_q(launch.launch_id)}
        GROUP BY l.launch_id, l.started_at, l.ready_at, l.outcome, l.ingested_at
        ORDER BY l.started_at NULLS FIRST, l.ingested_at, l.launch_id"""
    rows = store.query(sql).to_dicts()
    if launch.started_at:
        cut = launch.started_at.replace("T", " ")
        rows = [r for r in rows if r.get("started_at") and str(r["started_at"]).replace("T", " ") < cut]
    for r in rows:
        if r.get("outcome") != "ready":
            r["headroom_gb"] = None
    return rows


def previous_in_store(launch, db: str | None):
    """(the previous launch of the same deployment, a note)."""
    store, why = _store(db)
    if store is None:
        return None, f"no baseline: {why}; give --baseline"
    try:
        dep = store_deployment(store, launch)
        rows = _earlier_rows(store, launch, dep)
    except Exception as exc:
        return None, f"no baseline: the store could not be read ({exc})"
    if not rows:
        return None, f"no baseline: no earlier launch of deployment {dep} in the store"
    prev = rows[-1]
    from logparse.store.resolve import RefError, resolve

    try:
        return resolve(str(prev["launch_id"]), store_db(store, db)), (
            f"baseline: the previous launch {prev['launch_id']} of deployment {dep} in the store"
        )
    except RefError as exc:
        return None, f"no baseline: {exc}"


def store_db(store, db):
    return str(getattr(store, "path", db) or db)


def history_values(launch, history_launches: Iterable | None, db: str | None) -> tuple[list[dict], str]:
    """Metric dicts of earlier launches of the same deployment (``--history`` files, else the store)."""
    key = deployment_key(launch)
    if history_launches is not None:
        out = [
            metrics(h)
            for h in history_launches
            if deployment_key(h) == key
            and h.launch_id != launch.launch_id
            and (not launch.started_at or not h.started_at or h.started_at < launch.started_at)
        ]
        return out, f"history: {len(out)} earlier launch(es) of this deployment from --history files"
    store, why = _store(db)
    if store is None:
        return [], f"history-based checks skipped: {why}"
    try:
        dep = store_deployment(store, launch)
        rows = _earlier_rows(store, launch, dep)
    except Exception as exc:
        return [], f"history-based checks skipped: the store could not be read ({exc})"
    return rows, f"history: {len(rows)} earlier launch(es) of deployment {dep} from the store"


# --------------------------------------------------------------------------- the check
def run_check(
    new,
    baseline,
    *,
    baseline_ref: str | None = None,
    history_launches=None,
    db: str | None = None,
    thresholds: Thresholds | None = None,
    notes: list[str] | None = None,
) -> dict[str, Any]:
    th = thresholds or Thresholds()
    mn = metrics(new)
    results: list[dict[str, Any]] = []
    notes = [n for n in (notes or []) if n]
    cause = None
    if baseline is not None:
        mb = metrics(baseline)
        from logparse.reports.diff import args_diff, attribute

        att = attribute(baseline, new)
        cause = _likely_cause(att, args_diff(baseline, new), baseline, new)
        if mb["outcome"] == "ready" and mn["outcome"] != "ready":
            results.append(
                {
                    "metric": "outcome",
                    "label": "startup outcome",
                    "kind": "deterministic",
                    "value": mn["outcome"],
                    "baseline": mb["outcome"],
                    "status": "regression",
                    "note": (new.error or "").splitlines()[0][:200] if new.error else None,
                    "likely_cause": cause,
                }
            )
        for name, label, rule in DETERMINISTIC:
            x, b = mn[name], mb[name]
            item = {"metric": name, "label": label, "kind": "deterministic", "value": x, "baseline": b}
            if x is None or b is None:
                item.update(status="skipped", note="not in both launches")
            else:
                change = x - b
                pct = change / b * 100 if b else None
                item.update(
                    change=round(change, 4) if isinstance(change, float) else change,
                    change_pct=round(pct, 3) if pct is not None else None,
                )
                if rule == "tolerance":
                    item["threshold"] = f"drop ≤ {th.kv_tokens_tolerance_pct:g}%"
                    if pct is not None and pct < -th.kv_tokens_tolerance_pct:
                        item["status"] = "regression"
                    elif change == 0:
                        item["status"] = "ok"
                    else:
                        item["status"] = "ok" if pct is not None and pct < 0 else "improved"
                else:
                    item["threshold"] = "no drop"
                    item["status"] = "regression" if change < 0 else ("ok" if change == 0 else "improved")
                if item["status"] == "regression":
                    item["likely_cause"] = cause
            results.append(item)
    else:
        notes.append("deterministic checks skipped: no baseline launch")
        if mn["outcome"] != "ready":
            results.append(
                {
                    "metric": "outcome",
                    "label": "startup outcome",
                    "kind": "deterministic",
                    "value": mn["outcome"],
                    "baseline": None,
                    "status": "regression",
                    "note": (new.error or "the start did not complete").splitlines()[0][:200],
                }
            )
    hist, hnote = history_values(new, history_launches, db)
    notes.append(hnote)
    for name, label, hib, floor_abs, unit in NOISY:
        x = mn[name]
        vals = [h[name] for h in hist if h.get(name) is not None]
        item = {
            "metric": name,
            "label": label,
            "kind": "history",
            "value": x,
            "unit": unit,
            "baseline": f"median of {len(vals)} earlier launch(es)" if vals else None,
        }
        if x is None:
            item.update(status="skipped", note="not in this launch")
        elif len(vals) < th.min_history:
            item.update(status="skipped", note=f"needs ≥ {th.min_history} earlier launches, have {len(vals)}")
        else:
            j = robust_judge(x, vals, th.mad_k, floor_abs, hib)
            item.update(j)
            item["change"] = round(x - j["median"], 3)
            item["threshold"] = f"|x − median| > {th.mad_k:g}·1.4826·MAD (worse direction only)"
            item["status"] = "regression" if j.pop("flag") else "ok"
            item.pop("flag", None)
            if item["status"] == "regression":
                item["likely_cause"] = {
                    "pre_load_avail_gb": "less free memory than usual before the weights: another process on the GPU, "
                    "or a driver/CUDA/NCCL change",
                    "headroom_gb": "less memory left than usual: a larger KV pool or CUDA graphs, or memory taken by "
                    "another process",
                    "load_s": "slower weight loading: cold page cache, slower disk or network file system",
                    "graph_s": "slower CUDA-graph capture: more batch sizes, or a busy GPU",
                    "startup_s": "a slower start: see the weight load and graph capture times",
                }.get(name)
        results.append(item)
    if any(r["status"] == "regression" for r in results):
        status = "regression"
    elif all(r["status"] == "skipped" for r in results):
        status = "nothing_to_compare"
        notes.append("nothing was compared: give --baseline REF, --history FILE... or a store with history (--db)")
    else:
        status = "ok"
    return {
        "status": status,
        "launch": {
            "launch_id": new.launch_id,
            "source": new.source,
            "outcome": new.outcome,
            "sglang_version_range": new.sglang_version_range,
        },
        "baseline": (
            {
                "ref": baseline_ref,
                "launch_id": baseline.launch_id,
                "source": baseline.source,
                "sglang_version_range": baseline.sglang_version_range,
            }
            if baseline is not None
            else None
        ),
        "thresholds": {
            "kv_tokens_tolerance_pct": th.kv_tokens_tolerance_pct,
            "mad_k": th.mad_k,
            "min_history": th.min_history,
            "method": "median/MAD",
        },
        "results": results,
        "notes": notes,
    }


def _likely_cause(att: dict[str, Any], args: dict[str, Any], a, b) -> str | None:
    bits = []
    if att.get("supported"):
        steps = [s for s in att["steps"] if s.get("delta_tokens")]
        steps.sort(key=lambda s: -abs(s["delta_tokens"]))
        for s in steps[:3]:
            bits.append(f"{s['input']} {s['a']} → {s['b']} ({s['delta_tokens']:+,} tokens)")
        un = att.get("unexplained_tokens")
        if un and att.get("delta_tokens") and abs(un) > 0.2 * abs(att["delta_tokens"]):
            bits.append(f"{un:+,} tokens not explained by the formula: {att.get('unexplained_points_at')}")
    changed = [c["arg"] for c in args.get("changed", [])]
    if changed and not bits:
        bits.append("changed arguments: " + ", ".join(changed[:6]))
    if (a.version_range or ()) != (b.version_range or ()) and not any("SGLang" in x for x in bits):
        bits.append(f"SGLang version {a.sglang_version_range} → {b.sglang_version_range}")
    return "; ".join(bits) if bits else None


# --------------------------------------------------------------------------- rendering
def render_check(rep: dict[str, Any], console) -> None:
    from rich.table import Table
    from rich.text import Text

    st = rep["status"]
    head = Text()
    label = {"regression": ("REGRESSION", "bold red"), "ok": ("OK", "bold green")}.get(
        st, ("NOTHING TO COMPARE", "bold yellow")
    )
    head.append(label[0], style=label[1])
    head.append(f"  launch {rep['launch']['launch_id']} ({rep['launch']['source']})")
    console.print(head)
    if rep["baseline"]:
        b = rep["baseline"]
        ref = f"; {b['ref']}" if b.get("ref") and b["ref"] != b["source"] else ""
        console.print(f"  baseline: {b['launch_id']} ({b['source']}{ref})", style="dim")
    t = Table(show_edge=False, pad_edge=False)
    for h in ("metric", "value", "baseline", "change", "threshold", "status"):
        t.add_column(h, justify="right" if h in ("value", "change") else "left")
    style = {"regression": "bold red", "ok": "green", "improved": "cyan", "skipped": "dim"}
    for r in rep["results"]:
        val = r.get("value")
        base = r.get("median") if r["kind"] == "history" and r.get("median") is not None else r.get("baseline")
        ch = r.get("change")
        chs = "" if ch is None else (f"{ch:+,}" if isinstance(ch, int) else f"{ch:+,.2f}")
        if r.get("change_pct") not in (None, 0):
            chs += f" ({r['change_pct']:+.2f}%)"
        t.add_row(
            r["label"],
            _f(val),
            _f(base),
            chs,
            r.get("threshold") or r.get("note") or "",
            Text(r["status"], style=style.get(r["status"], "")),
        )
    console.print(t)
    for r in rep["results"]:
        if r["status"] == "regression":
            line = f"  ✗ {r['label']}: {_f(r.get('value'))} vs {_f(r.get('median', r.get('baseline')))}"
            if r.get("likely_cause"):
                line += f" — likely cause: {r['likely_cause']}"
            if r.get("note"):
                line += f" ({r['note']})"
            console.print(Text(line, style="red"))
    for n in rep["notes"]:
        console.print(f"  note: {n}", style="dim")


def _f(v) -> str:
    from logparse.cli.render import fmt_value

    return fmt_value(v)
