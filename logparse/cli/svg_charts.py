"""Inline SVG charts for the HTML report: a launch history line and a budget waterfall.

Plain strings, no library and no script: the page must render offline and in any browser.  Every
chart has a ``viewBox`` and scales to its container's width (phones included); points and bars
carry a ``<title>`` (the browser's tooltip) with the exact figure.
"""

from __future__ import annotations

from html import escape
from typing import Any

OUTCOME_COLOR = {"ready": "#2e7d32", "failed": "#c62828", "incomplete": "#ef6c00"}
VERSION_COLOR = "#6a1b9a"
ARGS_COLOR = "#757575"
W, H = 360, 190
LEFT, RIGHT, TOP, BOTTOM = 56, 12, 26, 30


def _num(v: float, unit: str) -> str:
    if unit == "tokens":
        return f"{v:,.0f}"
    return f"{v:,.2f}"


def _tick(v: float, unit: str) -> str:
    """An axis label short enough for the left margin (the points' tooltips give the exact figure)."""
    if unit == "tokens" and abs(v) >= 1e6:
        return f"{v / 1e6:.2f}M"
    if unit == "tokens" and abs(v) >= 1e4:
        return f"{v / 1e3:.0f}k"
    return _num(v, unit)


def _scale(values: list[float]) -> tuple[float, float]:
    lo = min([0.0, *values])
    hi = max([0.0, *values])
    if hi == lo:
        hi = lo + 1.0
    return lo, hi + (hi - lo) * 0.12


def _x(i: int, n: int) -> float:
    if n == 1:
        return LEFT + (W - LEFT - RIGHT) / 2
    return LEFT + i * (W - LEFT - RIGHT) / (n - 1)


def _axes(lo: float, hi: float, unit: str) -> list[str]:
    out = [f'<line x1="{LEFT}" y1="{H - BOTTOM}" x2="{W - RIGHT}" y2="{H - BOTTOM}" class="axis"/>']
    for k in range(3):
        v = lo + (hi - lo) * k / 2
        y = _y(v, lo, hi)
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{W - RIGHT}" y2="{y:.1f}" class="grid"/>')
        out.append(f'<text x="{LEFT - 4}" y="{y + 4:.1f}" class="tick" text-anchor="end">{_tick(v, unit)}</text>')
    return out


def _y(v: float, lo: float, hi: float) -> float:
    return TOP + (H - TOP - BOTTOM) * (1 - (v - lo) / (hi - lo))


def _marks(points: list[dict[str, Any]]) -> list[str]:
    """A line at every restart that changed the version (purple, labelled) or the arguments (grey)."""
    out = []
    n = len(points)
    for i, p in enumerate(points):
        if i == 0:
            continue
        x = _x(i, n) - (_x(i, n) - _x(i - 1, n)) / 2
        if p.get("version_changed"):
            label = escape(str(p.get("version_change") or "version"))
            out.append(
                f'<line x1="{x:.1f}" y1="{TOP - 6}" x2="{x:.1f}" y2="{H - BOTTOM}" stroke="{VERSION_COLOR}" '
                f'stroke-width="1.5"><title>version {label}</title></line>'
                f'<text x="{x + 3:.1f}" y="{TOP - 10}" class="mark" fill="{VERSION_COLOR}">{label}</text>'
            )
        elif p.get("changed_args"):
            label = escape(str(p["changed_args"]))
            out.append(
                f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{H - BOTTOM}" stroke="{ARGS_COLOR}" '
                f'stroke-dasharray="3 3"><title>arguments changed: {label}</title></line>'
            )
    return out


def history_chart(points: list[dict[str, Any]], key: str, title: str, unit: str) -> str:
    """One figure over the launches of a deployment; a launch without the figure is an ×."""
    n = len(points)
    values = [float(p[key]) for p in points if p.get(key) is not None]
    lo, hi = _scale(values)
    parts = [f'<text x="{LEFT}" y="14" class="title">{escape(title)}</text>', *_axes(lo, hi, unit), *_marks(points)]
    line = [f"{_x(i, n):.1f},{_y(float(p[key]), lo, hi):.1f}" for i, p in enumerate(points) if p.get(key) is not None]
    if len(line) > 1:
        parts.append(f'<polyline points="{" ".join(line)}" class="line"/>')
    for i, p in enumerate(points):
        x = _x(i, n)
        tip = f"launch {p.get('launch_no')} · {escape(str(p.get('started_at') or '?'))} · {escape(p.get('outcome') or '?')}"
        color = OUTCOME_COLOR.get(p.get("outcome") or "", "#555")
        if p.get(key) is None:
            y = H - BOTTOM - 8
            parts.append(
                f'<text x="{x:.1f}" y="{y + 4:.1f}" text-anchor="middle" class="miss" fill="{color}">×'
                f"<title>{tip}: no figure</title></text>"
            )
            continue
        v = float(p[key])
        parts.append(
            f'<circle cx="{x:.1f}" cy="{_y(v, lo, hi):.1f}" r="4" fill="{color}">'
            f"<title>{tip}: {_num(v, unit)} {escape(unit)}</title></circle>"
        )
        parts.append(
            f'<text x="{x:.1f}" y="{H - BOTTOM + 14}" class="tick" text-anchor="middle">#{p.get("launch_no")}</text>'
        )
    return _svg(parts, H, f"{title} over {n} launch(es)")


def _svg(parts: list[str], height: float, label: str) -> str:
    body = "".join(parts)
    return f'<svg viewBox="0 0 {W} {height:.0f}" role="img" aria-label="{escape(label)}" class="chart">{body}</svg>'


ROW = 34


def waterfall_chart(steps: list[dict[str, Any]], title: str) -> str:
    """The budget steps of the binding rank: free memory, what each allocation took, headroom left."""
    steps = [s for s in steps if s.get("gb") is not None]
    top = max([float(s["gb"]) for s in steps] or [1.0])
    scale = (W - 2 * 8 - 44) / (top or 1.0)
    parts = [f'<text x="8" y="14" class="title">{escape(title)}</text>']
    level = 0.0
    for i, s in enumerate(steps):
        gb, kind = float(s["gb"]), s["kind"]
        y = 24 + i * ROW
        if kind == "minus" and level >= gb:
            x0, x1, level = (level - gb), level, level - gb
        elif kind == "minus":  # more than the level shows (no start figure): drawn from zero
            x0, x1, level = 0.0, gb, 0.0
        elif kind == "note":
            x0, x1 = 0.0, gb
        else:
            x0, x1, level = 0.0, gb, gb
        cls = {"minus": "minus", "note": "note", "end": "end"}.get(kind, "level")
        label = escape(str(s.get("label") or kind))
        bx, bw = 8 + max(x0, 0.0) * scale, max((x1 - x0) * scale, 1.0)
        parts.append(f'<text x="8" y="{y + 11}" class="step">{label}</text>')
        parts.append(
            f'<rect x="{bx:.1f}" y="{y + 15}" width="{bw:.1f}" height="12" class="{cls}">'
            f"<title>{label}: {gb:,.2f} GiB</title></rect>"
        )
        sign = "−" if kind == "minus" else ""
        parts.append(f'<text x="{bx + bw + 4:.1f}" y="{y + 25}" class="tick">{sign}{gb:,.2f}</text>')
    return _svg(parts, 24 + len(steps) * ROW + 6, title)
