"""One launch's lines read from several inputs, united the same way whatever order they came in.

A launch can reach the store in pieces: two overlapping copies of a log, a journal window that
starts mid-run, half a log and then the whole log.  What the store keeps of it is defined by its
lines, not by the order the pieces arrived in:

* **the union of its lines by line identity**: a line is its time and text, plus the occurrence
  number among identical lines (:func:`logparse.store.frames.event_keys`); a line read from
  several inputs is one line;
* **one copy of each line**, the best one: the copy with the record's own time (a journal
  rendering that has it) before one without, then the copy from the longest input (whose line
  numbers span most of the launch), then the smaller source id; the copy keeps its input and line
  number, so ``first_line`` / ``last_line`` say where the launch's first and last lines are;
* **log order**: the order of each input is kept; two inputs are laid side by side at the lines
  they share, and what only one of them holds goes where it holds it.  Lines that no shared line
  places (two inputs with nothing in common between two shared lines) go by their time, the input
  that begins (then ends) earlier first on a tie.

Pieces are united in a fixed order (the earliest-beginning first, then each time the one sharing
the most lines with what is united so far), so that uniting {A, B} and then C gives what uniting
{C, B} and then A gives for overlapping pieces of one log: exactly the lines of the log between
the first and the last, in the log's order.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence

from logparse.grammar.events import Event
from logparse.store.frames import event_keys
from logparse.store.items import Origin


class Ranking:
    """Which of two copies of one line the store keeps (lower rank is better)."""

    def __init__(self, origin: Callable[[Event], Origin], source_lines: dict[str | None, int]) -> None:
        self.origin = origin
        self.source_lines = source_lines
        #: lines not kept because another input holds other lines at the same place (a damaged copy)
        self.dropped: list[Event] = []

    def rank(self, ev: Event) -> tuple:
        sid = self.origin(ev)[0]
        return (ev.record_ts is None, -(self.source_lines.get(sid) or 0), sid or "", ev.line_no)

    def input_rank(self, ev: Event) -> tuple:
        """The rank of the input a line was read from (for a run of lines: which input's to keep)."""
        return self.rank(ev)[:3]

    def better(self, a: Event, b: Event) -> Event:
        return a if self.rank(a) <= self.rank(b) else b


def carried_ts(events: Sequence[Event]) -> list[str]:
    """Each event's time, or the last dated time before it (an event without one sorts with it)."""
    out, last = [], ""
    for ev in events:
        if ev.ts and len(ev.ts) > 12:
            last = ev.ts
        out.append(last)
    return out


def _order_key(events: Sequence[Event], keys: Sequence[tuple]) -> tuple:
    """Which of two inputs comes first where nothing else says: the one that begins, then ends, earlier."""
    times = [t for t in carried_ts(events) if t]
    return (times[0] if times else "", times[-1] if times else "", keys[0] if keys else ("", 0))


def _increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest run of ``pairs`` (in order of their first item) whose second items increase."""
    tails: list[int] = []  # tails[k]: the smallest second item ending a run of length k + 1
    tail_at: list[int] = []  # index into pairs of that run's end
    prev = [-1] * len(pairs)
    for n, (_, j) in enumerate(pairs):
        k = bisect.bisect_left(tails, j)
        if k == len(tails):
            tails.append(j)
            tail_at.append(n)
        else:
            tails[k], tail_at[k] = j, n
        prev[n] = tail_at[k - 1] if k else -1
    out = []
    n = tail_at[-1] if tail_at else -1
    while n >= 0:
        out.append(pairs[n])
        n = prev[n]
    return out[::-1]


def _interleave(a: list[Event], b: list[Event], ta: list[str], tb: list[str], a_first: bool) -> list[Event]:
    """Two runs of lines that no shared line orders, by time (ties: the run that comes first)."""
    if not a or not b:
        return a or b
    out: list[Event] = []
    i = j = 0
    while i < len(a) or j < len(b):
        take_a = j >= len(b) or (i < len(a) and (ta[i] < tb[j] or (ta[i] == tb[j] and a_first)))
        if take_a:
            out.append(a[i])
            i += 1
        else:
            out.append(b[j])
            j += 1
    return out


def merge_two(a: list[Event], b: list[Event], ranking: Ranking) -> list[Event]:
    """The union of two inputs' lines of one launch, in log order (see the module's docstring).

    The inputs are laid side by side at the lines with a time they share (a line's time and text,
    and which of the identical ones it is, name it in every input); between two such lines, and
    before the first and after the last, lines without a time (a traceback's, uvicorn's: printed
    alike by every rank) are matched by their text in their order there."""
    if not a or not b:
        return list(a or b)
    ka, kb = event_keys(a), event_keys(b)
    if ka == kb:
        return [ranking.better(x, y) for x, y in zip(a, b)]
    a_first = _order_key(a, ka) <= _order_key(b, kb)
    pos_b = {k: j for j, k in enumerate(kb) if b[j].ts}
    anchors = _increasing([(i, pos_b[k]) for i, k in enumerate(ka) if k in pos_b and a[i].ts])
    # a shared line the two inputs hold in another order is kept where the earlier input has it
    misplaced = {k for i, k in enumerate(ka) if k in pos_b and a[i].ts} - {ka[i] for i, _ in anchors}
    drop_a = set() if a_first else misplaced
    drop_b = misplaced if a_first else set()
    ta, tb = carried_ts(a), carried_ts(b)
    out: list[Event] = []
    pi = pj = 0
    for i, j in [*anchors, (len(a), len(b))]:
        run_a = [n for n in range(pi, i) if ka[n] not in drop_a]
        run_b = [n for n in range(pj, j) if kb[n] not in drop_b]
        out += _merge_run(
            [a[n] for n in run_a],
            [b[n] for n in run_b],
            ([ta[n] for n in run_a], [tb[n] for n in run_b]),
            a_first,
            ranking,
            from_end=pi == 0 and pj == 0,
            placed=bool(anchors),
        )
        if i < len(a):
            out.append(ranking.better(a[i], b[j]))
        pi, pj = i + 1, j + 1
    return out


def _merge_run(
    a: list[Event],
    b: list[Event],
    times: tuple[list[str], list[str]],
    a_first: bool,
    ranking: Ranking,
    from_end: bool,
    placed: bool,
) -> list[Event]:
    """Two runs of lines between the same shared lines: the lines both hold (the same time, or none,
    and text) matched in order (from the end before the first shared line, where the input that
    begins later holds the last of them), the others by time; ``placed``: the inputs share a line
    with a time (so the runs are at the same place of one log)."""
    from difflib import SequenceMatcher

    if not a or not b:
        return a or b
    ta, tb = times
    ka = [(e.ts, e.text) for e in a]
    kb = [(e.ts, e.text) for e in b]
    if from_end:
        ka, kb = ka[::-1], kb[::-1]
    pairs = [
        (i + k, j + k)
        for i, j, n in SequenceMatcher(None, ka, kb, autojunk=False).get_matching_blocks()
        for k in range(n)
    ]
    if from_end:
        pairs = sorted((len(a) - 1 - i, len(b) - 1 - j) for i, j in pairs)
    out: list[Event] = []
    pi = pj = 0
    for i, j in [*pairs, (len(a), len(b))]:
        if placed and pi < i and pj < j:
            # Two inputs hold different lines at the same place (between lines they share): pieces of
            # one log never do; one of them is a damaged copy.  The better input's lines are kept.
            keep_a = ranking.input_rank(a[pi]) <= ranking.input_rank(b[pj])
            ranking.dropped += b[pj:j] if keep_a else a[pi:i]
            out += a[pi:i] if keep_a else b[pj:j]
        else:
            out += _interleave(a[pi:i], b[pj:j], ta[pi:i], tb[pj:j], a_first)
        if i < len(a):
            out.append(ranking.better(a[i], b[j]))
        pi, pj = i + 1, j + 1
    return out


def unite(pieces: Sequence[Sequence[Event]], ranking: Ranking) -> list[Event]:
    """The union of several inputs' lines of one launch, united in a fixed order."""
    todo = [list(p) for p in pieces if p]
    if not todo:
        return []
    keyed = sorted(((_order_key(p, event_keys(p)), n) for n, p in enumerate(todo)), key=lambda x: x[0])
    order = [n for _, n in keyed]
    united = todo[order.pop(0)]
    while order:
        have = set(event_keys(united))
        best = max(order, key=lambda n: (len(have.intersection(event_keys(todo[n]))), -order.index(n)))
        order.remove(best)
        united = merge_two(united, todo[best], ranking)
    return united
