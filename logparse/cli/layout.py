"""Tables that fit the terminal: the width to lay out for, and the columns fitted to it.

* The width is ``$COLUMNS`` when set, else the terminal's when stdout is one; a pipe or a file
  without ``$COLUMNS`` has no width: nothing is shortened or left out (``--wide`` does the same).
* A table too wide for the width first shortens its long free-text and path cells (paths in the
  middle, so that a model's name stays readable), then leaves out its least important columns
  (named under the table, with ``--wide`` to show them), then shortens again down to a floor
  (:data:`FLOOR`, then :data:`LAST_FLOOR`), then leaves out columns of importance 1 (text before
  figures, the widest first), never the first.  Identifiers (launch references, deployment keys,
  times) and figures are never shortened: a value is shown whole or not at all.  A table that
  does not fit even so is printed at its own width (the terminal wraps its lines; nothing is cut).
* Lines written to a pipe or a file carry no trailing spaces (:class:`StripTrailing`).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, replace
from typing import IO, Any, Protocol

#: Columns of a rich table of ours are separated by `` │ `` (padding 1 each side, one rule).
RICH_GAP = 3
#: Columns of a plain table (:func:`logparse.cli.cells.plain_table_text`) by two spaces.
PLAIN_GAP = 2
#: A console's width where nothing limits it (a pipe, a file, ``--wide``): lines are never cut.
UNBOUNDED = 100_000
#: A shortened cell keeps this much at least; a free-text column first shrinks to :data:`COMFORT`.
FLOOR, COMFORT = 16, 24
#: ... and when even that is too wide, at most this little before a column of importance 1 goes.
LAST_FLOOR = 8


def output_width(stream: IO[str] | None = None) -> int | None:
    """The width to lay tables out for: ``$COLUMNS``, else the terminal's, else None (no limit)."""
    cols = os.environ.get("COLUMNS", "").strip()
    if cols.isdigit() and int(cols) > 0:
        return int(cols)
    stream = stream or sys.stdout
    try:
        if stream.isatty():
            return os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError):
        pass
    return None


@dataclass(frozen=True)
class Col:
    header: str
    right: bool = False
    #: ``middle`` (a path: keep its head and its tail), ``end`` (free text), or None (kept whole)
    shorten: str | None = None
    #: 1: shown while the width allows (the first column always); 2 to 5 may be left out on a
    #: narrow terminal (5 first; of the same importance the rightmost first)
    importance: int = 1
    #: free text that may wrap over lines in a rich table instead of being shortened
    wrap: bool = False
    #: the narrowest a shortened cell of this column gets (default :data:`FLOOR`)
    floor: int = 0


@dataclass
class Fitted:
    columns: list[Col]
    rows: list[list[str]]
    #: the headers of the columns left out
    hidden: list[str] = field(default_factory=list)
    #: per column shown: the width its cells were fitted to
    widths: list[int] = field(default_factory=list)

    def note(self) -> str | None:
        """The line under a table that left columns out."""
        if not self.hidden:
            return None
        return f"(left out to fit the width: {', '.join(self.hidden)}; --wide shows every column)"


def cell_width(text: str) -> int:
    if text.isascii():
        return max(map(len, text.split("\n"))) if "\n" in text else len(text)
    from rich.cells import cell_len

    return max(cell_len(line) for line in text.split("\n"))


