"""LAUNCH references for the report commands.

A reference is a log file (its last launch), ``FILE#N`` (the N-th launch of the file, 1-based;
``#-1`` is the last), or a store reference (a launch_id prefix, ``@latest``, ``@-1``,
``HOST@latest``...) resolved by :func:`logparse.store.refs.resolve_launch` when the store is
available.  Files are always parsed on the fly, so every report works without a store.
"""

from __future__ import annotations

import os
import re


class RefError(Exception):
    """A reference that cannot be resolved (exit code 2)."""


class StoreUnavailable(RefError):
    """A store reference while no store is available."""


_HASH = re.compile(r"^(?P<path>.+)#(?P<n>-?\d+)$")


def split_file_ref(ref: str) -> tuple[str, int | None] | None:
    """``(path, N)`` when ``ref`` names a file (``N`` None: the last launch), else None."""
    if ref == "-":
        return ref, None
    m = _HASH.match(ref)
    if m and os.path.exists(m.group("path")):
        return m.group("path"), int(m.group("n"))
    if os.path.exists(ref):
        return ref, None
    return None


def looks_like_path(ref: str) -> bool:
    base = _HASH.match(ref).group("path") if _HASH.match(ref) else ref
    return os.sep in base or base.endswith((".log", ".txt", ".gz", ".zst", ".json", ".journal")) or base.startswith(".")


_CACHE: dict[tuple, list] = {}


def launches_of_file(path: str) -> list:
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
    launches = _parse_file(path)
    if key is not None:
        if len(_CACHE) > 32:
            _CACHE.clear()
        _CACHE[key] = launches
    return launches


def _parse_file(path: str) -> list:
    from logparse import sources
    from logparse.pipeline import parse_paths

    try:
        result = parse_paths([path])
    except sources.InputError as exc:
        raise RefError(str(exc)) from exc
    except OSError as exc:
        raise RefError(f"{path}: {exc.strerror or exc}") from exc
    return result.launches


def resolve(ref: str, db: str | None = None):
    """The :class:`~logparse.launches.model.Launch` a reference names."""
    fr = split_file_ref(ref)
    if fr is not None:
        path, n = fr
        launches = launches_of_file(path)
        if not launches:
            raise RefError(f"{path}: no SGLang launch found")
        if n is None:
            return launches[-1]
        idx = n - 1 if n > 0 else len(launches) + n
        if not 0 <= idx < len(launches):
            raise RefError(f"{path}: has {len(launches)} launch(es), no #{n}")
        return launches[idx]
    if looks_like_path(ref):
        raise RefError(f"{ref}: no such file")
    try:
        from logparse.store.refs import resolve_launch  # the store's resolver
    except ImportError as exc:
        raise StoreUnavailable(
            f"{ref}: not a file, and store references need logparse.store.refs (not available in this build)"
        ) from exc
    try:
        launch = resolve_launch(ref, db)
    except (LookupError, ValueError, FileNotFoundError) as exc:
        raise RefError(f"{ref}: {exc}") from exc
    if launch is None:
        raise RefError(f"{ref}: no such launch")
    return launch
