"""The store at a glance, per deployment (typed data; ``logparse report --html`` renders it).

Nothing here is computed anew: the history is the store's ``history`` view (the persisted launch
budget per launch, with its version and argument changes), the latest launch is explained by
:func:`logparse.reports.explain.explain_launch`, the last restart is ``diff``'s
(:func:`logparse.reports.diff.diff_launches`) and the verdict ``check``'s
(:func:`logparse.reports.check.run_check`, baseline: the previous launch of the deployment), the
unrecognized lines are the ``sources`` table's counts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logparse.reports.check import run_check
from logparse.reports.diff import diff_launches
from logparse.reports.explain import explain_launch
from logparse.reports.launch_facts import quote
from logparse.reports.problems import Problem, check_problems, deployment_problems
from logparse.store import db as dbm
from logparse.store.refs import resolve_launch

#: Per launch, what the history charts and tables show (``history`` view columns).
HISTORY_COLUMNS = (
    "launch_id",
    "launch_no",
    "started_at",
    "outcome",
    "version",
    "sglang_version_range",
    "kv_tokens",
    "headroom_gb",
    "weights_gb",
    "binding_rank",
    "version_changed",
    "version_change",
    "changed_args",
    "arg_changes",
    "error",
    "error_kind",
    "kv_tokens_change",
)
#: Per deployment, who it is (taken from its latest launch).
WHO = ("deployment", "engine", "host", "unit", "model_path", "tp_size", "dp_size")
CHECK_FIELDS = ("metric", "label", "status", "value", "baseline", "change_pct", "note", "likely_cause")


@dataclass
class DeploymentOverview:
    who: dict[str, Any]
    history: list[dict[str, Any]]
    latest: dict[str, Any]
    explain: dict[str, Any] | None = None
    diff: dict[str, Any] | None = None
    check: dict[str, Any] = field(default_factory=dict)
    failed: list[dict[str, Any]] = field(default_factory=list)
    #: what needs attention, most harmful first (:mod:`logparse.reports.problems`)
    problems: list[Problem] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["problems"] = [p.to_dict() for p in self.problems]
        return out


@dataclass
class Overview:
    store: str
    deployments: list[DeploymentOverview]
    sources: list[dict[str, Any]]
    totals: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "store": self.store,
            "totals": self.totals,
            "sources": self.sources,
            "deployments": [d.to_dict() for d in self.deployments],
        }


def _rows(con, sql: str, params: list | None = None) -> list[dict[str, Any]]:
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def _read(path: Path) -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]]]:
    """History rows per deployment (launch order), and the sources with their line counts."""
    cols = ", ".join(dict.fromkeys(HISTORY_COLUMNS + WHO))
    with dbm.connection(path, write=False) as con:
        rows = _rows(con, f"SELECT {cols} FROM history ORDER BY deployment, launch_no")
        sources = _rows(
            con,
            "SELECT path, kind, format, lines, parsed, noise, unrecognized, n_launches "
            "FROM sources ORDER BY unrecognized DESC, path",
        )
    per: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        per.setdefault(r["deployment"], []).append(r)
    return per, sources


def _history_point(r: dict[str, Any]) -> dict[str, Any]:
    point = {k: r[k] for k in HISTORY_COLUMNS}
    if point["error"]:
        point["error"] = quote(point["error"], 300)
    return point


def _check(la, prev, db: str) -> dict[str, Any]:
    rep = run_check(la, prev, baseline_ref="previous launch in the store" if prev else None, db=db)
    return {
        "status": rep.status,
        "results": [{k: r.get(k) for k in CHECK_FIELDS} for r in rep.results],
        "notes": rep.notes,
    }


def _diff(prev, la) -> dict[str, Any]:
    d = diff_launches(prev, la).to_dict()
    return {k: d[k] for k in ("a", "b", "summary", "attribution", "identical")}


def deployment_overview(rows: list[dict[str, Any]], db: str) -> DeploymentOverview:
    """One deployment from its history rows (launch order)."""
    last = rows[-1]
    ov = DeploymentOverview(
        who={k: last[k] for k in WHO},
        history=[_history_point(r) for r in rows],
        latest={k: last[k] for k in ("launch_id", "outcome", "started_at", "version", "sglang_version_range")},
        failed=[_history_point(r) for r in rows if r["outcome"] == "failed"],
    )
    la = resolve_launch(last["launch_id"], db)
    ov.latest["warnings"] = list(la.warnings)  # figures out of range, pieces of a log...: what to trust
    ex = explain_launch(la).to_dict()
    ov.explain = {
        k: ex.get(k)
        for k in (
            "waterfall",
            "sentences",
            "binding_rank",
            "kv_tokens",
            "headroom_gb",
            "answer",
            "recommendations",
            "engine_reserve_gb",
            "engine_reserve_terms",
            # for the budget chart (logparse.reports.charts.explain_chart): the part held back, each rank's steps
            "reserved_gb",
            "memory_kind",
            "ranks",
        )
    }
    prev = resolve_launch(rows[-2]["launch_id"], db) if len(rows) > 1 else None
    if prev is not None:
        ov.diff = _diff(prev, la)
    ov.check = _check(la, prev, db)
    found = deployment_problems(last["deployment"], rows)
    found += check_problems(last["deployment"], last["launch_id"], ov.check, found)
    ov.problems = sorted(found, key=lambda p: p.order())
    return ov


def _order(item: tuple[str, list[dict[str, Any]]]) -> tuple:
    """Deployments with more launches first, then the most recently started."""
    dep, rows = item
    latest = max((str(r["started_at"] or "") for r in rows), default="")
    return (-len(rows), _negated(latest), dep)


def _negated(s: str) -> tuple[int, ...]:
    return tuple(-ord(c) for c in s)


def overview(path: Path, on_deployment: Callable[[str], None] = lambda _d: None) -> Overview:
    """The overview of the store at ``path`` (``on_deployment`` is told of each one as it is done)."""
    per, sources = _read(path)
    deployments = []
    for dep, rows in sorted(per.items(), key=_order):
        deployments.append(deployment_overview(rows, str(path)))
        on_deployment(dep)
    # problems first (the most harmful one of each deployment), then the rest in their order
    deployments.sort(key=lambda d: d.problems[0].order()[:2] if d.problems else (9, 9))
    totals = {
        "problems": sum(len(d.problems) for d in deployments),
        "deployments": len(per),
        "launches": sum(len(r) for r in per.values()),
        "failed": sum(1 for rows in per.values() for r in rows if r["outcome"] == "failed"),
        "sources": len(sources),
        "unrecognized": sum(s["unrecognized"] or 0 for s in sources),
    }
    return Overview(str(path), deployments, sources, totals)
