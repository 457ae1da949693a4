"""A launch's place in its deployment's history, read from the store.

``check`` judges a launch against the launches of its deployment that came before it: the
previous one is its baseline, the earlier ones the history of its noisy metrics.  Both come from
``launch_sequence`` (:mod:`logparse.store.sequence`, the one order rule) and ``launch_budget``
(the persisted :func:`~logparse.budget.model.launch_budget`), so they are exactly what ``history``
shows.  A launch that is not in the store (a file) is placed by the same rule.
"""

from __future__ import annotations

from typing import Any

from logparse.launches.deployment import deployment_key
from logparse.launches.model import Launch
from logparse.store import sequence

_BUDGET_ROWS = """
SELECT q.launch_id, q.launch_no, l.outcome, CAST(l.started_at AS VARCHAR) AS started_at, l.ingested_at, b.*
       EXCLUDE (launch_id, outcome)
FROM launch_sequence q JOIN launches l USING (launch_id) LEFT JOIN launch_budget b USING (launch_id)
WHERE q.deployment = ? AND q.launch_no IS NOT NULL {cut}
ORDER BY q.launch_no
"""


def _rows(con, sql: str, params: list) -> list[dict[str, Any]]:
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def earlier_launches(con, launch: Launch) -> tuple[str, list[dict[str, Any]]]:
    """(the launch's deployment, the budget rows of the launches of it before this one, oldest first)."""
    row = con.execute(
        "SELECT deployment, coalesce(launch_no, (SELECT s.launch_no FROM launch_sequence s "
        "WHERE s.launch_id = q.same_start_as)) FROM launch_sequence q WHERE launch_id = ?",
        [launch.launch_id],
    ).fetchall()
    if row:
        dep, no = row[0]
        return dep, _rows(con, _BUDGET_ROWS.format(cut="AND q.launch_no < ?"), [dep, no])
    dep = deployment_key(launch)
    rows = _rows(con, _BUDGET_ROWS.format(cut=""), [dep])
    mine = sequence.order_key(launch.started_at, None, launch.launch_id)
    if launch.started_at is None:
        return dep, rows
    return dep, [r for r in rows if sequence.order_key(r["started_at"], r["ingested_at"], r["launch_id"]) < mine]
