"""Reliability of the history store: crashes mid-write, concurrent users, bad files, nothing lost.

Crash safety: ``logparse ingest`` is started in a subprocess and killed with SIGKILL at
many points of its run; after each kill the store must open and pass ``logparse doctor``,
and re-running the same ingest must converge to exactly the store a clean ingest gives.
LOGPARSE_KILL_RUNS sets the number of kill points (default 20).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from helpers import CORPUS, ROOT, SAMPLES, needs_corpus

KILL_RUNS = int(os.environ.get("LOGPARSE_KILL_RUNS", "20"))
ENV = {**os.environ, "PYTHONWARNINGS": "ignore"}

#: Columns that legitimately differ between two ingests of the same content.
VOLATILE = {"ingested_at", "updated_at", "created_at", "source_id", "applied_at"}


def cli(*args, timeout=300, **kw):
    return subprocess.run(
        [sys.executable, "-m", "logparse", *map(str, args)], capture_output=True, timeout=timeout, env=ENV, **kw
    )


def snapshot(db: Path) -> dict:
    """Every table's rows, minus columns that record when/which ingest wrote them."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = [
            r[0]
            for r in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
                "AND table_type = 'BASE TABLE' ORDER BY table_name"
            ).fetchall()
        ]
        out = {}
        for t in tables:
            cols = [r[0] for r in con.execute(f"DESCRIBE {t}").fetchall() if r[0] not in VOLATILE]
            if not cols:
                continue
            rows = con.execute(f"SELECT {', '.join(cols)} FROM {t}").fetchall()
            out[t] = sorted(json.dumps(r, default=str, sort_keys=True) for r in rows)
        return out
    finally:
        con.close()


@pytest.fixture(scope="module")
def big_input(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("big")
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "generate.py"),
            "--lines",
            "150000",
            "--out",
            str(d),
            "--formats",
            "plain",
        ],
        check=True,
        capture_output=True,
    )
    # Several inputs: each one is atomic on its own, so a kill can land between them too.
    (d / "more").mkdir()
    for name in (
        "sglang-0.5/restarts-0.5.12.log",
        "kimi-k25/launch-1-baseline.log",
        "sglang-0.4/deepseek-v3-tp8-eagle-0.4.7.log",
    ):
        (d / "more" / Path(name).name).write_bytes((SAMPLES / name).read_bytes())
    return d


@pytest.fixture(scope="module")
def clean_store(big_input, tmp_path_factory) -> tuple[Path, dict, float]:
    db = tmp_path_factory.mktemp("clean") / "clean.duckdb"
    t = time.perf_counter()
    proc = cli("ingest", "--db", db, "-q", big_input)
    took = time.perf_counter() - t
    assert proc.returncode == 0, proc.stderr
    return db, snapshot(db), took


