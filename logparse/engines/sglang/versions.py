"""SGLang releases: their order, and dating a log from what it prints.

SGLang never prints its own version.  Two things in a log narrow it down:

* the wording of each line: every grammar variant carries the release range in
  which SGLang prints it (``logparse.engines.sglang.variants``);
* the field set of ``server_args=``: every release has its own ServerArgs field
  set (replayed from the catalogue's Appendix A into ``data/sglang_versions.json``).

A range is a pair of release names ``(first, last)`` over the ordered PyPI list,
both inclusive.  Dev builds fall between releases; then the field set matches no
release exactly and we report the closest ones.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources

from packaging.version import InvalidVersion, Version

Range = tuple[str, str]


@lru_cache(maxsize=1)
def _data() -> dict:
    with resources.files("logparse.data").joinpath("sglang_versions.json").open("r") as fh:
        return json.load(fh)


@lru_cache(maxsize=1)
def releases() -> tuple[str, ...]:
    """Every analysed PyPI release, oldest first."""
    return tuple(_data()["versions"])


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


@lru_cache(maxsize=1)
def sglang() -> ReleaseLine:
    """SGLang's releases."""
    return ReleaseLine(releases())


def index(version: str) -> int:
    """Position of an SGLang release in the ordered list; unknown names are placed by numeric order."""
    return sglang().index(version)


#: The leading PEP 440 part of a name that is not PEP 440 as a whole (``0.5.10-custom``, ``v0.4.7``).
_LEADING_RELEASE = re.compile(r"v?(\d+(?:\.\d+)*(?:(?:a|b|rc)\d*)?(?:\.post\d*)?(?:\.dev\d*)?)", re.I)


@lru_cache(maxsize=4096)
def release_key(version: str) -> Version:
    """Sort key of a release name, SGLang's or vLLM's, as PEP 440 orders them (``packaging.version``):
    ``0.5.0rc2`` < ``0.5.1`` < ``0.5.1.post1``; a build between releases (``0.18.2rc1.dev73+gdb7a17ecc``)
    sits just below the release it leads to.  A name that is not PEP 440 (a fork's ``0.5.10-custom``) is
    placed by its leading release (``0.5.10``), and a name without one before every release."""
    try:
        return Version(version)
    except InvalidVersion:
        m = _LEADING_RELEASE.match(version.strip())
        return Version(m.group(1)) if m else Version("0")


def first() -> str:
    return releases()[0]


def last() -> str:
    return releases()[-1]


def intersect(a: Range | None, b: Range | None) -> Range | None:
    """Intersection of two ranges of SGLang releases; ``None`` means "no information" and is neutral."""
    return sglang().intersect(a, b)


def in_range(version: str, r: Range) -> bool:
    return sglang().in_range(version, r)


@lru_cache(maxsize=1)
def field_sets() -> dict[str, frozenset[str]]:
    out: dict[str, frozenset[str]] = {}
    cur: set[str] = set()
    changes = _data()["changes"]
    for v in releases():
        cur = (cur - set(changes[v]["-"])) | set(changes[v]["+"])
        out[v] = frozenset(cur)
    return out


