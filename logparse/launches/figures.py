"""The bounds of a launch's figures (:mod:`logparse.grammar.bounds`), once it is assembled.

The figures of each line were bounded when the line was read (the pipeline's
:func:`~logparse.grammar.bounds.bound_fields`): :func:`event_warnings` turns what was set aside
into warnings naming each line.  :func:`check_launch` is the last check, of the figures derived
from several lines (a sum of two figures in range may not be) and of the arguments: every typed
field of the launch and its ranks, and every figure under ``extra`` and ``runtime``, is within its
bound or None, with a warning.  So what ``parse`` shows is what the store can hold, value for
value (a BIGINT, a finite DOUBLE, JSON without NaN).
"""

from __future__ import annotations

from typing import Any

from logparse.grammar.bounds import OUT_OF_RANGE, bound_fields, bound_of, out_of_range_warning, shown
from logparse.grammar.events import Event
from logparse.launches.model import Launch, RankMemory, declared

_LAUNCH_FIGURES = {k: v for k, v in declared(Launch).items() if v in ("int", "float")}
_RANK_FIGURES = {k: v for k, v in declared(RankMemory).items() if v in ("int", "float")}


def event_warnings(evs: list[Event]) -> list[str]:
    """A warning per figure a line printed out of its bound (``line 2: K size 1e308 out of range …``)."""
    out: list[str] = []
    for ev in evs:
        notes = ev.fields.get(OUT_OF_RANGE)
        if notes:
            out.extend(out_of_range_warning(ev.line_no, path, note) for path, note in notes.items())
    return out


def check_launch(launch: Launch) -> None:
    """Every figure of the launch within its bound, else None with a warning (see the module doc)."""
    _check_fields(launch, _LAUNCH_FIGURES, "", launch.warnings)
    for rank in launch.ranks:
        who = f"{rank.worker} rank {rank.label()}: "
        _check_fields(rank, _RANK_FIGURES, who, launch.warnings)
        _check_nested(rank.extra, who + "extra.", launch.warnings)
    _check_nested(launch.runtime, "runtime.", launch.warnings)


def _check_fields(obj: Any, kinds: dict[str, str], who: str, warnings: list[str]) -> None:
    for name, kind in kinds.items():
        value = getattr(obj, name)
        if value is None:
            continue
        if kind == "int" and isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
            value = int(value)
            setattr(obj, name, value)
        problem = bound_of(name).problem(value)
        if kind == "int" and problem is None and not isinstance(value, int):
            problem = "not a whole number"
        if problem is not None:
            setattr(obj, name, None)
            warnings.append(f"{who}{name}={shown(value)} {problem}: ignored")


def _check_nested(values: dict[str, Any], who: str, warnings: list[str]) -> None:
    notes = bound_fields(values).pop(OUT_OF_RANGE, None) if values else None
    for path, note in (notes or {}).items():
        warnings.append(f"{who}{path} {note}: ignored")
