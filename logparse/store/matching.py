"""Which stored launch each item of an input is (the first step of :mod:`logparse.store.merge`).

An item is the same launch as a stored one when it has its id (or an alias of it), when it shares
lines with it (the same time and text, and the same record time where both have one) and every part
of their process identity both know agrees, or, for a piece that continues a launch without a
shared line, when it names the same process (host, pid, boot; a pid without a boot id for 30 days).
Kept pieces (``pending_pieces``) join the items they share lines with or the process they name.
:func:`groups` returns the items and stored launches that are one launch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from logparse import engines
from logparse.store.frames import line_hash
from logparse.store.items import Item
from logparse.store.rows import values_sql


class _UnionFind:
    def __init__(self):
        self.parent: dict = {}

    def find(self, x):
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


def _record_start(item: Item) -> str | None:
    return next((e.record_ts for e in item.events if e.record_ts), None)


def _compatible(item: Item, host, pid, boot, record_started_at: str | None = None, headless: bool = False) -> bool:
    """Can this item be (part of) the stored launch?  Every identity part both know must agree.

    Two starts can print the same text (a journal that holds a start three times): the record's
    own time tells them apart; a piece that continues a launch cannot begin before it, and the start
    of a launch stored without its start (``headless``) cannot begin after it."""
    ih, _, iboot, ipid = item.stream
    ih = item.host or ih
    if ih and host and ih != host:
        return False
    if ipid is not None and pid is not None and ipid != pid:
        return False
    if iboot and boot and iboot != boot:
        return False
    mine = _record_start(item)
    if not mine or not record_started_at:
        return True
    if headless:
        return item.continuation or mine <= record_started_at
    return mine >= record_started_at if item.continuation else mine == record_started_at


def _days_between(a: str, b: str) -> float:
    try:
        return abs((datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds()) / 86400.0
    except ValueError:
        return 0.0


def _match_ids(con, items: list[Item]) -> list[tuple[int, str]]:
    """Items whose id is a stored launch's id, or an alias of one."""
    ids = sorted({it.launch_id for it in items if it.launch_id})
    if not ids:
        return []
    known = dict(
        con.execute(
            "SELECT launch_id, launch_id FROM launches WHERE launch_id IN (SELECT unnest(?::VARCHAR[])) "
            "UNION ALL SELECT alias, launch_id FROM launch_aliases WHERE alias IN (SELECT unnest(?::VARCHAR[]))",
            [ids, ids],
        ).fetchall()
    )
    return [(i, known[it.launch_id]) for i, it in enumerate(items) if it.launch_id in known]


def _server_args_hash(item: Item) -> str | None:
    """The line a start prints its whole arguments on (:attr:`~logparse.engines.base.Engine.start_args_kinds`)."""
    kinds = engines.kinds_of_every("start_args_kinds")
    return next((line_hash(e.ts, e.text) for e in item.events if e.kind in kinds), None)


def _match_lines(con, items: list[Item], claimed: set[str]) -> list[tuple[int, str]]:
    """Items sharing lines (same time and text) with a stored launch they are compatible with."""
    probe_item, probe_hash, probe_record = [], [], []
    for i, it in enumerate(items):
        for ev in it.events:
            if ev.ts:
                probe_item.append(i)
                probe_hash.append(line_hash(ev.ts, ev.text))
                probe_record.append(ev.record_ts)
    if not probe_item:
        return []
    probe = values_sql({"item": "int", "line_hash": "str", "record_ts": "str"})
    # the same line: the same time and text, and where both copies have one, the same record time
    # to the second (a start a journal holds twice prints the same text at two record times)
    found = con.execute(
        f"WITH _probe AS ({probe}), "
        "p AS (SELECT DISTINCT item, line_hash, date_trunc('second', TRY_CAST(record_ts AS TIMESTAMP)) AS rt "
        "FROM _probe), "
        "m AS (SELECT p.item, e.launch_id, list(DISTINCT p.line_hash) AS shared, "
        "bool_or(p.rt IS NOT NULL AND e.record_ts IS NOT NULL) AS same_record "
        "FROM p JOIN events e ON e.line_hash = p.line_hash "
        "AND (p.rt IS NULL OR e.record_ts IS NULL OR p.rt = date_trunc('second', e.record_ts)) "
        "GROUP BY p.item, e.launch_id) "
        "SELECT m.item, l.launch_id, l.host, l.pid, l.boot, l.record_started_at, "
        "(SELECT min(s.line_hash) FROM events s WHERE s.launch_id = l.launch_id "
        "AND s.kind IN (SELECT unnest(?::VARCHAR[]))), "
        "l.source_ordinal, l.started_at_text, NOT EXISTS (SELECT 1 FROM events s WHERE "
        "s.launch_id = l.launch_id AND s.kind IN (SELECT unnest(?::VARCHAR[]))), m.shared, m.same_record "
        "FROM m JOIN launches l ON l.launch_id = m.launch_id",
        [
            probe_item,
            probe_hash,
            probe_record,
            sorted(engines.kinds_of_every("start_args_kinds")),
            sorted(engines.kinds_of_every("opening_kinds")),
        ],
    ).fetchall()
    candidates: dict[int, list[tuple]] = {}
    for i, lid, host, pid, boot, record_start, sa_hash, ordinal, started, headless, shared, same_record in found:
        # Two starts print one server_args line each: different ones are different launches,
        # whatever other lines they share (the nodes of a multi-node launch start in step).
        mine = _server_args_hash(items[i])
        if mine and sa_hash and mine != sa_hash:
            continue
        # lines read at the same record time are the same lines, whatever the pieces begin with
        if _compatible(items[i], host, pid, boot, None if same_record else record_start, headless):
            exact = record_start is not None and record_start == _record_start(items[i])
            candidates.setdefault(i, []).append((headless, not exact, started or "", ordinal or 0, lid, set(shared)))
    return _assign(items, candidates, claimed)


