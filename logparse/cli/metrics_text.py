"""The Prometheus text exposition format 0.0.4 of :class:`logparse.reports.metrics.Metrics`.

HELP and TYPE lines for every family, no sample timestamps (node_exporter's textfile collector
refuses them), label values escaped (``\\``, ``"``, newline).  :func:`write_atomic` writes a file
the collector never sees half-written: a temporary file in the same folder, then ``rename``.
"""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
from pathlib import Path

from logparse.reports.metrics import Metrics


def _escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _help(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n")


def _number(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return str(int(v)) if v == int(v) and abs(v) < 1e15 else repr(v)


def exposition(m: Metrics) -> str:
    lines: list[str] = []
    for fam, samples in m.families:
        lines.append(f"# HELP {fam.name} {_help(fam.help)}")
        lines.append(f"# TYPE {fam.name} {fam.kind}")
        for s in samples:
            labels = ",".join(f'{k}="{_escape(v)}"' for k, v in s.labels.items())
            lines.append(f"{fam.name}{{{labels}}} {_number(s.value)}")
    return "\n".join(lines) + "\n"


def write_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
