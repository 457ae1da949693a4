"""``logparse doctor``: a store examined in full: its schema, every table and index read (:mod:`.fullscan`),
the rows of each table and view, and the consistency checks (each problem says what is wrong)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class DoctorReport:
    path: Path
    schema_version: int | None = None
    counts: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "store": str(self.path),
            "schema_version": self.schema_version,
            "healthy": self.healthy,
            "counts": dict(self.counts),
            "problems": list(self.problems),
            "notes": list(self.notes),
        }


def examine(path: Path, connect: Callable[..., Any]) -> DoctorReport:
    """The schema, every table and index read in full (:mod:`.fullscan`), the counts and the
    consistency checks; each problem says what is wrong (``healthy`` when there is none)."""
    from logparse.store import schema
    from logparse.store.db import REPAIR_HINT
    from logparse.store.fullscan import TABLE_HINT, damaged_parts

    rep = DoctorReport(path)
    with connect() as con:
        _doctor_schema(con, rep)
    if rep.problems:
        return rep
    damaged = damaged_parts(connect, list(schema.TABLES))
    if damaged:
        rep.problems.extend(damaged)
        tables = any(p.startswith("table ") for p in damaged)
        rep.notes.append(TABLE_HINT if tables else f"an index is damaged: {REPAIR_HINT.split('; ', 1)[1]}")
        return rep
    with connect() as con:
        _doctor_counts(con, rep)
        for sql, what in _integrity_checks():
            n = con.execute(sql).fetchall()[0][0]
            if n:
                rep.problems.append(f"{n} {what}")
    return rep


def _doctor_schema(con, rep: DoctorReport) -> None:
    """The schema version, and every table and view present."""
    from logparse.store import schema

    rep.schema_version = con.execute("SELECT max(version) FROM schema_version").fetchall()[0][0]
    if rep.schema_version != schema.SCHEMA_VERSION:
        rep.problems.append(f"schema version {rep.schema_version}, expected {schema.SCHEMA_VERSION}")
    have = {
        r[0]
        for r in con.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()
    }
    for t in schema.TABLES + schema.VIEWS:
        if t not in have:
            rep.problems.append(f"missing table or view: {t}")


def _doctor_counts(con, rep: DoctorReport) -> None:
    """The rows of every table and view (a view that fails is a problem)."""
    from logparse.store import schema

    for t in schema.TABLES:
        rep.counts[t] = con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0]
    for v in schema.VIEWS:
        try:
            rep.counts[v] = con.execute(f"SELECT count(*) FROM {v}").fetchall()[0][0]
        except Exception as exc:
            rep.problems.append(f"view {v} fails: {str(exc).splitlines()[0]}")


#: ``doctor``'s consistency checks beyond the launch child tables: (SQL counting the offending rows,
#: what they are).
_INTEGRITY_CHECKS: list[tuple[str, str]] = [
    (
        "SELECT count(*) FROM launches WHERE source_id IS NULL OR source_id NOT IN (SELECT source_id FROM sources)",
        "launch(es) without a source",
    ),
    (
        "SELECT count(*) FROM launches l WHERE NOT EXISTS (SELECT 1 FROM launch_sources s "
        "WHERE s.launch_id = l.launch_id)",
        "launch(es) not linked to any source in launch_sources",
    ),
    (
        "SELECT count(*) FROM launch_sources WHERE source_id NOT IN (SELECT source_id FROM sources)",
        "launch_sources row(s) naming a missing source",
    ),
    (
        "SELECT count(*) FROM unrecognized WHERE source_id NOT IN (SELECT source_id FROM sources)",
        "unrecognized line(s) without a source",
    ),
    (
        "SELECT count(*) FROM (SELECT launch_id FROM launches GROUP BY launch_id HAVING count(*) > 1)",
        "launch id(s) stored more than once",
    ),
    (
        "SELECT count(*) FROM (SELECT source_id FROM sources GROUP BY source_id HAVING count(*) > 1)",
        "source id(s) stored more than once",
    ),
    (
        "SELECT count(*) FROM (SELECT launch_id, seq FROM events GROUP BY ALL HAVING count(*) > 1)",
        "duplicate (launch_id, seq) event(s)",
    ),
    (
        "SELECT count(*) FROM (SELECT launch_id FROM runtime_stats GROUP BY ALL HAVING count(*) > 1)",
        "launch(es) with more than one runtime_stats row",
    ),
    (
        "SELECT count(*) FROM launches l WHERE n_events IS DISTINCT FROM "
        "(SELECT count(*) FROM events e WHERE e.launch_id = l.launch_id)",
        "launch(es) whose event count disagrees with the events table",
    ),
    (
        "SELECT count(*) FROM launches l WHERE n_ranks IS DISTINCT FROM "
        "(SELECT count(*) FROM rank_memory r WHERE r.launch_id = l.launch_id)",
        "launch(es) whose rank count disagrees with rank_memory",
    ),
    (
        "SELECT count(*) FROM launches l WHERE NOT EXISTS (SELECT 1 FROM runtime_stats r "
        "WHERE r.launch_id = l.launch_id)",
        "launch(es) without a runtime_stats row",
    ),
    (
        "SELECT count(*) FROM launch_sequence q WHERE NOT EXISTS (SELECT 1 FROM launch_change c "
        "WHERE c.launch_id = q.launch_id)",
        "launch(es) without a launch_change row (history shows no change for them)",
    ),
]


def _integrity_checks() -> list[tuple[str, str]]:
    """``doctor``'s referential and consistency checks: (SQL counting the offending rows, what they are)."""
    from logparse.store import schema

    orphans = [
        (
            f"SELECT count(*) FROM {t} WHERE launch_id NOT IN (SELECT launch_id FROM launches)",
            f"{t} row(s) without a launch",
        )
        for t in schema.LAUNCH_CHILD_TABLES
    ]
    return orphans + _INTEGRITY_CHECKS
