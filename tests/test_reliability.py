"""Reliability of the history store: crashes mid-write, concurrent users, bad files, nothing lost.

Crash safety: ``logparse ingest`` is started in a subprocess and killed with SIGKILL at
several points of its run; after each kill the store must open and pass ``logparse doctor``,
and re-running the same ingest must converge to exactly the store a clean ingest gives.
By default 4 kill points: 3 timed ones spread over the run (start-up, middle, end) and one
inside the last write transaction (all of it written, nothing committed). Under ``-m slow``, or
with LOGPARSE_KILL_RUNS set, LOGPARSE_KILL_RUNS timed points (default 20) plus one inside every
write transaction.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from helpers import CORPUS, SAMPLES, cli_env, cli_process, generate_logs, needs_corpus

KILL_RUNS = int(os.environ.get("LOGPARSE_KILL_RUNS") or "20")
#: Timed kill points of the default run (plus one inside a transaction).
QUICK_KILL_RUNS = 3

#: Columns that legitimately differ between two ingests of the same content.
VOLATILE = {"ingested_at", "updated_at", "created_at", "source_id", "applied_at"}

cli = cli_process

#: The long crash test runs under ``-m slow``, or whenever LOGPARSE_KILL_RUNS asks for it.
slow_unless_asked = (lambda f: f) if os.environ.get("LOGPARSE_KILL_RUNS") else pytest.mark.slow

#: ``logparse`` with its transaction helper instrumented: every write transaction appends
#: "begun N", "committing N", "committed N" to $LOGPARSE_TX_LOG (unbuffered writes, which a
#: SIGKILL cannot lose), and transaction number $LOGPARSE_TX_PAUSE, once all its writes are done,
#: writes "paused N" and waits for the kill instead of committing. The tests then know where
#: each kill landed.
TX_TRACED = [
    sys.executable,
    "-c",
    """
import contextlib, os, sys, time
import logparse.store.db as dbm

