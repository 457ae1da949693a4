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

The history comes from ``--history`` log files or from the store (``--db`` / ``$LOGPARSE_DB``): the
launches of the same deployment (:mod:`logparse.launches.deployment`) before this one.  Every figure
is the launch budget's (:func:`logparse.budget.model.launch_budget`), persisted in the store as it
is computed for a file, so ``check`` judges exactly what ``launches``, ``history`` and ``explain`` show.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from logparse import engines
from logparse.budget.model import Budget, launch_budget
from logparse.launches.deployment import deployment_key
from logparse.launches.model import Launch
from logparse.reports.diff import args_diff, attribute
from logparse.reports.launch_facts import quote
from logparse.store import db as dbm
from logparse.store.history import earlier_launches
from logparse.store.refs import RefError, resolve_launch
from logparse.store.sequence import order_key


@dataclass
class Thresholds:
    kv_tokens_tolerance_pct: float = 1.0
    mad_k: float = 3.5
    min_history: int = 5


#: name, label, higher_is_better, floor of the spread, unit
NOISY = (
    ("pre_load_avail_gb", "free memory before weights (min rank)", True, 0.05, "GiB"),
    ("headroom_gb", "headroom left after startup (binding rank)", True, 0.05, "GiB"),
    ("load_s", "weight load time (slowest rank)", False, 1.0, "s"),
    ("graph_s", "CUDA-graph capture time (slowest rank)", False, 1.0, "s"),
    ("startup_s", "startup time (first line to ready)", False, 1.0, "s"),
)
DETERMINISTIC = (
    ("kv_tokens", "KV tokens", "tolerance"),
    ("kv_pool_gb", "KV pool size (GiB)", "tolerance"),
    ("max_running_requests", "max_running_requests", "exact"),
    ("context_len", "context length", "exact"),
)


#: check's metric -> the budget figure it reads.
METRIC_FIGURES = {
    "kv_tokens": "kv_tokens",
    "kv_pool_gb": "kv_pool_gb",
    "pre_load_avail_gb": "least_free_before_weights_gb",
    "headroom_gb": "headroom_gb",
    "load_s": "load_s",
    "graph_s": "graph_s",
    "startup_s": "startup_s",
}


def metrics(launch: Launch, budget: Budget | None = None) -> dict[str, Any]:
    """Every metric check uses, from one launch (its budget)."""
    b = budget or launch_budget(launch)
    ctx = engines.of(launch).context_of(launch)
    return metrics_of_row(b.to_dict(), launch.outcome, launch.max_running_requests_effective, ctx)


def metrics_of_row(row: dict[str, Any], outcome: str | None, mrr: int | None, ctx: int | None) -> dict[str, Any]:
    out = {name: row.get(figure) for name, figure in METRIC_FIGURES.items()}
    out.update(outcome=outcome, max_running_requests=mrr, context_len=ctx, unknown=row.get("unknown") or {})
    return out


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
def _store_path(db: str | None) -> tuple[Any, str]:
    """(path of an existing store, '') or (None, why).  ``db`` None: $LOGPARSE_DB, else the default path."""
    try:
        path = dbm.resolve_db_path(db)
    except dbm.StoreError as exc:
        return None, str(exc)
    if not path.exists():
        return None, f"no store at {path} (give --db, or ingest first)"
    return path, ""


def _earlier(launch: Launch, db: str | None) -> tuple[str | None, list[dict[str, Any]], str]:
    """(deployment, earlier launches' budget rows, why there are none)."""
    path, why = _store_path(db)
    if path is None:
        return None, [], why
    try:
        with dbm.connection(path, write=False) as con:
            dep, rows = earlier_launches(con, launch)
    except dbm.StoreError as exc:
        return None, [], f"the store could not be read ({exc})"
    return dep, rows, "" if rows else f"no earlier launch of deployment {dep} in the store"


def previous_in_store(launch: Launch, db: str | None) -> tuple[Launch | None, str]:
    """(the previous launch of the same deployment, a note)."""
    dep, rows, why = _earlier(launch, db)
    if not rows:
        return None, f"no baseline: {why}; give --baseline"
    prev = rows[-1]["launch_id"]
    try:
        path, _ = _store_path(db)
        return resolve_launch(str(prev), path), f"baseline: the previous launch {prev} of deployment {dep} in the store"
    except RefError as exc:
        return None, f"no baseline: {exc}"


