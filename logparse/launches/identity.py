"""A launch's identity: what it is in the world, and the id minted from it.

A launch is one start of one server process.  What names it, in order of strength:

* the **host**, the **boot** and the **pid** of the process, when the outer layer says them
  (journal, docker, kubectl);
* the **time of its first line**: the record's own time where it has one (journald, docker,
  kubectl stamp every line), else SGLang's own stamp;
* its **content**: the first startup lines it printed (without their times), which every
  rendering of the same log shares;
* in a log with no time at all, its **ordinal** among the launches of its source.

``launch_id`` is a hash of all of these, so it is stable for the same input and differs for two
starts that print the same text at different times.  A rendering that lacks some parts (``-o cat``
has no host, pid or record time) mints another id for the same launch; the store recognises it by
:func:`same_launch` (the parts both sides have agree, and the content is the same) and keeps the
id it stored first, remembering the other as an alias.  Two starts of one source that still look the
same are told apart by their ordinal (:func:`make_distinct`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from logparse import engines

#: How many startup lines make the content part of the identity.
CONTENT_LINES = 3
#: Version of the id scheme (bumped when the parts change; stores migrate their ids once).
SCHEME = "v2"


@dataclass(frozen=True)
class Identity:
    engine: str
    host: str | None
    boot: str | None
    pid: int | None
    record_started_at: str | None  # the record's own time of the first line (UTC, seconds)
    stamp_started_at: str | None  # SGLang's stamp of the first line that has one
    content: str  # digest of the first startup lines' text
    ordinal: int | None  # position in the source, when the log has no time at all

    @property
    def started_at(self) -> str | None:
        return self.record_started_at or self.stamp_started_at

    def launch_id(self, *, with_ordinal: bool = False) -> str:
        parts = [SCHEME, self.engine, self.host or "", self.boot or "", str(self.pid or ""), self.started_at or ""]
        if self.started_at is None or with_ordinal:
            parts.append(f"#{self.ordinal or 0}")
        parts.append(self.content)
        return hashlib.sha256("\x1f".join(parts).encode("utf-8", "replace")).hexdigest()[:16]


def content_digest(events: Iterable[Any]) -> str:
    """The first startup lines' text (the message, not its time or outer prefix), hashed."""
    h = hashlib.sha256()
    n = 0
    # runtime lines are not part of a launch's content: they repeat, and a window of the journal may
    # begin in the middle of them
    runtime = engines.kinds_of_every("runtime_kinds")
    for ev in events:
        if ev.kind in runtime:
            continue
        h.update(b"\n")
        h.update(_without_stamp(ev.text).encode("utf-8", "replace"))
        n += 1
        if n >= CONTENT_LINES:
            break
    return h.hexdigest()[:16]


_STAMP = re.compile(r"^\[(?:\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d(?:\.\d{1,6})? ?")


def _without_stamp(text: str) -> str:
    """``[2026-05-18 09:12:07 TP0] Load weight begin`` -> ``[TP0] Load weight begin``.

    SGLang's stamp is local time in one rendering and may be missing in another (0.2.x), so it
    is a part of its own, not of the content."""
    return _STAMP.sub("[", text, count=1)


def identity(launch: Any) -> Identity:
    evs = list(launch.events)
    record = next((e.record_ts for e in evs if getattr(e, "record_ts", None)), None)
    stamp = next((e.ts for e in evs if e.ts), None)
    return Identity(
        engine=getattr(launch, "engine", None) or engines.default().name,
        host=launch.host,
        boot=launch.boot,
        pid=launch.pid,
        record_started_at=record,
        stamp_started_at=stamp,
        content=content_digest(evs),
        ordinal=getattr(launch, "source_ordinal", None),
    )


def launch_id(launch: Any) -> str:
    return identity(launch).launch_id()


def make_distinct(launches: list[Any], seen: set[str] | None = None) -> None:
    """Two starts of one source that look the same (the same text at the same SGLang stamps, with no
    record time to tell them apart, as ``-o cat`` shows a start journald holds three times): the
    ordinal completes the later ones' identity, so ids stay unique.  ``seen``: the ids of the
    source's launches before these (updated), for launches made distinct as they come."""
    seen = set() if seen is None else seen
    for launch in launches:
        if launch.launch_id in seen:
            launch.launch_id = identity(launch).launch_id(with_ordinal=True)
        seen.add(launch.launch_id)