log = os.open(os.environ["LOGPARSE_TX_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
pause = int(os.environ.get("LOGPARSE_TX_PAUSE") or 0)
plain = dbm.transaction
count = 0

@contextlib.contextmanager
def transaction(con):
    global count
    count += 1
    n = count
    with plain(con):
        os.write(log, b"begun %d\\n" % n)
        yield
        if n == pause:
            os.write(log, b"paused %d\\n" % n)
            time.sleep(3600)
        os.write(log, b"committing %d\\n" % n)
    os.write(log, b"committed %d\\n" % n)

dbm.transaction = transaction
from logparse.cli import main
sys.argv[0] = "logparse"
main()
""",
]


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
    d = generate_logs(tmp_path_factory.mktemp("big"), 150000, "plain")
    # Several inputs: each one is atomic on its own, so a kill can land between them too.
    (d / "more").mkdir()
    for name in (
        "sglang-0.5/restarts-0.5.12.log",
        "kimi-k25/launch-1-baseline.log",
        "sglang-0.4/deepseek-v3-tp8-eagle-0.4.7.log",
    ):
        (d / "more" / Path(name).name).write_bytes((SAMPLES / name).read_bytes())
    return d


def tx_log(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


@pytest.fixture(scope="module")
def clean_store(big_input, tmp_path_factory) -> tuple[Path, dict, float]:
    d = tmp_path_factory.mktemp("clean")
    db = d / "clean.duckdb"
    t = time.perf_counter()
    proc = cli("ingest", "--db", db, "-q", big_input)
    took = time.perf_counter() - t
    assert proc.returncode == 0, proc.stderr
    return db, snapshot(db), took


@pytest.fixture(scope="module")
def traced_run(big_input, tmp_path_factory) -> tuple[int, float]:
    """A clean ingest through ``TX_TRACED``: its number of write transactions (migrations, then
    one per input) and its time (the store of ``clean_store`` is the cold run; this one is warm,
    as the kill runs are)."""
    d = tmp_path_factory.mktemp("traced")
    t = time.perf_counter()
    proc = subprocess.run(
        [*TX_TRACED, "ingest", "--db", str(d / "h.duckdb"), "-q", str(big_input)],
        capture_output=True,
        env=cli_env(LOGPARSE_TX_LOG=str(d / "tx.log")),
        timeout=300,
    )
    took = time.perf_counter() - t
    assert proc.returncode == 0, proc.stderr
    done = [ln for ln in tx_log(d / "tx.log") if ln.startswith("committed ")]
    assert len(done) >= 2, "the traced transaction helper saw no transactions: was it renamed?"
    return len(done), took


def kill_points(timed: int, took: float, pause_in: list[int]) -> list[tuple[str, float | int]]:
    """``timed`` kill points spread over the run (from 10 % to 80 % of the clean ingest's time:
    interpreter start-up, parsing, the writes), then kills inside the given transactions."""
    plan: list[tuple[str, float | int]] = [("after", took * (0.1 + 0.7 * i / max(timed - 1, 1))) for i in range(timed)]
    return plan + [("inside transaction", n) for n in pause_in]


def crash_and_converge(big_input, want, tmp_path, plan) -> list[str]:
    """Run each kill point of ``plan``; returns where each kill landed."""
    landed = []
    for i, (how, when) in enumerate(plan):
        db, log = tmp_path / f"k{i}.duckdb", tmp_path / f"k{i}.tx"
        env = cli_env(LOGPARSE_TX_LOG=str(log), LOGPARSE_TX_PAUSE=str(when) if how != "after" else "0")
        proc = subprocess.Popen(
            [*TX_TRACED, "ingest", "--db", str(db), "-q", str(big_input)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        if how == "after":
            time.sleep(when)
        else:
            deadline = time.monotonic() + 240
            while f"paused {when}" not in tx_log(log) and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
            assert f"paused {when}" in tx_log(log), f"kill point {i}: transaction {when} never paused"
        killed = proc.poll() is None
        if killed:
            proc.send_signal(signal.SIGKILL)
        proc.wait()
        last = (tx_log(log) or ["before any transaction"])[-1]
        if not killed:
            landed.append("after the end")
        elif last.startswith(("begun", "paused", "committing")):
            landed.append(f"mid-transaction ({last})")
        else:
            landed.append(f"between transactions ({last})")
        at = f"{when:.2f} s" if how == "after" else f"{when}"
        where = f"kill point {i} ({how} {at}: {landed[-1]})"
        if db.exists():
            doc = cli("doctor", "--db", db)
            assert doc.returncode == 0, (where, doc.stdout.decode(), doc.stderr.decode())
        again = cli("ingest", "--db", db, "-q", big_input)
        assert again.returncode == 0, (where, again.stderr.decode())
        assert cli("doctor", "--db", db).returncode == 0, where
        assert snapshot(db) == want, f"{where} did not converge"
    return landed


def test_crash_at_a_few_points_converges(big_input, clean_store, traced_run, tmp_path):
    """The default run: the start-up, middle and end of the run, and inside the last transaction."""
    _, want, _ = clean_store
    n_tx, took = traced_run
    plan = kill_points(QUICK_KILL_RUNS, took, [n_tx])
    landed = crash_and_converge(big_input, want, tmp_path, plan)
    assert any(w.startswith("mid-transaction") for w in landed), landed
    # timing on a loaded machine varies: one timed kill may come after the end
    assert sum(w != "after the end" for w in landed) >= len(plan) - 1, landed


@slow_unless_asked
def test_crash_at_many_points_converges(big_input, clean_store, traced_run, tmp_path):
    _, want, _ = clean_store
    n_tx, took = traced_run
    plan = kill_points(KILL_RUNS, took, list(range(1, n_tx + 1)))
    landed = crash_and_converge(big_input, want, tmp_path, plan)
    timed = landed[:KILL_RUNS]
    kills = sum(w != "after the end" for w in timed)
    assert kills >= KILL_RUNS // 2, f"only {kills} of {KILL_RUNS} runs were still running when killed: {timed}"
    assert all(w.startswith("mid-transaction") for w in landed[KILL_RUNS:]), landed[KILL_RUNS:]


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
            env=cli_env(),
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
def test_query_is_read_only_by_default(clean_store, tmp_path, monkeypatch, sql):
    db, want, _ = clean_store
    copy = tmp_path / "ro.duckdb"
    copy.write_bytes(db.read_bytes())
    monkeypatch.chdir(tmp_path)
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
    (tmp_path / "unreadable").mkdir()
    for bad in _unreadable_files(tmp_path / "unreadable"):  # as root too (a read that fails with EIO)
        proc = cli("parse", bad)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert b"Traceback" not in proc.stderr and str(bad).encode() in proc.stderr
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


def _unreadable_files(d: Path) -> list[Path]:
    """Files on which reading fails for every user, root included (how CI runs): a link to
    ``/proc/self/mem``, a regular file (so a directory walk takes it) that opens and then fails its
    first read with EIO, as a file on a failing disk or a dead network mount does (``chmod 0`` does
    not stop root, and a FIFO or a dangling link is no file: the walk skips them); and, when not
    root, a file with no read permission."""
    out = []
    if Path("/proc/self/mem").is_file():
        (d / "b-disk-error.log").symlink_to("/proc/self/mem")
        out.append(d / "b-disk-error.log")
    if os.geteuid() != 0:
        secret = d / "b-secret.log"
        secret.write_text("[2026-05-18 09:12:07] server_args=ServerArgs(model_path='/m/x', tp_size=1)\n")
        secret.chmod(0)
        out.append(secret)
    return out


def test_a_run_that_fails_on_some_inputs_stores_the_others_and_names_them(tmp_path):
    """Issue 18 item 8: a directory with an unreadable file between readable ones.  Every readable
    input is stored (each in its own transaction), each unreadable one is named on stderr on one
    line and in the closing line, and the run exits 0 (something useful was done); named alone,
    an unreadable file exits 2 with one line, and the store is unchanged."""
    d = tmp_path / "logs"
    d.mkdir()
    (d / "a.log").write_bytes((SAMPLES / "sglang-0.5" / "restarts-0.5.12.log").read_bytes())
    bad = _unreadable_files(d)
    if not bad:
        pytest.skip("no file here fails its read (/proc/self/mem missing, and running as root)")
    (d / "c.log").write_bytes((SAMPLES / "kimi-k25" / "launch-1-baseline.log").read_bytes())
    db = tmp_path / "h.duckdb"
    proc = cli("ingest", "--db", db, d)
    err = proc.stderr.decode().strip().splitlines()
    assert proc.returncode == 0, err
    assert b"Traceback" not in proc.stderr
    for f in bad:
        assert sum(str(f) in line for line in err) == 2, err  # its own line, and the closing line
        assert [line for line in err if str(f) in line and line.startswith("logparse: ")], err
    assert f"{len(bad)} input(s) could not be read, not stored" in err[-1]
    con = duckdb.connect(str(db), read_only=True)
    try:
        paths = sorted(Path(r[0]).name for r in con.execute("SELECT path FROM sources").fetchall())
    finally:
        con.close()
    assert paths == ["a.log", "c.log"]
    assert cli("doctor", "--db", db).returncode == 0
    before = snapshot(db)
    for f in bad:
        alone = cli("ingest", "--db", db, f)
        assert alone.returncode == 2 and len(alone.stderr.strip().splitlines()) == 1, alone.stderr
        assert str(f) in alone.stderr.decode()
    again = cli("ingest", "--db", db, d)  # the others are already stored; the bad ones named again
    assert again.returncode == 0 and b"2 input(s) skipped" in again.stderr
    assert snapshot(db) == before


#: What the store holds before the disk fills: launches of one deployment (fits in the tmpfs).
BEFORE_FULL = SAMPLES / "sglang-0.5" / "restarts-0.5.12.log"


def mount_tmpfs(mnt: Path, size: str) -> None:
    mnt.mkdir(exist_ok=True)
    mount = ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)]
    if subprocess.run(mount, capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")


def contains(after: dict, before: dict) -> list[str]:
    """The rows of ``before`` missing from ``after`` (table: row), for a message."""
    return [f"{t}: {row}" for t, rows in before.items() for row in rows if row not in set(after.get(t, ()))]


def fill_and_fail(db: Path, filler: Path) -> subprocess.CompletedProcess:
    """Fill the file system but for a few KiB, then ingest every sample: it must fail cleanly."""
    with contextlib.suppress(OSError), filler.open("wb") as f:
        while True:
            f.write(b"\0" * 4096)
            f.flush()
    filler.write_bytes(b"\0" * max(0, filler.stat().st_size - (48 << 10)))
    return cli("ingest", "--db", db, SAMPLES)


def test_full_disk(tmp_path):
    """A store on a file system that fills up: one clear line, exit 3; the store is still healthy,
    the launches stored before are intact, and once there is space again the same ingest converges
    to the store a clean run gives."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (CI runs as root)")
    mnt = tmp_path / "small"
    mount_tmpfs(mnt, "32m")
    try:
        db = mnt / "h.duckdb"
        assert cli("ingest", "--db", db, "-q", BEFORE_FULL).returncode == 0
        before = snapshot(db)
        proc = fill_and_fail(db, mnt / "filler")
        err = proc.stderr.decode()
        assert proc.returncode == 3, (proc.returncode, err)
        assert "Traceback" not in err and 1 <= len(err.strip().splitlines()) <= 2, err
        doctor = cli("doctor", "--db", db)
        assert doctor.returncode == 0, doctor.stdout.decode() + doctor.stderr.decode()
        assert not contains(snapshot(db), before), "launches stored before the disk filled were lost"
        assert cli("launches", "--db", db).returncode == 0
        (mnt / "filler").unlink()  # space again: the same ingest now converges
        assert cli("ingest", "--db", db, "-q", SAMPLES).returncode == 0
        assert cli("doctor", "--db", db).returncode == 0
        clean = tmp_path / "clean.duckdb"
        assert cli("ingest", "--db", clean, "-q", BEFORE_FULL).returncode == 0
        assert cli("ingest", "--db", clean, "-q", SAMPLES).returncode == 0
        assert snapshot(db) == snapshot(clean)
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


@needs_corpus
def test_nothing_lost_on_the_corpus(tmp_path):
    """Per source: parsed + noise + unrecognized + other_units == lines, and unrecognized lines are kept."""
    db = tmp_path / "c.duckdb"
    assert cli("ingest", "--db", db, "-q", CORPUS).returncode == 0
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT source_id, lines, parsed, noise, unrecognized, other_units FROM sources").fetchall()
    assert rows
    for _, lines, parsed, noise, unrec, other in rows:
        assert parsed + noise + unrec + other == lines
    unrec_total = sum(r[4] for r in rows)
    assert con.execute("SELECT count(*) FROM unrecognized").fetchone()[0] == unrec_total
    con.close()
