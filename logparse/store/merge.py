"""Merging an input's launches into the store: which stored launch each one is, and what is stored.

What the store holds does not depend on the order its inputs came in.  For each launch:

* **its lines** are the union of the lines every input holds of it (:mod:`logparse.store.union`),
  and the launch is assembled from that union, as a single parse of the whole log would assemble
  it (outcome, ranks, budget, warnings);
* **its id** is the one that union mints (:mod:`logparse.launches.identity`); every other id it was
  known by (an input's own id for a piece of it, the id it had before a piece with its start
  arrived, a poorer rendering's id) is an alias that still resolves;
* **its sources** (``launch_sources``): every input holding a line of it, with the first and last
  of those lines in that input;
* **its batch lines** are merged by time span (:mod:`logparse.store.runtime`), pieces in time order.

A piece of a launch whose start is in no input stored so far (a journal window that begins mid-run
before the window with its start was ingested) is kept in ``pending_pieces``
(:mod:`logparse.store.pending`) and joins its launch when an input that shares lines with it (or,
in the journal, names the same process) is ingested.  Pieces sharing lines are kept as one.

The steps, a module each: :mod:`logparse.store.matching` finds which stored launch each item is
(:func:`~logparse.store.matching.groups`), :mod:`logparse.store.copies` makes the copies of one
launch one, :mod:`logparse.store.launch_sources` keeps each launch's lines per input.  This module
applies them (:func:`apply_items`, :class:`Merger`): per group, a launch added, a stored one
updated or left unchanged, or a piece kept, and the rows written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from logparse.grammar.events import Event
from logparse.launches.identity import identity
from logparse.launches.model import Launch
from logparse.store import pending, rebuild, sequence
from logparse.store import runtime as rtm
from logparse.store.copies import canonical_stream, known_zone, merged_span, reassemble, same_span
from logparse.store.frames import event_keys, line_hash, table_rows, to_frame
from logparse.store.items import Item, Origin
from logparse.store.launch_sources import Range, merge_ranges, stored_ranges, write_ranges
from logparse.store.matching import groups
from logparse.store.meta import LaunchMeta
from logparse.store.rows import insert_small
from logparse.store.runtime import BatchSpan
from logparse.store.tally import Step
from logparse.store.union import Ranking, unite


class Options(Protocol):
    """What the ingest adds to every launch it writes (the part of ``IngestOptions`` the merge reads)."""

    labels: dict[str, str]
    sglang_version: str | None


#: Tables an ingest rewrites for a launch (``launch_sources`` is rewritten from the merged ranges).
WRITTEN_TABLES = ("rank_memory", "events", "runtime_stats", "launch_args", "launch_budget", "rank_budget", "launches")


@dataclass
class Result:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    dropped_lines: int = 0
    kept_lines: int = 0  # lines of pieces kept in pending_pieces
    touched: list[str] = field(default_factory=list)  # final launch ids (added, updated or unchanged)
    #: each launch written or left unchanged, with the stored launches it replaces (see :mod:`.tally`)
    lineage: list[Step] = field(default_factory=list)
    final_of: dict[str, str] = field(default_factory=dict)  # an input launch id -> its id in the store


@dataclass
class _Group:
    """One launch's views: its stored launches (id, launch, meta) and the items that are it."""

    stored: list[tuple[str, Launch, LaunchMeta]]
    items: list[Item]

    @property
    def ids(self) -> list[str]:
        return [lid for lid, _, _ in self.stored]

    def streams(self) -> list[tuple]:
        return [(x.host, x.unit, x.boot, x.pid) for _, x, _ in self.stored] + [it.stream for it in self.items]


