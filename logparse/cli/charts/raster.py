"""A chart's file: SVG as logparse writes it, PNG and PDF converted from that same SVG by cairosvg.

cairosvg is the optional ``plot`` extra (``pip install 'logparse[plot]'``; it draws with the system's
cairo library, Debian's ``libcairo2``).  Without it ``.svg`` still works and the HTML report is
unaffected; asking for ``.png`` or ``.pdf`` is one line saying what to install, checked before any
work is done (:func:`check_plot_path`).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from logparse.files import write_atomic

SUFFIXES = (".svg", ".png", ".pdf")
NEEDS_EXTRA = "PNG and PDF need `pip install 'logparse[plot]'`; .svg needs nothing"
NEEDS_CAIRO = (
    "PNG and PDF need the cairo library (Debian/Ubuntu: apt-get install libcairo2; macOS: brew install cairo); "
    ".svg needs nothing"
)
#: PNG pixels per SVG user unit: a 960-unit chart becomes 1920 pixels wide, sharp on a laptop screen.
PNG_SCALE = 2.0


class PlotUnavailable(Exception):
    """The chart cannot be written to that file (its kind, or the extra it needs): the message says why."""


def plot_suffix(path: str | Path) -> str | None:
    suffix = Path(str(path)).suffix.lower()
    return suffix if suffix in SUFFIXES else None


def check_plot_path(path: str | Path) -> None:
    """Refuse, before anything is computed, a file kind logparse cannot write here."""
    suffix = plot_suffix(path)
    if suffix is None:
        raise PlotUnavailable("the file must end in .png, .svg or .pdf")
    if suffix != ".svg" and importlib.util.find_spec("cairosvg") is None:
        raise PlotUnavailable(NEEDS_EXTRA)


def convert(svg: str, suffix: str) -> bytes:
    """The SVG as PNG or PDF bytes (cairosvg)."""
    try:
        import cairosvg
    except ImportError:
        raise PlotUnavailable(NEEDS_EXTRA) from None
    except OSError:  # cairocffi found no libcairo
        raise PlotUnavailable(NEEDS_CAIRO) from None
    data = svg.encode()
    if suffix == ".png":
        return cairosvg.svg2png(bytestring=data, scale=PNG_SCALE)
    return cairosvg.svg2pdf(bytestring=data)


def write_chart(svg: str, path: str | Path) -> None:
    """Write the chart to ``path`` in the kind its suffix names."""
    check_plot_path(path)
    suffix = plot_suffix(path)
    data = svg.encode() if suffix == ".svg" else convert(svg, str(suffix))
    write_atomic(path, data)
