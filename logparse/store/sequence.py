"""The order of the launches of a deployment, and each launch's previous launch.

One rule, kept here: launches of a deployment are ordered by their start time (launches without
one first: a log with no dates), then by when they were ingested, then by id.  The store persists
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

#: SQL ORDER BY of launches within a deployment.
ORDER_SQL = "started_at NULLS FIRST, ingested_at, launch_id"


def order_key(started_at: str | None, ingested_at: Any = None, launch_id: str = "") -> tuple:
    """The same order in Python (for launches read from files, which have no ingest time)."""
    return (started_at is not None, (started_at or "").replace("T", " "), str(ingested_at or ""), launch_id)


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
    con.execute(
        f"""
        INSERT INTO launch_sequence (launch_id, deployment, launch_no, prev_launch_id)
        SELECT launch_id, deployment, row_number() OVER w, lag(launch_id) OVER w
        FROM launches {where}
        WINDOW w AS (PARTITION BY deployment ORDER BY {ORDER_SQL})
        """,
        params,
    )
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