class Merger:
    """Merges groups of items into the store within one transaction (see :func:`apply_items`)."""

    def __init__(self, con, items: list[Item], source_id: str | None, opts: Options, now: datetime, source_name):
        self.con, self.items, self.source_id, self.opts, self.now = con, items, source_id, opts, now
        self.source_name = source_name
        #: the journal cursor of each line of the input (by line number), from its items
        self.cursors: dict[int, str] = {}
        self.res = Result()
        self.finals: list[Launch] = []
        self.metas: list[LaunchMeta] = []
        self.delete_ids: set[str] = set()
        self.aliases: list[tuple[str, str]] = []
        self.stored: dict[str, tuple[Launch, LaunchMeta]] = {}
        self.ranges: dict[str, dict[str, Range]] = {}  # final id -> its sources' ranges
        self.kept: list[pending.Piece] = []
        self.pending_done: set[str] = set()
        self.origins: dict[int, Origin] = {}
        for it in items:
            self.origins.update(it.origins)
            self.cursors.update(it.cursors)
            if it.meta is not None:
                self.origins.update(it.meta.event_origin)
        self.ranking = Ranking(self.origin, {})

    def load(self, ids: list[str], source_lines: int | None) -> None:
        """The stored launches of the groups, and the line counts of every source their lines are from."""
        from logparse.store.load import fetch_launches

        self.stored = fetch_launches(self.con, ids)
        for _launch, meta in self.stored.values():
            self.origins.update(meta.event_origin)
        sids = sorted({o[0] for o in self.origins.values() if o[0]})
        lines = dict(
            self.con.execute(
                "SELECT source_id, lines FROM sources WHERE source_id IN (SELECT unnest(?::VARCHAR[]))", [sids]
            ).fetchall()
        )
        if self.source_id:
            lines[self.source_id] = source_lines or 0
        self.ranking.source_lines = lines
        self.stored_ranges = stored_ranges(self.con, ids)

    def origin(self, ev: Event) -> Origin:
        o = self.origins.get(id(ev))
        if o is not None:
            return o
        cursor = self.cursors.get(ev.line_no) if self.cursors and ev.source == self.source_name else None
        return (self.source_id, cursor)

    @staticmethod
    def item_span(it: Item) -> BatchSpan:
        if it.span is not None:
            return it.span
        if it.launch is not None:
            return BatchSpan.from_runtime(it.launch.runtime, it.meta.batch_edges if it.meta else None)
        return BatchSpan()

    def item_ranges(self, it: Item) -> dict[str, Range]:
        """The item's lines per source: a kept piece knows them; an input's own item, from its events."""
        if it.pending_id is not None or it.meta is not None:
            return dict(it.ranges)
        if not self.source_id:
            return {}
        nos = [e.line_no for e in it.events if e.line_no]
        return {self.source_id: (min(nos), max(nos)) if nos else (None, None)}

    def merge(self, s_ids: list[str], idx: list[int]) -> None:
        """One group: a new launch, a stored one updated (or unchanged), or a piece kept for later."""
        group = _Group([(lid, *self.stored[lid]) for lid in s_ids if lid in self.stored], [self.items[i] for i in idx])
        ranges = merge_ranges(
            *(self.stored_ranges.get(lid, {}) for lid in group.ids), *map(self.item_ranges, group.items)
        )
        if not group.stored and all(it.launch is None for it in group.items):
            self.keep(group.items, ranges)
        elif not group.stored and len(group.items) == 1 and group.items[0].pending_id is None:
            self.add_parsed(group.items[0], ranges)
        else:
            self.unite(group, ranges)

    def add_parsed(self, it: Item, ranges: dict[str, Range]) -> None:
        """A launch the store does not have, as the input has it."""
        assert it.launch is not None
        final = it.launch
        span = self.item_span(it)
        meta = _new_meta([it], self.source_id, self.opts, self.now)
        meta.batch_edges = span.edges()
        self.res.added += 1
        self.res.lineage.append((final.launch_id, (), True))
        self._finish(final, meta, [it], ranges)

    def unite(self, group: _Group, ranges: dict[str, Range]) -> None:
        """Stored launches and items that are one launch: assembled from the union of their lines."""
        pieces = [x.events for _, x, _ in group.stored] + [it.events for it in group.items]
        dropped_before = len(self.ranking.dropped)
        events = unite(pieces, self.ranking)
        disagreeing = self._disagreeing(group, self.ranking.dropped[dropped_before:], events)
        spans = [BatchSpan.from_runtime(x.runtime, m.batch_edges) for _, x, m in group.stored]
        span = merged_span(spans, [self.item_span(it) for it in group.items])
        stream = canonical_stream(group.streams())
        labels, version = self._labels(group)
        same = False  # the same launch as stored: the same lines, batch lines, process, labels
        if len(group.stored) == 1:
            lid, base, meta0 = group.stored[0]
            same = (
                event_keys(events) == event_keys(base.events)
                and same_span(span, spans[0])
                and stream == group.streams()[0]
                and (labels, version, disagreeing) == (meta0.labels, meta0.sglang_version_given, meta0.disagreeing)
            )
            # a rendering that prints the zone (journal -o short-iso) after one that did not (-o short): rewritten
            learned = base.time_zone is None and known_zone(base, [it.launch for it in group.items]) is not None
            if same and not learned and [id(e) for e in events] == [id(e) for e in base.events]:
                self._unchanged(lid, group.items, ranges)
                return
        first_sid = self.origin(events[0])[0] if events else None
        final = reassemble(events, stream, version, _ordinal(group, first_sid, self.source_id))
        copies: list[Launch | None] = [x for _, x, _ in group.stored]
        final.time_zone = final.time_zone or known_zone(final, copies + [it.launch for it in group.items])
        final.runtime = rtm.apply(final.runtime, span)
        _lines_of_named_source(final, ranges.get(first_sid) if first_sid else None)
        if disagreeing:
            final.warnings.append(self._disagreement_warning(disagreeing))
        final.launch_id = self._final_id(final, set(group.ids))
        meta = LaunchMeta(
            source_id=first_sid or self.source_id or next((m.source_id for _, _, m in group.stored), None),
            labels=labels,
            sglang_version_given=version,
            ingested_at=min((m.ingested_at for _, _, m in group.stored if m.ingested_at), default=None)
            or _imported_ingest(group.items)
            or self.now,
            updated_at=self.now,
            batch_edges=span.edges(),
            disagreeing=disagreeing,
        )
        self.delete_ids.update(group.ids)
        self.aliases += [(lid, final.launch_id) for lid in group.ids if lid != final.launch_id]
        self.pending_done.update(it.pending_id for it in group.items if it.pending_id)
        # the same launch whose lines are now the copies of a longer input: rewritten, not a change
        if same:
            self.res.unchanged += 1
        elif group.stored:
            self.res.updated += 1
        else:
            self.res.added += 1
        self.res.lineage.append((final.launch_id, tuple(group.ids), not same))
        self._finish(final, meta, group.items, ranges)

    def _disagreeing(self, group: _Group, dropped: list[Event], kept: list[Event]) -> dict[str, list[str]]:
        """Lines of the group's inputs not kept, per source (their line hashes): those this union
        dropped and those the stored launches remember, but for lines the union holds after all
        (another input's copy of them won at their place)."""
        have = {line_hash(e.ts, e.text) for e in kept}
        out: dict[str, set[str]] = {}
        for _lid, _x, m in group.stored:
            for sid, hashes in m.disagreeing.items():
                out.setdefault(sid, set()).update(hashes)
        for ev in dropped:
            out.setdefault(self.origin(ev)[0] or "", set()).add(line_hash(ev.ts, ev.text))
        return {sid: sorted(h - have) for sid, h in sorted(out.items()) if h - have}

    def _disagreement_warning(self, disagreeing: dict[str, list[str]]) -> str:
        names = dict(
            self.con.execute(
                "SELECT source_id, path FROM sources WHERE source_id IN (SELECT unnest(?::VARCHAR[]))",
                [sorted(disagreeing)],
            ).fetchall()
        )
        if self.source_id:
            names.setdefault(self.source_id, self.source_name or self.source_id)
        where = ", ".join(f"{len(h)} line(s) of {names.get(sid, sid)}" for sid, h in disagreeing.items())
        return (
            f"inputs disagree on lines of this launch (a damaged copy of its log?): {where} not kept, "
            "another input has other lines at their place (the longest input's are kept)"
        )

    def _labels(self, group: _Group) -> tuple[dict[str, str], str | None]:
        """The group's labels (the ingest's own last) and the SGLang version given for it."""
        labels: dict[str, str] = {}
        versions = []
        for _lid, _x, m in group.stored:
            labels.update(m.labels)
            versions.append(m.sglang_version_given)
        for it in group.items:
            if it.meta is not None:
                labels.update(it.meta.labels)
                versions.append(it.meta.sglang_version_given)
        labels.update(self.opts.labels)
        given = sorted(v for v in versions if v)
        return labels, self.opts.sglang_version or (given[0] if given else None)

    def _final_id(self, final: Launch, group_ids: set[str]) -> str:
        """The id the united lines mint, unless another launch has it (then with the ordinal)."""
        ident = identity(final)
        lid = ident.launch_id()
        taken = {f.launch_id for f in self.finals}
        rows = self.con.execute(
            "SELECT launch_id FROM launches WHERE launch_id = ? UNION SELECT launch_id FROM launch_aliases WHERE alias = ?",
            [lid, lid],
        ).fetchall()
        taken |= {r[0] for r in rows} - group_ids - self.delete_ids
        return ident.launch_id(with_ordinal=True) if lid in taken else lid

    def _unchanged(self, lid: str, its: list[Item], ranges: dict[str, Range]) -> None:
        self.res.unchanged += 1
        self.res.lineage.append((lid, (lid,), False))
        self.res.touched.append(lid)
        self.ranges[lid] = ranges
        self.pending_done.update(it.pending_id for it in its if it.pending_id)
        self._alias_items(its, lid)

    def _finish(self, final: Launch, meta: LaunchMeta, its: list[Item], ranges: dict[str, Range]) -> None:
        for ev in final.events:
            meta.event_origin.setdefault(id(ev), self.origin(ev))
        self.finals.append(final)
        self.metas.append(meta)
        self.res.touched.append(final.launch_id)
        self.ranges[final.launch_id] = ranges
        self._alias_items(its, final.launch_id)

    def _alias_items(self, its: list[Item], final_id: str) -> None:
        for it in its:
            if it.launch_id:
                self.res.final_of[it.launch_id] = final_id
                if it.launch_id != final_id:
                    self.aliases.append((it.launch_id, final_id))

    def keep(self, its: list[Item], ranges: dict[str, Range]) -> None:
        """Pieces of a launch whose start the store does not have: kept until it arrives, when one of
        them shares a line with it or names its process; a piece with neither is counted as dropped."""
        events = unite([it.events for it in its], self.ranking)
        span = merged_span([], [self.item_span(it) for it in its])
        stream = canonical_stream([it.stream for it in its])
        n_lines = len(events) + span.lines
        if not events and stream[3] is None and not stream[2]:
            self.res.dropped_lines += n_lines
            return
        self.pending_done.update(it.pending_id for it in its if it.pending_id)
        self.kept.append(pending.Piece(stream, events, {id(e): self.origin(e) for e in events}, span, ranges))
        self.res.kept_lines += n_lines

    def write(self) -> set[str]:
        """Replace the launches written in the store, their sources' ranges, the pieces kept; the
        deployments whose order this may change (:func:`logparse.store.sequence.refresh`, which the
        caller runs once, after its last batch)."""
        con = self.con
        gone = self.delete_ids | {launch.launch_id for launch in self.finals}
        deployments = sequence.deployments_of(con, gone)
        _delete_launch_rows(con, sorted(gone), sorted(gone | set(self.ranges)))
        tables = table_rows(self.finals, self.metas)
        if not insert_small(con, tables):  # a large input: through polars and Arrow
            for table in list(tables):  # each table's lists let go once framed: not held beside DuckDB's inserts
                _insert_frame(con, table, to_frame(table, tables.pop(table)))
        rebuild.add_aliases(con, self.aliases, reason="the same launch, read again")
        con.execute("DELETE FROM launch_aliases WHERE alias IN (SELECT launch_id FROM launches)")
        write_ranges(con, self.ranges)
        pending.replace(con, sorted(self.pending_done), self.kept, self.now)
        return deployments | sequence.deployments_of(con, [launch.launch_id for launch in self.finals])


