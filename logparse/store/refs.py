"""LAUNCH references: how commands name one launch.

* ``3f9a0c`` -- a ``launch_id`` prefix (an ambiguous prefix is an error listing the candidates);
* ``@latest`` -- the newest launch in the store; ``@-1`` the one before it, ``@-N`` N before;
* ``HOST@latest``, ``HOST@-N`` -- the same among the launches of one host;
* ``path/to/file.log`` -- a log parsed on the fly (not stored): its last launch;
  ``path/to/file.log#N`` its N-th launch (1-based).

"Newest" orders launches by start time (launches without one count as oldest), then by
the time they were ingested.  Loading from the store rebuilds a full
:class:`~logparse.launches.model.Launch` (ranks with ``extra``, ``server_args``, ``runtime``,
``warnings`` and ``events``), so reports work the same on stored and file launches.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from logparse.launches.model import Launch


class RefError(ValueError):
    """A reference that names no launch, or more than one; the CLI exits with code 2."""


_AT = re.compile(r"^(?P<host>[^@]*)@(?P<which>latest|-?\d+)$")
_ORDER = "started_at DESC NULLS LAST, ingested_at DESC, launch_id DESC"


def _from_file(ref: str) -> Launch | None:
    path, nth = ref, None
    if not os.path.exists(path) and "#" in ref:
        base, _, num = ref.rpartition("#")
        if num.isdigit() and os.path.exists(base):
            path, nth = base, int(num)
    if not os.path.exists(path):
        return None
    from logparse.pipeline import parse_paths
    from logparse.sources import InputError

    try:
        result = parse_paths([path])
    except InputError as exc:
        raise RefError(str(exc)) from None
    if not result.launches:
        raise RefError(f"{path}: no SGLang launch in this log ({result.lines.total} line(s) read)")
    if nth is None:
        return result.launches[-1]
    if not 1 <= nth <= len(result.launches):
        raise RefError(f"{path} holds {len(result.launches)} launch(es); #{nth} is out of range")
    return result.launches[nth - 1]


def resolve_launch(ref: str, db: str | None = None, *, lock_timeout: float | None = None) -> Launch:
    """The launch a reference names (see the module documentation).

    Raises :class:`RefError` for a reference that names nothing (or several launches), and
    :class:`logparse.store.StoreError` for a problem with the store itself.
    """
    ref = (ref or "").strip()
    if not ref:
        raise RefError("empty launch reference")
    m = _AT.match(ref)
    if m is None:
        launch = _from_file(ref)
        if launch is not None:
            return launch
        if not re.fullmatch(r"[0-9a-fA-F]{1,64}", ref):
            raise RefError(f"{ref!r} is neither a log file, a launch id prefix, nor @latest / @-N / HOST@latest")
    from logparse.store import Store
    from logparse.store.load import fetch_launches

    store = Store(db) if lock_timeout is None else Store(db, lock_timeout=lock_timeout)
    with store.connect() as con:
        if m is not None:
            host = m.group("host")
            which = m.group("which")
            back = 0 if which == "latest" else abs(int(which))
            where, params = "", []
            if host:
                where = "WHERE host = ?"
                params.append(host)
            rows = con.execute(
                f"SELECT launch_id FROM launches {where} ORDER BY {_ORDER} LIMIT 1 OFFSET {back}", params
            ).fetchall()
            if not rows:
                n = con.execute(f"SELECT count(*) FROM launches {where}", params).fetchall()[0][0]
                who = f" of host {host}" if host else ""
                if not n:
                    raise RefError(f"no launch{who} in the store {store.path}")
                raise RefError(f"{ref}: only {n} launch(es){who} in the store")
            lid = rows[0][0]
        else:
            rows = con.execute(
                "SELECT launch_id, host, started_at, model_path FROM launches "
                f"WHERE launch_id LIKE ? ORDER BY {_ORDER}",
                [ref.lower() + "%"],
            ).fetchall()
            if not rows:
                raise RefError(f"no launch id starts with {ref!r} in the store {store.path}")
            if len(rows) > 1:
                listing = "; ".join(
                    f"{r[0]} ({r[1] or 'no host'}, {r[2] or 'no start time'}, {r[3] or '?'})" for r in rows[:10]
                )
                more = f" and {len(rows) - 10} more" if len(rows) > 10 else ""
                raise RefError(f"launch id prefix {ref!r} is ambiguous: {len(rows)} launches match: {listing}{more}")
            lid = rows[0][0]
        loaded = fetch_launches(con, [lid])
    return loaded[lid][0]


def is_file_ref(ref: str) -> bool:
    if os.path.exists(ref):
        return True
    base, _, num = ref.rpartition("#")
    return bool(base) and num.isdigit() and Path(base).exists()
