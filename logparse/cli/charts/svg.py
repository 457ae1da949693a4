"""SVG primitives for logparse's charts: elements as strings, axis ticks (numbers and dates), text sizes.

Every element carries its own presentation attributes (no stylesheet, no script), so a chart looks
the same inline in the HTML report, opened as a file, and converted to PNG or PDF by cairosvg; the
root has a ``viewBox`` and scales to its container.  A ``<title>`` child is the browser's tooltip
with the exact figure.  Text is never measured (there is no layout engine here): widths are
estimated from the character count, generously, and long labels are wrapped or clipped with "…".
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from html import escape

FONT = "DejaVu Sans, Verdana, Arial, sans-serif"
FG, MUTED, GRID, AXIS = "#1d1d1f", "#5f6368", "#e3e6e8", "#9aa0a6"
OUTCOME_COLOR = {"ready": "#2e7d32", "failed": "#c62828", "incomplete": "#ef6c00"}
UNKNOWN_COLOR = "#555555"
VERSION_COLOR = "#6a1b9a"
ARGS_COLOR = "#757575"
KV_DEFINITION_COLOR = "#b8860b"
LINE_COLOR = "#1a73e8"
#: The colour of each waterfall role (see :func:`logparse.reports.charts.step_role`) and of A and B.
ROLE_COLOR = {
    "level": "#4c72b0",
    "end": "#2ca02c",
    "kv": "#dd8452",
    "weights": "#8c8c8c",
    "draft": "#c44e52",
    "graphs": "#8172b3",
    "other": "#ccb974",
    "note": "none",
    "a": "#4c72b0",
    "b": "#dd8452",
    "up": "#2ca02c",
    "down": "#c44e52",
    "zero": "#555555",
}
#: Average advance of a character as a share of the font size (DejaVu Sans, measured: about 0.55).
CHAR_EM = 0.56


def esc(value: object) -> str:
    return escape(str(value), quote=True)


def _num(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".") if v != int(v) else str(int(v))


def _attrs(attrs: dict[str, object]) -> str:
    out = []
    for k, v in attrs.items():
        if v is None:
            continue
        name = "class" if k == "cls" else k.replace("_", "-")
        out.append(f'{name}="{_num(v) if isinstance(v, float) else esc(v)}"')
    return " ".join(out)


def tip(title: str) -> str:
    return f"<title>{esc(title)}</title>" if title else ""


def element(name: str, body: str = "", **attrs: object) -> str:
    a = _attrs(attrs)
    return f"<{name} {a}>{body}</{name}>" if body else f"<{name} {a}/>"


def rect(x: float, y: float, w: float, h: float, fill: str, *, title: str = "", **kw: object) -> str:
    return element("rect", tip(title), x=x, y=y, width=max(w, 0.5), height=max(h, 0.5), fill=fill, **kw)


def line(x1: float, y1: float, x2: float, y2: float, stroke: str, *, title: str = "", **kw: object) -> str:
    return element("line", tip(title), x1=x1, y1=y1, x2=x2, y2=y2, stroke=stroke, **kw)


def polyline(points: Iterable[tuple[float, float]], stroke: str, *, width: float = 2.0, **kw: object) -> str:
    pts = " ".join(f"{_num(round(x, 1))},{_num(round(y, 1))}" for x, y in points)
    return element("polyline", "", points=pts, fill="none", stroke=stroke, stroke_width=width, **kw)


def circle(cx: float, cy: float, r: float, fill: str, *, title: str = "") -> str:
    return element("circle", tip(title), cx=cx, cy=cy, r=r, fill=fill, stroke="#ffffff", stroke_width=1.0)


def text(x: float, y: float, s: str, *, size: float = 11, fill: str = FG, rotate: float | None = None, **kw) -> str:
    """One line of text at (x, y) (the baseline); ``rotate`` turns it about that point (degrees)."""
    transform = f"rotate({_num(rotate)} {_num(round(x, 1))} {_num(round(y, 1))})" if rotate else None
    return element("text", esc(s), x=x, y=y, font_size=size, fill=fill, transform=transform, **kw)


def lines(x: float, y: float, rows: list[str], *, size: float = 11, fill: str = FG, **kw) -> str:
    """Several lines, the first with its baseline at ``y``."""
    spans = "".join(
        element("tspan", esc(r), x=x, dy=(0 if i == 0 else round(size * 1.2, 1))) for i, r in enumerate(rows)
    )
    return element("text", spans, x=x, y=y, font_size=size, fill=fill, **kw)


def document(parts: list[str], width: float, height: float, label: str, *, standalone: bool) -> str:
    """The ``<svg>``: a file of its own (``standalone``: the namespace, a size, a white page) or an
    element of the HTML report (it takes its container's width)."""
    head = f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_num(width)} {_num(round(height))}"'
    if standalone:
        head += f' width="{_num(width)}" height="{_num(round(height))}"'
        parts = [rect(0, 0, width, round(height), "#ffffff"), *parts]
    head += f' role="img" aria-label="{esc(label)}" class="chart" font-family="{FONT}">'
    return head + "".join(parts) + "</svg>"


