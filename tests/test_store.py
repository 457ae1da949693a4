"""The history store: idempotent ingest, merging, journal cursors, history, migrations, safety."""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import datetime, timedelta

import duckdb
import polars as pl
import pytest
from helpers import CORPUS, SAMPLES, needs_corpus, write
from store_fixture import BASE_ARGS, journal_short_iso, launch_lines, split_launches, three_launches

from logparse.launches.model import LAUNCH_FIELDS
from logparse.pipeline import parse_text
from logparse.sources.records import Record
from logparse.store import QueryRefused, Store, StoreCorrupt, StoreMissing, StoreTooNew, resolve_db_path, schema
from logparse.store import db as dbm

TABLES = (
    "sources",
    "launches",
    "rank_memory",
    "events",
    "runtime_stats",
    "unrecognized",
    "journal_cursors",
    "launch_sources",
    "launch_args",
)


def snapshot(store: Store) -> dict[str, list]:
    out = {}
    with store.connect() as con:
        for t in TABLES:
            cols = [r[0] for r in con.execute(f"DESCRIBE {t}").fetchall()]
            order = ", ".join(f"{c}::VARCHAR" for c in cols)
            out[t] = con.execute(f"SELECT * FROM {t} ORDER BY {order}").fetchall()
    return out


def contract(launch) -> dict:
    d = launch.to_dict(with_events=True)
    return {k: d[k] for k in LAUNCH_FIELDS + ("runtime", "events")}


# ---------------------------------------------------------------------------- location