def _assign(items: list[Item], candidates: dict[int, list[tuple]], claimed: set[str]) -> list[tuple[int, str]]:
    """The stored launches each item is part of.  Launches stored without their start that share a
    line with the item are pieces of its launch.  Of those with a start (an opening line), the best
    candidate (the same record time, else the earliest), and the others that hold other lines of the
    item (pieces of it, each opened by its own line: server_args in one, the init lines in another);
    two that hold the same line of the item are two copies of one start, of which the item is one
    (matched in order: one stored launch per starting item, while pieces that continue a launch may
    share one).  ``claimed``: the stored launches starting items took so far (updated)."""
    pairs = []
    for i in sorted(candidates):
        ranked = sorted(candidates[i], key=lambda c: c[:-1])
        pairs += [(i, c[-2]) for c in ranked if c[0]]
        held: set[str] = set()
        for c in ranked:
            lid, shared = c[-2], c[-1]
            if c[0] or shared & held or (not items[i].continuation and lid in claimed):
                continue
            held |= shared
            if not items[i].continuation:
                claimed.add(lid)
            pairs.append((i, lid))
    return pairs


def _match_process(con, item: Item) -> str | None:
    """A continuation without shared lines: the latest stored launch of the same process."""
    host, _unit, boot, pid = item.stream
    host = item.host or host
    if pid is None and not boot:
        return None  # no process identity (a plain file): only shared lines can tell
    rows = con.execute(
        "SELECT launch_id, started_at_text, unit, boot FROM launches WHERE host IS NOT DISTINCT FROM ? "
        "AND pid IS NOT DISTINCT FROM ? ORDER BY started_at DESC NULLS LAST, started_at_text DESC NULLS LAST",
        [host, pid],
    ).fetchall()
    first = item.first_ts()
    for lid, started, _u, b in rows:
        if _same_process_before(item, boot, b, started, first):
            return lid
    return None


def _same_process_before(item: Item, boot, other_boot, started: str | None, first: str | None) -> bool:
    """Can a launch of the item's host and pid (boot ``other_boot``, started at ``started``) be the one
    the item continues?  Boot must agree when both know it.  The unit is not compared: a short
    journal rendering names the syslog identifier (python3) unless systemd's "Started" line is in
    the window.  Without a boot id, a pid is trusted for 30 days (pids are reused)."""
    if boot and other_boot and other_boot != boot:
        return False
    if first is not None and started is not None and started > first:
        return False
    return not (not (boot and other_boot) and first and started and _days_between(started, first) > 30)


def _match(con, items: list[Item], claimed: set[str]) -> list[tuple[int, str]]:
    """(item index, stored launch_id) pairs: the same launch (``claimed``: see :func:`_assign`)."""
    pairs = _match_ids(con, items) + _match_lines(con, items, claimed)
    matched = {i for i, _ in pairs}
    for i, it in enumerate(items):
        if i not in matched and it.continuation:
            lid = _match_process(con, it)
            if lid is not None:
                pairs.append((i, lid))
    return pairs


def _hashes(item: Item) -> set[str]:
    return {line_hash(e.ts, e.text) for e in item.events if e.ts}


@dataclass
class _Links:
    """What a kept piece may join among the input's items (see :meth:`Grouping.groups`): the items
    sharing a line with it, and else those of its process: the pieces without a start, and the
    latest launch that started before it (its key and start)."""

    sharing: list = field(default_factory=list)
    pieces: list = field(default_factory=list)
    latest: tuple[Any, str] | None = None


def _process(piece: Item) -> tuple | None:
    """The (host, pid) a kept piece joins by process, and its boot; None when it names no process."""
    host, _u, boot, pid = piece.stream
    if pid is None and not boot:
        return None
    return piece.host or host, pid, boot


