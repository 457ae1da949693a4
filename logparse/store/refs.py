"""LAUNCH references: how every command names one launch (one resolver, one error type).

* ``path/to/file.log`` -- a log parsed on the fly (not stored): its last launch;
  ``FILE#N`` its N-th launch (1-based), ``FILE#-1`` the last, ``FILE#-2`` the one before;
  ``-`` reads stdin;
* ``3f9a0c`` -- a ``launch_id`` prefix (an id the store gave out earlier, now an alias of the launch
  it merged into, resolves too; an ambiguous prefix is an error listing the candidates);
* ``@latest`` -- the newest launch in the store;
* ``@-N`` -- the N-th from the newest, as Python and ``FILE#-N`` count: ``@-1`` is the newest (the
  same as ``@latest``), ``@-2`` the one before it; ``@N`` the N-th from the oldest (``@1`` the
  oldest), as ``FILE#N``; there is no ``@0``;
* ``HOST@latest``, ``HOST@-N``, ``HOST@N`` -- the same among the launches of one host.

``@-1`` used to name the launch *before* the newest (and ``@N`` the same as ``@-N``), unlike
``FILE#-1``; the form still resolves, under its new meaning, and :func:`ref_notes` gives the line
that says so, which the commands print on stderr.

"Newest" orders launches by start time (launches without one count as oldest), then by the time
they were ingested.  Loading from the store rebuilds a full
:class:`~logparse.launches.model.Launch` (ranks with ``extra``, ``server_args``, ``runtime``,
``warnings`` and ``events``), so reports work the same on stored and file launches.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from logparse import engines
from logparse.launches.model import Launch
from logparse.store import model_configs


class RefError(ValueError):
    """A reference that names no launch, or more than one (exit code 2)."""


_AT = re.compile(r"^(?P<host>[^@]*)@(?P<which>latest|-?\d+)$")
_HASH = re.compile(r"^(?P<path>.+)#(?P<n>-?\d+)$")
_ID = re.compile(r"[0-9a-fA-F]{1,64}")
_NEWEST_FIRST = "started_at DESC NULLS LAST, ingested_at DESC, launch_id DESC"
_OLDEST_FIRST = "started_at ASC NULLS FIRST, ingested_at ASC, launch_id ASC"
_LOG_SUFFIXES = (".log", ".txt", ".gz", ".zst", ".json", ".journal")


def split_file_ref(ref: str) -> tuple[str, int | None] | None:
    """``(path, N)`` when ``ref`` names a file (``N`` None: the last launch), else None."""
    if ref == "-":
        return ref, None
    if os.path.exists(ref):
        return ref, None
    m = _HASH.match(ref)
    if m and os.path.exists(m.group("path")):
        return m.group("path"), int(m.group("n"))
    return None


def _looks_like_path(ref: str) -> bool:
    m = _HASH.match(ref)
    base = m.group("path") if m else ref
    return os.sep in base or base.endswith(_LOG_SUFFIXES) or base.startswith(".")


_CACHE: dict[tuple, list[Launch]] = {}


def launches_of_file(path: str) -> list[Launch]:
    """The launches of one log file (cached per path, size and mtime within a process)."""
    key = None
    if path != "-":
        try:
            st = os.stat(path)
            key = (os.path.realpath(path), st.st_size, st.st_mtime_ns)
        except OSError:
            key = None
    if key is not None and key in _CACHE:
        return _CACHE[key]
    from logparse.pipeline import parse_paths
    from logparse.sources import InputError

    try:
        launches = parse_paths([path]).launches
    except InputError as exc:
        raise RefError(str(exc)) from None
    except OSError as exc:
        raise RefError(f"{path}: {exc.strerror or exc}") from None
    for launch in launches:  # a model's config beside the log is used as ingest would have kept it
        launch.model_config = model_configs.config_beside(path if path != "-" else None, launch.model_path)
    if key is not None:
        if len(_CACHE) > 32:
            _CACHE.clear()
        _CACHE[key] = launches
    return launches


def _nth(path: str, launches: list[Launch], n: int | None) -> Launch:
    if not launches:
        raise RefError(f"{path}: no {engines.labels()} launch in this log")
    if n is None:
        return launches[-1]
    idx = n - 1 if n > 0 else len(launches) + n
    if n == 0 or not 0 <= idx < len(launches):
        raise RefError(f"{path} holds {len(launches)} launch(es); #{n} is out of range")
    return launches[idx]


def resolve_launch(ref: str, db: str | os.PathLike | None = None, *, lock_timeout: float | None = None) -> Launch:
    """The launch a reference names (see the module documentation).

    Raises :class:`RefError` for a reference that names nothing (or several launches), and
    :class:`logparse.store.db.StoreError` for a problem with the store itself.
    """
    return resolve_launches([ref], db, lock_timeout=lock_timeout)[0]


def resolve_launches(
    refs: list[str], db: str | os.PathLike | None = None, *, lock_timeout: float | None = None
) -> list[Launch]:
    """The launches references name, in order (:func:`resolve_launch`): the stored ones read
    through one connection (opening the store is most of a small read's time)."""
    out: list[Launch | None] = []
    stored: list[tuple[int, str, Any]] = []
    for ref in refs:
        ref = (ref or "").strip()
        if not ref:
            raise RefError("empty launch reference")
        at = _AT.match(ref)
        if at is None:
            file_ref = split_file_ref(ref)
            if file_ref is not None:
                out.append(_nth(file_ref[0], launches_of_file(file_ref[0]), file_ref[1]))
                continue
            if _looks_like_path(ref) or not _ID.fullmatch(ref):
                raise RefError(f"{ref}: no such file, and not a launch id prefix, @latest, @-N, @N or HOST@latest")
        stored.append((len(out), ref, at))
        out.append(None)
    if stored:
        for (k, _, _), launch in zip(stored, _from_store(stored, db, lock_timeout)):
            out[k] = launch
    return [launch for launch in out if launch is not None]


def _from_store(refs: list[tuple[int, str, Any]], db, lock_timeout: float | None) -> list[Launch]:
    from logparse.store import db as dbm
    from logparse.store.load import fetch_launches, read_line_ranges

    path = dbm.resolve_db_path(db)
    timeout = dbm.DEFAULT_LOCK_TIMEOUT if lock_timeout is None else lock_timeout
    try:
        with dbm.connection(path, write=False, lock_timeout=timeout) as con:
            lids = [
                _newest(con, ref, at, path) if at is not None else _by_prefix(con, ref, path) for _, ref, at in refs
            ]
            found = fetch_launches(con, list(dict.fromkeys(lids)))
            read_line_ranges(con, [launch for launch, _ in found.values()])
            _attach_configs(con, [launch for launch, _ in found.values()])
            return [found[lid][0] for lid in lids]
    except dbm.StoreMissing:
        raise RefError(
            f"{refs[0][1]} names a stored launch, but there is no store at {path} (ingest first, or --db)"
        ) from None


def _attach_configs(con, launches: list[Launch]) -> None:
    """Each launch's model config kept by ingest (a store older than ``model_configs`` has none)."""
    import duckdb

    for launch in launches:
        try:
            launch.model_config = model_configs.stored_config(con, launch.model_path)
        except duckdb.CatalogException:
            return


def _newest(con, ref: str, at, path: Path) -> str:
    host, which = at.group("host"), at.group("which")
    order, offset = _position(ref, which)
    where, params = ("WHERE host = ?", [host]) if host else ("", [])
    rows = con.execute(
        f"SELECT launch_id FROM launches {where} ORDER BY {order} LIMIT 1 OFFSET {offset}", params
    ).fetchall()
    if rows:
        return rows[0][0]
    n = con.execute(f"SELECT count(*) FROM launches {where}", params).fetchall()[0][0]
    who = f" of host {host}" if host else ""
    if not n:
        raise RefError(f"no launch{who} in the store {path}")
    raise RefError(f"{ref}: only {n} launch(es){who} in the store (@-1 the newest, @-{n} the oldest)")


def _position(ref: str, which: str) -> tuple[str, int]:
    """The order and the offset in it of ``@latest``, ``@-N`` (from the newest) or ``@N`` (from the oldest)."""
    if which == "latest":
        return _NEWEST_FIRST, 0
    n = int(which)
    if n == 0:
        raise RefError(f"{ref}: launches count from -1 (the newest) back, or from 1 (the oldest) on; there is no @0")
    return (_NEWEST_FIRST, -n - 1) if n < 0 else (_OLDEST_FIRST, n - 1)


def ref_notes(refs: list[str]) -> list[str]:
    """What to tell the user about references whose meaning changed (once per command): ``@-N``
    and ``@N`` count as Python and ``FILE#N`` do (``@-1`` used to be the one before the newest)."""
    changed = [r.strip() for r in refs if r and (at := _AT.match(r.strip())) and at.group("which") != "latest"]
    if not changed:
        return []
    return [
        f"note: {', '.join(dict.fromkeys(changed))}: @-N counts from the newest launch as FILE#-N does "
        "(@-1 is the newest, @-2 the one before it; @N counts from the oldest); @-1 used to be the "
        "one before the newest"
    ]


def _by_prefix(con, ref: str, path: Path) -> str:
    prefix = ref.lower() + "%"
    rows = con.execute(
        "SELECT DISTINCT l.launch_id, l.host, l.started_at, l.model_path, l.ingested_at FROM launches l "
        "WHERE l.launch_id LIKE ? OR l.launch_id IN (SELECT launch_id FROM launch_aliases WHERE alias LIKE ?) "
        f"ORDER BY {_NEWEST_FIRST}",
        [prefix, prefix],
    ).fetchall()
    if not rows:
        raise RefError(f"no launch id starts with {ref!r} in the store {path}")
    if len(rows) > 1:
        listing = "; ".join(
            f"{r[0]} ({r[1] or 'no host'}, {r[2] or 'no start time'}, {r[3] or '?'})" for r in rows[:10]
        )
        more = f" and {len(rows) - 10} more" if len(rows) > 10 else ""
        raise RefError(f"launch id prefix {ref!r} is ambiguous: {len(rows)} launches match: {listing}{more}")
    return rows[0][0]
