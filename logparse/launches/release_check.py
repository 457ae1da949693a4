"""A release name given by the user, checked against the engine's release list.

``--sglang-version`` and ``plan --release`` take a release of SGLang or vLLM.  A name is read
with :mod:`packaging.version` (PEP 440), so the spellings pip accepts for a release are accepted
too (``v0.5.10``, ``0.5.10-post1``, ``0.5.10post1`` and ``0.5.10.post1`` are one release;
``0.5.0-rc2`` is ``0.5.0rc2``), and must then be a release of the engine's list
(:meth:`logparse.engines.base.Engine.releases`).
A development or local build (``0.5.11.dev3``, ``0.18.2rc1.dev73+gdb7a17ecc``) is accepted when
it falls within the list: it sits between two known releases, as the logs' own dev builds do.
Anything else is refused with one line naming the closest releases.
"""

from __future__ import annotations

import difflib

from logparse import engines


class UnknownRelease(ValueError):
    """A release name that is not a release of the engine logparse knows (the message says why)."""


def release_list(engine: str) -> tuple[str, ...]:
    """The releases of the engine called ``engine`` (:meth:`~logparse.engines.base.Engine.releases`),
    oldest first; :class:`ValueError` for a name no engine has."""
    try:
        return engines.get(engine).releases()
    except engines.UnknownEngine as exc:
        raise ValueError(str(exc)) from None


def check_release(engine: str, name: str, *, builds: bool = True) -> str:
    """The release ``name`` stands for, in the list's own spelling; :class:`UnknownRelease` if none.
    ``builds``: a development or local build within the list is accepted too (as itself)."""
    from packaging.version import InvalidVersion, Version

    names = release_list(engine)
    label = engines.label(engine)
    if not names:
        raise UnknownRelease(f"{name}: logparse knows no {label} release")
    try:
        given = Version(name.strip())
    except InvalidVersion:
        raise UnknownRelease(_refusal(label, name, names, "not a version number")) from None
    known = {Version(n): n for n in names}
    if given in known:
        return known[given]
    first, last = Version(names[0]), Version(names[-1])
    build = given.is_devrelease or given.local is not None
    if builds and build and first <= given <= last:
        return str(given)
    if given > last:
        why = f"newer than every {label} release logparse knows"
    elif given < first:
        why = f"older than every {label} release logparse knows"
    else:
        why = f"not {engines.get(engine).article} {label} release"
    raise UnknownRelease(_refusal(label, name, names, why))


def close_releases(name: str, names: tuple[str, ...], n: int = 3) -> list[str]:
    """The releases nearest ``name``: the one before it and those after it in release order when it
    reads as a version, else the names spelled most alike (none when nothing is alike)."""
    from packaging.version import InvalidVersion, Version

    try:
        given = Version(name.strip())
    except InvalidVersion:
        return difflib.get_close_matches(name.strip(), names, n=n, cutoff=0.6)
    below = [v for v in names if Version(v) < given]
    above = [v for v in names if Version(v) > given]
    return below[-1:] + above[: n - 1] if above else below[-n:]


def _refusal(label: str, name: str, names: tuple[str, ...], why: str) -> str:
    close = close_releases(name, names)
    hint = f"closest: {', '.join(close)}" if close else f"newest: {', '.join(names[-3:])}"
    return f"{name}: {why} (known {label} releases: {names[0]} – {names[-1]}; {hint})"
