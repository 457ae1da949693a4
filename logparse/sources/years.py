"""The year of journald ``short``/``short-precise`` times, which print none.

A record of those modes comes from the line parser with ``ts = (month, day, seconds)``.
The year is taken from the nearest SGLang timestamp (``[2026-11-29 08:09:11] ...`` at the
start of a record's text; :mod:`logparse.engines.sglang.prefix`): records are held back until one
is seen (a bounded number), then dated backwards from it; after it the year is carried
forward, +1 when the month goes from December to January.  Without any SGLang timestamp
the reference date is used (the file's modification time, else today): a month/day after
the reference belongs to the year before.  Each record gets a note saying which.
"""

from __future__ import annotations

import time

from logparse.sources.records import Record
from logparse.sources.timestamps import bad_time_note, civil_epoch

NOTE_YEAR_SGLANG = "year from the SGLang timestamp"
NOTE_YEAR_MTIME = "year from the file's modification time"
NOTE_YEAR_NOW = "year from the current date (no file time)"


def year_resolver(mtime: float | None, max_records: int, max_bytes: int) -> YearResolver:
    """A resolver whose reference date is ``mtime`` (a file's), else today."""
    tm = time.localtime(mtime) if mtime is not None else time.localtime()
    note = NOTE_YEAR_MTIME if mtime is not None else NOTE_YEAR_NOW
    return YearResolver((tm.tm_year, tm.tm_mon, tm.tm_mday), note, max_records, max_bytes)


class YearResolver:
    """Completes year-less timestamps; :meth:`push` each record, :meth:`finish` at the end.
    ``max_records``/``max_bytes``: how much may be held back waiting for an SGLang stamp."""

    def __init__(self, ref: tuple[int, int, int], ref_note: str, max_records: int, max_bytes: int):
        self.ref = ref
        self.ref_note = ref_note
        self.max_records = max_records
        self.max_bytes = max_bytes
        self.year: int | None = None
        self.last_mon = 0
        self.note = ref_note
        self.pending: list[Record] = []
        self.pending_bytes = 0
        self._ym: dict[str, tuple[int, int]] = {}

    def push(self, r: Record) -> list[Record]:
        """The records that can be given out now (``r`` and those held back, or none)."""
        t = r.ts
        if t.__class__ is not tuple:
            return self._hold(r) if self.pending else [r]
        mon = t[0]
        anchor = self._sglang_year(r.text, mon)
        if anchor is not None:
            out = self._backfill(anchor, mon) if self.pending else []
            self.year, self.last_mon, self.note = anchor, mon, NOTE_YEAR_SGLANG
            self._set(r, anchor, NOTE_YEAR_SGLANG)
            out.append(r)
            return out
        if self.year is not None:
            if self.last_mon - mon >= 6:
                self.year += 1
            elif mon - self.last_mon >= 6:
                self.year -= 1
            self.last_mon = mon
            self._set(r, self.year, self.note)
            return [r]
        return self._hold(r)

    def finish(self) -> list[Record]:
        """The records held back, dated from the reference."""
        out = self.pending
        self.pending = []
        self.pending_bytes = 0
        for r in out:
            t = r.ts
            if t.__class__ is tuple:
                self._set(r, self._ref_year(t[0], t[1]), self.ref_note)
        return out

    # -- steps -------------------------------------------------------------------------------
    def _sglang_year(self, text: str | None, mon: int) -> int | None:
        """The year of a record whose text starts with SGLang's dated stamp, adjusted when the
        outer month is on the other side of a new year (``Jan 01`` vs ``[2026-12-31``)."""
        if not text or text[5:6] != "-" or text[0] != "[":
            return None
        ym = text[1:8]
        a = self._ym.get(ym)
        if a is None:
            a = (int(ym[:4]), int(ym[5:7])) if ym[:4].isdigit() and ym[5:7].isdigit() else (0, 0)
            if not (1 <= a[1] <= 12 and ym.isascii()):  # not a real month: no anchor
                a = (0, 0)
            if len(self._ym) > 1000:
                self._ym.clear()
            self._ym[ym] = a
        ay, am = a
        if not ay:
            return None
        return ay + (1 if (mon == 1 and am == 12) else -1 if (mon == 12 and am == 1) else 0)

    def _hold(self, r: Record) -> list[Record]:
        self.pending.append(r)
        self.pending_bytes += len(r.text) if r.text else 0
        if len(self.pending) > self.max_records or self.pending_bytes > self.max_bytes:
            return self._overflow()
        return []

    @staticmethod
    def _set(r: Record, year: int, note: str) -> None:
        assert isinstance(r.ts, tuple)  # only year-less records are held for dating
        mon, day, sod = r.ts
        start = civil_epoch(year, mon, day)
        if start is None:  # Feb 29 of a year without one (or a year out of range)
            r.ts = None
            r.notes.append(bad_time_note(f"{year:04d}-{mon:02d}-{day:02d}"))
            return
        r.ts = start + sod
        r.notes.append(note)

    def _ref_year(self, mon: int, day: int) -> int:
        ry, rm, rd = self.ref
        return ry if (mon, day) <= (rm, rd) else ry - 1

    def _backfill(self, year: int, mon: int) -> list[Record]:
        out = self.pending
        self.pending = []
        self.pending_bytes = 0
        y, m = year, mon
        for r in reversed(out):
            t = r.ts
            if t.__class__ is tuple:
                if t[0] - m >= 6:
                    y -= 1
                elif m - t[0] >= 6:
                    y += 1
                m = t[0]
                self._set(r, y, NOTE_YEAR_SGLANG)
        return out

    def _overflow(self) -> list[Record]:
        out = self.finish()
        for r in reversed(out):  # carry the last dated year forward
            if isinstance(r.ts, (int, float)) and r.notes and r.notes[-1] == self.ref_note:
                tm = time.gmtime(r.ts)
                self.year, self.last_mon, self.note = tm.tm_year, tm.tm_mon, self.ref_note
                break
        return out
