"""Readers never stop writers, nothing bounds a query no more, and a damaged store file is found
(issue 18, items 5 and 8).

* ``query --timeout S`` (default 60) and ``--memory-limit`` (default a quarter of the RAM, plus
  a spill capped to a quarter of the free disk by the store): exit 4 and 5, one line each.
* ``ingest`` waits up to ``--lock-timeout`` for another process holding the store, a reader too,
  then says "store is busy" (exit 3); the holder is a real second process.
* ``doctor`` reads every table and index in full: a real store file with a zeroed block of its
  index (or of a table) is reported by name, exit 3; an ingest into it says so in one line
  instead of "Current transaction is aborted", and the rebuild it points to works.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import duckdb
import pytest
from helpers import SAMPLES, StoreHolder, cli, cli_process

from logparse.store import QueryLimits, QueryTimeout, QueryTooBig, Store
from logparse.store.bounds import ram_bytes

SLOW_SQL = "SELECT count(*) FROM range(1000000000000) a"
BIG_SQL = "SELECT length(string_agg(repeat('x', 1000) || i::VARCHAR, ',')) FROM range(3000000) t(i)"


@pytest.fixture
def small_store(tmp_path, three) -> Path:
    db = tmp_path / "s.duckdb"
    assert cli_process("ingest", "-q", "--db", db, three).returncode == 0
    return db


# ------------------------------------------------------------------------------- query bounds


def test_query_timeout_stops_a_long_query(small_store):
    t0 = time.monotonic()
    proc = cli_process("query", "--db", small_store, "--timeout", "1.5", SLOW_SQL, text=True, timeout=120)
    took = time.monotonic() - t0
    assert proc.returncode == 4, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert "stopped after 1.5 s (--timeout)" in line
    assert took < 30  # ended by the watchdog, not by the query
    # the same bound with --write (the statement is rolled back)
    proc = cli_process("query", "--write", "--db", small_store, "--timeout", "1", SLOW_SQL, text=True, timeout=120)
    assert proc.returncode == 4 and "--timeout" in proc.stderr
    assert cli_process("doctor", "--db", small_store).returncode == 0


def test_query_memory_limit_stops_a_huge_aggregate(small_store):
    """The issue's string_agg that grew to 6 GB: past the limit, exit 5 with one line."""
    proc = cli_process("query", "--db", small_store, "--memory-limit", "200MB", BIG_SQL, text=True, timeout=300)
    assert proc.returncode == 5, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert "--memory-limit" in line and "191 MiB" in line  # 200 MB is 191 MiB
    # the rows of a result count too (they are Python's, fetched a part at a time, RSS checked)
    rows = cli_process("query", "--db", small_store, "--memory-limit", "200MB", "-f", "csv", "SELECT * FROM range(5000000)", text=True, timeout=300)  # fmt: skip
    assert rows.returncode == 5 and "its result does not fit" in rows.stderr, rows.stderr
    ok = cli_process("query", "--db", small_store, "--format", "json", "SELECT count(*) AS n FROM launches", text=True)
    assert ok.returncode == 0 and '"n": 3' in ok.stdout


def test_query_defaults_are_set_on_the_connection(small_store):
    """Default: a quarter of the RAM, and a spill of at most a quarter of the free disk by the store."""
    rows = (
        Store(small_store)
        .query(
            "SELECT current_setting('memory_limit') AS m, current_setting('max_temp_directory_size') AS t",
            as_rows=True,
        )
        .rows
    )
    ((memory, temp),) = rows
    ram = ram_bytes()
    assert ram is not None
    got = _bytes(memory)
    assert 0.2 * ram <= got <= 0.3 * ram, (memory, ram)
    free = shutil.disk_usage(small_store.parent).free
    assert _bytes(temp) <= 0.3 * free, (temp, free)
    rows = (
        Store(small_store)
        .query("SELECT current_setting('memory_limit') AS m", as_rows=True, limits=QueryLimits(memory_bytes=1 << 30))
        .rows
    )
    assert rows == [("1.0 GiB",)]