def test_crash_at_many_points_converges(big_input, clean_store, tmp_path):
    _, want, took = clean_store
    kills = 0
    for i in range(KILL_RUNS):
        db = tmp_path / f"k{i}.duckdb"
        # Kill points spread over the whole run, from interpreter start-up to the last write.
        delay = 0.15 + (took * 1.1) * i / max(KILL_RUNS - 1, 1)
        proc = subprocess.Popen(
            [sys.executable, "-m", "logparse", "ingest", "--db", str(db), "-q", str(big_input)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=ENV,
        )
        time.sleep(delay)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait()
        if db.exists():
            doc = cli("doctor", "--db", db)
            assert doc.returncode == 0, (i, delay, doc.stdout.decode(), doc.stderr.decode())
        again = cli("ingest", "--db", db, "-q", big_input)
        assert again.returncode == 0, (i, again.stderr.decode())
        assert cli("doctor", "--db", db).returncode == 0
        assert snapshot(db) == want, f"kill point {i} ({delay:.2f} s) did not converge"
    assert kills >= KILL_RUNS // 2, f"only {kills} of {KILL_RUNS} runs were still running when killed"


def test_reingest_changes_nothing(clean_store, big_input, tmp_path):
    db, want, _ = clean_store
    copy = tmp_path / "copy.duckdb"
    copy.write_bytes(db.read_bytes())
    proc = cli("ingest", "--db", copy, big_input)
    assert proc.returncode == 0
    assert snapshot(copy) == want


def test_concurrent_writers_and_readers(big_input, tmp_path):
    """Several ingest processes on one store at once, plus readers: every ingest ends applied
    (waiting for the lock and retrying) or says the store is busy; readers never see a
    half-written input (the number of sources only grows, and every source's launches are there)."""
    db = tmp_path / "shared.duckdb"
    inputs = [big_input / "more" / n for n in sorted(os.listdir(big_input / "more"))] + [big_input / "sglang.plain.log"]
    writers = [
        subprocess.Popen(
            [sys.executable, "-m", "logparse", "ingest", "--db", str(db), "-q", "--lock-timeout", "120", str(p)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=ENV,
        )
        for p in inputs
    ]
    seen_sources = []
    deadline = time.time() + 240
    while any(w.poll() is None for w in writers) and time.time() < deadline:
        if db.exists():
            r = cli(
                "query",
                "--db",
                db,
                "--format",
                "json",
                "SELECT (SELECT count(*) FROM sources) AS s, "
                "(SELECT count(*) FROM sources src WHERE NOT EXISTS "
                " (SELECT 1 FROM launches l WHERE l.source_id = src.source_id)) AS empty",
                timeout=120,
            )
            if r.returncode == 0:
                row = json.loads(r.stdout)[0]
                seen_sources.append(row["s"])
                assert row["empty"] == 0, "a reader saw a source without its launches"
            else:
                assert r.returncode == 3 and b"busy" in r.stderr.lower(), r.stderr
        time.sleep(0.2)
    outs = [w.communicate(timeout=240) for w in writers]
    codes = [w.returncode for w in writers]
    for code, (_, err) in zip(codes, outs):
        assert code == 0 or (code == 3 and b"busy" in err.lower()), err
    assert seen_sources == sorted(seen_sources)
    applied = sum(1 for c in codes if c == 0)
    final = cli("query", "--db", db, "--format", "json", "SELECT count(*) AS n FROM sources")
    assert json.loads(final.stdout)[0]["n"] == applied
    assert cli("doctor", "--db", db).returncode == 0


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE TABLE x (a INT)",
        "DROP TABLE launches",
        "INSERT INTO launches (launch_id) VALUES ('x')",
        "UPDATE launches SET outcome = 'ready'",
        "DELETE FROM launches",
        "ALTER TABLE launches ADD COLUMN y INT",
        "ATTACH 'other.duckdb' AS o",
        "COPY launches TO 'out.csv'",
        "INSTALL httpfs",
        "LOAD httpfs",
        "PRAGMA enable_profiling",
        "SET threads = 1",
        "CHECKPOINT",
        "EXPORT DATABASE 'dump'",
        "SELECT 1; DROP TABLE launches",
        "CREATE VIEW v AS SELECT 1",
        "SELECT * FROM read_csv('/etc/passwd')",
    ],
)
def test_query_is_read_only_by_default(clean_store, tmp_path, sql):
    db, want, _ = clean_store
    copy = tmp_path / "ro.duckdb"
    copy.write_bytes(db.read_bytes())
    os.chdir(tmp_path)
    proc = cli("query", "--db", copy, sql)
    assert proc.returncode != 0 and b"Traceback" not in proc.stderr
    assert snapshot(copy) == want
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "dump").exists()


def test_bad_files_and_paths_exit_codes(tmp_path, clean_store):
    db, _, _ = clean_store
    # 2: input errors
    proc = cli("ingest", "--db", tmp_path / "a.duckdb", tmp_path / "missing.log")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    (tmp_path / "empty").mkdir()
    assert cli("ingest", "--db", tmp_path / "a.duckdb", tmp_path / "empty").returncode == 2
    unreadable = tmp_path / "secret.log"
    unreadable.write_text("x\n")
    unreadable.chmod(0)
    if os.geteuid() != 0:  # root reads anything
        assert cli("parse", unreadable).returncode == 2
    # 3: store errors: a corrupt / truncated DuckDB file is refused and never overwritten
    corrupt = tmp_path / "corrupt.duckdb"
    corrupt.write_bytes(b"this is not a database" * 100)
    before = corrupt.read_bytes()
    proc = cli("ingest", "--db", corrupt, SAMPLES / "kimi-k25")
    assert proc.returncode == 3 and b"Traceback" not in proc.stderr and proc.stderr.strip()
    assert corrupt.read_bytes() == before
    truncated = tmp_path / "truncated.duckdb"
    truncated.write_bytes(db.read_bytes()[:8192])
    before = truncated.read_bytes()
    for cmd in (("launches",), ("doctor",), ("ingest", SAMPLES / "kimi-k25")):
        proc = cli(*cmd, "--db", truncated)
        assert proc.returncode == 3 and b"Traceback" not in proc.stderr, (cmd, proc.stderr)
    assert truncated.read_bytes() == before


def test_full_disk(tmp_path):
    """A store on a file system that fills up: one clear line, exit 3, the store still opens."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=600k", "tmpfs", str(mnt)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        db = mnt / "h.duckdb"
        proc = cli("ingest", "--db", db, SAMPLES)
        assert proc.returncode in (0, 3), proc.stderr
        if proc.returncode == 3:
            assert b"Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) <= 2
        if db.exists():
            assert cli("doctor", "--db", db).returncode in (0, 3)
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


@needs_corpus
def test_nothing_lost_on_the_corpus(tmp_path):
    """Per source: parsed + noise + unrecognized == lines, and unrecognized lines are kept."""
    db = tmp_path / "c.duckdb"
    assert cli("ingest", "--db", db, "-q", CORPUS).returncode == 0
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT source_id, lines, parsed, noise, unrecognized FROM sources").fetchall()
    assert rows
    for _, lines, parsed, noise, unrec in rows:
        assert parsed + noise + unrec == lines
    unrec_total = sum(r[4] for r in rows)
    assert con.execute("SELECT count(*) FROM unrecognized").fetchone()[0] == unrec_total
    con.close()
