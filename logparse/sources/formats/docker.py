"""``docker``: ``docker logs --timestamps`` (also the time of ``kubectl logs --timestamps``).

Format (RFC 3339 with up to nanoseconds; Go trims trailing zeros)::

    2026-09-22T06:49:56.336833841Z [2026-09-22 06:49:56] server_args=ServerArgs(...)
    2026-09-22T06:50:02.5Z [2026-09-22 06:50:02 TP0] Load weight begin. avail mem=78.62 GB
    2026-09-22T06:50:20Z   Example: sglang serve --model-path <model> [options]

The container runtime's own files on a Kubernetes node (``/var/log/pods/.../0.log``, the CRI log
format) put the stream and a full/partial tag after the time; both are peeled too::

    2026-09-22T06:49:56.336833841Z stderr F [2026-09-22 06:49:56 TP0] Load weight begin. avail mem=78.62 GB

Record fields: ``ts`` (epoch seconds UTC, the offset applied); ``fmt="docker"`` (or
``kubectl`` when the input is a kubectl log).  No host, unit or pid: docker does not say.
A journald ``short-iso`` header has the same start; it is told apart by its
``host ident[pid]:`` (:mod:`.journal_short_iso`).
"""

from __future__ import annotations

import re

from logparse.sources.layers import Layers
from logparse.sources.timestamps import bad_time_note, offset_seconds, stamp_epoch

FORMATS = ("docker",)
ALIASES: dict[str, str] = {}

RFC_RE = re.compile(
    rb"(?P<date>\d{4}-\d\d-\d\d)T(?P<hms>\d\d:\d\d:\d\d)(?P<frac>\.\d{1,9})?(?P<tz>Z|[+-]\d\d:?\d\d)(?: |$)"
    rb"(?:(?:stdout|stderr) [FP](?: |$))?"  # the CRI log format's stream and full/partial tag
)


def peel_timestamp(line: Layers, fmt: str) -> bool:
    """An RFC 3339 time at ``pos``; ``fmt``: the format name to give (docker or kubectl)."""
    raw, pos = line.raw, line.pos
    if raw[pos + 4 : pos + 5] != b"-" or raw[pos + 10 : pos + 11] != b"T":
        return False
    m = RFC_RE.match(raw, pos)
    if m is None:
        return False
    date, hms, frac, tz = m.group("date", "hms", "frac", "tz")
    line.ts = stamp_epoch(date, hms, frac, offset_seconds(tz))
    if line.ts is None:
        line.notes.append(bad_time_note(raw[pos : m.end("tz")].decode()))
    line.fmt = line.fmt or fmt
    line.pos = m.end()
    return True