# ------------------------------------------------------------------------------ text


def text_width(s: str, size: float) -> float:
    return len(s) * size * CHAR_EM


def clip(s: str, chars: int) -> str:
    s = " ".join(str(s).split())
    return s if len(s) <= chars else s[: max(chars - 1, 1)] + "…"


def wrap(s: str, chars: int, max_lines: int = 3) -> list[str]:
    rows = textwrap.wrap(str(s), max(chars, 4), break_on_hyphens=False) or [""]
    if len(rows) > max_lines:
        rows = [*rows[: max_lines - 1], clip(" ".join(rows[max_lines - 1 :]), chars)]
    return rows


# ------------------------------------------------------------------------------ numbers


class Linear:
    """A linear map from the data interval ``d0..d1`` onto the pixel interval ``r0..r1``."""

    def __init__(self, d0: float, d1: float, r0: float, r1: float) -> None:
        self.d0, self.d1, self.r0, self.r1 = d0, (d1 if d1 != d0 else d0 + 1.0), r0, r1

    def __call__(self, v: float) -> float:
        return self.r0 + (v - self.d0) * (self.r1 - self.r0) / (self.d1 - self.d0)


def nice_step(span: float, n: int) -> float:
    """A round step (1, 2, 2.5 or 5 times a power of ten) that cuts ``span`` into about ``n`` parts."""
    raw = span / max(n, 1) if span > 0 else 1.0
    mag = 10 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw * 0.999)


def nice_range(lo: float, hi: float, n: int = 4) -> tuple[float, float, list[float]]:
    """An axis over ``lo..hi`` that starts and ends on round ticks, and its ticks."""
    step = nice_step(hi - lo, n)
    start, end = math.floor(lo / step + 1e-9) * step, math.ceil(hi / step - 1e-9) * step
    if end <= start:
        end = start + step
    count = round((end - start) / step)
    return start, end, [start + k * step for k in range(count + 1)]


def fmt_value(v: float, unit: str) -> str:
    """A figure as the reports print it: tokens as integers with separators, GiB with two decimals."""
    if unit == "tokens" or (float(v).is_integer() and abs(v) >= 1000):
        return f"{v:,.0f}"
    return f"{v:,.2f}"


def fmt_tick(v: float, unit: str, step: float) -> str:
    """An axis label short enough for a margin (the tooltips give the exact figure)."""
    if abs(v) >= 1e6 and step >= 1e5:
        return f"{v / 1e6:g}M"
    if abs(v) >= 1e4 and step >= 1e3:
        return f"{v / 1e3:g}k"
    if v == 0:
        return "0"
    if step >= 1:
        return f"{v:,.0f}" if float(step).is_integer() else f"{v:,.1f}"
    decimals = next(d for d in range(1, 8) if abs(round(step, d) - step) < step * 1e-6)
    return f"{v:.{decimals}f}"


