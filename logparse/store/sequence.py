"""The order of the launches of a deployment, and each launch's previous launch.

One rule, kept here: launches of a deployment are ordered by their start time (launches without
one first: a log with no dates, in the order they were ingested, then by their place in their
input), then by id.  Launches that began at the same moment in the same process (the same start
time, and the same pid and boot where the log names them) are **one start** seen more than once:
a damaged or partial copy of its log, the nodes of one multi-node launch.  Their identity keeps
them apart (their first lines differ), but they are not restarts of each other: the one with the
most lines (then the smaller id) is the start; the others have no ``launch_no``, their
``same_start_as`` names it, and their ``prev_launch_id`` is it (so ``launch_change`` says how each
copy differs from it); ``history`` and ``check`` count the start once.  The store persists
the result in ``launch_sequence`` (``launch_no``, ``prev_launch_id``), refreshed in the same
transaction as every write that can change it: a launch added, updated in place (its start time or
deployment may change), merged away, an older launch ingested later (which changes its
neighbour's previous launch), or a store imported.  ``history`` and ``check`` read it.  Each
launch's change against its previous launch (``launch_change``, :mod:`logparse.store.changes`) is
refreshed with it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from logparse.store import changes

#: SQL ORDER BY of launches within a deployment (the ingest time only orders launches without a start
#: time: of launches with one, the order does not depend on the order they were ingested in).
ORDER_SQL = (
    "started_at NULLS FIRST, CASE WHEN started_at IS NULL THEN ingested_at END, "
    "CASE WHEN started_at IS NULL THEN source_ordinal END, launch_id"
)


def order_key(started_at: str | None, ingested_at: Any = None, launch_id: str = "") -> tuple:
    """The same order in Python (for launches read from files, which have no ingest time)."""
    when = "" if started_at is not None else str(ingested_at or "")
    return (started_at is not None, (started_at or "").replace("T", " "), when, launch_id)


#: Each launch's start: itself, or the launch it is another copy of (same deployment, start time, pid, boot).
_STARTS_SQL = """
WITH l AS (
    SELECT launch_id, deployment, started_at, ingested_at, source_ordinal,
        CASE WHEN started_at IS NULL THEN launch_id ELSE first_value(launch_id) OVER (
            PARTITION BY deployment, started_at, pid, boot ORDER BY n_events DESC, launch_id) END AS start_id
    FROM launches {where}
),
starts AS (
    SELECT launch_id, deployment, row_number() OVER w AS launch_no, lag(launch_id) OVER w AS prev_launch_id
    FROM l WHERE start_id = launch_id
    WINDOW w AS (PARTITION BY deployment ORDER BY {order})
)
SELECT launch_id, deployment, launch_no, prev_launch_id, NULL AS same_start_as FROM starts
UNION ALL
SELECT l.launch_id, l.deployment, NULL, l.start_id, l.start_id FROM l WHERE l.start_id <> l.launch_id
"""


def refresh(con, deployments: Iterable[str] | None = None, *, with_changes: bool = True) -> None:
    """Recompute ``launch_sequence`` for these deployments (all when None), inside the caller's
    transaction, and with ``with_changes`` each launch's change (``launch_change``) in them."""
    deps: list[str] | None = None
    if deployments is None:
        con.execute("DELETE FROM launch_sequence")
        where, params = "", []
    else:
        deps = sorted({d for d in deployments if d is not None})
        if not deps:
            return
        con.execute("DELETE FROM launch_sequence WHERE deployment IN (SELECT unnest(?::VARCHAR[]))", [deps])
        where, params = "WHERE deployment IN (SELECT unnest(?::VARCHAR[]))", [deps]
    have = {r[0] for r in con.execute("SELECT * FROM launch_sequence LIMIT 0").description}
    if "same_start_as" in have:
        sql = "INSERT INTO launch_sequence (launch_id, deployment, launch_no, prev_launch_id, same_start_as) "
        sql += _STARTS_SQL.format(where=where, order=ORDER_SQL)
    else:  # a migration before the column (10) ran: its rule then
        sql = (
            "INSERT INTO launch_sequence (launch_id, deployment, launch_no, prev_launch_id) SELECT launch_id, "
            f"deployment, row_number() OVER w, lag(launch_id) OVER w FROM launches {where} "
            f"WINDOW w AS (PARTITION BY deployment ORDER BY {ORDER_SQL})"
        )
    con.execute(sql, params)
    if with_changes:
        changes.refresh(con, deps)


def deployments_of(con, launch_ids: Iterable[str]) -> set[str]:
    ids = sorted(set(launch_ids))
    if not ids:
        return set()
    rows = con.execute(
        "SELECT DISTINCT deployment FROM launches WHERE launch_id IN (SELECT unnest(?::VARCHAR[]))", [ids]
    ).fetchall()
    return {r[0] for r in rows}
