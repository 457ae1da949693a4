"""The store in a few lines, and what to run next (the closing of ``ingest --summary``: the quick start).

A new user has just ingested a directory of logs; a table of every deployment is too much to read
and says nothing about where to look.  This says how many launches and deployments the store
holds, which need attention (failed starts, a KV drop at the last restart, little headroom), which
restarted, and three commands to run next with references from this store: ``explain`` of the
latest launch of the largest deployment that restarted (most GPUs), ``diff`` of its last restart,
and the HTML report.  Every figure is the store's ``history`` view (the launch budget's); the
problems are :mod:`logparse.reports.problems`'.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logparse import engines as registry
from logparse.launches.deployment import short_label
from logparse.reports.problems import Problem, deployment_problems
from logparse.store import db as dbm

#: The ``history`` columns the tour reads.
TOUR_COLUMNS = (
    "deployment",
    "launch_no",
    "launch_id",
    "engine",
    "started_at",
    "outcome",
    "version",
    "error_kind",
    "kv_tokens",
    "kv_tokens_change",
    "headroom_gb",
    "changed_args",
    "tp_size",
    "dp_size",
    "pp_size",
)


@dataclass
class NextCommand:
    args: list[str]
    why: str


@dataclass
class Tour:
    store: str
    launches: int
    deployments: int
    per_engine: dict[str, int]
    problems: list[Problem]
    restarted: list[dict[str, Any]]
    next: list[NextCommand] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "store": self.store,
            "launches": self.launches,
            "deployments": self.deployments,
            "per_engine": self.per_engine,
            "problems": [p.to_dict() for p in self.problems],
            "restarted": self.restarted,
            "next": [{"args": c.args, "why": c.why} for c in self.next],
        }


def _history(path: Path) -> dict[str, list[dict[str, Any]]]:
    with dbm.connection(path, write=False) as con:
        cur = con.execute(f"SELECT {', '.join(TOUR_COLUMNS)} FROM history ORDER BY deployment, launch_no")
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, r)) for r in cur.fetchall()]
    per: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        per.setdefault(r["deployment"], []).append(r)
    return per


def store_tour(path: Path, db_arg: str | None = None) -> Tour:
    """The tour of the store at ``path`` (``db_arg``: the ``--db`` the user gave, repeated in the commands)."""
    per = _history(path)
    engines: dict[str, int] = {}
    for rows in per.values():
        for r in rows:
            name = registry.label(r["engine"])
            engines[name] = engines.get(name, 0) + 1
    restarted = [_restart(dep, rows) for dep, rows in per.items() if len(rows) > 1]
    restarted.sort(key=lambda x: (-x["gpus"], x["label"]))
    problems = [p for dep, rows in per.items() for p in deployment_problems(dep, rows)]
    problems.sort(key=lambda p: p.order())
    tour = Tour(str(path), sum(engines.values()), len(per), engines, problems, restarted)
    tour.next = _next_commands(per, restarted, db_arg)
    return tour


def _gpus(r: dict[str, Any]) -> int:
    return (r["tp_size"] or 1) * (r["dp_size"] or 1) * (r["pp_size"] or 1)


def _restart(dep: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    first, last = rows[0], rows[-1]
    changed = sorted({a for r in rows[1:] for a in (r["changed_args"] or "").split(", ") if a})
    return {
        "deployment": dep,
        "label": short_label(dep),
        "launches": len(rows),
        "gpus": _gpus(last),
        "kv_tokens_first": first["kv_tokens"],
        "kv_tokens_last": last["kv_tokens"],
        "changed_args": changed,
        "previous_id": rows[-2]["launch_id"],
        "latest_id": last["launch_id"],
        "latest_changed_args": last["changed_args"],
    }


def _ref(launch_id: str) -> str:
    return launch_id[:12]


def _next_commands(per: dict[str, list[dict[str, Any]]], restarted: list[dict[str, Any]], db_arg: str | None):
    db = ["--db", db_arg] if db_arg else []
    out: list[NextCommand] = []
    if restarted:
        story = restarted[0]  # the largest deployment that restarted: the one a regression costs most
        latest = per[story["deployment"]][-1]
        kv = f"{latest['kv_tokens']:,} KV tokens" if latest["kv_tokens"] is not None else "its KV tokens"
        out.append(NextCommand(["explain", _ref(story["latest_id"]), *db], f"why {story['label']} has {kv}"))
        what = story["latest_changed_args"]
        out.append(
            NextCommand(
                ["diff", _ref(story["previous_id"]), _ref(story["latest_id"]), *db],
                f"what its last restart changed: {what}" if what else "what its last restart changed",
            )
        )
    elif per:
        latest = max((rows[-1] for rows in per.values()), key=lambda r: (_gpus(r), str(r["started_at"] or "")))
        out.append(NextCommand(["explain", _ref(latest["launch_id"]), *db], f"why {short_label(latest['deployment'])}"))
    out.append(NextCommand(["report", "--html", "report.html", *db], "every deployment on one page, problems first"))
    return out