def _insert_frame(con, table: str, df) -> None:
    if df.height:
        # read by DuckDB's replacement scan of this local name, not registered: a registered table
        # is held until the transaction ends (an input of many batches would hold all its frames)
        _rows = df.to_arrow()
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _rows")


def _lines_of_named_source(final: Launch, named: Range | None) -> None:
    """A launch united from several inputs names the input of its first line (``source_id``): its
    ``first_line`` / ``last_line`` are that input's range of it (its ``launch_sources`` row), never
    the first line of one input and the last of another."""
    if named is not None and named[0] is not None and named[1] is not None:
        final.first_line, final.last_line = named


def _ordinal(group: _Group, first_sid: str | None, source_id: str | None) -> int | None:
    """The launch's position in the source of its first line (a log without time is told apart by it)."""
    found = [x.source_ordinal for _, x, m in group.stored if m.source_id == first_sid and x.source_ordinal]
    if first_sid is not None and first_sid == source_id:
        found += [it.launch.source_ordinal for it in group.items if it.launch is not None and it.launch.source_ordinal]
    if found:
        return min(found)
    every = [x.source_ordinal for _, x, _ in group.stored] + [
        it.launch.source_ordinal for it in group.items if it.launch
    ]
    known = [o for o in every if o]
    return min(known) if known else None


