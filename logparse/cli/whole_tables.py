"""Rich tables printed whole: no cell cut short, no figure folded over two lines.

:func:`print_whole` is the last step of every rich table the CLI prints
(:func:`logparse.cli.render.print_rich_table`): the columns that wrap get fixed widths between
their longest word and their longest line, the widest giving up a cell first, as rich does, so
that rich never folds a word; a word too long for the room its column can get is folded here, at
a separator and never inside a number; and a table that does not fit even so is printed at its
own width (the terminal wraps its lines, where rich would crop its rightmost column).
"""

from __future__ import annotations

import re
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from logparse.cli.layout import LONG_WORD, UNBOUNDED, cell_width


def console_width(console: Console) -> int | None:
    """The width a console's tables are fitted to (None: a pipe, a file, ``--wide``)."""
    return None if console.width >= UNBOUNDED else console.width


def cell_text(cell: Any) -> str:
    """A cell's text as shown (a rich ``Text``'s plain text)."""
    if cell is None:
        return ""
    return cell.plain if isinstance(cell, Text) else str(cell)


def _fold_long_words(table: Table, limit: int) -> None:
    """In the columns that wrap, a word longer than ``limit`` is folded here (at a separator, never
    inside a number), so that no shorter word (a figure) needs folding."""
    for col in table.columns:
        if col.no_wrap:
            continue
        for r, cell in enumerate(col._cells):
            plain = cell_text(cell)
            cuts = _fold_points(plain, limit)
            if cuts:
                text = cell.copy() if isinstance(cell, Text) else Text(plain)
                col._cells[r] = Text("\n").join(text.divide(cuts))


def _fold_points(plain: str, limit: int) -> list[int]:
    cuts = []
    for m in re.finditer(r"\S{%d,}" % (limit + 1), plain):  # noqa: UP031 (a regex's braces)
        pos = m.start()
        while m.end() - pos > limit:
            chunk = plain[pos : pos + limit]
            sep = max(chunk.rfind(c) for c in "/-_=,:")  # after a separator: /models/ | Qwen2.5-…
            cut = pos + sep + 1 if sep >= limit // 2 else pos + limit
            while cut > pos + 1 and _inside_number(plain, cut):
                cut -= 1
            cut = cut if cut > pos + 1 else pos + limit
            cuts.append(cut)
            pos = cut
    return cuts


def _inside_number(text: str, i: int) -> bool:
    """Whether a cut before ``text[i]`` falls inside a number (``159,2|77``, ``72.|33``)."""
    return (text[i].isdigit() or text[i] in ",.") and (text[i - 1].isdigit() or text[i - 1] in ",.")


def _text_widths(console: Console, table: Table) -> int:
    """Fix the width of each column that wraps, between its longest word and its longest line,
    so that rich never folds a word; the width the table then takes (more than the console's
    when even its longest words do not fit)."""

    def texts(col) -> list[str]:
        return [cell_text(col.header), *(cell_text(c) for c in col._cells)]

    room, wraps, taken = _text_room(console, table)
    lows = [max([cell_width(w) for t in texts(c) for w in t.split()] + [1]) for c in wraps]
    highs = [max(cell_width(line) for t in texts(c) for line in t.split("\n")) for c in wraps]
    if sum(highs) <= room or not wraps:
        for c in wraps:
            c.width = None  # (an earlier call's, before long words were folded)
        return taken + sum(highs)
    widths = list(highs)
    excess = sum(widths) - max(room, sum(lows))
    while excess > 0:  # as rich does: the widest column gives up a cell first, none below its longest word
        i = max((j for j in range(len(widths)) if widths[j] > lows[j]), key=lambda j: widths[j])
        widths[i] -= 1
        excess -= 1
    for c, w in zip(wraps, widths):
        c.width = w
    return taken + sum(widths)


def _text_room(console: Console, table: Table) -> tuple[int, list, int]:
    """The cells left to the columns that wrap, those columns, and the width the rest takes
    (padding, rules, every column that does not wrap at its widest cell)."""
    _, right, _, left = table.padding
    n = len(table.columns)
    frame = (left + right) * n - (0 if table.pad_edge else left + right)
    frame += (n - 1 if table.box else 0) + (2 if table.box and table.show_edge else 0)
    cells = [[cell_text(c.header), *(cell_text(x) for x in c._cells)] for c in table.columns]
    fixed = sum(max(map(cell_width, t)) for c, t in zip(table.columns, cells) if c.no_wrap)
    wraps = [c for c in table.columns if not c.no_wrap]
    return (console_width(console) or 0) - frame - fixed, wraps, frame + fixed


def print_whole(console: Console, table: Table) -> None:
    """``console.print(table)``, its text wrapped between words (:func:`_text_widths`), and a
    table too wide for the console even so printed at its own width: the terminal wraps its
    lines, where rich would crop the rightmost column or fold a figure (``72.3`` / ``3``)."""
    width = console_width(console)
    if width is not None:
        need = _text_widths(console, table)
        if need > width:  # words too long for the width: folded (at a separator, never in a number)
            room, wraps, _ = _text_room(console, table)
            _fold_long_words(table, max(LONG_WORD, room - LONG_WORD * (len(wraps) - 1)))
            need = _text_widths(console, table)
        if need > width:  # (console.print's own width= is capped at the console's)
            console.width = need
            try:
                console.print(table, crop=False)
            finally:
                console.width = width
            return
    console.print(table)
