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

import re
from typing import Any

from logparse.grammar.bounds import OUT_OF_RANGE, bound_fields, bound_of, out_of_range_warning, shown
from logparse.grammar.events import Event
from logparse.launches.model import Launch, RankMemory, declared

_LAUNCH_FIGURES = {k: v for k, v in declared(Launch).items() if v in ("int", "float")}
_RANK_FIGURES = {k: v for k, v in declared(RankMemory).items() if v in ("int", "float")}
#: The fields that say which rank a row is: one of them out of its bound leaves the row unplaceable.
RANK_IDENTITY = ("dp_rank", "pp_rank", "tp_rank", "ep_rank")


#: The rank fields an event's figure makes: ``(event kind, field) -> rank fields``.  A figure set
#: aside leaves them None, and :func:`mark_rank` notes them under the rank's ``extra["out_of_range"]``,
#: so that a table shows "out of range" there, not "—" (not printed).
RANK_FIELDS_OF = {
    ("load_begin", "avail_gb"): ("avail_before_load_gb",),
    ("load_end", "avail_gb"): ("avail_after_load_gb",),
    ("load_end", "mem_usage_gb"): ("weights_gb",),
    ("load_end", "elapsed_s"): ("load_s",),
    ("kv_alloc", "tokens"): ("kv_tokens",),
    ("kv_alloc", "k_gb"): ("k_size_gb", "kv_size_gb"),
    ("kv_alloc", "v_gb"): ("v_size_gb", "kv_size_gb"),
    ("kv_alloc", "kv_gb"): ("kv_size_gb",),
    ("pool_end", "avail_gb"): ("avail_after_pool_gb",),
    ("graph_end", "mem_usage_gb"): ("graph_gb",),
    ("graph_end", "avail_gb"): ("avail_after_graph_gb", "graph_gb"),
    ("graph_end", "elapsed_s"): ("graph_s",),
    ("vllm_weights", "weights_gb"): ("weights_gb",),
    ("vllm_weights", "load_s"): ("load_s",),
    ("vllm_load_time", "load_s"): ("load_s",),
    ("vllm_kv_memory", "kv_gb"): ("kv_size_gb",),
    ("vllm_profile", "kv_gb"): ("kv_size_gb",),
    ("vllm_profile", "weights_gb"): ("weights_gb",),
    ("vllm_profile", "activation_gb"): ("activation_gb",),
    ("vllm_profile", "non_torch_gb"): ("non_torch_gb",),
    ("vllm_budget_report", "kv_gb"): ("kv_size_gb",),
    ("vllm_graph", "graph_gb"): ("graph_gb",),
    ("vllm_graph", "graph_s"): ("graph_s",),
    ("vllm_kv_tokens", "kv_tokens"): ("kv_tokens",),
}


def mark_rank(rank: RankMemory, ev: Event) -> None:
    """Note under ``rank.extra["out_of_range"]`` the rank fields of the figures ``ev`` set aside."""
    for path, note in (ev.fields.get(OUT_OF_RANGE) or {}).items():
        for name in RANK_FIELDS_OF.get((ev.kind, path), ()):
            rank.extra.setdefault(OUT_OF_RANGE, {})[name] = note


def settle_marks(rank: RankMemory) -> None:
    """Keep the marks of the fields that stayed None (another line may have printed the figure)."""
    marks = rank.extra.get(OUT_OF_RANGE)
    if marks:
        kept = {k: v for k, v in marks.items() if k not in _RANK_FIGURES or getattr(rank, k) is None}
        if kept:
            rank.extra[OUT_OF_RANGE] = kept
        else:
            del rank.extra[OUT_OF_RANGE]


def out_of_range_mark(rank: Any, name: str) -> str | None:
    """The note of a rank field set aside as out of range (None: it was not)."""
    marks = (getattr(rank, "extra", None) or {}).get(OUT_OF_RANGE)
    return marks.get(name) if isinstance(marks, dict) and getattr(rank, name, None) is None else None


def printed_out_of_range(launch: Launch, *names: str) -> bool:
    """Whether the log printed one of these figures (rank or event fields) out of its bound."""
    if any(out_of_range_mark(r, name) for r in launch.ranks for name in names):
        return True
    return any(set(ev.fields.get(OUT_OF_RANGE) or ()) & set(names) for ev in launch.events)


_TIME_OF_DAY = re.compile(r"\d\d:\d\d:\d\d")


def outcome_evidence(ev: Event | None, why: str) -> str:
    """``launch.outcome_evidence``: why a line decided the outcome, and when it was printed (its time of
    day, as the log has it).  Not its line number: a launch read from pieces of a log, or from several
    inputs, is the same launch with the same evidence whichever input held that line."""
    when = _TIME_OF_DAY.search(ev.ts) if ev is not None and ev.ts else None
    return f"{why} (at {when.group(0)})" if when else why


def event_warnings(evs: list[Event]) -> list[str]:
    """A warning per figure a line printed out of its bound (``line 2: K size 1e308 out of range …``)."""
    out: list[str] = []
    for ev in evs:
        notes = ev.fields.get(OUT_OF_RANGE)
        if notes:
            out.extend(out_of_range_warning(ev.line_no, path, note) for path, note in notes.items())
    return out


def check_launch(launch: Launch, *, stored: bool = False) -> None:
    """Every figure of the launch within its bound, else None with a warning (see the module doc).

    ``stored``: a launch read back from a store, which an older logparse may have written with
    ``"inf"`` (text) where a figure belongs, or figures beyond every bound: set aside the same way,
    so that no reader computes with them."""
    who = "stored figure " if stored else ""
    _check_fields(launch, _LAUNCH_FIGURES, who, launch.warnings)
    kept = []
    for rank in launch.ranks:
        where = f"{who}{rank.worker} rank {rank.label()}: "
        _check_fields(rank, _RANK_FIGURES, where, launch.warnings, rank.extra)
        _check_nested(rank.extra, where + "extra.", launch.warnings, stored)
        if _unplaceable(rank, where, launch.warnings):
            continue
        kept.append(rank)
    launch.ranks[:] = kept
    _check_nested(launch.runtime, who + "runtime.", launch.warnings, stored)


def _unplaceable(rank: RankMemory, where: str, warnings: list[str]) -> bool:
    """A rank whose identity was set aside would stand in for another one (its label is then
    TP0's, and two rows would share a key): its figures are set aside with it, with one warning in
    place of the identity's own; the rest of the launch is kept."""
    notes = rank.extra.get(OUT_OF_RANGE, {})
    lost = [name for name in RANK_IDENTITY if name in notes]
    if not lost:
        return False
    for name in lost:
        old = f"{where}{name}={notes[name]}: ignored"
        if old in warnings:
            warnings.remove(old)
    warnings.append(f"{where}{lost[0]}={notes[lost[0]]}: no rank to place its figures in: set aside")
    return True


def _check_fields(obj: Any, kinds: dict[str, str], who: str, warnings: list[str], marks: dict | None = None) -> None:
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
            if marks is not None:
                marks.setdefault(OUT_OF_RANGE, {})[name] = f"{shown(value)} {problem}"


def _check_nested(values: dict[str, Any], who: str, warnings: list[str], stored: bool = False) -> None:
    notes = bound_fields(values, strings=stored) if isinstance(values, dict) else {}
    for path, note in notes.items():
        warnings.append(f"{who}{path} {note}: ignored")