def shorten(text: str, width: int, how: str | None = "middle") -> str:
    """``text`` in at most ``width`` cells: ``middle`` keeps its head and (more of) its tail."""
    if how is None or cell_width(text) <= width or width < 2:
        return text
    if not text.isascii():  # cut by characters until it fits: rare, and never wider than asked
        while text and cell_width(text) > width - 1:
            text = text[:-1] if how == "end" else text[: len(text) // 3] + text[len(text) // 3 + 1 :]
        return text + "…" if how == "end" else text
    if how == "end":
        return text[: width - 1] + "…"
    slash = text.rfind("/", 0, len(text) - 1)
    if slash >= 0 and len(text) - slash <= width - 2:  # a path: its last part whole, as much of its head as fits
        return text[: width - 1 - (len(text) - slash)] + "…" + text[slash:]
    if slash >= 0:  # a path whose last part is longer than the width: the end of it
        return "…" + text[len(text) - width + 1 :]
    tail = (width - 1) * 2 // 3
    head = width - 1 - tail
    return text[:head] + "…" + text[len(text) - tail :]


def fit(columns: list[Col], rows: list[list[str]], width: int | None, gap: int = RICH_GAP) -> Fitted:
    """The columns and cells of a table laid out in ``width`` cells (None: as they are)."""
    columns = [_words_kept_whole(c, [r[i] for r in rows]) for i, c in enumerate(columns)]
    natural = [max([cell_width(c.header)] + [cell_width(r[i]) for r in rows]) for i, c in enumerate(columns)]
    shown = list(range(len(columns)))
    widths = list(natural)

    def excess() -> int:
        return sum(widths[i] for i in shown) + gap * (len(shown) - 1) - (width or 0)

    if width is not None and excess() > 0:
        _shrink(columns, widths, shown, excess(), COMFORT)
        for i in _drop_order(columns, shown):
            # a column of little importance goes before the others are cut below comfort
            floor = COMFORT if columns[i].importance >= 4 else FLOOR
            if _narrowest(columns, widths, shown, gap, floor) <= width:
                break
            shown.remove(i)
        _shrink(columns, widths, shown, max(excess(), 0), FLOOR)
        for i in _drop_order(columns, shown):  # still too wide: whatever may go, before a cell is cut
            if excess() <= 0:
                break
            shown.remove(i)
        if excess() > 0:  # still too wide: shortenable cells down to the last floor
            _shrink(columns, widths, shown, excess(), LAST_FLOOR)
        for i in _last_drop_order(columns, shown, widths):  # then columns shown "always", never the first
            if excess() <= 0:
                break
            shown.remove(i)
        if excess() < 0:  # a column left out freed more than needed: give it back
            _grow(widths, natural, shown, -excess())
    kept = [columns[i] for i in shown]
    cells = [[_fit_cell(r[i], widths[i], columns[i]) for i in shown] for r in rows]
    hidden = [columns[i].header for i in range(len(columns)) if i not in shown]
    return Fitted(kept, cells, hidden, [widths[i] for i in shown])


#: Wrapped text breaks between words; a word longer than this (a digest, a long class name) is
#: folded at this width (never inside a number), every shorter one is kept whole.
LONG_WORD = 16


def _words_kept_whole(col: Col, cells: list[str]) -> Col:
    """A column that wraps its text, with a floor no narrower than its longest word (up to
    :data:`LONG_WORD`): a figure folded over two lines is a figure cut."""
    if not col.wrap:
        return col
    longest = min(max((cell_width(w) for c in cells for w in c.split()), default=0), LONG_WORD)
    return replace(col, floor=max(col.floor, longest)) if longest > col.floor else col


def _drop_order(columns: list[Col], shown: list[int]) -> list[int]:
    """The columns that may be left out, in the order they are."""
    return sorted((i for i in shown if columns[i].importance > 1), key=lambda i: (-columns[i].importance, -i))


def _last_drop_order(columns: list[Col], shown: list[int], widths: list[int]) -> list[int]:
    """The columns of importance 1 in the order they go when nothing else is left to take: text
    before figures, the widest as they stand first (it frees the most); the first column (the row's key) stays."""
    rest = [i for i in shown[1:] if columns[i].importance == 1]
    return sorted(rest, key=lambda i: (columns[i].right, -widths[i], -i))


def _floor(col: Col, floor: int) -> int:
    if floor == LAST_FLOOR and not col.wrap:  # the last resort is below a shortened column's own floor too
        return max(floor, cell_width(col.header))
    return max(col.floor or floor, cell_width(col.header))


def _narrowest(columns: list[Col], widths: list[int], shown: list[int], gap: int, floor: int) -> int:
    """The width of the shown columns with every shortenable one at ``floor``."""
    total = 0
    for i in shown:
        c = columns[i]
        total += min(widths[i], _floor(c, floor)) if (c.shorten or c.wrap) else widths[i]
    return total + gap * (len(shown) - 1)


def _fit_cell(text: str, width: int, col: Col) -> str:
    if col.wrap:
        return text
    return shorten(text, width, col.shorten)


def _shrink(columns: list[Col], widths: list[int], shown: list[int], excess: int, floor: int) -> None:
    """Take ``excess`` cells from the shortenable columns, widest first, none below ``floor`` (or its header)."""
    can = [i for i in shown if columns[i].shorten or columns[i].wrap]
    while excess > 0:
        room = [i for i in can if widths[i] > _floor(columns[i], floor)]
        if not room:
            return
        i = max(room, key=lambda j: widths[j])
        widths[i] -= 1
        excess -= 1


def _grow(widths: list[int], natural: list[int], shown: list[int], slack: int) -> None:
    while slack > 0:
        short = [i for i in shown if widths[i] < natural[i]]
        if not short:
            return
        i = min(short, key=lambda j: widths[j])
        widths[i] += 1
        slack -= 1


class Sink(Protocol):
    """Where a text stream writes (a file, stdout, :class:`logparse.files.AtomicFile`)."""

    def write(self, text: str, /) -> int: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...


class StripTrailing:
    """A text stream that writes each line without its trailing spaces (what a pipe or a file of
    a table should hold); a line is written when it ends (or at :meth:`close`)."""

    def __init__(self, target: IO[str] | Sink) -> None:
        self.target = target
        self._pending = ""

    def write(self, text: str) -> int:
        data = self._pending + text
        head, sep, self._pending = data.rpartition("\n")
        if sep:
            self.target.write("\n".join(line.rstrip(" ") for line in head.split("\n")) + "\n")
        return len(text)

    def flush(self) -> None:
        self.target.flush()

    def close(self) -> None:
        if self._pending:
            self.target.write(self._pending.rstrip(" "))
            self._pending = ""
        self.target.flush()

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:  # encoding, fileno, ... of the target
        return getattr(self.target, name)