def _imported_ingest(items: list[Item]) -> datetime | None:
    times = [it.meta.ingested_at for it in items if it.meta is not None and it.meta.ingested_at]
    return min(times) if times else None


def _delete_launch_rows(con, ids: list[str], linked: list[str]) -> None:
    """The rows of the launches rewritten (``ids``), and the source links of those and of the
    launches left unchanged whose sources change (``linked``)."""
    if not linked:
        return
    rewritten = [lid for lid in linked if lid in set(ids)]
    for table in WRITTEN_TABLES:
        con.execute(f"DELETE FROM {table} WHERE launch_id IN (SELECT unnest(?::VARCHAR[]))", [rewritten])
    con.execute("DELETE FROM launch_sources WHERE launch_id IN (SELECT unnest(?::VARCHAR[]))", [linked])


def apply_items(
    con,
    items: list[Item],
    *,
    source_id: str | None,
    opts: Options,
    now: datetime,
    source_name: str | None = None,
    source_lines: int | None = None,
    with_changes: bool = True,
) -> Result:
    """Merge items into the store inside the caller's transaction; bulk writes through Arrow.
    Pieces kept from earlier inputs that these items continue join them.  ``with_changes``: also
    refresh ``launch_change`` for the deployments written (a store merge does it once, after its
    last batch)."""
    kept = pending.relevant(con, items)
    found = groups(con, items, kept) if items else []
    res, deployments = merge_groups(
        con,
        items + kept,
        found,
        source_id=source_id,
        opts=opts,
        now=now,
        source_name=source_name,
        source_lines=source_lines,
    )
    sequence.refresh(con, deployments, with_changes=with_changes)
    return res


