"""The budget waterfall (``explain --plot`` and the HTML report's budget): one row per step.

Each row is the step's label above its bar, the figure beside it; a deduction hangs from the level
left by the step before it.  A launch with the whole device in its log gets two panels with their
own scales (the device down to what is free after the weights, then what became of that memory), so
the small allocations stay visible next to the weights.  The part held back is a dashed line, the
predicted KV pool a mark inside the logged one, and each rank's own level a tick on every row.
"""

from __future__ import annotations

from logparse.cli.charts import svg
from logparse.reports.charts import WaterfallBar, WaterfallChart, WaterfallPanel

PAD = 10
ROW = 32
VALUE_W = 52  #: room right of the longest bar for its figure
HELD_BACK = "#c44e52"
TICK = "#263238"


def waterfall_svg(chart: WaterfallChart, *, width: float = 820, standalone: bool = True) -> str:
    """The chart as SVG (``width`` in user units; the inline report chart is 360 wide)."""
    parts = [svg.text(PAD, 18, svg.clip(chart.title, int((width - 2 * PAD) / 7.8)), size=13, font_weight="bold")]
    y = 26.0
    if chart.subtitle:
        parts.append(svg.text(PAD, 38, svg.clip(chart.subtitle, int((width - 2 * PAD) / 6.6)), size=11, fill=svg.MUTED))
        y = 46.0
    if not chart.panels:
        parts.append(svg.text(PAD, y + 20, chart.empty, size=12, fill=svg.MUTED))
        return svg.document(parts, width, y + 34, chart.title, standalone=standalone)
    for panel in chart.panels:
        drawn, y = _panel(panel, chart.unit, y + 8, width)
        parts += drawn
    if any(b.rank_levels for b in chart.bars):
        parts.append(_rank_legend(y + 4))
        y += 18
    return svg.document(parts, width, y + 8, chart.title, standalone=standalone)


def _panel(panel: WaterfallPanel, unit: str, y: float, width: float) -> tuple[list[str], float]:
    """A panel's header, rows and the line of the part held back; returns them and the y below."""
    parts = [svg.text(PAD, y + 11, svg.clip(panel.title, int((width - 2 * PAD) / 6.6)), size=11, font_weight="bold")]
    y += 16
    top = max([b.hi for b in panel.bars] + [panel.reserved_gb or 0.0, 1e-9])
    bottom = min([0.0] + [b.lo for b in panel.bars])
    scale = svg.Linear(bottom, top, PAD, width - PAD - VALUE_W)
    chars = int((width - 2 * PAD) / 6.0)
    if panel.note:
        parts.append(svg.text(PAD, y + 11, svg.clip(panel.note, chars), size=10, fill=svg.MUTED))
        y += 16
    if panel.reserved_gb:
        label = f"dashed: held back (1 − f) × M_pre = {panel.reserved_gb:,.2f} {unit}"
        parts.append(svg.text(PAD, y + 11, svg.clip(label, chars), size=10, fill=HELD_BACK))
        y += 16
        x = scale(panel.reserved_gb)  # through the bars only: the labels above them stay readable
        tip = f"held back (1 − f) × M_pre: {panel.reserved_gb:,.2f} {unit}"
        for k in range(len(panel.bars)):
            top = y + k * ROW + 13
            parts.append(svg.line(x, top, x, top + 16, HELD_BACK, stroke_width=1.2, stroke_dasharray="4 2", title=tip))
    for b in panel.bars:
        parts += _row(b, y, scale, unit)
        y += ROW
    return parts, y


def _row(b: WaterfallBar, y: float, scale: svg.Linear, unit: str) -> list[str]:
    """A step: its label, its bar (a note is an outline), its figure, and the marks on it."""
    label = b.label + (f" · predicted {b.predicted_gb:,.2f}" if b.predicted_gb is not None else "")
    x0, x1 = scale(b.lo), scale(b.hi)
    tip = f"{b.label}: {b.gb:,.2f} {unit}"
    if b.role == "note":
        outline = HELD_BACK if b.gb < 0 else "#78909c"
        bar = svg.rect(x0, y + 15, x1 - x0, 12, "none", stroke=outline, stroke_dasharray="3 2", title=tip)
    else:
        bar = svg.rect(x0, y + 15, x1 - x0, 12, svg.ROLE_COLOR[b.role], title=tip)
    sign = "−" if b.kind == "minus" or b.gb < 0 else ""
    parts = [
        svg.text(PAD, y + 11, label, size=11),
        bar,
        svg.text(x1 + 4, y + 25, f"{sign}{abs(b.gb):,.2f}", size=11, fill=svg.MUTED),
    ]
    if b.predicted_gb is not None and b.kind == "minus" and b.predicted_gb <= b.hi:
        xp = scale(b.hi - b.predicted_gb)
        parts.append(
            svg.line(
                xp,
                y + 12,
                xp,
                y + 30,
                "#000000",
                stroke_width=2,
                title=f"predicted {b.label}: {b.predicted_gb:,.2f} {unit}",
            )
        )
    for rank, level in b.rank_levels:
        xr = scale(level)
        parts.append(
            svg.line(
                xr,
                y + 13,
                xr,
                y + 29,
                TICK,
                stroke_width=1.2,
                stroke_opacity=0.7,
                title=f"{rank} after {b.label}: {level:,.2f} {unit}",
            )
        )
    return parts


def _rank_legend(y: float) -> str:
    return svg.text(
        PAD, y + 10, "│ ticks: each rank's own level after the step (hover for the figures)", size=10, fill=svg.MUTED
    )