# ------------------------------------------------------------------------------ dates

_MINUTE, _HOUR, _DAY = 60, 3600, 86400
#: Tick steps of a dated axis, in seconds (a month and a year are counted as calendar steps).
DATE_STEPS = (
    *(m * _MINUTE for m in (1, 2, 5, 10, 15, 30)),
    *(h * _HOUR for h in (1, 2, 3, 6, 12)),
    *(d * _DAY for d in (1, 2, 7, 14)),
    30 * _DAY,
    91 * _DAY,
    182 * _DAY,
    365 * _DAY,
)


def naive(t: datetime) -> datetime:
    """A time comparable with the store's (naive, as the log printed it): aware ones in UTC."""
    return t if t.tzinfo is None else t.astimezone(UTC).replace(tzinfo=None)


def seconds(t: datetime) -> float:
    return (naive(t) - datetime(1970, 1, 1)).total_seconds()


def from_seconds(s: float) -> datetime:
    return datetime(1970, 1, 1) + timedelta(seconds=s)


def _floor(t: datetime, step: int) -> datetime:
    if step >= 365 * _DAY:
        return t.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0)
    if step >= 30 * _DAY:
        months = {30: 1, 91: 3, 182: 6}[step // _DAY]
        return t.replace(month=(t.month - 1) // months * months + 1, day=1, hour=0, minute=0, second=0, microsecond=0)
    base = t.replace(hour=0, minute=0, second=0, microsecond=0)
    if step >= 7 * _DAY:
        return base - timedelta(days=base.weekday())  # weeks start on Mondays
    return base + timedelta(seconds=(t - base).total_seconds() // step * step)


def _next(t: datetime, step: int) -> datetime:
    if step >= 30 * _DAY:
        months = {30: 1, 91: 3, 182: 6, 365: 12}[step // _DAY]
        m = t.month - 1 + months
        return t.replace(year=t.year + m // 12, month=m % 12 + 1)
    return t + timedelta(seconds=step)


def date_ticks(t0: datetime, t1: datetime, n: int = 5) -> list[tuple[datetime, list[str]]]:
    """Round times within ``t0..t1`` (at most about ``n``), each with its label lines: the time of
    day, and the date where it changes (the first tick always says its date)."""
    span = max((t1 - t0).total_seconds(), 1.0)
    step = next((s for s in DATE_STEPS if span / s <= n), DATE_STEPS[-1] * math.ceil(span / DATE_STEPS[-1] / n))
    t = _floor(t0, min(step, DATE_STEPS[-1]))
    out: list[tuple[datetime, list[str]]] = []
    last_date = None
    while t <= t1 and len(out) < 4 * n:
        if t >= t0:
            out.append((t, _date_label(t, step, last_date)))
            last_date = t.date()
        t = _next(t, min(step, DATE_STEPS[-1]))
    return out


def _date_label(t: datetime, step: int, last_date) -> list[str]:
    if step >= 30 * _DAY:
        return [t.strftime("%Y-%m")]
    if step >= _DAY:
        return (
            [t.strftime("%m-%d"), t.strftime("%Y")]
            if last_date is None or last_date.year != t.year
            else [t.strftime("%m-%d")]
        )
    day = [t.strftime("%Y-%m-%d")] if last_date != t.date() else []
    return [t.strftime("%H:%M"), *day]


def y_grid(left: float, right: float, scale: Linear, ticks: list[float], unit: str) -> list[str]:
    """Horizontal grid lines at ``ticks`` with their labels in the left margin."""
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    out = []
    for v in ticks:
        y = scale(v)
        out.append(line(left, y, right, y, GRID, stroke_width=1))
        out.append(text(left - 4, y + 3.5, fmt_tick(v, unit, step), size=10, fill=MUTED, text_anchor="end"))
    return out