def date_field_set(keys: set[str] | frozenset[str]) -> tuple[Range | None, bool]:
    """Release range whose ServerArgs field set equals ``keys``.

    Returns ``(range, exact)``.  When no release matches exactly (a dev build, or a
    field set we have not seen), the releases with the smallest symmetric
    difference are returned with ``exact=False``.
    """
    keys = frozenset(k for k in keys if k)
    if not keys:
        return None, False
    sets = field_sets()
    exact = [v for v in releases() if sets[v] == keys]
    if exact:
        return (exact[0], exact[-1]), True
    scored = [(len(sets[v] ^ keys), v) for v in releases()]
    best = min(s for s, _ in scored)
    # A field set far from every release is no evidence at all (e.g. a truncated line).
    if best > max(8, len(keys) // 10):
        return None, False
    close = [v for s, v in scored if s == best]
    return (close[0], close[-1]), False


def date_field_subset(keys: set[str] | frozenset[str]) -> Range | None:
    """Release range of the releases whose ServerArgs has every field of ``keys``: the dating
    of a ``server_args`` line cut short (the fields it shows are some of the release's)."""
    keys = frozenset(k for k in keys if k)
    if not keys:
        return None
    sets = field_sets()
    having = [v for v in releases() if keys <= sets[v]]
    return (having[0], having[-1]) if having else None


def default_mem_fraction_static(version_range: Range | None, tp_size: int) -> float | None:
    """The fraction SGLang picks when ``--mem-fraction-static`` is not given (catalogue §4.5).

    Only the tp-size tables of old releases are deterministic; from 0.4.7.post1 the
    value depends on the GPU, and the log's ``server_args`` carries the resolved value.
    """
    if version_range is None:
        return None
    hi = version_range[1]
    tables = [  # (last release, fraction for tp >= 16, >= 8, >= 4, >= 2, else), from ServerArgs.__post_init__
        ("0.1.4", (0.80, 0.80, 0.80, 0.80, 0.90)),
        ("0.1.19", (0.80, 0.80, 0.82, 0.85, 0.90)),
        ("0.1.20", (0.78, 0.78, 0.80, 0.85, 0.88)),
        ("0.1.22", (0.74, 0.78, 0.82, 0.85, 0.88)),
        ("0.2.6", (0.80, 0.84, 0.86, 0.88, 0.89)),
        ("0.3.5.post2", (0.79, 0.83, 0.85, 0.87, 0.88)),
        ("0.3.6.post3", (0.79, 0.82, 0.85, 0.87, 0.88)),
        ("0.4.7", (0.79, 0.81, 0.85, 0.87, 0.88)),
    ]
    for until, table in tables:
        if index(hi) <= index(until):
            if tp_size >= 16:
                return table[0]
            if tp_size >= 8:
                return table[1]
            if tp_size >= 4:
                return table[2]
            if tp_size >= 2:
                return table[3]
            return table[4]
    return None


# --------------------------------------------------------------------------- ServerArgs defaults


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


@lru_cache(maxsize=1)
def _defaults_data() -> dict:
    with resources.files("logparse.data").joinpath("sglang_server_args_defaults.json").open("r") as fh:
        return json.load(fh)


@lru_cache(maxsize=1)
def _defaults_index() -> dict[str, int]:
    return {v: i for i, v in enumerate(_defaults_data()["releases"])}


def default_releases() -> tuple[str, ...]:
    """The releases whose ServerArgs defaults were read (oldest first)."""
    return tuple(_defaults_data()["releases"])


def default_of(field: str, release: str):
    """The ``ServerArgs`` default of ``field`` in SGLang ``release``.

    Returns the literal default as JSON gives it (tuples and sets as lists), or
    :data:`DERIVED`, :data:`MISSING` (no such field in that release) or :data:`REQUIRED`.
    Data: ``data/sglang_server_args_defaults.json``, built from every release's own
    ``server_args.py`` by ``tools/build_server_args_defaults.py``.  Raises ``ValueError``
    for a release that was not read.
    """
    idx = _defaults_index()
    if release not in idx:
        raise ValueError(f"no ServerArgs defaults for SGLang {release!r}")
    if release in _defaults_data()["unreadable"]:
        raise ValueError(f"SGLang {release}: server_args.py could not be read")
    i = idx[release]
    for run in _defaults_data()["fields"].get(field, ()):
        if idx[run[0]] <= i <= idx[run[1]]:
            code = run[2]
            if code == "v":
                return run[3]
            return DERIVED if code == "d" else REQUIRED
    return MISSING


def defaults_of(release: str) -> dict[str, object]:
    """Every field of ``release`` with its default (as :func:`default_of`)."""
    out = {}
    for field in _defaults_data()["fields"]:
        value = default_of(field, release)
        if value is not MISSING:
            out[field] = value
    return out
