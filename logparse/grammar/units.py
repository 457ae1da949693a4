"""Which units of a journal or capture are an engine's (nginx's lines next to sglang.service's).

The parse loop tells :class:`Units` each line's verdict per unit (host, unit); at the input's end a
unit none of whose lines is an engine's (nor named after one, nor sharing a pid with one) is another
program's: its lines are counted apart, as ``other_units``.
"""

from __future__ import annotations

from typing import Any

from logparse import engines
from logparse.engines.base import Claim
from logparse.grammar.classify import engine_line
from logparse.grammar.kinds import GENERIC_KINDS
from logparse.sources.records import Record


class UnitTally:
    """The lines of one unit (host, unit) of a journal or capture, until it is known to be an engine's."""

    __slots__ = ("engine", "noise", "parsed", "pids", "unrecognized")

    def __init__(self) -> None:
        self.parsed = self.noise = self.unrecognized = 0
        #: the engine whose line the unit printed (None: none yet)
        self.engine: str | None = None
        self.pids: set[int] = set()


class Units:
    """The lines of every unit of one input (``default``: the engine of a line that names none)."""

    def __init__(self, default: str) -> None:
        self.default = default
        self.tallies: dict[tuple, UnitTally] = {}
        #: pids of engine lines the fast stage counted itself (their units are an engine's)
        self.engine_pids: set[int] = set()

    def tally(self, unit: tuple, rec: Record, res: Claim) -> None:
        t = self.tallies.get(unit)
        if t is None:
            t = self.tallies[unit] = UnitTally()
        if rec.pid is not None:
            t.pids.add(rec.pid)
        if t.engine is not None:
            return
        found = engine_line(rec.text)
        if res.status == "parsed":
            t.parsed += 1
            if res.parsed is None or res.parsed[2][0] not in GENERIC_KINDS:
                t.engine = res.engine or self.default
            elif found is not None:
                t.engine = found
        elif found is not None:
            t.engine = found
        elif res.status == "noise":
            t.noise += 1
        else:
            t.unrecognized += 1

    def ours(self) -> set[tuple]:
        """The units an engine's line shows in (or named after an engine, or whose pid printed one)."""
        names = engines.names()
        return {
            unit
            for unit, t in self.tallies.items()
            if t.engine is not None
            or any(n in str(unit[1]).lower() for n in names)
            or (t.pids and not t.pids.isdisjoint(self.engine_pids))
        }

    def others(self, counts: Any) -> tuple[set[tuple], dict[tuple, int]]:
        """The engines' units, and the others with their line counts, moved in ``counts`` (a
        :class:`~logparse.launches.model.LineCounts`) from parsed/noise/unrecognized to ``other_units``."""
        ours = self.ours()
        if not ours:
            # No unit shows an engine's line (a journal window holding only a traceback's tail, say):
            # nothing tells the engine's unit from the others, so every line stays the engine's.
            return ours, {}
        others: dict[tuple, int] = {}
        for unit, t in self.tallies.items():
            if unit in ours:
                continue
            n = t.parsed + t.noise + t.unrecognized
            counts.parsed -= t.parsed
            counts.noise -= t.noise
            counts.unrecognized -= t.unrecognized
            counts.other_units += n
            others[unit] = n
        return ours, others

    def warning(self, source_name: str, ours: set[tuple], others: dict[tuple, int]) -> str:
        shown = ", ".join(f"{unit[1]}: {n}" for unit, n in list(others.items())[:5]) + (
            ", …" if len(others) > 5 else ""
        )
        total = sum(others.values())
        seen = sorted({t.engine for u, t in self.tallies.items() if u in ours and t.engine} or {self.default})
        whose = " or ".join(engines.label(e) for e in seen)
        return (
            f"{source_name}: {total} line{'s' if total != 1 else ''} of other units ({shown}) "
            f"are not {whose}'s: counted apart, as other_units"
        )
