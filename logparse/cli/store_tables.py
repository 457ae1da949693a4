"""The tables of the store's launches: ``launches`` (one line per launch, its columns the figures of
the ``launches_table`` surface) and ``history`` (a metric over each deployment's launches, its
change and what changed), their columns and cells, fitted to the width.
"""

from __future__ import annotations

from typing import Any

from logparse import engines
from logparse.cli.what_changed import WHAT_CHANGED_COLUMNS, pieces_text, what_changed_pieces
from logparse.launches.times import iso_time


def _launch_columns() -> list:
    """The launches table's columns: the figures of the ``launches_table`` surface, their labels."""
    from logparse import figures
    from logparse.cli.layout import Col

    return [
        Col(
            f.label,
            right=f.fmt in ("int", "gib", "share", "percent"),
            shorten="middle" if f.fmt in ("path", "model") else None,
            importance=f.importance,
        )
        for f in figures.on("launches_table")
    ]


def _launch_cells(columns: list[str], rows: list[tuple]) -> list[list[str]]:
    """Per launch: its cells as text, one per figure of the ``launches_table`` surface."""
    from logparse import figures
    from logparse.cli.cells import figure_cell

    shown = figures.on("launches_table")
    out = []
    for values in rows:
        r = dict(zip(columns, values))
        out.append(
            [_launch_cell(f, r) if f.name in _LAUNCH_OWN_CELLS else figure_cell(f, r.get(f.name)) for f in shown]
        )
    return out


#: Cells of the launches table that read more than their own figure.
_LAUNCH_OWN_CELLS = ("launch_id", "started_at", "version", "mem_fraction_static", "outcome")


def _launch_cell(fig, r: dict[str, Any]) -> str:
    if fig.name == "launch_id":
        return r["launch_id"][:12]
    if fig.name == "outcome":
        return r.get("outcome") or "?"
    if fig.name == "started_at":  # with its zone, when the input printed one (logparse.launches.times)
        return iso_time(r.get("started_at"), r.get("time_zone"), mark=False) or "—"
    if fig.name == "version":
        return _version_cell(r.get("version"), r.get("engine"))
    # one column, each engine's own fraction (vLLM's of total memory, SGLang's of free memory)
    flag = engines.of(r).fraction_flag
    mf = r.get(flag) if flag else None
    return "—" if mf is None else f"{mf:g}"


def launch_table(columns: list[str], rows: list[tuple], console) -> None:
    """The launches table, fitted to the width: the outcome coloured."""
    from rich.text import Text

    from logparse.cli.render import OUTCOME_STYLE, print_fitted

    def styled(_i: int, cells: dict[str, Any]) -> dict[str, Any]:
        if "outcome" in cells:
            cells["outcome"] = Text(cells["outcome"], style=OUTCOME_STYLE.get(cells["outcome"], ""))
        return cells

    print_fitted(console, f"{len(rows)} launch(es)", _launch_columns(), _launch_cells(columns, rows), styled=styled)


def _version_cell(version: str | None, engine: str | None) -> str:
    """The release as the table shows it (:meth:`~logparse.engines.base.Engine.version_cell`)."""
    return engines.get(engine).version_cell(version)


#: The columns of ``history`` its table shows (``metric``: the metric chosen).
HISTORY_TABLE_COLUMNS = (
    "deployment",
    "launch_no",
    "launch_id",
    "started_at",
    "time_zone",
    "outcome",
    "version",
    "metric",
    "metric_change",
    *WHAT_CHANGED_COLUMNS,
)


def _history_cells(columns: list[str], rows: list[tuple], m: str) -> list[tuple[list, bool]]:
    """Per row: its cells as plain text (the change and what changed as (text, style) pieces),
    and whether it ends its deployment's section.  Rows are read by
    position: ``history`` of a large store is thousands of them."""
    from operator import itemgetter

    from logparse.cli.cells import cell
    from logparse.launches.deployment import short_label

    at = {c: i for i, c in enumerate(columns)}
    dep = at["deployment"]
    shown = itemgetter(*(at[c] for c in ("launch_no", "launch_id", "started_at", "time_zone", "outcome", "version", m)))
    change_at, engine_at = at[f"{m}_change"], at["engine"]
    what = itemgetter(*(at[c] for c in WHAT_CHANGED_COLUMNS))
    out = []
    n = len(rows)
    for i, row in enumerate(rows):
        first = i == 0 or rows[i - 1][dep] != row[dep]
        last = i == n - 1 or rows[i + 1][dep] != row[dep]
        no, lid, started, zone, outcome, version, value = shown(row)
        change = row[change_at]
        ctext = "—" if change is None else (f"{change:+,}" if isinstance(change, int) else f"{change:+.2f}")
        pieces = what_changed_pieces(*what(row))
        cells = [
            short_label(row[dep]) if first else "",
            str(no),
            lid[:12],
            iso_time(started, zone, mark=False) or "—",
            outcome or "",
            _version_cell(version, row[engine_at]),
            cell(value),
        ]
        cells += [(ctext, "" if not change else ("green" if change > 0 else "red")), pieces]
        out.append((cells, last and i < n - 1))
    return out


def _history_columns(m: str) -> list:
    """The history table's columns (``m``: the metric, headed by its label in :mod:`logparse.figures`)."""
    from logparse.cli.layout import Col
    from logparse.figures import label

    return [
        Col("deployment", shorten="middle", floor=28),
        Col("#", right=True, importance=4),
        Col("launch"),
        Col("started", importance=3),
        Col("outcome", importance=4),
        Col("version", importance=2),
        Col(label(m), right=True),
        Col("change", right=True, importance=2),
        Col("what changed", wrap=True, floor=20),
    ]


def history_table(columns: list[str], rows: list[tuple], m: str, console) -> None:
    """The history table, fitted to the width: the change coloured, what changed styled piece by piece."""
    from rich.text import Text

    from logparse.cli.render import print_fitted

    cells = _history_cells(columns, rows, m)
    plain = [[*row[:7], row[7][0], pieces_text(row[8])] for row, _ in cells]

    def styled(i: int, shown: dict[str, Any]) -> dict[str, Any]:
        row = cells[i][0]
        if "change" in shown:
            shown["change"] = Text(row[7][0], style=row[7][1])
        if "what changed" in shown:
            what = Text("")
            for text, style in row[8]:
                what.append(text, style=style or None)
            shown["what changed"] = what
        return shown

    title = f"{m} over launches, by deployment"
    print_fitted(console, title, _history_columns(m), plain, styled=styled, sections=[end for _, end in cells])
