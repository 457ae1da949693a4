"""``diff --plot``: A's and B's memory budget side by side, why the KV tokens moved, the HiCache host pools.

Three panels in one SVG: the budget figures as pairs of bars (A blue, B orange, the figure on each),
the attribution as a waterfall from A's logged tokens through each input's change to B's (on an axis
that starts where the bars differ, and says so), and each launch's HiCache host pool ("off" without one).
"""

from __future__ import annotations

from logparse.cli.charts import svg
from logparse.reports.charts import DiffChart, PairBar, TokenStep

WIDTH = 980
LEFT = 62
PANEL_H = 250  #: the plotting height of a panel
LABEL_H = 44  #: room below a panel for its wrapped labels


def diff_svg(chart: DiffChart, *, standalone: bool = True) -> str:
    parts = [_legend_square(10, 8, "a"), svg.text(26, 18, svg.clip(chart.a_title, 150), size=11)]
    parts += [_legend_square(10, 24, "b"), svg.text(26, 34, svg.clip(chart.b_title, 150), size=11)]
    y = 50.0
    parts += _budget(chart.budget, chart.budget_unit, LEFT, WIDTH - 12, y)
    y += 22 + PANEL_H + LABEL_H + 16
    split = WIDTH * 0.72
    parts += _tokens(chart.tokens_title, list(chart.tokens), LEFT + 14, split - 20, y)
    parts += _hicache(chart.hicache, split + 40, WIDTH - 12, y)
    height = y + 22 + PANEL_H + LABEL_H + 12
    return svg.document(parts, WIDTH, height, f"{chart.a_title} / {chart.b_title}", standalone=standalone)


def _legend_square(x: float, y: float, side: str) -> str:
    return svg.rect(x, y, 11, 11, svg.ROLE_COLOR[side])


def _frame(title: str, left: float, right: float, y: float, lo: float, hi: float, unit: str):
    """A panel's title, its vertical scale (``lo..hi`` on round ticks) and grid; returns (parts, scale, base y)."""
    lo, hi, ticks = svg.nice_range(lo, hi, 5)
    top, base = y + 22, y + 22 + PANEL_H
    scale = svg.Linear(lo, hi, base, top)
    parts = [svg.text(left, y + 12, title, size=12, font_weight="bold")]
    parts += svg.y_grid(left, right, scale, ticks, unit)
    parts.append(svg.line(left, base, right, base, svg.AXIS))
    return parts, scale, base


def _labels(x: float, base: float, label: str, width: float) -> str:
    return svg.lines(x, base + 14, svg.wrap(label, int(width / 6.0), 3), size=10, fill=svg.FG, text_anchor="middle")


def _budget(pairs: tuple[PairBar, ...], unit: str, left: float, right: float, y: float) -> list[str]:
    """A's and B's budget figures side by side, the ones either launch has."""
    top = max([p.a or 0.0 for p in pairs] + [p.b or 0.0 for p in pairs] + [1.0]) * 1.12
    parts, scale, base = _frame(f"memory budget, {unit}", left, right, y, 0.0, top, "GiB")
    if not pairs:
        parts.append(svg.text(left + 10, base - PANEL_H / 2, "no budget figures in either launch", fill=svg.MUTED))
        return parts
    group = (right - left) / len(pairs)
    bar = min(group * 0.36, 44)
    for i, p in enumerate(pairs):
        mid = left + group * (i + 0.5)
        for side, value, x in (("a", p.a, mid - bar - 1), ("b", p.b, mid + 1)):
            if value is None:
                parts.append(svg.text(x + bar / 2, base - 4, "—", size=10, fill=svg.MUTED, text_anchor="middle"))
                continue
            tip = f"{side.upper()}: {p.label} {value:,.2f} GiB"
            parts.append(svg.rect(x, scale(value), bar, base - scale(value), svg.ROLE_COLOR[side], title=tip))
            parts.append(
                svg.text(x + bar / 2, scale(value) - 3, f"{value:,.2f}", size=9, fill=svg.FG, text_anchor="middle")
            )
        parts.append(_labels(mid, base, p.label, group))
    return parts


