"""Which unit a process of a journald ``short*`` rendering belongs to.

``short*`` renderings show the syslog identifier (``python3``), not the unit.  systemd
(pid 1 or a user manager) says which unit it starts and stops::

    Nov 29 08:08:04 gpu-node-1 systemd[1]: Started sglang.service - SGLang server.
    Nov 29 08:08:05 gpu-node-1 python3[4669]: [2026-11-29 08:08:05] server_args=ServerArgs(...)
    Nov 29 09:00:00 gpu-node-1 systemd[1]: sglang.service: Main process exited, code=killed, status=9/KILL

When exactly one unit was just started and no process of it has been seen, the next new
process is taken to be that unit's (a note says so on each of its records).  Never a
guess between two units starting at once.  A boot marker forgets everything.
"""

from __future__ import annotations

import re

#: systemd talking about a unit: "Started x.service - ...", "x.service: Main process
#: exited, ...", "Failed to start x.service ...".
SYSTEMD_UNIT_RE = re.compile(
    rb"(?:(?P<verb>[A-Z][a-z]+(?: to [a-z]+)?) )?"
    rb"(?P<unit>[\w@:.\\-]+\.(?:service|socket|scope|timer|target|mount|path|slice|swap|automount|device))\b"
)
#: An identifier that is a unit name (``with-unit`` renderings).
UNIT_SUFFIXES = (
    ".service",
    ".scope",
    ".socket",
    ".timer",
    ".target",
    ".mount",
    ".path",
    ".slice",
    ".swap",
    ".automount",
    ".device",
)
#: systemd words saying that a unit's process is gone (its next process is a new launch)
_UNIT_GONE = (
    b"exited",
    b"Deactivated",
    b"Failed",
    b"Scheduled restart",
    b"Killing",
    b"Stopped",
    b"Consumed",
    b"Succeeded",
    b"killed",
)

NOTE_UNIT_FROM_STARTED = "unit from systemd's 'Started' line before this process's first line"

_UNKNOWN = object()


class UnitTracker:
    def __init__(self) -> None:
        self.waiting: list[str] = []  # units systemd just started, no process seen yet
        self.claimed: dict[str, int] = {}  # unit -> pid taken for it
        self.pid_unit: dict[tuple, str | None] = {}  # (host, ident, pid) -> unit or None

    def systemd_line(self, raw: bytes, pos: int) -> str | None:
        """A message of systemd itself (``raw`` from ``pos``): the unit it talks about (None:
        not about a unit)."""
        m = SYSTEMD_UNIT_RE.match(raw, pos)
        if m is None:
            return None
        msg = raw[pos:]
        unit = m.group("unit").decode("utf-8", "replace")
        verb = m.group("verb")
        if verb in (b"Started", b"Starting"):
            if unit not in self.claimed and unit not in self.waiting:
                self.waiting.append(unit)
        elif any(w in msg for w in _UNIT_GONE):
            self.claimed.pop(unit, None)
            if unit in self.waiting and (verb == b"Stopped" or b"Failed" in msg):
                self.waiting.remove(unit)
        return unit

    def unit_of(self, host: str | None, ident: str, pid: int | None) -> str | None:
        """The unit a process was started for, when systemd said so unambiguously."""
        if pid is None:
            return None
        key = (host, ident, pid)
        u = self.pid_unit.get(key, _UNKNOWN)
        if u is _UNKNOWN:
            u = None
            if len(self.waiting) == 1:
                u = self.waiting.pop()
                self.claimed[u] = pid
            elif self.waiting:
                self.waiting.clear()  # two units starting at once: no guess
            if len(self.pid_unit) > 100_000:
                self.pid_unit.clear()
            self.pid_unit[key] = u
        return u  # type: ignore[return-value]

    def new_boot(self) -> None:
        self.waiting.clear()
        self.claimed.clear()
        self.pid_unit.clear()
