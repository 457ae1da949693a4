"""Bounds on a query's time, memory and spill to disk (``logparse query``).

DuckDB has no statement timeout: a watchdog thread calls ``connection.interrupt()`` on the
connection running the query when its time is up (it must be that connection: another one
to the same file interrupts nothing), and the query ends with DuckDB's InterruptException,
raised here as :class:`QueryTimeout`.  Memory is DuckDB's ``memory_limit`` (default: a
quarter of the machine's RAM); what does not fit spills to DuckDB's temp directory (next to
the store), itself capped by ``max_temp_directory_size`` (a quarter of the free space there)
so that a spill cannot fill the disk: past either, the query ends with DuckDB's
OutOfMemoryException, raised as :class:`QueryTooBig`.  Both limits are set when the
connection opens (a read-only store connection has its configuration locked).
"""

from __future__ import annotations

import os
import re
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

#: ``query``'s default time limit, seconds.
DEFAULT_TIMEOUT_S = 60.0
#: ``query``'s default memory limit, as a share of the machine's RAM.
DEFAULT_MEMORY_SHARE = 0.25
#: The share of the free disk space where the store is that a query may spill.
TEMP_SHARE = 0.25
#: Never less than this (DuckDB needs some room to run at all).
MIN_MEMORY = 64 << 20

_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 1 << 10,
    "mib": 1 << 20,
    "gib": 1 << 30,
    "tib": 1 << 40,
}
_SIZE_RE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*|%)\s*", re.IGNORECASE)


class QueryBoundError(Exception):
    """A query that ran into one of its bounds (the CLI's exit codes 4 and 5)."""


class QueryTimeout(QueryBoundError):
    pass


class QueryTooBig(QueryBoundError):
    pass


def ram_bytes() -> int | None:
    """The machine's physical memory (None when the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def parse_size(text: str) -> int:
    """``4GB``, ``512MiB``, ``25%`` (of the RAM), ``1e9`` -> bytes; ValueError with a reason."""
    m = _SIZE_RE.fullmatch(text)
    if m is None:
        raise ValueError(f"{text!r} is not a size (give e.g. 4GB, 512MiB or 25%)")
    value, unit = float(m.group(1)), m.group(2).lower()
    if unit == "%":
        ram = ram_bytes()
        if ram is None:
            raise ValueError("a share of the RAM was given, but this system does not say how much RAM it has")
        if not 0 < value <= 100:
            raise ValueError(f"{text!r}: a share of the RAM is between 0 and 100%")
        return max(int(ram * value / 100), MIN_MEMORY)
    if unit not in _UNITS:
        raise ValueError(f"{text!r}: unknown unit {m.group(2)!r} (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB or %)")
    n = int(value * _UNITS[unit])
    if n < MIN_MEMORY:
        raise ValueError(f"{text!r} is below the least a query needs ({MIN_MEMORY >> 20} MiB)")
    return n


def default_memory() -> int:
    ram = ram_bytes()
    return max(int(ram * DEFAULT_MEMORY_SHARE), MIN_MEMORY) if ram else 4 << 30


def gib(n: int) -> str:
    return f"{n / (1 << 30):.1f} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.0f} MiB"


@dataclass(frozen=True)
class QueryLimits:
    """A query's bounds: seconds (None: none), memory in bytes (None: the default share of RAM)."""

    timeout_s: float | None = DEFAULT_TIMEOUT_S
    memory_bytes: int | None = None

    @property
    def memory(self) -> int:
        return self.memory_bytes if self.memory_bytes is not None else default_memory()

    def temp_bytes(self, store: Path) -> int:
        """The spill DuckDB may write next to the store: a share of the free space there."""
        try:
            free = shutil.disk_usage(store.parent if store.parent.exists() else ".").free
        except OSError:
            free = 0
        return max(int(free * TEMP_SHARE), MIN_MEMORY)

    def settings(self, store: Path) -> dict[str, str]:
        """DuckDB settings for a connection that runs a bounded query."""
        return {
            "memory_limit": f"{self.memory >> 20}MiB",
            "max_temp_directory_size": f"{self.temp_bytes(store) >> 20}MiB",
        }


#: Rows fetched at a time: the bounds are checked between two fetches (the rows are Python's, not DuckDB's).
FETCH_ROWS = 20_000


def rss_bytes() -> int | None:
    """This process's resident memory now (None where /proc does not say)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


class Bound:
    """The bounds of one running query: :meth:`check` between the fetches of its result."""

    def __init__(self, limits: QueryLimits, store: Path) -> None:
        self.limits, self.store = limits, store
        self.fired = threading.Event()
        self.deadline = time.monotonic() + limits.timeout_s if limits.timeout_s else None
        self.baseline = rss_bytes()

    def check(self) -> None:
        if self.fired.is_set() or (self.deadline is not None and time.monotonic() > self.deadline):
            raise self.timeout()
        now = rss_bytes()
        if now is not None and self.baseline is not None and now - self.baseline > self.limits.memory:
            raise self.too_big("its result does not fit")

    def timeout(self) -> QueryTimeout:
        return QueryTimeout(
            f"query stopped after {self.limits.timeout_s:g} s (--timeout): narrow it (WHERE, LIMIT, fewer joins) "
            "or give it longer"
        )

    def too_big(self, why: str) -> QueryTooBig:
        return QueryTooBig(
            f"query needs more memory than its limit of {gib(self.limits.memory)} (--memory-limit), or more "
            f"disk to spill to than {gib(self.limits.temp_bytes(self.store))} (a quarter of the free space by "
            f"the store): narrow it or raise --memory-limit ({why})"
        )

    def rows(self, cursor) -> list[tuple]:
        """The rows of an executed query (``cursor``), fetched a part at a time within the bounds."""
        out: list[tuple] = []
        while True:
            part = cursor.fetchmany(FETCH_ROWS)
            self.check()
            if not part:
                return out
            out.extend(part)

    def arrow(self, rel):
        """The result as an Arrow table, fetched a batch at a time within the bounds."""
        import pyarrow as pa

        reader = rel.to_arrow_reader(FETCH_ROWS)
        batches = []
        for batch in reader:
            self.check()
            batches.append(batch)
        return pa.Table.from_batches(batches, schema=reader.schema)


@contextmanager
def bounded(con, limits: QueryLimits, store: Path) -> Iterator[Bound]:
    """Run the block's query on ``con`` within ``limits`` (fetch its result through the
    :class:`Bound` given): interrupted when its time is up (:class:`QueryTimeout`); past its
    memory and spill, :class:`QueryTooBig`."""
    import duckdb

    bound = Bound(limits, store)

    def stop() -> None:
        bound.fired.set()
        con.interrupt()

    timer = threading.Timer(limits.timeout_s, stop) if limits.timeout_s else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        yield bound
    except duckdb.InterruptException:
        if not bound.fired.is_set():
            raise
        raise bound.timeout() from None
    except duckdb.OutOfMemoryException as exc:
        raise bound.too_big(_first_line(exc)) from None
    finally:
        if timer is not None:
            timer.cancel()


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else type(exc).__name__
