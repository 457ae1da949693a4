"""Table cells and large plain tables as text, without rich (a read command that prints thousands
of rows, or none through rich, need not import it).

Every human renderer of the CLI passes its data through :func:`logparse.text.terminal_text` before
it is laid out (so widths are those of what is shown): :func:`for_terminal` over a document or
rows, :func:`logparse.cli.render.terminal_launch` over a launch, :func:`plain_table_text` over the
cells of a large table, :func:`logparse.cli.app.say` for a line on stderr.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from logparse.text import UNSAFE_FOR_TERMINAL, terminal_text


def for_terminal(value: Any) -> Any:
    """:func:`terminal_text` over every string of a document or of rows (keys too); other values as they are."""
    if isinstance(value, str):
        return terminal_text(value)
    if isinstance(value, dict):
        return {for_terminal(k): for_terminal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [for_terminal(v) for v in value]
    if isinstance(value, tuple):
        return tuple(for_terminal(v) for v in value)
    return value


#: Above this many rows a table is printed as plain aligned text: rich's layout of a large
#: table costs seconds, which a listing of thousands of launches should not.
FAST_TABLE_ROWS = 60


def fmt(v: Any, digits: int = 2) -> str:
    """A figure: ``—`` for absent, ``digits`` decimals for floats, thousands separators from 10,000."""
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    if isinstance(v, int) and abs(v) >= 10000:
        return f"{v:,}"
    return str(v)


def cell(v: Any) -> str:
    """A table cell: ``—`` for absent, ISO time to the second, lists joined, yes/no, numbers as :func:`fmt`."""
    if isinstance(v, datetime):
        return v.isoformat(sep=" ", timespec="seconds")
    if isinstance(v, list):
        return ", ".join(str(x) for x in v)
    if isinstance(v, bool):
        return "yes" if v else "no"
    return fmt(v)


def figure_cell(figure: Any, v: Any) -> str:
    """A figure's table cell as its ``fmt`` in :mod:`logparse.figures` writes it."""
    if v is None:
        return "—"
    if figure.fmt == "percent" and isinstance(v, (int, float)):
        return f"{v:.0%}"
    if figure.fmt == "share" and isinstance(v, (int, float)):
        return f"{v:g}"
    if figure.fmt == "model" and isinstance(v, str):
        return v.rstrip("/").rsplit("/", 1)[-1] or v
    return cell(v)


def plain_table_text(title: str | None, headers: list[str], right: list[bool], rows: list[list[str]]) -> str:
    """A large table as plain aligned columns, from plain strings (``right``: right-justified columns)."""
    rows = _shown_rows(rows)
    columns = list(zip(*rows)) if rows else [() for _ in headers]
    broken = [any("\n" in v for v in col) if "\n" in "".join(col) else False for col in columns]
    widths = [
        max([len(h)] + ([_width(v) for v in col] if multi else list(map(len, col))))
        for h, col, multi in zip(headers, columns, broken)
    ]
    # one format for every row: thousands of rows are padded by str.format, not cell by cell
    line = "  ".join(f"{{:{'>' if r else '<'}{w}}}" for w, r in zip(widths, right)).format
    out = []
    if title:
        out.append(title)
    out.append(line(*headers).rstrip())
    out.append("  ".join("-" * w for w in widths))
    if any(broken):
        rows = [[v.replace("\n", " ") for v in row] for row in rows]
    out += [line(*row).rstrip() for row in rows]
    return "\n".join(out) + "\n"


def _shown_rows(rows: list[list[str]]) -> list[list[str]]:
    """The cells through :func:`~logparse.text.terminal_text` (a cell's line breaks kept: the table
    joins its lines), checked in one pass: thousands of rows are almost always plain."""
    if UNSAFE_FOR_TERMINAL.search("".join(map("".join, rows)).replace("\n", "")) is None:
        return rows
    return [["\n".join(map(terminal_text, v.split("\n"))) for v in row] for row in rows]


def _width(text: str) -> int:
    """The width of a cell: its longest line."""
    if "\n" not in text:
        return len(text)
    return max(len(x) for x in text.split("\n"))
