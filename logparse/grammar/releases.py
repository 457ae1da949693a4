"""Release lines: the ordered releases of an engine and the ranges over them, for every engine.

A range is a pair of release names ``(first, last)`` over an engine's ordered list, both inclusive;
``None`` means "no information", ``("", "")`` a contradiction.  Release names compare as PEP 440
orders them (:func:`release_key`).  An engine's own list and what dates a log to it live with the
engine (``logparse.engines.<engine>.versions``).
"""

from __future__ import annotations

import re
from functools import lru_cache

from packaging.version import InvalidVersion, Version

Range = tuple[str, str]


class ReleaseLine:
    """The ordered releases of one engine, and the release ranges over them (both ends inclusive).

    ``None`` as a range means "no information" and is neutral; ``("", "")`` is a contradiction, which
    the caller reports."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.releases = names
        self._index = {v: i for i, v in enumerate(names)}

    def is_release(self, version: str | None) -> bool:
        return version in self._index

    def index(self, version: str) -> int:
        """Position of a release; another name (a dev build) is placed on the release it follows."""
        if version in self._index:
            return self._index[version]
        key = release_key(version)
        pos = 0
        for i, v in enumerate(self.releases):
            if release_key(v) <= key:
                pos = i
        return pos

    def intersect(self, a: Range | None, b: Range | None) -> Range | None:
        if a is None:
            return b
        if b is None:
            return a
        lo, hi = max(self.index(a[0]), self.index(b[0])), min(self.index(a[1]), self.index(b[1]))
        if lo > hi:
            return ("", "")
        return (self.releases[lo], self.releases[hi])

    def in_range(self, version: str, r: Range) -> bool:
        return self.index(r[0]) <= self.index(version) <= self.index(r[1])

    def at_least(self, version: str, release: str) -> bool:
        return self.index(version) >= self.index(release)

    def narrow(self, evidence: list[tuple[str, Range]]) -> tuple[Range | None, list[str], list[str]]:
        """The releases that pieces of evidence ``(why, range)`` agree on, taken in order: (the range,
        what was used, a warning for each piece that contradicts the earlier ones and is left out)."""
        rng: Range | None = None
        used: list[str] = []
        warnings: list[str] = []
        for why, r in evidence:
            new = self.intersect(rng, r)
            if is_empty(new):
                warnings.append(
                    f"version evidence disagrees: {why} says {format_range(r)}, earlier evidence says "
                    f"{format_range(rng)} (a dev build or a patched image?)"
                )
                continue
            rng = new
            used.append(f"{why}: {format_range(r)}")
        return rng, used, warnings


def is_empty(r: Range | None) -> bool:
    """Is ``r`` a contradiction (two pieces of evidence that no release satisfies together)?"""
    return r is not None and r == ("", "")


def format_range(r: Range | None) -> str | None:
    if r is None or is_empty(r):
        return None
    return r[0] if r[0] == r[1] else f"{r[0]}–{r[1]}"


#: The leading PEP 440 part of a name that is not PEP 440 as a whole (``0.5.10-custom``, ``v0.4.7``).
_LEADING_RELEASE = re.compile(r"v?(\d+(?:\.\d+)*(?:(?:a|b|rc)\d*)?(?:\.post\d*)?(?:\.dev\d*)?)", re.I)


@lru_cache(maxsize=4096)
def release_key(version: str) -> Version:
    """Sort key of a release name of any engine, as PEP 440 orders them (``packaging.version``):
    ``0.5.0rc2`` < ``0.5.1`` < ``0.5.1.post1``; a build between releases (``0.18.2rc1.dev73+gdb7a17ecc``)
    sits just below the release it leads to.  A name that is not PEP 440 (a fork's ``0.5.10-custom``) is
    placed by its leading release (``0.5.10``), and a name without one before every release."""
    try:
        return Version(version)
    except InvalidVersion:
        m = _LEADING_RELEASE.match(version.strip())
        return Version(m.group(1)) if m else Version("0")


# --------------------------------------------------------------------------- launch argument defaults


class _Marker:
    """A default that is not a value: see :data:`DERIVED`, :data:`MISSING`, :data:`REQUIRED`."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self) -> str:
        return self.name


#: The default is computed at runtime (declared ``None`` and filled in by SGLang's argument
#: resolution, e.g. ``mem_fraction_static`` from the GPU's memory, or not a literal at all).
DERIVED = _Marker("DERIVED")
#: The release has no such field.
MISSING = _Marker("MISSING")
#: The field has no default (``model_path``).
REQUIRED = _Marker("REQUIRED")