def history_values(launch: Launch, history_launches: Iterable[Launch] | None, db: str | None) -> tuple[list[dict], str]:
    """Metric dicts of earlier launches of the same deployment (``--history`` files, else the store)."""
    if history_launches is not None:
        key = deployment_key(launch)
        mine = order_key(launch.started_at, None, launch.launch_id)
        out = [
            metrics(h)
            for h in history_launches
            if deployment_key(h) == key
            and h.launch_id != launch.launch_id
            and (launch.started_at is None or order_key(h.started_at, None, h.launch_id) < mine)
        ]
        return out, f"history: {len(out)} earlier launch(es) of this deployment from --history files"
    dep, rows, why = _earlier(launch, db)
    if not rows and dep is None:
        return [], f"history-based checks skipped: {why}"
    out = [metrics_of_row(r, r.get("outcome"), None, None) for r in rows]
    return out, f"history: {len(out)} earlier launch(es) of deployment {dep} from the store"


# --------------------------------------------------------------------------- the check
@dataclass
class CheckReport:
    """The verdict of ``check`` (typed; ``to_dict`` is the ``--json`` document)."""

    status: str  # ok | regression | nothing_to_compare
    launch: dict[str, Any]
    baseline: dict[str, Any] | None
    thresholds: dict[str, Any]
    results: list[dict[str, Any]]
    notes: list[str]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def rows(self) -> list[dict[str, Any]]:
        """One row per check (for csv and table output)."""
        keys = ("metric", "label", "kind", "value", "baseline", "change", "change_pct", "threshold", "status", "note")
        return [{k: r.get(k) for k in keys} for r in self.results]


def _why_missing(m: dict[str, Any], name: str) -> str:
    return m["unknown"].get(METRIC_FIGURES.get(name, name), "not in this launch")


def _outcome_check(new: Launch, mn: dict, mb: dict | None, cause: str | None) -> list[dict[str, Any]]:
    if mn["outcome"] == "ready" or (mb is not None and mb["outcome"] != "ready"):
        return []
    note = quote(new.error, 200) if new.error else "the start did not complete"
    item = {
        "metric": "outcome",
        "label": "startup outcome",
        "kind": "deterministic",
        "value": mn["outcome"],
        "baseline": mb["outcome"] if mb else None,
        "status": "regression",
        "note": note,
    }
    if mb is not None:
        item["likely_cause"] = cause
    return [item]


def _deterministic(mn: dict, mb: dict, th: Thresholds, cause: str | None) -> list[dict[str, Any]]:
    out = []
    for name, label, rule in DETERMINISTIC:
        x, b = mn[name], mb[name]
        item: dict[str, Any] = {"metric": name, "label": label, "kind": "deterministic", "value": x, "baseline": b}
        if x is None or b is None:
            side, m = ("this launch", mn) if x is None else ("the baseline", mb)
            item.update(status="skipped", note=f"not known in {side}: {_why_missing(m, name)}")
            out.append(item)
            continue
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
            else:
                item["status"] = "ok" if change == 0 or (pct is not None and pct < 0) else "improved"
        else:
            item["threshold"] = "no drop"
            item["status"] = "regression" if change < 0 else ("ok" if change == 0 else "improved")
        if item["status"] == "regression":
            item["likely_cause"] = cause
        out.append(item)
    return out


_NOISY_CAUSES = {
    "pre_load_avail_gb": "less free memory than usual before the weights: another process on the GPU, "
    "or a driver/CUDA/NCCL change",
    "headroom_gb": "less memory left than usual: a larger KV pool or CUDA graphs, or memory taken by another process",
    "load_s": "slower weight loading: cold page cache, slower disk or network file system",
    "graph_s": "slower CUDA-graph capture: more batch sizes, or a busy GPU",
    "startup_s": "a slower start: see the weight load and graph capture times",
}


def _noisy(mn: dict, hist: list[dict], th: Thresholds) -> list[dict[str, Any]]:
    out = []
    for name, label, hib, floor_abs, unit in NOISY:
        x = mn[name]
        vals = [h[name] for h in hist if h.get(name) is not None]
        item: dict[str, Any] = {
            "metric": name,
            "label": label,
            "kind": "history",
            "value": x,
            "unit": unit,
            "baseline": f"median of {len(vals)} earlier launch(es)" if vals else None,
        }
        if x is None:
            item.update(status="skipped", note=f"not known: {_why_missing(mn, name)}")
        elif len(vals) < th.min_history:
            item.update(status="skipped", note=f"needs ≥ {th.min_history} earlier launches, have {len(vals)}")
        else:
            j = robust_judge(x, vals, th.mad_k, floor_abs, hib)
            flag = j.pop("flag")
            item.update(
                j,
                change=round(x - j["median"], 3),
                threshold=f"|x − median| > {th.mad_k:g}·1.4826·MAD (worse direction only)",
                status="regression" if flag else "ok",
            )
            if flag:
                item["likely_cause"] = _NOISY_CAUSES.get(name)
        out.append(item)
    return out


