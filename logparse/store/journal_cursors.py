"""Journal cursors of the store: where the next ``--journal`` run resumes.

The last ``__CURSOR`` read per (host, unit) of a journal query is kept in the ``journal_cursors``
table under the query's scope (:func:`journal_scope`: unit, directory, file); the next run of the
same query reads only what came after the oldest of them (:func:`stored_cursor`).
"""

from __future__ import annotations

from datetime import datetime

from logparse.store.rows import values_sql


def cursor_realtime(cursor: str) -> int | None:
    for part in cursor.split(";"):
        if part.startswith("t="):
            try:
                return int(part[2:], 16)
            except ValueError:
                return None
    return None


def journal_scope(unit: str | None, directory: str | None, jfile: str | None) -> str:
    return f"unit={unit or '*'};directory={directory or ''};file={jfile or ''}"


def stored_cursor(con, scope: str, host: str | None = None) -> str | None:
    """The cursor to resume a journal query from: the oldest of its (host, unit) cursors."""
    rows = con.execute("SELECT cursor, realtime_us, host FROM journal_cursors WHERE scope = ?", [scope]).fetchall()
    rows = [r for r in rows if host is None or r[2] == host]
    if not rows:
        return None
    rows.sort(key=lambda r: (r[1] is None, r[1] or 0))
    return rows[0][0]


def save_cursors(con, scope: str, cursors: dict[tuple, str], now: datetime) -> None:
    if not cursors:
        return
    values = list(cursors.values())
    cur = values_sql({"host": "str", "unit": "str", "cursor": "str", "realtime_us": "int"})
    cols = [[h for h, _ in cursors], [u for _, u in cursors], values, [cursor_realtime(c) for c in values]]
    con.execute(
        f"DELETE FROM journal_cursors WHERE scope = ? AND (host, unit) IN (SELECT (host, unit) FROM ({cur}))",
        [scope, *cols],
    )
    con.execute(
        "INSERT INTO journal_cursors (host, unit, cursor, updated_at, scope, realtime_us) "
        f"SELECT host, unit, cursor, ?, ?, realtime_us FROM ({cur})",
        [now, scope, *cols],
    )
