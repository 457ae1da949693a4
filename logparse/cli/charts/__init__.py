"""logparse's one chart backend: SVG written by logparse, from the specs of :mod:`logparse.reports.charts`.

``explain --plot``, ``diff --plot``, ``history --plot`` and the HTML report's inline charts all come
from these renderers (``waterfall``, ``bars``, ``history``, on the primitives of ``svg``); ``.png`` and
``.pdf`` are the same SVG converted by cairosvg (``raster``, the ``plot`` extra).  No script, nothing
fetched: a chart opens offline, scales by its ``viewBox``, and shows exact figures in ``<title>``
tooltips.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from logparse.cli.charts.bars import diff_svg
from logparse.cli.charts.history import history_chart, history_svg
from logparse.cli.charts.raster import PlotUnavailable, check_plot_path, write_chart
from logparse.cli.charts.waterfall import waterfall_svg
from logparse.reports import charts as specs


def plot_explain(doc: dict[str, Any], path: str | Path) -> None:
    """``explain --plot``: the budget waterfall of the binding rank."""
    write_chart(waterfall_svg(specs.explain_chart(doc)), path)


def plot_diff(doc: dict[str, Any], path: str | Path) -> None:
    """``diff --plot``: A's and B's budget, the KV-token attribution, the HiCache host pools."""
    write_chart(diff_svg(specs.diff_chart(doc)), path)


def plot_history(rows: list[dict[str, Any]], metric: str, path: str | Path, axis: str = "auto") -> specs.HistoryChart:
    """``history --plot``: a panel per deployment (the store's ``history`` rows); returns what was drawn."""
    if not rows:
        raise ValueError("nothing to plot: no launches match")
    chart = specs.history_chart(rows, metric, axis=axis)
    write_chart(history_svg(chart), path)
    return chart


__all__ = [
    "PlotUnavailable",
    "check_plot_path",
    "diff_svg",
    "history_chart",
    "history_svg",
    "plot_diff",
    "plot_explain",
    "plot_history",
    "waterfall_svg",
    "write_chart",
]
