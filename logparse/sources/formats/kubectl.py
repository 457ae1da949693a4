"""``kubectl``: ``kubectl logs --prefix`` and/or ``--timestamps``.

Format::

    [pod/sglang-6f7d9c8b5-x2k4q/sglang] [2026-09-22 06:50:02 TP0] Load weight begin. avail mem=78.62 GB
    [pod/sglang-0/sglang] 2026-09-22T06:50:03.250000000Z [2026-09-22 06:50:03 TP0] Load weight begin. ...
    2026-09-22T06:49:56.336833841Z [2026-09-22 06:49:56] server_args=ServerArgs(...)

Record fields: ``unit`` = ``POD/CONTAINER`` from ``--prefix``; ``ts`` from ``--timestamps``
(RFC 3339, read by :mod:`.docker`); ``fmt="kubectl"``.  ``--timestamps`` alone has exactly
docker's shape: it is sniffed as ``docker`` unless ``--input-format kubectl`` names it.
"""

from __future__ import annotations

import re

from logparse.sources.layers import Layers

FORMATS = ("kubectl",)
ALIASES = {"k8s": "kubectl", "kubernetes": "kubectl"}

#: How ``--prefix`` starts (a cheap test before :func:`peel_prefix`).
PREFIX_START = b"[pod/"
KUBE_RE = re.compile(rb"\[pod/(?P<pod>[^/\]\s]+)/(?P<ctr>[^/\]\s]+)\] ?")


def peel_prefix(line: Layers) -> bool:
    """``[pod/NAME/CONTAINER] `` at ``pos``."""
    raw, pos = line.raw, line.pos
    if not raw.startswith(PREFIX_START, pos):
        return False
    m = KUBE_RE.match(raw, pos)
    if m is None:
        return False
    line.unit = (m.group("pod") + b"/" + m.group("ctr")).decode("utf-8", "replace")
    line.fmt = line.fmt or "kubectl"
    line.pos = m.end()
    return True
