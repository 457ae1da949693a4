"""Tables laid out without rich print exactly what rich prints (or are left to rich)."""

from __future__ import annotations

import io
import random

import pytest
from rich.console import Console
from rich.table import Table
from rich.text import Text

from logparse.cli.render import print_rich_table, rich_layout_without_colour

#: Cell texts with what rich treats specially: markup, emoji codes, wide and combining characters.
_WORDS = [
    "3f9a0c41d2e7",
    "gpu-1",
    "2026-07-04 00:18:34",
    "—",
    "0.5.13–0.5.18",
    "110,238",
    "",
    "[tp0]",
    "[bold]x[/bold]",
    ":thumbs_up:",
    "a:b:c",
    "模型",
    "…",
    "x" * 30,
    "[1, 2]",
    "e\u0301",
    "line\nbreak",
    "tab\there",
]


def _table(rnd: random.Random) -> Table:
    title = rnd.choice([None, "", "12 launch(es)", "a title longer than a narrow table is wide, " * 3, "[b]t[/b]"])
    t = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    n = rnd.randint(1, 7)
    for _ in range(n):
        t.add_column(rnd.choice(["launch", "KV GiB", "", "h[x]"]), justify=rnd.choice(["left", "right"]))
    for _ in range(rnd.randint(0, 5)):
        words = [rnd.choice(_WORDS) for _ in range(n)]
        t.add_row(*[Text(w, style=rnd.choice(["", "bold", "red"])) if rnd.random() < 0.5 else w for w in words])
    return t


def _rich(table: Table, width: int, **kw) -> str:
    console = Console(file=io.StringIO(), width=width, highlight=False, **kw)
    console.print(table)
    return console.file.getvalue()


@pytest.mark.parametrize("seed", range(4))
def test_tables_laid_out_without_rich_print_what_rich_prints(seed):
    rnd = random.Random(seed)
    laid_out = 0
    for _ in range(150):
        table, width = _table(rnd), rnd.choice([40, 100, 200])
        got = rich_layout_without_colour(Console(file=io.StringIO(), width=width, highlight=False), table)
        if got is not None:
            laid_out += 1
            assert got == _rich(table, width)
    assert laid_out > 25  # many tables of this kind take the short way


def test_a_colour_console_and_other_tables_are_left_to_rich():
    t = Table(title="x", title_justify="left", show_edge=False, pad_edge=False)
    t.add_column("a")
    t.add_row(Text("1", style="red"))
    colour = Console(file=io.StringIO(), width=100, force_terminal=True, color_system="standard")
    assert rich_layout_without_colour(colour, t) is None
    print_rich_table(colour, t)
    assert "\x1b[31m1" in colour.file.getvalue()
    framed = Table(title="x")  # edges: rich's
    framed.add_column("a")
    framed.add_row("1")
    plain = Console(file=io.StringIO(), width=100)
    assert rich_layout_without_colour(plain, framed) is None
    print_rich_table(plain, framed)
    assert plain.file.getvalue() == _rich(framed, 100)


def test_a_large_table_as_plain_columns():
    from logparse.cli.cells import plain_table_text

    text = plain_table_text(
        "title", ["name", "n", ""], [False, True, False], [["a", "1,234", "x\ny"], ["long name", "5", ""]]
    )
    assert text == ("title\nname           n\n---------  -----  -\na          1,234  x y\nlong name      5\n")
    assert plain_table_text(None, ["a"], [True], []) == "a\n-\n"
