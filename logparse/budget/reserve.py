"""An engine's own reserve: what its default logic holds back for a launch, term by term (GiB).

Each engine computes its own (``logparse.engines.<engine>.reserve``: SGLang's default fraction, vLLM's
production margin); the advice and the plans read it through these types, whatever the engine.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class ReserveTerm:
    """One named part of the reserve: its GiB, the arithmetic, and where its input came from."""

    name: str
    gb: float
    how: str
    source: str = ""
    #: False for a term that is reported but not added to ``reserve_gb`` (e.g. the multimodal one).
    counted: bool = True

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class EngineReserve:
    """What the engine's own default logic holds back for one launch, term by term (GiB)."""

    engine: str
    release: str | None
    rule: str | None
    rule_label: str
    exact: bool
    gpu_memory_gb: float | None
    gpu_memory_source: str
    reserve_gb: float | None
    reserve_gb_lo: float | None
    reserve_gb_hi: float | None
    terms: list[ReserveTerm] = field(default_factory=list)
    default_fraction: float | None = None
    default_fraction_lo: float | None = None
    default_fraction_hi: float | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k != "terms"}
        out["terms"] = [t.to_dict() for t in self.terms]
        return out

    def fraction_keeping_reserve(self, m_pre_gb: float | None) -> float | None:
        """The largest ``mem_fraction_static`` (3 decimals) whose held-back share ``(1 − f) × M_pre``
        is at least the reserve (its upper end), or None when either is unknown or M_pre is too small."""
        hold = self.reserve_gb_hi if self.reserve_gb_hi is not None else self.reserve_gb
        if hold is None or not m_pre_gb or m_pre_gb <= hold:
            return None
        return math.floor((1.0 - hold / m_pre_gb) * 1000 + 1e-9) / 1000