def _bytes(text: str) -> float:
    value, unit = text.split()
    return float(value) * {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}[unit]


def test_query_bounds_in_the_python_api(small_store):
    store = Store(small_store)
    with pytest.raises(QueryTimeout):
        store.query(SLOW_SQL, limits=QueryLimits(timeout_s=0.5))
    with pytest.raises(QueryTooBig):
        store.query(BIG_SQL, limits=QueryLimits(memory_bytes=100 << 20))
    assert store.query("SELECT 1 AS x", as_rows=True).rows == [(1,)]  # the store is fine after both


@pytest.mark.parametrize(
    "args",
    [["--timeout", "-1"], ["--memory-limit", "lots"], ["--memory-limit", "12"], ["--memory-limit", "140%"]],
)
def test_query_bound_usage_errors(small_store, args):
    proc = cli_process("query", "--db", small_store, *args, "SELECT 1", text=True)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_a_query_ends_before_a_waiting_ingest_gives_up(small_store, tmp_path):
    """A reader bounded by --timeout lets a writer in: the ingest that waited for it is stored."""
    reader = subprocess.Popen(
        [*_logparse(), "query", "--db", str(small_store), "--timeout", "2", SLOW_SQL],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    time.sleep(0.8)  # the query holds the store now (a read-only connection)
    other = tmp_path / "other.log"
    other.write_text((SAMPLES / "sglang-0.5" / "restarts-0.5.12.log").read_text())
    proc = cli_process("ingest", "-q", "--db", small_store, "--lock-timeout", "60", other, text=True)
    assert reader.wait(timeout=60) == 4
    assert proc.returncode == 0, proc.stderr


def _logparse() -> list[str]:
    from helpers import LOGPARSE

    return list(LOGPARSE)


# ------------------------------------------------------------------------------- ingest waits


def test_ingest_waits_for_a_reader_up_to_lock_timeout(small_store, tmp_path):
    """A second process reading the store (a real DuckDB read-only connection) for a few seconds:
    ingest waits for it and stores its input; with a shorter --lock-timeout it gives up, as
    documented ("store is busy", exit 3), having stored nothing."""
    other = tmp_path / "other.log"
    other.write_text((SAMPLES / "sglang-0.5" / "restarts-0.5.12.log").read_text())
    with StoreHolder(small_store) as holder:
        t0 = time.monotonic()
        busy = cli_process("ingest", "-q", "--db", small_store, "--lock-timeout", "1", other, text=True)
        assert busy.returncode == 3 and time.monotonic() - t0 >= 1
        (line,) = busy.stderr.strip().splitlines()
        assert "store is busy" in line and "--lock-timeout" in line and "PID" in line
        waiting = subprocess.Popen(
            [*_logparse(), "ingest", "-q", "--db", str(small_store), "--lock-timeout", "60", str(other)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        time.sleep(2.5)
        assert waiting.poll() is None  # still waiting for the reader
        holder.release()
        _, err = waiting.communicate(timeout=120)
        assert waiting.returncode == 0, err
    n = Store(small_store).query("SELECT count(*) FROM launches", as_rows=True).rows[0][0]
    assert n == 3 + 3
    assert cli_process("doctor", "--db", small_store).returncode == 0


# ------------------------------------------------------------------------------- a damaged file

#: DuckDB's file: three 4 KiB headers, then blocks of 256 KiB (each with its checksum).
HEADERS, BLOCK = 3 * 4096, 256 * 1024


def _zero_block(path: Path, block: int) -> None:
    with open(path, "r+b") as fh:
        fh.seek(HEADERS + block * BLOCK + 4096)
        fh.write(b"\0" * 4096)


def _table_blocks(db: Path) -> dict[int, set[str]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        owner: dict[int, set[str]] = {}
        for (t,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall():
            for (b,) in con.execute(
                f"SELECT DISTINCT block_id FROM pragma_storage_info('{t}') WHERE block_id >= 0"
            ).fetchall():
                owner.setdefault(b, set()).add(t)
        return owner
    finally:
        con.close()


def _tables_read_in_full(db: Path) -> bool:
    con = duckdb.connect(str(db), read_only=True)
    try:
        for (t,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall():
            con.execute(f"SELECT bit_xor(hash(COLUMNS(*))) FROM {t}").fetchall()
        return True
    except duckdb.Error:
        return False
    finally:
        con.close()


@pytest.fixture(scope="module")
def real_store(tmp_path_factory) -> Path:
    """A store of the sample logs (a few hundred events: the events index spans blocks of its own)."""
    db = tmp_path_factory.mktemp("damage") / "base.duckdb"
    proc = cli_process("ingest", "-q", "--db", db, SAMPLES / "sglang-0.5", SAMPLES / "sglang-0.4")
    assert proc.returncode == 0, proc.stderr
    return db


def _index_block_copy(real_store: Path, tmp_path: Path) -> Path:
    """A copy of the store with a zeroed block that no table owns, every table still read in full,
    and an ingest failing: the issue's store (a block of an index), found by trying each block."""
    owned = _table_blocks(real_store)
    n = (real_store.stat().st_size - HEADERS) // BLOCK
    for block in range(1, n):
        if block in owned:
            continue
        copy = tmp_path / f"index-{block}.duckdb"
        shutil.copy(real_store, copy)
        _zero_block(copy, block)
        if not _tables_read_in_full(copy):
            continue
        probe = tmp_path / f"probe-{block}.duckdb"
        shutil.copy(copy, probe)
        # the search in this process (typer's runner: the CLI's exit code); the test's own checks run the CLI
        if cli("ingest", "-q", "--db", probe, SAMPLES / "sglang-0.3").code != 0:
            return copy
    pytest.fail("no block of the store's index found")


def test_doctor_finds_a_zeroed_index_block(real_store, tmp_path):
    assert cli_process("doctor", "--db", real_store).returncode == 0
    damaged = _index_block_copy(real_store, tmp_path)
    doc = cli_process("doctor", "--db", damaged, text=True)
    assert doc.returncode == 3, doc.stdout
    problems = [ln for ln in doc.stdout.splitlines() if ln.startswith("problem:")]
    assert problems and all("index " in p and "is damaged" in p for p in problems), doc.stdout
    assert any("events_launch_id" in p or "primary key" in p for p in problems)
    assert "logparse export DIR" in doc.stdout  # what to do
    # an ingest says so in one line, every time (not "Current transaction is aborted")
    for _ in range(2):
        proc = cli_process("ingest", "-q", "--db", damaged, SAMPLES / "sglang-0.3", text=True)
        assert proc.returncode == 3
        (line,) = proc.stderr.strip().splitlines()
        assert "the store file is damaged" in line and "logparse doctor" in line, line
        assert "transaction is aborted" not in line
    # the rebuild it points to: export (tables only) and ingest into a new store
    out = tmp_path / "export"
    assert cli_process("export", "-q", "--db", damaged, out).returncode == 0
    fresh = tmp_path / "fresh.duckdb"
    assert cli_process("ingest", "-q", "--db", fresh, out).returncode == 0
    assert cli_process("doctor", "--db", fresh).returncode == 0
    count = "SELECT count(*) FROM launches"
    assert Store(fresh).query(count, as_rows=True).rows == Store(real_store).query(count, as_rows=True).rows
    assert cli_process("ingest", "-q", "--db", fresh, SAMPLES / "sglang-0.3").returncode == 0


@pytest.mark.parametrize("table", ["events", "launches"])
def test_doctor_names_a_damaged_table(real_store, tmp_path, table):
    owned = _table_blocks(real_store)
    block = min(b for b, tables in owned.items() if tables == {table})
    damaged = tmp_path / "t.duckdb"
    shutil.copy(real_store, damaged)
    _zero_block(damaged, block)
    assert cli_process("launches", "--db", damaged).returncode in (0, 3)  # a command that reads little may not see it
    doc = cli_process("doctor", "--db", damaged, text=True)
    assert doc.returncode == 3
    assert f"problem: table {table} cannot be read in full" in doc.stdout, doc.stdout
    assert "ingest the logs again" in doc.stdout
