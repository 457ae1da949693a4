"""Wrapper layers: what a CI runner, a log viewer or a supervising program puts around each line.

One table (:data:`WRAPPERS`, data in ``grammars/wrappers.toml``), as lnav keeps one spec per format:
each :class:`Wrapper` names its layer, the bytes pattern read where the unpeeled text starts, how its
time is read, whether it is *ambiguous* (peeled only when an engine's text follows) and sample lines
written in the tool's real format (``tests/test_pastes_wrappers.py`` peels every sample).  The same
layers serve SGLang and vLLM: what is left after them is the engine's line, prefixed or bare.  Formats::

    │ INFO 11-20 14:02:51 [worker.py:267] Memory profiling takes 2.31 seconds          │   tui-box (k9s, tview)
    | [2026-03-02 10:00:12 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.41 GB, mem usage=15.21 GB.                     |   tui-ascii
    [2025-11-20T14:02:40Z] INFO 11-20 14:02:40 [gpu_worker.py:227] Available KV ...        buildkite (--timestamp-lines)
    \\x1b_bk;t=1763647360123\\x07INFO 11-20 14:02:40 [gpu_worker.py:227] Available KV ...   buildkite-apc (default mode)
      | GPU KV cache size: 212,480 tokens                                                   pipe-gutter
    > # GPU blocks: 21457, # CPU blocks: 2048                                               markdown-quote (a paste quoted in an issue)
    2025-11-20 14:02:40 | ERROR | stderr | INFO 11-20 14:02:40 [gpu_model_runner.py:1329] ...   fastchat
    2025-11-20 14:02:40.125 | INFO     | serve:main:41 - [2026-03-02 10:00:12 TP0] ...       loguru
    2025-11-20T14:02:40.1234567Z 00O [2026-03-02 10:00:12 TP0] ...   gitlab (after the docker layer's time)

GitHub Actions' ``2025-11-20T14:02:40.1234567Z `` is an RFC 3339 time: :mod:`.docker` reads it.

Record fields: ``ts`` from the layer's time when no outer layer gave one (Buildkite's is UTC, with
its zone; FastChat's and loguru's are local, read as UTC with a note, as :mod:`.pylogging` does);
``fmt`` is left to the outer layers (a wrapper is not an input format).  A TUI row loses its right
border and the padding before it.

Ambiguous layers (a ``|`` border, a lone left border, a ``  | `` gutter, a quote's ``> ``, GitLab's stream tag) are
peeled only when an engine's text starts after them (:func:`engine_starts`: SGLang's bracket or bare
starts, vLLM's layers or bare messages); once one is, the same bytes are peeled from the lines that
follow (a traceback behind the gutter), as the input has shown what they are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from logparse import engines
from logparse.data import tables
from logparse.sources.layers import Layers
from logparse.sources.timestamps import bad_time_note, epoch_in_range, offset_seconds, stamp_epoch

NOTE_LOCAL_TIME = "time from the Python logging wrapper ({name}; local time read as UTC)"

#: Left borders of a terminal UI's box: tview's light and (focused) double verticals, heavy ones.
#: The box borders of the ``tui-box`` wrapper (its pattern's ``border``): a row they close is certain.
_BOX = "│┃║"
_BOX_BYTES = tuple(c.encode() for c in _BOX)


@dataclass(frozen=True, slots=True)
class Wrapper:
    """One wrapper layer.  ``pattern`` is matched at the unpeeled text; its groups ``date``, ``hms``,
    ``frac``, ``tz`` (or ``epoch``: milliseconds) give the time, ``border`` a TUI border that closes
    the row at its end.  ``clock``: ``utc`` (zone in the stamp), ``local`` (read as UTC, noted),
    ``epoch-ms`` or ``""`` (no time).  ``phase``: ``outer`` (before journald's and docker's time)
    or ``inner`` (after them, beside Python logging's wrappers)."""

    name: str
    pattern: re.Pattern[bytes]
    clock: str
    ambiguous: bool
    phase: str
    samples: tuple[str, ...]
    #: the bytes the layer may start with (the pattern is tried only at one of them)
    first: bytes
    #: the row must end in the same border (else the layer is not this one)
    closed: bool = False


def _re(pattern: str) -> re.Pattern[bytes]:
    return re.compile(pattern.encode())


def _wrapper(entry: dict[str, Any]) -> Wrapper:
    """A ``[[wrapper]]`` of ``grammars/wrappers.toml``: ``first`` lists characters, the layer may start
    with the first byte of any of them."""
    unknown = set(entry) - {"name", "phase", "clock", "ambiguous", "closed", "first", "pattern", "samples"}
    if unknown:
        raise ValueError(f"wrapper {entry['name']}: unknown key(s) {sorted(unknown)}")
    return Wrapper(
        entry["name"],
        _re(entry["pattern"]),
        entry["clock"],
        entry["ambiguous"],
        entry["phase"],
        tuple(entry["samples"]),
        bytes(dict.fromkeys(c.encode()[0] for c in entry["first"])),
        closed=entry.get("closed", False),
    )


#: The layers, in the order they are tried: ``grammars/wrappers.toml``.
WRAPPERS: tuple[Wrapper, ...] = tuple(_wrapper(entry) for entry in tables.entries("wrappers.toml", "wrapper"))


@engines.derived
def _engine_start_re() -> re.Pattern[bytes]:
    """Where an engine's text starts: each engine's prefixes and bare messages' first words
    (:meth:`logparse.engines.base.Engine.line_start_patterns`: the prefixes' own definitions).
    Compiled on first use (~3 ms: most inputs have no wrapper)."""
    return re.compile(
        "|".join(
            "(?:" + re.sub(r"\(\?P<\w+>", "(?:", p) + ")"  # the prefixes' group names repeat: unnamed here
            for e in engines.all()
            for p in e.line_start_patterns()
        ).encode()
    )


def engine_starts(raw: bytes, pos: int, end: int | None = None) -> bool:
    """Does an engine's text (prefixed or bare) start at ``pos``?"""
    return _engine_start_re().match(raw, pos, len(raw) if end is None else end) is not None


def _closing(raw: bytes, start: int, border: bytes) -> int | None:
    """The end of a row's text when the row ends in ``border`` (padding before it dropped), else None.
    A ``\\r`` after the border (a CRLF paste in a file of LF lines) goes with it."""
    end = len(raw.rstrip(b" \t\r"))
    if end - len(border) < start or raw[end - len(border) : end] != border:
        return None
    return len(raw[: end - len(border)].rstrip(b" \t"))


#: The first bytes an outer layer may start with (the others are not tried: most lines start otherwise).
OUTER_FIRST_BYTES = frozenset(b"".join(w.first for w in WRAPPERS if w.phase == "outer"))
_PHASES = {phase: tuple(w for w in WRAPPERS if w.phase == phase) for phase in ("outer", "inner")}


#: Gutters remembered per input (bounded memory whatever the input: a gutter is a few bytes, an input has few).
MAX_CONFIRMED = 64


class WrapperPeeler:
    """Peels the wrapper layers of one input's lines (it remembers the ambiguous gutters it confirmed)."""

    __slots__ = ("confirmed",)

    def __init__(self) -> None:
        #: the exact bytes of ambiguous layers an engine's text was seen behind
        self.confirmed: set[bytes] = set()

    def peel(self, line: Layers, phase: str) -> bool:
        """Peel the layers of ``phase`` at ``line.pos``, outermost first (nested up to 4)."""
        peeled = False
        for _ in range(4):
            for w in _PHASES[phase]:
                if self._peel_one(line, w):
                    peeled = True
                    break
            else:
                return peeled
        return peeled

    def _peel_one(self, line: Layers, w: Wrapper) -> bool:
        raw, pos = line.raw, line.pos
        if raw[pos : pos + 1] not in w.first:
            return False
        m = w.pattern.match(raw, pos)
        if m is None or m.end() == pos:
            return False
        end = len(raw)
        border = m.group("border") if "border" in w.pattern.groupindex else None
        if border is not None:
            closed = _closing(raw, m.end(), border)
            if closed is None and w.closed:
                return False
            end = max(closed, m.end()) if closed is not None else end
            certain = closed is not None and border in _BOX_BYTES
        else:
            certain = not w.ambiguous
        key = raw[pos : m.end()]
        if certain:
            self._confirm(key)  # the rows of this box that lost their right border (cut, wrapped) are its too
        elif key not in self.confirmed:
            if not engine_starts(raw, m.end(), end):
                return False
            self._confirm(key)
        _read_time(line, w, m)
        if end < len(raw):
            line.raw = raw[:end]
        line.pos = m.end()
        return True

    def _confirm(self, key: bytes) -> None:
        if len(self.confirmed) < MAX_CONFIRMED and len(key) <= 64:
            self.confirmed.add(key)


def _read_time(line: Layers, w: Wrapper, m: re.Match[bytes]) -> None:
    if not w.clock or line.ts is not None:
        return
    if w.clock == "epoch-ms":
        line.ts = epoch_in_range(int(m.group("epoch")) / 1000)
        return
    date, hms, frac = m.group("date", "hms", "frac")
    offset = offset_seconds(m.group("tz")) if w.clock == "utc" else 0
    line.ts = stamp_epoch(date, hms, frac, offset)
    if line.ts is None:
        line.notes.append(bad_time_note(m.group(0).decode("utf-8", "replace").strip(" |[]")))
    elif w.clock == "local":
        line.notes.append(NOTE_LOCAL_TIME.format(name=w.name))
