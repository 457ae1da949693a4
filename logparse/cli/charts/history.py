"""A deployment's history (``history --plot``, the HTML report's three charts per deployment).

The figure of each launch holds until the next restart, so launches are joined by steps, never by
slopes; a restart that did not come up (no figure) ends the step before it, and is an × at the foot
of the panel in its outcome's colour.  The x axis is dated when every launch has a start time (the
ticks are round times, the date written where it changes), else it is the launch order (``#n``).
Each restart that changed the engine version, the arguments or the meaning of ``kv_tokens`` is a
line at that restart with what changed written along it; tooltips give every exact figure.
"""

from __future__ import annotations

import math
from typing import Any

from logparse.cli.charts import svg
from logparse.reports.charts import HistoryChart, HistoryMark, HistorySeries, history_series

MARK_STYLE = {
    "version": (svg.VERSION_COLOR, None, 1.5),
    "args": (svg.ARGS_COLOR, "3 3", 1.0),
    "kv_definition": (svg.KV_DEFINITION_COLOR, "1 2", 1.5),
}
LEGEND = (
    ("version", "engine version changed"),
    ("args", "server arguments changed"),
    ("kv_definition", "kv_tokens redefined"),
)


class Box:
    """Where a panel draws: its plotting area and how launches and figures map onto it."""

    def __init__(self, series: HistorySeries, x: float, y: float, w: float, h: float, compact: bool) -> None:
        self.series, self.compact = series, compact
        self.left, self.right = x + (56 if compact else 70), x + w - 12
        self.top, self.base = y + (32 if compact else 30), y + h - (30 if compact else 40)
        known = series.known
        lo, hi = min([0.0, *known]), max([0.0, *known])
        lo, hi, self.ticks = svg.nice_range(lo, hi + (hi - lo) * 0.08 if known else 1.0, 4)
        self.y = svg.Linear(lo, hi, self.base, self.top)
        self.time = svg.Linear(0.0, 1.0, self.left, self.right)  #: seconds to x, on a dated axis
        self.xs = self._xs()

    def _xs(self) -> list[float]:
        pts = self.series.points
        pad = 14.0 if self.compact else 36.0  # room for the last launch's labels
        if self.series.axis == "time":
            secs = [svg.seconds(p.started_at) for p in pts if p.started_at is not None]
            t0, t1 = min(secs), max(secs)
            margin = max((t1 - t0) * 0.05, 1800.0 if t1 == t0 else 0.0)
            self.time = svg.Linear(t0 - margin, t1 + margin, self.left + pad, self.right - pad)
            return [self.time(s) for s in secs]
        if len(pts) == 1:
            return [(self.left + self.right) / 2]
        step = (self.right - self.left - 2 * pad) / (len(pts) - 1)
        return [self.left + pad + i * step for i in range(len(pts))]


def panel(series: HistorySeries, x: float, y: float, w: float, h: float, *, compact: bool) -> list[str]:
    """One deployment's history in the box at (x, y) of size w × h."""
    box = Box(series, x, y, w, h, compact)
    title = series.title + (f" ({series.note})" if series.note else "")
    parts = [svg.text(x + (56 if compact else 8), y + 14, svg.clip(title, int(w / 7)), size=12, font_weight="bold")]
    if series.known:
        parts += svg.y_grid(box.left, box.right, box.y, box.ticks, series.unit)
    parts.append(svg.line(box.left, box.base, box.right, box.base, svg.AXIS))
    if not compact:
        parts.append(
            svg.text(
                x + 12,
                (box.top + box.base) / 2,
                series.metric,
                size=10,
                fill=svg.MUTED,
                rotate=-90,
                text_anchor="middle",
            )
        )
    parts += _x_axis(box)
    parts += _marks(box)
    parts += _steps(box)
    parts += _points(box)
    if not series.known:
        msg = f"no {series.metric} in these launches (×: a launch without it, e.g. a failed start)"
        parts.append(
            svg.text(
                (box.left + box.right) / 2,
                (box.top + box.base) / 2,
                svg.clip(msg, int((box.right - box.left) / 6)),
                size=10,
                fill=svg.MUTED,
                text_anchor="middle",
            )
        )
    return parts


