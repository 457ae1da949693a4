"""An input's items stored a batch at a time, the same store as one :func:`~logparse.store.merge.apply_items`.

An input of thousands of launches does not fit in memory as items, rows and frames at once: its
items wait in a temporary file in batches (:class:`~logparse.store.items.ItemBatches`) and are
written batch by batch, all in the input's one transaction.  Written one after another as separate
merges, a later batch would meet the launches an earlier one wrote (and match them, which one merge
of the whole input never does); so the groups are found first, over every batch, against the store
as it was before the input (:class:`~logparse.store.matching.Grouping`), and only then merged and
written, group by group in their order, a few batches in memory at a time (the batches a group's
items are in, which are one batch but for a launch two batches hold pieces of).  The deployments'
order and the launches' changes are refreshed once, at the end, over everything written.

What DuckDB holds of the open transaction is bounded too (:func:`bounded_memory`): past
:data:`WRITE_MEMORY` its blocks wait in DuckDB's temporary directory (``<store>.tmp``) until the
commit; a write that needs more than that is written again without the bound.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from logparse.store import pending, sequence
from logparse.store.items import Item, ItemBatches
from logparse.store.matching import Grouping
from logparse.store.merge import Options, Result, apply_items, merge_groups

#: DuckDB's ``memory_limit`` while an input of several batches is written, its transaction open
#: (DuckDB keeps the rows a transaction appends in memory until it commits, unless the limit says
#: otherwise: 10,000 launches would hold some 1.5 GB).
WRITE_MEMORY = "160MB"

#: One group: its stored launch ids and its items' keys (:class:`~logparse.store.matching.Grouping`).
Group = tuple[list[str], list]


def apply_input(
    con,
    items: ItemBatches,
    *,
    source_id: str | None,
    opts: Options,
    now: datetime,
    source_name: str | None,
    source_lines: int | None,
) -> Result:
    """Merge an input's items into the store inside the caller's transaction: one merge of them all
    when they are one batch, else batch by batch with the same result."""
    where: dict[str, Any] = {"source_id": source_id, "opts": opts, "now": now, "source_name": source_name}
    if not items.spilled:
        return apply_items(con, list(items), source_lines=source_lines, **where)
    grouping = Grouping()
    for batch in items.batches():
        grouping.add(con, batch, pending.relevant(con, batch))
    if grouping.kept:
        for batch in items.batches():
            grouping.link(batch)
    total = Result()
    deployments: set[str] = set()
    for chunk, found in _chunks(grouping.groups(), items, grouping.kept):
        res, deps = merge_groups(con, chunk, found, source_lines=source_lines, **where)
        _add(total, res)
        deployments |= deps
    sequence.refresh(con, deployments)
    return total


@contextmanager
def bounded_memory(con, items: ItemBatches, bound: bool = True) -> Iterator[None]:
    """DuckDB's memory held to :data:`WRITE_MEMORY` while an input of several batches is written
    (``bound``: False after a write that needed more); the default limit again after it (the
    store's write connections set none of their own)."""
    if not (bound and items.spilled):
        yield
        return
    con.execute(f"SET memory_limit = '{WRITE_MEMORY}'")
    try:
        yield
    finally:
        con.execute("RESET memory_limit")


def _chunks(
    groups: list[Group], items: ItemBatches, kept: dict[str, Item]
) -> Iterator[tuple[list[Item], list[tuple[list[str], list[int]]]]]:
    """The groups in order, with their items, as few batches of them at a time as their order lets:
    each chunk's items, and its groups (stored ids, indexes into them)."""
    last_use = {key[1]: g for g, (_ids, keys) in enumerate(groups) for key in keys if key[0] == 0}
    reader = items.batches()
    loaded: dict[int, list[Item]] = {}
    read = 0  # batches read so far
    chunk: list[Item] = []
    found: list[tuple[list[str], list[int]]] = []
    for g, (ids, keys) in enumerate(groups):
        need = max((key[1] for key in keys if key[0] == 0), default=-1)
        if need >= read:  # the group's items are in a batch not read yet: what came before is written first
            if found:
                yield chunk, found
                chunk, found = [], []
            for b in [b for b in loaded if last_use.get(b, -1) < g]:
                del loaded[b]  # no later group has an item in it
            while need >= read:
                loaded[read] = next(reader)
                read += 1
        found.append((ids, list(range(len(chunk), len(chunk) + len(keys)))))
        chunk += [loaded[key[1]][key[2]] if key[0] == 0 else kept[key[1]] for key in keys]
    if found:
        yield chunk, found


def _add(total: Result, res: Result) -> None:
    total.added += res.added
    total.updated += res.updated
    total.unchanged += res.unchanged
    total.dropped_lines += res.dropped_lines
    total.kept_lines += res.kept_lines
    total.touched += res.touched
    total.lineage += res.lineage
    total.final_of.update(res.final_of)
