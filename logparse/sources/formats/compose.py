"""``compose``: ``docker compose logs`` (any number of services, colours or not).

Format (the service name, padded to the longest one, then ``|``)::

    sglang-1  | [2026-09-22 06:49:56] server_args=ServerArgs(model_path='/models/m', ...)
    router-1  | INFO:     Started server process [1]
    sglang-1  |
    sglang-1 exited with code 0

Record fields: ``unit`` = the service name as printed (``sglang-1``); ``fmt="compose"``.
``docker compose logs -t`` puts a docker time after the bar (:mod:`.docker`), and a
service's own journald-style lines keep their header (:mod:`.journal_headers`).  Compose's
own lines (``Attaching to ...``, ``... exited with code 0``) stay plain.  The layer is
only looked for when the whole input is a compose log (sniffed or ``--input-format``):
``name  | `` is too common in free text to be trusted alone.
"""

from __future__ import annotations

import re

from logparse.sources.layers import Layers

FORMATS = ("compose",)
ALIASES = {"docker-compose": "compose"}

_ANSI = rb"(?:\x1b\[[\d;]*m)*"
COMPOSE_RE = re.compile(_ANSI + rb"(?P<svc>[A-Za-z0-9][\w.-]*) +" + _ANSI + rb"\|" + _ANSI + rb"(?: |$)")


def peel(line: Layers) -> bool:
    m = COMPOSE_RE.match(line.raw)
    if m is None:
        return False
    line.unit = m.group("svc").decode("utf-8", "replace")
    line.fmt = "compose"
    line.pos = m.end()
    return True