def _x_axis(box: Box) -> list[str]:
    """Round times on a dated axis; ``#n`` (and, with room, the start time) under each launch otherwise."""
    out = []
    if box.series.axis == "time":
        first, last = svg.from_seconds(box.time.d0), svg.from_seconds(box.time.d1)
        for t, label in svg.date_ticks(first, last, 4 if box.compact else 7):
            xt = box.time(svg.seconds(t))
            out.append(svg.line(xt, box.base, xt, box.base + 4, svg.AXIS))
            out.append(svg.lines(xt, box.base + 14, label, size=10, fill=svg.MUTED, text_anchor="middle"))
        return out
    spacing = box.xs[1] - box.xs[0] if len(box.xs) > 1 else 1e9
    every = max(1, math.ceil((28 if box.compact else 76) / spacing))
    for i, (xp, p) in enumerate(zip(box.xs, box.series.points)):
        if i % every:
            continue
        label = [f"#{p.launch_no}"]
        if not box.compact:
            label.append(p.started_at.strftime("%m-%d %H:%M") if p.started_at else "no time")
        out.append(svg.lines(xp, box.base + 14, label, size=10, fill=svg.MUTED, text_anchor="middle"))
    if box.compact and any(p.started_at is None for p in box.series.points):  # why the axis is not dated
        mid = (box.left + box.right) / 2
        out.append(
            svg.text(
                mid,
                box.base + 26,
                "launch order: no start time in the log",
                size=9,
                fill=svg.MUTED,
                text_anchor="middle",
            )
        )
    return out


def _marks(box: Box) -> list[str]:
    """A line at each restart that changed something, what changed written along it (a label that
    would cover the one before it is left to the line's tooltip).  A compact panel has no room to
    write it: each line carries its number (1, 2, …, in the order of ``series.marks``), and the page
    lists what each number changed (:func:`logparse.reports.charts.numbered_changes`)."""
    if box.compact:
        return _numbered_marks(box)
    out: list[str] = []
    at: dict[int, int] = {}
    labels: list[float] = []
    share = 0.8 if box.compact else 0.95  # what changed matters more than a point it may cross
    room = int(share * (box.base - box.top) / (10 * svg.CHAR_EM))
    for m in box.series.marks:
        k = at[m.index] = at.get(m.index, -1) + 1
        color, dash, width = MARK_STYLE[m.kind]
        xm = box.xs[m.index] - 4.0 * k
        out.append(
            svg.line(xm, box.top - 4, xm, box.base, color, stroke_width=width, stroke_dasharray=dash, title=m.detail)
        )
        xl = box.xs[m.index] - 3 - 12.0 * k
        if all(abs(xl - other) >= 12 for other in labels):
            labels.append(xl)
            out.append(_mark_label(m, xl, box.top - 2, room, color))
    return out


def _numbered_marks(box: Box) -> list[str]:
    out: list[str] = []
    at: dict[int, int] = {}
    for n, m in enumerate(box.series.marks, start=1):
        k = at[m.index] = at.get(m.index, -1) + 1
        color, dash, width = MARK_STYLE[m.kind]
        xm = box.xs[m.index] - 4.0 * k
        out.append(
            svg.line(xm, box.top - 2, xm, box.base, color, stroke_width=width, stroke_dasharray=dash, title=m.detail)
        )
        xt = box.xs[m.index] - 9.0 * k
        out.append(svg.text(xt, box.top - 4, str(n), size=10, font_weight="bold", fill=color, text_anchor="middle"))
    return out


def _mark_label(m: HistoryMark, x: float, y: float, room: int, color: str) -> str:
    """The change, written upwards left of its line, ending at the top of the panel."""
    return svg.text(x, y, svg.clip(m.label, room), size=10, fill=color, rotate=-90, text_anchor="end")


