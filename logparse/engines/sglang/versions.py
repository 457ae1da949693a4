"""SGLang releases: their order, and dating a log from what it prints.

SGLang never prints its own version.  Two things in a log narrow it down:

* the wording of each line: every grammar variant carries the release range in
  which SGLang prints it (``logparse.engines.sglang.variants``);
* the field set of ``server_args=``: every release has its own ServerArgs field
  set (replayed from the catalogue's Appendix A into ``grammars/sglang/versions.json``).

A range is a pair of release names ``(first, last)`` over the ordered PyPI list,
both inclusive.  Dev builds fall between releases; then the field set matches no
release exactly and we report the closest ones.
"""

from __future__ import annotations

from functools import lru_cache

from logparse.data import tables
from logparse.grammar.releases import (
    DERIVED as DERIVED,
)
from logparse.grammar.releases import (
    MISSING as MISSING,
)
from logparse.grammar.releases import (
    REQUIRED as REQUIRED,
)
from logparse.grammar.releases import (
    Range as Range,
)
from logparse.grammar.releases import (
    ReleaseLine as ReleaseLine,
)
from logparse.grammar.releases import (
    format_range as format_range,
)
from logparse.grammar.releases import (
    is_empty as is_empty,
)
from logparse.grammar.releases import (
    release_key as release_key,
)


@lru_cache(maxsize=1)
def _data() -> dict:
    return tables.document("sglang/versions.json")


@lru_cache(maxsize=1)
def releases() -> tuple[str, ...]:
    """Every analysed PyPI release, oldest first."""
    return tuple(_data()["versions"])


@lru_cache(maxsize=1)
def sglang() -> ReleaseLine:
    """SGLang's releases."""
    return ReleaseLine(releases())


def index(version: str) -> int:
    """Position of an SGLang release in the ordered list; unknown names are placed by numeric order."""
    return sglang().index(version)


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


@lru_cache(maxsize=1)
def _defaults_data() -> dict:
    return tables.document("sglang/server_args_defaults.json")


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
    Data: ``grammars/sglang/server_args_defaults.json``, built from every release's own
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