def merge_groups(
    con,
    items: list[Item],
    found: list[tuple[list[str], list[int]]],
    *,
    source_id: str | None,
    opts: Options,
    now: datetime,
    source_name: str | None,
    source_lines: int | None,
) -> tuple[Result, set[str]]:
    """Merge the groups ``found`` (:func:`logparse.store.matching.groups`: stored ids and indexes of
    ``items``, in order) and write them; what they did, and the deployments whose order to refresh."""
    merger = Merger(con, items, source_id, opts, now, source_name)
    if not items:
        return merger.res, set()
    merger.load([lid for s_ids, _ in found for lid in s_ids], source_lines)
    for s_ids, idx in found:
        merger.merge(s_ids, idx)
    return merger.res, merger.write()


def _new_meta(its: list[Item], source_id: str | None, opts: Options, now: datetime) -> LaunchMeta:
    imported = next((it.meta for it in its if it.meta is not None), None)
    if imported is not None:
        meta = LaunchMeta(
            source_id=imported.source_id,
            labels={**imported.labels, **opts.labels},
            sglang_version_given=opts.sglang_version or imported.sglang_version_given,
            ingested_at=imported.ingested_at or now,
            updated_at=now,
        )
        for it in its:
            if it.meta is not None:
                meta.event_origin.update(it.meta.event_origin)
        return meta
    return LaunchMeta(
        source_id=source_id,
        labels=dict(opts.labels),
        sglang_version_given=opts.sglang_version,
        ingested_at=now,
        updated_at=now,
    )
