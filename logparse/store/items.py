"""An input's launches (and pieces of launches) on their way into the store."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from logparse import engines
from logparse.grammar.events import Event
from logparse.launches.model import Launch
from logparse.store.meta import LaunchMeta
from logparse.store.runtime import BatchSpan

#: (source id, journal cursor) of an event: which input it was read from.
Origin = tuple[str | None, str | None]


@dataclass
class Item:
    """A launch (or a piece of one) from the input, to be merged into the store."""

    events: list[Event]
    stream: tuple
    launch: Launch | None = None  # None for a piece without its start
    meta: LaunchMeta | None = None  # for imports: what the other store knew
    continuation: bool = False  # its start is not in this input
    span: BatchSpan | None = None  # its batch lines (runtime KV pressure)
    #: a piece kept in ``pending_pieces``: its id there, the lines' origins and their ranges per source
    pending_id: str | None = None
    origins: dict[int, Origin] = field(default_factory=dict)
    ranges: dict[str, tuple[int | None, int | None]] = field(default_factory=dict)

    @property
    def launch_id(self) -> str | None:
        return self.launch.launch_id if self.launch is not None else None

    @property
    def host(self) -> str | None:
        return self.launch.host if self.launch is not None else self.stream[0]

    def first_ts(self) -> str | None:
        first = next((e.ts for e in self.events if e.ts), None)
        if self.span is not None and self.span.first and (first is None or self.span.first < first):
            return self.span.first
        return first


def is_continuation(events: Sequence[Event]) -> bool:
    """Does a piece of lines continue a launch that began before it (it holds no line a start of an
    engine begins with: :attr:`logparse.engines.base.Engine.opening_kinds`)?"""
    opening = engines.kinds_of_every("opening_kinds")
    return not any(e.kind in opening for e in events)