def token_range(steps: list[TokenStep]) -> tuple[float, float]:
    """The axis of the attribution: around the levels the steps reach, so changes of a few tokens on a
    pool of hundreds of thousands stay visible (the bars of A and B then start below the axis)."""
    levels = [s.hi for s in steps if s.role in ("a", "b")] + [
        v for s in steps for v in (s.lo, s.hi) if s.role not in ("a", "b")
    ]
    lo, hi = min(levels), max(levels)
    span = max(hi - lo, 0.02 * hi, 1.0)
    return max(0.0, lo - 1.5 * span), hi + 0.6 * span


def _tokens(title: str, steps: list[TokenStep], left: float, right: float, y: float) -> list[str]:
    """The attribution waterfall (or A's and B's tokens when the formula cannot attribute them)."""
    if not steps:
        return [
            svg.text(left, y + 12, title, size=12, font_weight="bold"),
            svg.text(left, y + 40, "no KV tokens in either launch", fill=svg.MUTED),
        ]
    lo, hi = token_range(steps)
    parts, scale, base = _frame(title, left, right, y, lo, hi, "tokens")
    if scale.d0 > 0:
        parts.append(
            svg.text(right, y + 12, f"axis from {scale.d0:,.0f}, not 0", size=10, fill=svg.MUTED, text_anchor="end")
        )
    group = (right - left) / len(steps)
    bar = min(group * 0.62, 70)
    for i, s in enumerate(steps):
        mid = left + group * (i + 0.5)
        y0, y1 = scale(max(s.lo, scale.d0)), scale(s.hi)
        sign = "" if s.role in ("a", "b") else "+" if s.tokens >= 0 else ""
        tip = f"{s.label}: {sign}{s.tokens:,} tokens"
        if s.role == "zero":
            parts.append(
                svg.line(mid - bar / 2, y1, mid + bar / 2, y1, svg.ROLE_COLOR["zero"], stroke_width=2.5, title=tip)
            )
        else:
            parts.append(svg.rect(mid - bar / 2, y1, bar, y0 - y1, svg.ROLE_COLOR[s.role], title=tip))
        parts.append(svg.text(mid, y1 - 4, f"{sign}{s.tokens:,}", size=10, text_anchor="middle"))
        parts.append(_labels(mid, base, s.label, group))
    return parts


def _hicache(p: PairBar, left: float, right: float, y: float) -> list[str]:
    """Each launch's HiCache host pool per rank, or "off"."""
    if p.a is None and p.b is None:
        return [
            svg.text(left, y + 12, "HiCache host pool", size=12, font_weight="bold"),
            svg.text(left, y + 40, "off in both launches", fill=svg.MUTED),
        ]
    top = max(p.a or 0.0, p.b or 0.0, 1.0) * 1.15
    parts, scale, base = _frame("HiCache host pool", left, right, y, 0.0, top, "GB")
    parts.append(svg.text(left, y + 24 + PANEL_H + LABEL_H - 8, "per rank, decimal GB", size=10, fill=svg.MUTED))
    group = (right - left) / 2
    for i, (side, value) in enumerate((("a", p.a), ("b", p.b))):
        mid = left + group * (i + 0.5)
        shown = "off" if value is None else f"{value:,.2f}"
        if value is not None:
            tip = f"{side.upper()}: HiCache host pool {value:,.2f} GB per rank"
            parts.append(
                svg.rect(
                    mid - group * 0.3, scale(value), group * 0.6, base - scale(value), svg.ROLE_COLOR[side], title=tip
                )
            )
        parts.append(svg.text(mid, scale(value or 0.0) - 4, shown, size=10, text_anchor="middle"))
        parts.append(svg.text(mid, base + 14, side.upper(), size=11, text_anchor="middle"))
    return parts
