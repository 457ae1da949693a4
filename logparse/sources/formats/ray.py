"""``ray``: the actor prefix Ray puts on the output of its workers.

Format (the prefix may be coloured; Ray's log deduplication appends a count)::

    (Scheduler pid=31337, ip=10.0.0.12) [2026-09-22 06:50:02 TP0] Load weight begin. avail mem=78.62 GB
    (pid=31338) [2026-09-22 06:50:02 TP1] Load weight begin. avail mem=78.62 GB
    (Scheduler pid=31337) [2026-09-22 06:50:12 TP0] Memory pool end. avail mem=15.92 GB [repeated 2x across cluster]

Record fields: ``pid`` = the actor's pid (it overrides an outer pid); a note with the actor
name and ip; ``fmt="ray"``.  The ``[repeated Nx across cluster]`` suffix is Ray's, not
SGLang's: it is cut off the text and kept as a note.  The ranks of one server are
different actors, so a Ray pid does not split launches (``Record.stream_key``).  vLLM's own
process tags (``(Worker_TP1 pid=77)``, ``(EngineCore pid=9)``: :mod:`logparse.engines.vllm.prefix`) have the
same shape; they, and the Ray actors that run vLLM's workers (``RayWorkerWrapper`` …), are left to the
vLLM grammar, which reads the ranks from them (and drops Ray's ``[repeated Nx across cluster]``).
"""

from __future__ import annotations

import re

from logparse import engines
from logparse.sources.layers import Layers

FORMATS = ("ray",)
ALIASES: dict[str, str] = {}

RAY_RE = re.compile(
    rb"(?:\x1b\[[\d;]*m)?\((?:(?P<actor>[^\s()=]+) )?pid=(?P<pid>\d+)(?:, ip=(?P<ip>[^\s)]+))?\)"
    rb"(?:\x1b\[0m)?(?: |$)"
)
RAY_REPEATED_RE = re.compile(rb" \[repeated \d+x across cluster\]\s*$")


def peel(line: Layers) -> bool:
    m = RAY_RE.match(line.raw, line.pos)
    if m is None:
        return False
    actor_name = (m.group("actor") or b"").decode("ascii", "replace")
    if any(e.owns_process_tag(actor_name) for e in engines.all()):
        return False  # an engine's own process tag: its grammar reads the rank from it
    line.pid = int(m.group("pid"))
    actor, ip = m.group("actor"), m.group("ip")
    if actor is not None or ip is not None:
        line.notes.append(
            "ray actor "
            + (actor or b"?").decode("utf-8", "replace")
            + (", ip=" + ip.decode("utf-8", "replace") if ip is not None else "")
        )
    line.fmt = line.fmt or "ray"
    line.pos = m.end()
    rep = RAY_REPEATED_RE.search(line.raw, line.pos)
    if rep is not None:
        line.notes.append("ray: " + rep.group(0).strip().decode("utf-8", "replace"))
        line.raw = line.raw[: rep.start()]
    return True
