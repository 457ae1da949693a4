"""An input's launches (and pieces of launches) on their way into the store."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from logparse import engines
from logparse.grammar.events import Event
from logparse.launches.model import Launch
from logparse.spill import Spill
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
    #: the journal cursor of each of its lines read from the input (by line number)
    cursors: dict[int, str] = field(default_factory=dict)

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


#: Events (and items) of an input an ingest holds in memory at once: past it, the items so far are
#: written to a temporary file (:mod:`logparse.spill`), and read back a batch at a time to be stored.
BATCH_EVENTS = 2_000


class ItemBatches:
    """An input's items in the order they came, in batches of about :data:`BATCH_EVENTS` events:
    every batch but the last waits in a temporary file (none does for a small input), read back
    (a new copy each time) by :meth:`batches`.  Items set aside (:meth:`set_aside`) are left out."""

    def __init__(self) -> None:
        self._spill = Spill()
        self._written: list[int] = []  # where each batch written is in the spill
        self._last: list[Item] = []
        self._events = 0
        self._aside: set[tuple[int, int]] = set()
        self._count = 0

    def add(self, item: Item) -> None:
        self._last.append(item)
        self._count += 1
        self._events += len(item.events) + 1
        if self._events >= BATCH_EVENTS:
            self._written.append(self._spill.put(self._last))
            self._last, self._events = [], 0

    @property
    def spilled(self) -> bool:
        """More than one batch (the others wait in the spill)."""
        return bool(self._written)

    def batches(self) -> Iterator[list[Item]]:
        """Each batch in turn (the items set aside left out; a batch may be empty)."""
        for b in range(len(self._written) + 1):
            items = self._spill.get(self._written[b]) if b < len(self._written) else self._last
            yield [it for i, it in enumerate(items) if (b, i) not in self._aside] if self._aside else items

    def keyed(self) -> Iterator[tuple[tuple[int, int], Item]]:
        """Each item not set aside with its key (its batch, its place in it) for :meth:`set_aside`."""
        for b in range(len(self._written) + 1):
            items = self._spill.get(self._written[b]) if b < len(self._written) else self._last
            yield from (((b, i), it) for i, it in enumerate(items) if (b, i) not in self._aside)

    def set_aside(self, keys: Iterable[tuple[int, int]]) -> None:
        """Leave out these items (keys as :meth:`keyed` gives them)."""
        self._aside.update(keys)

    def __iter__(self) -> Iterator[Item]:
        for _key, item in self.keyed():
            yield item

    def __len__(self) -> int:
        return self._count - len(self._aside)

    def close(self) -> None:
        """Forget the items (the spill's file with them)."""
        self._spill.close()
        self._written, self._last = [], []