def run_check(
    new: Launch,
    baseline: Launch | None,
    *,
    baseline_ref: str | None = None,
    history_launches: Iterable[Launch] | None = None,
    db: str | None = None,
    thresholds: Thresholds | None = None,
    notes: list[str] | None = None,
) -> CheckReport:
    th = thresholds or Thresholds()
    mn = metrics(new)
    notes = [n for n in (notes or []) if n]
    results: list[dict[str, Any]] = []
    if baseline is not None:
        mb = metrics(baseline)
        cause = _likely_cause(attribute(baseline, new), args_diff(baseline, new), baseline, new)
        results += _outcome_check(new, mn, mb, cause) + _comparable(new, baseline, _deterministic(mn, mb, th, cause))
    else:
        notes.append("deterministic checks skipped: no baseline launch")
        results += _outcome_check(new, mn, None, None)
    hist, hnote = history_values(new, history_launches, db)
    notes.append(hnote)
    results += _noisy(mn, hist, th)
    if any(r["status"] == "regression" for r in results):
        status = "regression"
    elif all(r["status"] == "skipped" for r in results):
        status = "nothing_to_compare"
        notes.append("nothing was compared: give --baseline REF, --history FILE... or a store with history (--db)")
    else:
        status = "ok"
    return CheckReport(
        status=status,
        launch={
            "launch_id": new.launch_id,
            "source": new.source,
            "outcome": new.outcome,
            "sglang_version_range": new.sglang_version_range,
        },
        baseline=(
            {
                "ref": baseline_ref,
                "launch_id": baseline.launch_id,
                "source": baseline.source,
                "sglang_version_range": baseline.sglang_version_range,
            }
            if baseline is not None
            else None
        ),
        thresholds={
            "kv_tokens_tolerance_pct": th.kv_tokens_tolerance_pct,
            "mad_k": th.mad_k,
            "min_history": th.min_history,
            "method": "median/MAD",
        },
        results=results,
        notes=notes,
    )


def _comparable(new: Launch, baseline: Launch, results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Like with like: launches of two engines are not gated on each other; vLLM token counts of two
    definitions (0.20.1 changed it) are not gated, the KV pool GiB is (printed from 0.9.1)."""
    if new.engine == baseline.engine and new.kv_tokens_definition == baseline.kv_tokens_definition:
        return results
    if new.engine != baseline.engine:
        why = f"the baseline is a {baseline.engine} launch, this one {new.engine}: capacity is not comparable"
        names = {r["metric"] for r in results}
    else:
        why = (
            f"kv_tokens counts {baseline.kv_tokens_definition} in the baseline and {new.kv_tokens_definition} here "
            "(vLLM 0.20.1): gated on the KV pool GiB instead"
        )
        names = {"kv_tokens"}
    for r in results:
        if r["metric"] in names:
            r.update(status="skipped", note=why)
            r.pop("likely_cause", None)
    return results


def _likely_cause(att: dict[str, Any], args: dict[str, Any], a: Launch, b: Launch) -> str | None:
    bits = []
    own = engines.of(a).likely_cause(att)
    if own is not None:
        return own
    if att.get("supported"):
        steps = [s for s in att["steps"] if s.get("delta_tokens")]
        steps.sort(key=lambda s: -abs(s["delta_tokens"]))
        for s in steps[:3]:
            bits.append(f"{s['input']} {s['a']} → {s['b']} ({s['delta_tokens']:+,} tokens)")
        un = att.get("unexplained_tokens")
        if un and att.get("delta_tokens") and abs(un) > 0.2 * abs(att["delta_tokens"]):
            bits.append(f"{un:+,} tokens not explained by the formula: {att.get('unexplained_points_at')}")
    changed = [c["arg"] for c in args.get("changed", []) if c.get("kind", "set") == "set"]
    if changed and not bits:
        bits.append("changed arguments: " + ", ".join(changed[:6]))
    name = engines.label(a.engine)
    if (a.version_range or ()) != (b.version_range or ()) and not any(name in x for x in bits):
        bits.append(f"{name} version {a.engine_version_range} → {b.engine_version_range}")
    return "; ".join(bits) if bits else None