def test_store_location_precedence(tmp_path, monkeypatch):
    monkeypatch.delenv("LOGPARSE_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert resolve_db_path(None) == tmp_path / "xdg" / "logparse" / "history.duckdb"
    monkeypatch.setenv("LOGPARSE_DB", str(tmp_path / "env.duckdb"))
    assert resolve_db_path(None) == tmp_path / "env.duckdb"
    assert resolve_db_path(str(tmp_path / "explicit.duckdb")) == tmp_path / "explicit.duckdb"


def test_missing_store_is_a_clear_error(store):
    with pytest.raises(StoreMissing, match="logparse ingest"):
        store.launches()
    assert not store.path.exists()


# ---------------------------------------------------------------------------- idempotence


def test_ingest_twice_changes_nothing(tmp_path, store, three):
    log = three
    rep = store.ingest_paths([log, SAMPLES / "sglang-0.5" / "restarts-0.5.12.log"])
    assert rep.added == 6 and rep.updated == 0
    before = snapshot(store)
    assert len(before["launches"]) == 6
    rep2 = store.ingest_paths([log, SAMPLES / "sglang-0.5" / "restarts-0.5.12.log"])
    assert rep2.skipped == 2 and rep2.added == rep2.updated == 0
    # the same content under another name is the same input
    copy = tmp_path / "copy-of-three.log"
    shutil.copy(log, copy)
    rep3 = store.ingest_paths([copy])
    assert rep3.skipped == 1
    assert snapshot(store) == before


def test_same_launches_in_another_input_are_not_duplicated(tmp_path, store):
    text = three_launches()
    store.ingest_paths([write(tmp_path, "a.log", text)])
    before = snapshot(store)
    # other bytes (a trailing noise line), same launches: linked to the new input, nothing else changes
    # but where their lines are read from: the longer input's copies (whatever came first)
    rep = store.ingest_paths([write(tmp_path, "b.log", text + "[2026-05-18 12:00:00] INFO:     Shutting down\n")])
    assert (rep.added, rep.updated, rep.unchanged) == (0, 0, 3)
    after = snapshot(store)
    for t in ("rank_memory", "runtime_stats", "launch_args"):
        assert after[t] == before[t], t
    with store.connect() as con:
        assert {r[0] for r in con.execute("SELECT DISTINCT source FROM events").fetchall()} == {str(tmp_path / "b.log")}
    assert _without_origin(store, after) == _without_origin(store, before)
    assert len(after["sources"]) == 2
    assert len(after["launch_sources"]) == 6


def _without_origin(store: Store, snap: dict[str, list]) -> dict[str, list]:
    """Launches and events as in ``snap``, without which input (and when) their lines were read from."""
    where = {"source", "source_id", "updated_at", "ingested_at"}
    out = {}
    with store.connect() as con:
        for t in ("launches", "events"):
            keep = [i for i, r in enumerate(con.execute(f"DESCRIBE {t}").fetchall()) if r[0] not in where]
            out[t] = sorted(tuple(row[i] for i in keep) for row in snap[t])
    return out


def test_incomplete_then_complete_updates_in_place(tmp_path, store):
    lines = launch_lines(datetime(2026, 5, 18, 9), runtime=6)
    cut = next(i for i, ln in enumerate(lines) if "KV Cache is allocated" in ln)
    store.ingest_paths([write(tmp_path, "part.log", "\n".join(lines[: cut + 1]) + "\n")])
    first = store.launches(columns=None)
    assert first.height == 1 and first["outcome"][0] == "incomplete"
    lid = first["launch_id"][0]

    rep = store.ingest_paths([write(tmp_path, "full.log", "\n".join(lines) + "\n")])
    assert (rep.added, rep.updated) == (0, 1)
    now = store.launches(columns=None)
    assert now.height == 1
    assert now["launch_id"][0] == lid
    assert now["outcome"][0] == "ready"
    assert now["kv_tokens"][0] == 283501 and now["batch_lines"][0] == 6
    full = parse_text("\n".join(lines) + "\n", name=str(tmp_path / "full.log")).launches[0]
    assert contract(store.load_launch(lid))["events"] == contract(full)["events"]
    # a shorter piece of the same launch later on changes nothing
    rep = store.ingest_paths([write(tmp_path, "part2.log", "\n".join(lines[: cut + 3]) + "\n")])
    assert (rep.added, rep.updated, rep.unchanged) == (0, 0, 1)
    assert store.launches(columns=None)["batch_lines"][0] == 6
    assert store.doctor().healthy


def test_stored_launch_is_rebuilt_exactly(store, three):
    path = three
    parsed = parse_text(path.read_text(), name=str(path)).launches
    store.ingest_paths([path])
    for launch in parsed:
        loaded = store.load_launch(launch.launch_id)
        assert contract(loaded) == contract(launch)
        assert [type(e).__name__ for e in loaded.events] == ["Event"] * len(launch.events)
        assert loaded.ranks[0].extra == launch.ranks[0].extra
        assert loaded.version_range == launch.version_range


# ---------------------------------------------------------------------------- journal windows


def _journal_text(n_runtime: int = 10) -> list[str]:
    return journal_short_iso(launch_lines(datetime(2026, 5, 18, 9), runtime=n_runtime), host="gpu-7", pid=4242)


def test_overlapping_journal_windows_never_double_count(store):
    lines = _journal_text(10)
    full = parse_text("\n".join(lines) + "\n").launches[0]
    assert full.host == "gpu-7" and full.pid == 4242 and full.runtime["batch_lines"] == 10
    w1 = lines[:16]  # up to the middle of startup... and beyond
    w2 = lines[9:22]  # overlaps w1, ends mid-runtime
    w3 = lines[14:]  # overlaps w2, to the end
    w4 = lines[18:24]  # entirely inside what is stored
    for i, w in enumerate((w1, w2, w3, w4)):
        store.ingest_text("\n".join(w) + "\n", name=f"journal-window-{i}")
    got = store.launches(columns=None)
    assert got.height == 1
    row = got.row(0, named=True)
    assert row["launch_id"] == full.launch_id
    assert row["outcome"] == "ready"
    assert row["batch_lines"] == 10
    assert row["peak_running_req"] == full.runtime["peak_running_req"]
    loaded = store.load_launch("@latest")
    assert [e.text for e in loaded.events] == [e.text for e in full.events]
    assert loaded.runtime == full.runtime
    assert store.doctor().healthy


def test_journal_window_starting_mid_startup_attaches_to_its_launch(store):
    lines = _journal_text(4)
    cut = next(i for i, ln in enumerate(lines) if "Load weight end" in ln)
    store.ingest_text("\n".join(lines[:cut]) + "\n", name="w1")
    # the second window starts at "Load weight end" (no server_args): same process, same launch
    rep = store.ingest_text("\n".join(lines[cut:]) + "\n", name="w2")
    assert (rep.added, rep.updated) == (0, 1)
    row = store.launches(columns=None).row(0, named=True)
    assert row["outcome"] == "ready" and row["kv_tokens"] == 283501 and row["batch_lines"] == 4


class FakeJournal:
    """journal_source() stand-in: entries with __CURSOR, read after a cursor like journalctl does."""

    def __init__(self, lines: list[str], host: str = "gpu-7", unit: str = "sglang.service", pid: int = 4242):
        self.lines = lines
        self.host, self.unit, self.pid = host, unit, pid
        self.visible = 0
        self.calls: list[str | None] = []

    seqnum_id = "abc"

    def cursor(self, i: int) -> str:
        return f"s={self.seqnum_id};i={i + 1:x};b=boot1;m=0;t={0x5F0000000 + i * 1000:x};x=0"

    def __call__(self, unit=None, since=None, until=None, directory=None, file=None, after_cursor=None):
        self.calls.append(after_cursor)
        start = 0
        if after_cursor is not None:
            found = [i for i in range(len(self.lines)) if self.cursor(i) == after_cursor]
            if not found:  # like journalctl: the error comes when the output ends
                return _FakeSource(self, 0, 0, error="journalctl: Failed to seek to cursor: Invalid argument")
            start = found[0] + 1
        return _FakeSource(self, start, self.visible)


class _FakeSource:
    kind = "journal"
    fmt = "journal-export"

    def __init__(self, journal: FakeJournal, start: int, stop: int, error: str | None = None):
        self.j, self.start, self.stop, self.error = journal, start, stop, error
        self.name = f"journalctl -u {journal.unit} --after-cursor"
        self.size = None
        self.bytes_read = 0
        self._h = hashlib.sha256()
        self.warnings: list[str] = []
        self.last_cursor: dict = {}

    @property
    def content_hash(self) -> str:
        return self._h.hexdigest()

    def records(self):
        for i in range(self.start, self.stop):
            text = self.j.lines[i]
            self._h.update(text.encode() + b"\n")
            self.bytes_read += len(text) + 1
            cur = self.j.cursor(i)
            self.last_cursor[(self.j.host, self.j.unit)] = cur
            yield Record(
                line_no=i - self.start + 1,
                text=text,
                source=self.name,
                ts=None,
                host=self.j.host,
                unit=self.j.unit,
                pid=self.j.pid,
                boot="boot1",
                cursor=cur,
                fmt="journal-export",
            )
        if self.error:
            from logparse.sources import InputError

            raise InputError(self.error)


def test_journal_cursor_resume_reads_only_what_is_new(store):
    lines = launch_lines(datetime(2026, 5, 18, 9), runtime=8)
    j = FakeJournal(lines)
    cut = next(i for i, ln in enumerate(lines) if "Memory pool end" in ln)
    j.visible = cut  # cron run 1: mid-startup
    store.ingest_journal(unit="sglang", source_factory=j)
    assert j.calls == [None]
    assert store.launches(columns=None)["outcome"][0] == "incomplete"
    j.visible = len(lines) - 5  # cron run 2: startup done, 3 batch lines
    store.ingest_journal(unit="sglang", source_factory=j)
    assert j.calls[1] == j.cursor(cut - 1)
    row = store.launches(columns=None).row(0, named=True)
    assert row["outcome"] == "ready" and row["batch_lines"] == 3
    j.visible = len(lines)  # cron run 3: only runtime lines are new
    rep = store.ingest_journal(unit="sglang", source_factory=j)
    assert j.calls[2] == j.cursor(len(lines) - 6)
    assert rep.updated == 1
    row = store.launches(columns=None).row(0, named=True)
    assert row["batch_lines"] == 8 and row["peak_running_req"] == 8
    assert store.launches(columns=None).height == 1
    cur = store.query("SELECT host, unit, cursor FROM journal_cursors")
    assert cur.rows() == [("gpu-7", "sglang.service", j.cursor(len(lines) - 1))]
    # nothing new: nothing changes
    before = snapshot(store)
    store.ingest_journal(unit="sglang", source_factory=j)
    assert snapshot(store) == before
    # reading everything again without the cursor (overlap with all windows): no double count
    store.ingest_journal(unit="sglang", source_factory=j, resume=False)
    assert store.launches(columns=None)["batch_lines"][0] == 8
    full = parse_text("\n".join(lines) + "\n").launches[0]
    assert [e.text for e in store.load_launch("@latest").events] == [e.text for e in full.events]
    # the journal was vacuumed: the stored cursor is unknown; the query is read again, nothing doubles
    j.seqnum_id = "def"
    rep = store.ingest_journal(unit="sglang", source_factory=j)
    assert j.calls[-2] is not None and j.calls[-1] is None
    assert any("no longer in the journal" in w for w in rep.warnings)
    assert store.launches(columns=None)["batch_lines"][0] == 8
    assert store.doctor().healthy


# ---------------------------------------------------------------------------- history


def test_history_marks_argument_and_version_changes(store, three):
    store.ingest_paths([three])
    h = store.history(metric="kv_tokens")
    assert h.height == 3
    assert h["deployment"].n_unique() == 1
    assert h["launch_no"].to_list() == [1, 2, 3]
    assert h["kv_tokens"].to_list() == [283501, 310000, 310000]
    assert h["kv_tokens_change"].to_list() == [None, 310000 - 283501, 0]
    # random_seed and port differ between every launch: ignored noise
    assert h["args_changed"].to_list() == [None, True, False]
    assert h["changed_args"].to_list() == [None, "mem_fraction_static", None]
    assert h["arg_changes"][1] == "mem_fraction_static: 0.85 -> 0.88"
    assert h["version_changed"].to_list() == [None, False, False]
    hr = store.history(metric="headroom")
    assert hr.columns[8] == "headroom_gb"
    assert hr["headroom_gb_change"][1] < 0
    with pytest.raises(ValueError, match="unknown metric"):
        store.history(metric="nonsense")


def test_history_reads_only_the_columns_asked_for(store, three):
    store.ingest_paths([three])
    full = store.history(metric="headroom", as_rows=True)
    some = store.history(metric="headroom", as_rows=True, columns=["launch_id", "metric", "metric_change"])
    assert some.columns == ["launch_id", "headroom_gb", "headroom_gb_change"]
    pick = [full.columns.index(c) for c in some.columns]
    assert some.rows == [tuple(r[i] for i in pick) for r in full.rows]
    with pytest.raises(ValueError, match="not a history column"):
        store.history(columns=["launch_id; DROP TABLE launches"])


def test_history_version_change_and_deployment_label(tmp_path, store):
    day = datetime(2026, 5, 18, 9)
    old = launch_lines(day, mem_fraction_static=0.85)
    # the same deployment, later run on a known SGLang version
    store.ingest_paths([write(tmp_path, "a.log", "\n".join(old) + "\n")], labels={"deployment": "prod-qwen"})
    store.ingest_paths(
        [write(tmp_path, "b.log", "\n".join(launch_lines(day + timedelta(days=2), kv_tokens=1000)) + "\n")],
        labels={"deployment": "prod-qwen"},
        sglang_version="0.5.23",
    )
    h = store.history(deployment="prod-qwen")
    assert h.height == 2 and set(h["deployment"]) == {"prod-qwen"}
    assert h["version_changed"].to_list() == [None, True]
    assert h["version_change"][1].endswith("-> 0.5.23")
    labels = store.query("SELECT labels->>'deployment' AS d FROM launches")["d"].to_list()
    assert labels == ["prod-qwen", "prod-qwen"]


def _change_rows_are_fresh(store) -> list[tuple]:
    """The persisted ``launch_change`` rows, asserted equal to a recomputation from scratch."""
    from logparse.store import sequence

    con = duckdb.connect(str(store.path))
    try:
        q = "SELECT * FROM launch_change ORDER BY launch_id"
        persisted = con.execute(q).fetchall()
        con.execute("BEGIN TRANSACTION")
        sequence.refresh(con)
        fresh = con.execute(q).fetchall()
        con.execute("ROLLBACK")
    finally:
        con.close()
    assert persisted == fresh
    return persisted


def _changes(store, metric: str = "kv_tokens") -> dict[str, tuple]:
    rows = store.history(metric=metric, as_rows=True)
    return {
        r["launch_id"]: (r["prev_launch_id"], r[f"{metric}_change"], r["arg_changes"])
        for r in rows.iter_rows(named=True)
    }


def test_history_changes_follow_an_older_launch_ingested_later(tmp_path):
    first, second, third = split_launches(three_launches())
    one = Store(tmp_path / "one.duckdb")
    one.ingest_text(first + second + third, name="all.log")
    late = Store(tmp_path / "late.duckdb")
    late.ingest_text(third, name="c.log")
    late.ingest_text(first, name="a.log")
    ids = {r["started_at"].hour: r["launch_id"] for r in late.history(as_rows=True).iter_rows(named=True)}
    assert _changes(late)[ids[11]] == (ids[9], 310000 - 283501, "mem_fraction_static: 0.85 -> 0.88")
    _change_rows_are_fresh(late)
    late.ingest_text(second, name="b.log")  # the middle one arrives last: the third's change is against it
    got = _changes(late)
    assert got[ids[11]][1:] == (0, None)
    assert got == _changes(one)
    assert _change_rows_are_fresh(late) == _change_rows_are_fresh(one)


def test_history_changes_recomputed_in_a_merged_store(tmp_path):
    first, second, third = split_launches(three_launches())
    one = Store(tmp_path / "one.duckdb")
    one.ingest_text(first + second + third, name="all.log")
    a, b = Store(tmp_path / "a.duckdb"), Store(tmp_path / "b.duckdb")
    a.ingest_text(first + third, name="ac.log")
    b.ingest_text(second, name="b.log")
    a.ingest_paths([str(b.path)], progress=False)
    assert _changes(a) == _changes(one)
    assert _change_rows_are_fresh(a) == _change_rows_are_fresh(one)
    assert a.doctor().healthy


def test_history_changes_follow_a_launch_updated_in_place(store):
    day = datetime(2026, 5, 18, 9)
    a = journal_short_iso(launch_lines(day, runtime=6), host="gpu-7", pid=4242)
    b = journal_short_iso(launch_lines(day + timedelta(hours=1), runtime=2, random_seed=2), host="gpu-7", pid=4343)
    store.ingest_text("\n".join(a[:-3] + b) + "\n", name="w1")  # a's last three batch lines not yet read
    assert sorted(v[1] for v in _changes(store, "peak_running_req").values() if v[0]) == [2 - 3]
    store.ingest_text("\n".join(a[-4:]) + "\n", name="w2")  # they arrive: a's peak grows, so b's change moves
    got = _changes(store, "peak_running_req")
    assert sorted(v[1] for v in got.values() if v[0]) == [2 - 6]
    _change_rows_are_fresh(store)


# ---------------------------------------------------------------------------- schema versions


def test_migration_from_an_older_schema(tmp_path):
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    dbm.migrate(con, to=1)
    # a launch written by a version-1 logparse (no launch_args table, no views yet)
    from logparse.store.frames import LaunchMeta, frames

    launches = parse_text(three_launches(), name="old.log").launches
    metas = [LaunchMeta(source_id="s1", ingested_at=datetime(2026, 5, 19)) for _ in launches]
    fr = frames(launches, metas)
    v1_tables = {r[0] for r in con.execute("SHOW TABLES").fetchall()}
    old_ids = [launch.launch_id.replace("0", "f") for launch in launches]  # ids of an older scheme
    for table, df in fr.items():
        if table not in v1_tables:
            continue
        have = {r[0] for r in con.execute(f"SELECT * FROM {table} LIMIT 0").description}
        df = df.select([c for c in df.columns if c in have])
        if "launch_id" in df.columns:
            df = df.with_columns(df["launch_id"].replace(dict(zip([x.launch_id for x in launches], old_ids))))
        con.register("_rows", df.to_arrow())
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _rows")
        con.unregister("_rows")
    con.execute("INSERT INTO sources (source_id, path) VALUES ('s1', 'old.log')")
    con.execute("INSERT INTO launch_sources SELECT launch_id, 's1' FROM launches")
    assert {r[0] for r in con.execute("SHOW TABLES").fetchall()} >= {"launches", "schema_version"}
    assert "launch_args" not in {r[0] for r in con.execute("SHOW TABLES").fetchall()}
    con.close()

    store = Store(path)
    h = store.history()  # opening migrates
    assert h["changed_args"].to_list() == [None, "mem_fraction_static", None]
    versions = store.query("SELECT version FROM schema_version ORDER BY version")["version"].to_list()
    assert versions == list(range(1, schema.SCHEMA_VERSION + 1))
    assert store.query("SELECT count(*) AS n FROM launch_args")["n"][0] == 3 * len(BASE_ARGS)
    assert store.doctor().healthy
    # migration 4: the ids of the current scheme, the old ones kept as aliases, budgets persisted
    assert sorted(store.launch_ids()) == sorted(launch.launch_id for launch in launches)
    for old, launch in zip(old_ids, launches):
        assert store.load_launch(old[:10]).launch_id == launch.launch_id
    n = store.query("SELECT count(*) AS n FROM launch_budget WHERE kv_tokens IS NOT NULL")["n"][0]
    assert n == 3
    # migration 9: each launch's change persisted (as a fresh computation gives it), events indexed by launch
    assert [r[0] for r in _change_rows_are_fresh(store)] == sorted(store.launch_ids())
    indexes = store.query("SELECT index_name FROM duckdb_indexes() WHERE table_name = 'events'")["index_name"]
    assert indexes.to_list() == ["events_launch_id"]


def test_store_from_a_newer_logparse_is_refused(tmp_path, store):
    store.ingest_text(three_launches(), name="x.log")
    con = duckdb.connect(str(store.path))
    con.execute("INSERT INTO schema_version VALUES (99, now()::TIMESTAMP, '9.9')")
    con.close()
    digest = hashlib.sha256(store.path.read_bytes()).hexdigest()
    fresh = Store(store.path)
    dbm._VALIDATED.clear()
    with pytest.raises(StoreTooNew, match="newer logparse"):
        fresh.launches()
    with pytest.raises(StoreTooNew):
        fresh.ingest_text("[2026-05-18 09:00:00] server_args={}\n", name="y.log")
    assert hashlib.sha256(store.path.read_bytes()).hexdigest() == digest


@pytest.mark.parametrize("kind", ["junk", "empty", "truncated", "foreign-duckdb"])
def test_damaged_or_foreign_file_is_refused_and_left_untouched(tmp_path, kind):
    path = tmp_path / "h.duckdb"
    if kind == "junk":
        path.write_bytes(b"this is not a database\n" * 200)
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "truncated":
        good = Store(tmp_path / "good.duckdb")
        good.ingest_text(three_launches(), name="x.log")
        data = good.path.read_bytes()
        path.write_bytes(data[: len(data) // 3])
    else:
        con = duckdb.connect(str(path))
        con.execute("CREATE TABLE customers (id INTEGER)")
        con.close()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    dbm._VALIDATED.clear()
    store = Store(path, lock_timeout=1)
    with pytest.raises(StoreCorrupt):
        store.ingest_text(three_launches(), name="x.log")
    with pytest.raises(StoreCorrupt):
        store.launches()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    assert not (tmp_path / "h.duckdb.wal").exists() or kind == "foreign-duckdb"


# ---------------------------------------------------------------------------- query

REFUSED = [
    "INSERT INTO launches (launch_id) VALUES ('x')",
    "UPDATE launches SET outcome = 'ready'",
    "DELETE FROM events",
    "CREATE TABLE t (a INTEGER)",
    "DROP TABLE events",
    "ALTER TABLE launches ADD COLUMN x INTEGER",
    "CREATE VIEW v AS SELECT 1",
    "ATTACH 'other.duckdb' AS other",
    "DETACH other",
    "COPY launches TO 'out.csv'",
    "COPY launches FROM 'in.csv'",
    "EXPORT DATABASE 'dump'",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET threads = 1",
    "RESET threads",
    "PRAGMA enable_profiling",
    "PRAGMA threads = 1",
    "CHECKPOINT",
    "CALL checkpoint()",
    "VACUUM",
    "BEGIN TRANSACTION",
    "SELECT 1; SELECT 2",
    "SELECT 1; DROP TABLE events",
    "EXPLAIN ANALYZE DELETE FROM events",
    "USE memory",
]


@pytest.fixture(scope="module")
def query_store(tmp_path_factory):
    store = Store(tmp_path_factory.mktemp("q") / "q.duckdb")
    store.ingest_text(three_launches(), name="x.log")
    return store, snapshot(store)


@pytest.mark.parametrize("sql", REFUSED)
def test_query_refuses_statements_that_write(query_store, sql):
    store, before = query_store
    with pytest.raises(QueryRefused):
        store.query(sql)
    assert snapshot(store) == before


def test_query_reads_and_files_stay_out_of_reach(tmp_path, store):
    store.ingest_text(three_launches(), name="x.log")
    assert store.query("SELECT count(*) AS n FROM launches")["n"][0] == 3
    assert store.query("WITH x AS (SELECT 1 AS a) SELECT * FROM x")["a"][0] == 1
    assert store.query("FROM launch_summary SELECT kv_tokens ORDER BY started_at").height == 3
    assert store.query("DESCRIBE launches").height > 40
    assert store.query("PRAGMA table_info('launches')").height > 40
    assert store.query("EXPLAIN SELECT 1").height >= 1
    secret = tmp_path / "secret.csv"
    secret.write_text("a\n1\n")
    with pytest.raises(duckdb.Error, match=r"(?i)disabled|permission"):
        store.query(f"SELECT * FROM read_csv('{secret}')")
    # --write lifts the statement check
    store.query('UPDATE launches SET labels = \'{"team": "infra"}\'', write=True)
    assert store.query("SELECT DISTINCT labels->>'team' AS t FROM launches")["t"].to_list() == ["infra"]


# ---------------------------------------------------------------------------- export / import


def test_export_reads_back_in_duckdb_and_polars_and_merges(tmp_path):
    a = Store(tmp_path / "a.duckdb")
    a.ingest_text(three_launches(), name="three.log", host="gpu-1")
    a.ingest_text("\n".join(_journal_text(3)) + "\n", name="journal-window")
    out = tmp_path / "export"
    counts = a.export(out)
    assert counts["launches"] == 4
    assert (out / "launches" / "host=gpu-1" / "month=2026-05").is_dir()
    assert (out / "launches" / "host=gpu-7" / "month=2026-05").is_dir()
    glob = str(out / "launches" / "**" / "*.parquet")
    d = duckdb.sql(
        f"SELECT host, month, count(*) AS n FROM read_parquet('{glob}', hive_partitioning=true) "
        "GROUP BY ALL ORDER BY host"
    ).fetchall()
    assert d == [("gpu-1", "2026-05", 3), ("gpu-7", "2026-05", 1)]
    p = pl.read_parquet(glob, hive_partitioning=True)
    assert p.height == 4 and set(p["host"]) == {"gpu-1", "gpu-7"}
    ev = pl.read_parquet(str(out / "events" / "**" / "*.parquet"), hive_partitioning=True)
    assert ev.height == a.query("SELECT count(*) AS n FROM events")["n"][0]

    # a fleet store merges the export (and another store file), idempotently
    fleet = Store(tmp_path / "fleet.duckdb")
    rep = fleet.ingest_paths([out])
    assert rep.added == 4
    cols = "launch_id, host, outcome, kv_tokens, max_total_num_tokens, batch_lines, deployment"
    assert (
        fleet.query(f"SELECT {cols} FROM launch_summary ORDER BY launch_id").rows()
        == a.query(f"SELECT {cols} FROM launch_summary ORDER BY launch_id").rows()
    )
    before = snapshot(fleet)
    rep = fleet.ingest_paths([out, a.path])
    # each input holds the 4 launches: each says so, the run counts 4 launches unchanged (not 8)
    assert [o.unchanged for o in rep.sources] == [4, 4]
    assert rep.added == rep.updated == 0 and rep.unchanged == 4
    assert snapshot(fleet) == before
    for lid in a.launch_ids():
        assert contract(fleet.load_launch(lid)) == contract(a.load_launch(lid))
    assert fleet.doctor().healthy
    # exporting again replaces the export
    a.export(out)
    assert json.loads((out / "logparse-export.json").read_text())["rows"]["launches"] == 4


def test_export_files_an_undated_launch_under_month_unknown(tmp_path):
    from helpers import SAMPLES

    a = Store(tmp_path / "a.duckdb")
    a.ingest_paths([SAMPLES / "sglang-0.1" / "llama-tp2-0.1.12.log"])  # times of day only: no date
    a.ingest_text(three_launches(), name="three.log", host="gpu-1")
    (undated,) = a.query("SELECT launch_id FROM launches WHERE started_at IS NULL")["launch_id"].to_list()
    out = tmp_path / "export"
    a.export(out)
    glob = str(out / "launches" / "**" / "*.parquet")
    rows = duckdb.sql(
        f"SELECT launch_id, month FROM read_parquet('{glob}', hive_partitioning=true) ORDER BY launch_id"
    ).fetchall()
    months = dict(rows)
    assert months.pop(undated) == "unknown" and set(months.values()) == {"2026-05"}
    events = str(out / "events" / "**" / "*.parquet")
    got = duckdb.sql(
        f"SELECT DISTINCT month FROM read_parquet('{events}', hive_partitioning=true) WHERE launch_id = '{undated}'"
    ).fetchall()
    assert got == [("unknown",)]  # a launch's rows go where the launch goes
    fleet = Store(tmp_path / "fleet.duckdb")
    assert fleet.ingest_paths([out]).added == 4  # read back: the partition column is not data


# ---------------------------------------------------------------------------- doctor, refs


def test_doctor_finds_broken_references(tmp_path, store):
    store.ingest_text(three_launches(), name="x.log")
    rep = store.doctor()
    assert rep.healthy and rep.counts["launches"] == 3 and rep.schema_version == schema.SCHEMA_VERSION
    lid = store.launch_ids()[0]
    store.query(f"DELETE FROM launches WHERE launch_id = '{lid}'", write=True)
    store.query("DELETE FROM sources", write=True)
    rep = store.doctor()
    assert not rep.healthy
    text = "\n".join(rep.problems)
    assert "rank_memory row(s) without a launch" in text
    assert "events row(s) without a launch" in text
    assert "runtime_stats row(s) without a launch" in text
    assert "launch(es) without a source" in text


def test_launch_references(store, three):
    from logparse.store.refs import RefError, resolve_launch

    path = three
    parsed = parse_text(path.read_text(), name=str(path)).launches
    store.ingest_paths([path], host="gpu-1")
    store.ingest_text("\n".join(_journal_text(2)) + "\n", name="j")
    db = str(store.path)
    latest = resolve_launch("@latest", db)
    assert latest.host == "gpu-1" and latest.mem_fraction_static == 0.88  # started last (11:00)
    assert resolve_launch("gpu-7@latest", db).host == "gpu-7"
    assert resolve_launch("@-1", db).launch_id == latest.launch_id  # -1 is the last, as FILE#-1
    assert resolve_launch("@-2", db).started_at < latest.started_at
    assert resolve_launch("gpu-1@-3", db).mem_fraction_static == 0.85
    assert resolve_launch("gpu-1@1", db).mem_fraction_static == 0.85  # the oldest, as FILE#1
    with pytest.raises(RefError, match="only 3 launch"):
        resolve_launch("gpu-1@-4", db)
    with pytest.raises(RefError, match="there is no @0"):
        resolve_launch("@0", db)
    lid = latest.launch_id
    assert resolve_launch(lid[:6], db).launch_id == lid
    with pytest.raises(RefError, match="no launch id starts with"):
        resolve_launch("ffffffffffffff", db) if not lid.startswith("ffff") else resolve_launch("0000000000", db)
    ids = store.launch_ids()
    common = next((a[:1] for a in ids for b in ids if a != b and a[:1] == b[:1]), None)
    if common is None:  # make an ambiguous prefix
        store.query(f"INSERT INTO launches (launch_id) VALUES ('{ids[0][:3]}0000')", write=True)
        common = ids[0][:3]
    with pytest.raises(RefError, match="ambiguous"):
        resolve_launch(common, db)
    # files are parsed on the fly: the last launch, or the N-th
    assert resolve_launch(str(path), db).launch_id == parsed[-1].launch_id
    assert resolve_launch(f"{path}#1", db).launch_id == parsed[0].launch_id
    with pytest.raises(RefError, match="out of range"):
        resolve_launch(f"{path}#4", db)
    with pytest.raises(RefError):
        resolve_launch("no/such/file.log", db)


def test_python_api_is_lazy_and_complete(tmp_path, three):
    import subprocess
    import sys

    code = (
        "import sys, logparse; assert 'duckdb' not in sys.modules and 'polars' not in sys.modules; "
        "print(logparse.Store.__name__, logparse.parse.__name__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["Store", "parse"]
    import logparse

    path = three
    assert len(logparse.parse(path).launches) == 3
    s = logparse.Store(tmp_path / "api.duckdb")
    s.ingest_paths([path])
    assert isinstance(s.launches(), pl.DataFrame)
    assert s.launches(outcome="ready", since="2026-05-18", until="2026-05-19").height == 3
    assert s.launches(limit=1)["mem_fraction_static"][0] == 0.88
    assert s.load_launch("@latest").events
    s.close()


# ---------------------------------------------------------------------------- corpus and samples


@needs_corpus
def test_corpus_and_samples_ingest_into_one_store(tmp_path):
    store = Store(tmp_path / "all.duckdb")
    inputs = [CORPUS, SAMPLES]
    rep = store.ingest_paths(inputs)
    assert rep.added > 30
    ids = set()
    for path in (CORPUS, SAMPLES):
        from logparse.pipeline import parse_paths

        ids |= {launch.launch_id for launch in parse_paths([str(path)]).launches}
    stored = set(store.launch_ids())
    # every parsed launch is in the store: the renderings of one launch (journal modes) mint several
    # ids, merged into one stored launch whose other ids resolve as aliases
    assert stored <= ids
    for lid in ids:
        assert store.load_launch(lid).launch_id in stored
    assert store.doctor().healthy
    h = store.history(metric="max_total_num_tokens")
    assert h.height == len(stored)
    assert store.ingest_paths(inputs).added == 0


@pytest.mark.parametrize("path", ["duckdb", "polars"])
def test_one_input_is_all_or_nothing(tmp_path, store, monkeypatch, path):
    from logparse.store import rows

    if path == "polars":
        monkeypatch.setattr(rows, "SMALL_ROWS", -1)  # every write through polars frames and Arrow
    store.ingest_text(three_launches(), name="first.log")
    before = snapshot(store)
    from logparse.store import merge as ingest_mod

    real = ingest_mod.table_rows

    def failing(launches, metas):
        tables = real(launches, metas)
        # the write fails half way through the input (launches and events written, then not JSON)
        tables["runtime_stats"]["runtime"] = ["{not json"] * len(launches)
        return tables

    monkeypatch.setattr(ingest_mod, "table_rows", failing)
    lines = launch_lines(datetime(2026, 6, 1, 9), runtime=3)
    # the store refuses the input's one launch: it is set aside, nothing of the input is written, and
    # the ingest goes on (one refused input never stops the others)
    [out] = store.ingest_text("\n".join(lines) + "\n", name="second.log").sources
    assert out.status == "failed" and "the store refused it" in out.message
    assert snapshot(store) == before
    monkeypatch.setattr(ingest_mod, "table_rows", real)
    assert store.ingest_text("\n".join(lines) + "\n", name="second.log").added == 1
    assert store.doctor().healthy


def test_nodes_of_one_launch_in_step_stay_apart(tmp_path, store):
    """Two nodes start in the same second and print the same lines, but their own server_args."""
    day = datetime(2026, 5, 18, 9)
    node0 = launch_lines(day, extra_args={"nnodes": 2, "node_rank": 0})
    node1 = launch_lines(day, extra_args={"nnodes": 2, "node_rank": 1})
    store.ingest_paths(
        [write(tmp_path, "node0.log", "\n".join(node0) + "\n"), write(tmp_path, "node1.log", "\n".join(node1) + "\n")]
    )
    assert store.launches().height == 2


@needs_corpus
def test_history_counts_release_fields_instead_of_listing_them(tmp_path):
    """Across an SGLang upgrade, fields of one release only are one count, not hundreds of 'changes'."""
    store = Store(tmp_path / "up.duckdb")
    store.ingest_paths(
        [str(CORPUS / "sglang-0.5.14" / "restart-1.log"), str(CORPUS / "sglang-0.5.23" / "restart-1.log")],
        labels={"deployment": "tiny"},
    )
    rows = store.history(metric="kv_tokens").to_dicts()
    last = rows[-1]
    assert last["fields_added"] > 10 and last["fields_removed"] > 0
    assert last["release_fields_change"].startswith(f"+{last['fields_added']} / −{last['fields_removed']} ServerArgs")
    assert "0.5.14" in last["release_fields_change"] and "0.5.23" in last["release_fields_change"]
    # what is listed are values of fields both releases print
    names = last["changed_arg_names"] or []
    assert len(names) < 10 and "_radix_eviction_policy_explicitly_set" not in names


@needs_corpus
def test_history_tells_set_values_from_moved_defaults_and_derived_ones(tmp_path):
    store = Store(tmp_path / "kinds.duckdb")
    store.ingest_paths(
        [str(CORPUS / v / "restart-1.log") for v in ("sglang-0.5.23", "sglang-0.5.14", "sglang-0.5.10.post1")],
        labels={"deployment": "tiny"},
    )
    rows = {r["version"]: r for r in store.history(metric="kv_tokens").to_dicts()}
    # mem_fraction_static is chosen by SGLang in these releases: derived, not an argument the user changed
    assert "mem_fraction_static: 0.716 -> 0.843" in rows["0.5.14"]["derived_changes"]
    assert "mem_fraction_static" not in (rows["0.5.14"]["changed_arg_names"] or [])
    # each release's own default, moved between releases
    assert "hicache_mem_layout" in rows["0.5.10–0.5.10.post1"]["defaults_moved"]
    assert rows["0.5.10–0.5.10.post1"]["args_changed"] is False
    origins = dict(
        store.query(
            "SELECT name, origin FROM launch_args WHERE launch_id = (SELECT min(launch_id) FROM launches)"
        ).rows()
    )
    assert origins["mem_fraction_static"] == "derived" and origins["model_path"] == "set"
