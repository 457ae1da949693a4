"""SGLang's sizing eras and what the formula does in a release (catalogue §4).

The eras (``grammars/sglang/eras.toml``: A, B, C) and, per release, the features of its formula:
EAGLE token inflation, page rounding, the draft's KV inside the budget, the cap of the request
estimate (:class:`Features`); for a launch dated to a range of releases, the latest one's, with a
note when the range spans eras or a boundary inside one.  The formula itself is
:mod:`logparse.engines.sglang.formula`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from logparse.data import tables
from logparse.engines.sglang import versions

#: Speculative algorithms whose draft KV goes into the budget from 0.5.14.
_SPEC_IN_BUDGET = {"EAGLE", "EAGLE3", "STANDALONE", "NEXTN", "MTP", "DFLASH", "DSPARK"}


@dataclass(frozen=True)
class Era:
    key: str
    first: str
    last: str
    where: str
    formula: str

    @property
    def label(self) -> str:
        return f"Era {self.key} ({self.first}–{self.last})"


#: SGLang's sizing eras, in release order: ``grammars/<engine>/eras.toml``.
ERAS: tuple[Era, ...] = tuple(Era(**entry) for entry in tables.entries("sglang/eras.toml", "era"))


def _idx(v: str) -> int:
    return versions.index(v)


def era_of(version: str) -> Era:
    i = _idx(version)
    for era in ERAS:
        if _idx(era.first) <= i <= _idx(era.last):
            return era
    return ERAS[-1] if i > _idx(ERAS[-1].last) else ERAS[0]


def eras_in(rng: tuple[str, str] | None) -> list[Era]:
    if rng is None or versions.is_empty(rng):
        return list(ERAS)
    lo, hi = _idx(rng[0]), _idx(rng[1])
    return [e for e in ERAS if not (_idx(e.last) < lo or _idx(e.first) > hi)]


@dataclass
class Features:
    """What the formula does in the release assumed for a launch."""

    version: str  # the release whose behaviour is assumed
    era: Era
    eagle_inflation: bool = False  # 0.4.3.post3 – 0.5.6.post2: T' for target and draft
    draft_only_inflation: bool = False  # 0.4.1.post4 – 0.4.3.post2: only the draft pool
    page_rounding: bool = True  # 0.4.4+
    draft_in_budget: bool = False  # 0.5.14+: draft KV inside the budget, draft weights counted
    max_reqs_cap: int | None = 4096  # estimate of max_num_reqs: clamp(T/ctx*512, 2048, cap)
    notes: list[str] = field(default_factory=list)

    def describe(self) -> str:
        bits = [self.era.label]
        if self.eagle_inflation:
            bits.append("EAGLE token inflation")
        if self.draft_in_budget:
            bits.append("draft KV inside the budget")
        if not self.page_rounding:
            bits.append("no page rounding")
        return ", ".join(bits)


def _between(v: str, a: str, b: str) -> bool:
    return _idx(a) <= _idx(v) <= _idx(b)


def features_for(version: str, spec_algorithm: str | None = None) -> Features:
    era = era_of(version)
    spec = (spec_algorithm or "").upper()
    feat = Features(version=version, era=era)
    feat.eagle_inflation = bool(spec) and spec != "NGRAM" and _between(version, "0.4.3.post3", "0.5.6.post2")
    feat.draft_only_inflation = bool(spec) and spec != "NGRAM" and _between(version, "0.4.1.post4", "0.4.3.post2")
    feat.page_rounding = _idx(version) >= _idx("0.4.4")
    feat.draft_in_budget = spec in _SPEC_IN_BUDGET and _idx(version) >= _idx("0.5.14")
    if _idx(version) <= _idx("0.2.6"):
        feat.max_reqs_cap = None
    elif _idx(version) <= _idx("0.3.0"):
        feat.max_reqs_cap = 5120
    else:
        feat.max_reqs_cap = 4096
    return feat


def choose_features(rng: tuple[str, str] | None, spec_algorithm: str | None = None) -> Features:
    """The behaviour to assume for a launch dated to ``rng``: the latest release in it.

    A range spanning eras (or a boundary inside one, e.g. 0.5.14) is said in ``notes``.
    """
    if rng is None or versions.is_empty(rng):
        feat = features_for(versions.last(), spec_algorithm)
        feat.notes.append(f"SGLang version unknown: assuming the newest formula ({feat.era.label})")
        return feat
    feat = features_for(rng[1], spec_algorithm)
    spanned = eras_in(rng)
    if len(spanned) > 1:
        feat.notes.append(
            f"the version range {versions.format_range(rng)} spans "
            + ", ".join(e.label for e in spanned)
            + f"; using the later one ({feat.era.label})"
        )
    else:
        early = features_for(rng[0], spec_algorithm)
        for name, what in (
            ("eagle_inflation", "EAGLE token inflation"),
            ("draft_in_budget", "draft KV in the budget"),
            ("page_rounding", "page rounding"),
        ):
            if getattr(early, name) != getattr(feat, name):
                feat.notes.append(f"{what} changed inside the range {versions.format_range(rng)}; assuming {rng[1]}")
    return feat