def _steps(box: Box) -> list[str]:
    """The figure held from each launch to the next restart: runs of steps, broken where a launch has none."""
    runs: list[list[tuple[float, float]]] = []
    pts = box.series.points
    for i, p in enumerate(pts):
        if p.value is None:
            continue
        yv = box.y(p.value)
        if i == 0 or pts[i - 1].value is None:
            runs.append([(box.xs[i], yv)])
        else:
            runs[-1] += [(box.xs[i], runs[-1][-1][1]), (box.xs[i], yv)]
        if i + 1 < len(pts) and pts[i + 1].value is None:
            runs[-1].append((box.xs[i + 1], yv))
    return [svg.polyline(r, svg.LINE_COLOR, width=2.0, cls="line") for r in runs if len(r) > 1]


def _points(box: Box) -> list[str]:
    """A dot per launch in its outcome's colour, or an × at the foot when it has no figure."""
    out = []
    unit = box.series.unit
    last = -1e9  # where the last change was written: one that would cover it is left to the tooltip
    for xp, p in zip(box.xs, box.series.points):
        color = svg.OUTCOME_COLOR.get(p.outcome or "", svg.UNKNOWN_COLOR)
        if p.value is None:
            out.append(
                svg.element(
                    "text",
                    "×" + svg.tip(f"{p.tip}: no figure"),
                    x=xp,
                    y=box.base - 4,
                    font_size=16,
                    font_weight="bold",
                    fill=color,
                    text_anchor="middle",
                    cls="miss",
                )
            )
            if not box.compact:
                out.append(
                    svg.text(xp, box.base - 22, p.outcome or "not known", size=9, fill=color, text_anchor="middle")
                )
            continue
        yv = box.y(p.value)
        out.append(svg.circle(xp, yv, 4.0, color, title=f"{p.tip}: {svg.fmt_value(p.value, unit)} {unit}".rstrip()))
        if not box.compact and p.change and xp - last >= 64:
            last = xp
            shown = f"{p.change:+,.0f}" if p.integer else f"{p.change:+.2f}"
            out.append(svg.text(xp + 6, yv - 6, shown, size=9, fill="#2e7d32" if p.change > 0 else "#c62828"))
    return out


# ------------------------------------------------------------------------------ documents

WIDTH, PANEL_H = 960, 270
INLINE_W, INLINE_H = 360, 190


def history_chart(points: list[dict[str, Any]], key: str, title: str, unit: str, *, axis: str = "auto") -> str:
    """The HTML report's chart of one figure over a deployment's launches (an inline ``<svg>``)."""
    series = history_series(points, key, title=title, unit=unit, axis=axis)
    parts = panel(series, 0, 0, INLINE_W, INLINE_H, compact=True)
    return svg.document(parts, INLINE_W, INLINE_H, f"{title} over {len(points)} launch(es)", standalone=False)


def history_svg(chart: HistoryChart, *, standalone: bool = True) -> str:
    """``history --plot``: a panel per deployment under one title and legend."""
    parts = [svg.text(8, 20, chart.title, size=14, font_weight="bold")]
    parts += _legend(8, 40)
    y = 52.0
    for s in chart.series:
        parts += panel(s, 0, y, WIDTH, PANEL_H, compact=False)
        y += PANEL_H
    return svg.document(parts, WIDTH, y + 6, chart.title, standalone=standalone)


def _legend(x: float, y: float) -> list[str]:
    out = []
    for outcome, color in svg.OUTCOME_COLOR.items():
        out += [svg.circle(x + 4, y - 4, 4.0, color), svg.text(x + 12, y, outcome, size=10)]
        x += 22 + svg.text_width(outcome, 10)
    out += [
        svg.text(x, y + 1, "×", size=13, font_weight="bold", fill=svg.UNKNOWN_COLOR),
        svg.text(x + 12, y, "no figure", size=10),
    ]
    x += 80
    for kind, label in LEGEND:
        color, dash, width = MARK_STYLE[kind]
        out += [
            svg.line(x, y - 4, x + 18, y - 4, color, stroke_width=width, stroke_dasharray=dash),
            svg.text(x + 22, y, label, size=10),
        ]
        x += 34 + svg.text_width(label, 10)
    return out