class Grouping:
    """Which items and stored launches are one launch, read a batch of items at a time: the groups
    are those one reading of every item finds (:func:`groups`).  Each batch is matched against the
    store as it is before any of them is written (:meth:`add`: the stored launches that starting
    items claimed carried from batch to batch), then, when some kept pieces are relevant to the
    input, every batch is read again in the same order (:meth:`link`) for what each piece joins.

    Items are named by keys: ``(0, batch, index)`` for the input's, ``(1, piece_id)`` for the kept
    pieces (``kept``), which come after every item of the input in the order of their ids (as
    :func:`logparse.store.pending.relevant` orders them)."""

    def __init__(self) -> None:
        self._uf = _UnionFind()
        self._claimed: set[str] = set()
        self._added = self._linked = 0
        #: the kept pieces relevant to any batch, by id (each as first read), and what each may join
        self.kept: dict[str, Item] = {}
        self._links: dict[str, _Links] = {}

    def add(self, con, items: list[Item], kept: list[Item]) -> None:
        """The next batch of the input's items, with the kept pieces relevant to it."""
        b, self._added = self._added, self._added + 1
        new = [p for p in kept if p.pending_id not in self.kept]
        self.kept.update((p.pending_id, p) for p in new if p.pending_id)
        keys: list = [(0, b, i) for i in range(len(items))] + [(1, p.pending_id) for p in new]
        for key in keys:
            self._uf.find(key)
        for i, lid in _match(con, items + new, self._claimed):
            self._uf.union(keys[i], ("s", lid))

    def link(self, items: list[Item]) -> None:
        """The next batch again (in the order of :meth:`add`): which of its items each kept piece joins."""
        b, self._linked = self._linked, self._linked + 1
        hashes = [_hashes(it) for it in items]
        for piece in self.kept.values():
            self._link(piece, items, hashes, b)

    def _link(self, piece: Item, items: list[Item], hashes: list[set[str]], b: int) -> None:
        """The items of batch ``b`` a kept piece shares a line with, or may join by process."""
        links = self._links.setdefault(str(piece.pending_id), _Links())
        mine = _hashes(piece)
        for i, it in enumerate(items):
            if mine & hashes[i] and _compatible(piece, it.host, it.stream[3], it.stream[2]):
                links.sharing.append((0, b, i))
        proc = _process(piece)
        if proc is None:
            return
        host, pid, boot = proc
        first = piece.first_ts()
        for i, it in enumerate(items):
            if it.host != host or it.stream[3] != pid:
                continue
            if it.continuation and it.launch is None:
                links.pieces.append((0, b, i))
            elif it.launch is not None and not it.continuation:
                started = it.launch.started_at or ""
                later = links.latest is None or started > links.latest[1]  # (the first of equal ones kept)
                if later and _same_process_before(piece, boot, it.stream[2], it.launch.started_at, first):
                    links.latest = ((0, b, i), started)

    def _join_kept(self) -> None:
        """Each kept piece with the items sharing a line with it (kept pieces among them), or else
        with the pieces and the latest launch of its process."""
        ids = sorted(self.kept)
        for pid in ids:
            piece, links = self.kept[pid], self._links.get(pid) or _Links()
            mine = _hashes(piece)
            others = [(q, self.kept[q]) for q in ids if q != pid]
            sharing = links.sharing + [
                (1, q)
                for q, it in others
                if mine & _hashes(it) and _compatible(piece, it.host, it.stream[3], it.stream[2])
            ]
            proc = _process(piece)
            if not sharing and proc is not None:
                sharing = links.pieces + [(1, q) for q, it in others if (it.host, it.stream[3]) == proc[:2]]
                sharing += [links.latest[0]] if links.latest is not None else []
            for key in sharing:
                self._uf.union((1, pid), key)

    def groups(self) -> list[tuple[list[str], list]]:
        """Items and stored launches that are one launch: (stored ids, item keys) per group, in the
        order of their first item."""
        self._join_kept()
        uf = self._uf
        found: dict[Any, list] = {}
        for node in list(uf.parent):
            found.setdefault(uf.find(node), []).append(node)
        out = [
            (sorted(n[1] for n in nodes if n[0] == "s"), sorted(n for n in nodes if n[0] != "s"))
            for nodes in found.values()
        ]
        return sorted(out, key=lambda g: g[1][0])


def groups(con, items: list[Item], kept: list[Item]) -> list[tuple[list[str], list[int]]]:
    """Items and stored launches that are one launch: (stored ids, item indexes) per group, the kept
    pieces relevant to the items (:func:`logparse.store.pending.relevant`, in its order) indexed
    after them."""
    grouping = Grouping()
    grouping.add(con, items, kept)
    if grouping.kept:
        grouping.link(items)
    index: dict[tuple, int] = {(0, 0, i): i for i in range(len(items))}
    index.update({(1, p.pending_id): len(items) + n for n, p in enumerate(kept)})
    return [(ids, [index[k] for k in keys]) for ids, keys in grouping.groups()]
