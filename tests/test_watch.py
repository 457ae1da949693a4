"""``logparse watch``: a file that grows while watch runs, and a real journal between two ``--once`` runs.

The store watch leaves must be the store a plain ``ingest`` of the final input gives: the same
launches (ids, outcomes, every figure), the same launch and rank budgets, the same runtime
aggregates.  The tests wait for watch's blocks with a generous time-out that only guards against a
hang; nothing is timed.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import duckdb
import pytest
from helpers import LOGPARSE, SAMPLES, StoreHolder, cli_env, cli_process
from journal_fixture import Entry, build_journal, export_stream, journal_remote, require_tools

from logparse.pipeline import FAST_MIN_BYTES

RESTARTS = SAMPLES / "sglang-0.5" / "restarts-0.5.12.log"
GUARD_S = 60  # a time-out against hanging, not a timing assertion

#: Extra batch lines in one second, which the pieces below split between two writes.
SAME_SECOND = [
    f"[2026-05-18 10:06:45] Decode batch, #running-req: 3, #token: {8600 + i}, token usage: 0.02, "
    "cuda graph: True, gen throughput (token/s): 60.00, #queue-req: 0"
    for i in range(4)
]


def store_state(db, *, line_numbers: bool = True) -> dict[str, list]:
    """What must agree between watch and a plain ingest (provenance columns left out)."""
    # a journal read in runs counts lines and launches from where each run starts and names the
    # source by the command that read it (``--after-cursor`` included), as consecutive ``ingest
    # --journal`` runs do: without ``line_numbers`` those positions and names are left out
    skip = ["source_id", "ingested_at", "updated_at"]
    skip += [] if line_numbers else ["first_line", "last_line", "source_ordinal", "source"]
    queries = {
        "launches": f"SELECT * EXCLUDE ({', '.join(skip)}) FROM launches ORDER BY launch_id",
        "launch_budget": "SELECT * FROM launch_budget ORDER BY launch_id",
        "rank_budget": "SELECT * FROM rank_budget ORDER BY launch_id, rank_idx",
        "rank_memory": "SELECT * FROM rank_memory ORDER BY launch_id, rank_idx",
        "runtime_stats": "SELECT * FROM runtime_stats ORDER BY launch_id",
        "launch_sequence": "SELECT * FROM launch_sequence ORDER BY launch_id",
        "events": "SELECT launch_id, count(*), count(DISTINCT line_hash) FROM events GROUP BY ALL ORDER BY 1",
    }
    con = duckdb.connect(str(db), read_only=True)
    try:
        out = {}
        for name, sql in queries.items():
            cur = con.execute(sql)
            cols = [d[0] for d in cur.description]
            out[name] = [dict(zip(cols, row)) for row in cur.fetchall()]
        return out
    finally:
        con.close()


def differences(a: dict[str, list[dict]], b: dict[str, list[dict]]) -> list[tuple]:
    """(table, row, column, a's value, b's value) wherever two store states differ."""
    out: list[tuple] = []
    for table in a:
        if len(a[table]) != len(b[table]):
            out.append((table, "rows", len(a[table]), len(b[table])))
            continue
        for i, (ra, rb) in enumerate(zip(a[table], b[table])):
            out += [(table, i, k, ra[k], rb.get(k)) for k in ra if ra[k] != rb.get(k)]
    return out


class Watch:
    """``logparse watch ...`` in a subprocess; its stdout and stderr lines read on threads."""

    def __init__(self, *args) -> None:
        self.proc = subprocess.Popen(
            [*LOGPARSE, "watch", *map(str, args)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=cli_env(),
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.notes: queue.Queue[str] = queue.Queue()
        self.err: list[str] = []
        threading.Thread(target=self._read, args=(self.proc.stdout, self.lines), daemon=True).start()
        threading.Thread(target=self._read, args=(self.proc.stderr, self.notes), daemon=True).start()

    @staticmethod
    def _read(stream, into: queue.Queue) -> None:
        for line in stream:
            into.put(line.decode())
        into.put(None)  # the end of the stream

    def _next(self, q: queue.Queue, what: str) -> str:
        deadline = time.monotonic() + GUARD_S
        while True:
            try:
                item = q.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                item = None if time.monotonic() > deadline else ""
            if item:
                return item
            if item is None:
                rc = self.proc.poll()
                self.proc.kill()
                self.proc.wait()
                raise AssertionError(f"no {what} from watch (exit {rc}): {self.stderr()}")

    def block(self) -> dict:
        """The next block (ndjson), waiting for it."""
        return json.loads(self._next(self.lines, "block"))

    def note(self, text: str) -> str:
        """The next note on stderr that holds ``text``, waiting for it."""
        while True:
            line = self._next(self.notes, repr(text))
            self.err.append(line)
            if text in line:
                return line

    def stderr(self) -> str:
        """Everything watch wrote to stderr so far (all of it once it has ended)."""
        while True:
            try:
                line = self.notes.get(timeout=0.1 if self.proc.poll() is None else 5)
            except queue.Empty:
                break
            if line is None:
                break
            self.err.append(line)
        return "".join(self.err)

    def stop(self) -> tuple[int, str]:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=GUARD_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise
        return rc, self.stderr()


def log_lines() -> list[bytes]:
    """The restarts log's lines, newline kept; split on newlines only (its tqdm lines hold ``\\r``)."""
    return _lines(RESTARTS.read_bytes())


def _lines(data: bytes) -> list[bytes]:
    parts = data.split(b"\n")
    return [p + b"\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _pieces() -> tuple[list[bytes], list[tuple[int, bool]]]:
    """The restarts log with a few more batch lines in one second (before the last SIGTERM), and
    where it is cut: (end line, whether a launch becomes ready within the piece)."""
    lines = log_lines()
    last_sigterm = max(i for i, x in enumerate(lines) if b"SIGTERM received" in x)
    lines[last_sigterm:last_sigterm] = [x.encode() + b"\n" for x in SAME_SECOND]
    n = len(lines)
    assert b"ready to roll" in lines[26] and b"ready to roll" in lines[61] and b"ready to roll" in lines[97]
    # launch 1 ready; launch 2 starts (line 40) and is young; its middle; ready; launch 3 starts
    # (line 75); ready; the same-second batch lines split 2 | 2; the last SIGTERM
    cuts = [(30, True), (42, False), (58, False), (64, True), (80, False), (99, True), (n - 4, False), (n, False)]
    return lines, cuts


def test_watch_a_growing_file_matches_a_plain_ingest(tmp_path):
    log, db, plain = tmp_path / "sglang.log", tmp_path / "watch.duckdb", tmp_path / "plain.duckdb"
    log.write_bytes(b"")
    w = Watch(log, "--db", db, "--format", "ndjson", "--runtime-interval", "0.2", "--metrics", tmp_path / "m.prom")
    lines, cuts = _pieces()
    blocks, done = [], 0
    try:
        for end, becomes_ready in cuts:
            with open(log, "ab") as fh:
                fh.writelines(lines[done:end])
            done = end
            if becomes_ready:
                blocks.append(w.block())
            else:
                time.sleep(0.5)  # let watch see this piece on its own (no assertion depends on it)
        # the last pieces carry runtime lines only: SIGTERM writes what is pending
    finally:
        rc, err = w.stop()
    assert rc == 0, err
    assert [b["launch"]["outcome"] for b in blocks] == ["ready"] * 3
    assert blocks[0]["previous"] is None and blocks[0]["check"]["status"] == "nothing_to_compare"
    assert blocks[1]["previous"]["launch_id"] == blocks[0]["launch"]["launch_id"]
    assert any("mem_fraction_static: 0.8 -> 0.88" in s for s in blocks[1]["change"])
    assert blocks[1]["attribution"][0]["input"] == "mem_fraction_static"
    assert blocks[2]["budget"]["kv_tokens"] == 455243 and blocks[2]["check"]["status"] == "ok"
    res = cli_process("ingest", log, "--db", plain, "-q")
    assert res.returncode == 0, res.stderr
    assert differences(store_state(db), store_state(plain)) == []
    # --metrics kept the textfile current: after the last write it is what `metrics` says of the store
    kept = (tmp_path / "m.prom").read_text()
    assert kept.count("logparse_kv_tokens{") == 1 and " 455243.0\n" in kept
    assert kept == cli_process("metrics", "--db", db).stdout.decode()


def test_watch_follows_rotation_and_waits_for_a_vanished_file(tmp_path):
    log, db = tmp_path / "sglang.log", tmp_path / "watch.duckdb"
    lines = log_lines()
    w = Watch(log, "--db", db, "--format", "ndjson")  # the file does not exist yet
    try:
        w.note(f"waiting for {log} to appear")
        log.write_bytes(b"".join(lines[:39]))
        first = w.block()
        log.rename(tmp_path / "sglang.log.1")  # rotated away: watch goes on with the new file
        log.write_bytes(b"".join(lines[39:74]))
        second = w.block()
    finally:
        rc, err = w.stop()
    assert rc == 0, err
    assert "a new file (rotated or truncated): reading it from its start" in err
    assert first["launch"]["outcome"] == second["launch"]["outcome"] == "ready"
    assert second["previous"]["launch_id"] == first["launch"]["launch_id"]


def test_watch_exec_gets_the_launch_as_json(tmp_path):
    log, db, got = tmp_path / "a.log", tmp_path / "w.duckdb", tmp_path / "got.json"
    log.write_bytes(RESTARTS.read_bytes())
    res = cli_process("watch", log, "--once", "--db", db, "--exec", f"cat > {got}.$LOGPARSE_OUTCOME.$$", "-q")
    assert res.returncode == 0, res.stderr
    docs = [json.loads(p.read_text()) for p in sorted(tmp_path.glob("got.json.ready.*"))]
    assert len(docs) == 3 and {d["launch"]["outcome"] for d in docs} == {"ready"}
    assert len(res.stdout.decode().split("✔ ready")) == 4
    again = cli_process("watch", log, "--once", "--db", db, "-q")  # nothing new: nothing to say
    assert again.returncode == 0 and again.stdout == b""


# ------------------------------------------------------------------------------------ the journal

BOOT = "c" * 31 + "3"


def _entries() -> list[Entry]:
    """The restarts log as journald stores sglang.service's stdout: one pid per start."""
    t0 = 1_779_095_527_000_000  # 2026-05-18 09:12:07 UTC
    out, pid = [], 4100
    for i, line in enumerate(log_lines()):
        if b"server_args=" in line:
            pid += 1
        out.append(Entry(t0 + i * 1_000_000, BOOT, "gpu-7", "sglang.service", "python3", pid, line.rstrip(b"\n")))
    return out


def test_watch_journal_once_twice_matches_a_plain_ingest(tmp_path):
    require_tools()
    entries = _entries()
    cut = next(i for i, e in enumerate(entries) if b"09:42:23" in e.message)  # launch 2, mid-runtime
    jdir = tmp_path / "journal"
    journal = build_journal(entries[:cut], jdir)
    db, plain = tmp_path / "watch.duckdb", tmp_path / "plain.duckdb"
    first = cli_process("watch", "--journal", "--file", journal, "--once", "--db", db, "--format", "ndjson")
    assert first.returncode == 0, first.stderr
    blocks1 = [json.loads(x) for x in first.stdout.decode().splitlines()]
    assert [b["launch"]["pid"] for b in blocks1] == [4101, 4102]
    # entries appended to the same journal file between the two runs
    more = subprocess.run(
        [journal_remote(), f"--output={journal}", "-"], input=export_stream(entries[cut:]), capture_output=True
    )
    assert more.returncode == 0, more.stderr
    second = cli_process("watch", "--journal", "--file", journal, "--once", "--db", db, "--format", "ndjson")
    assert second.returncode == 0, second.stderr
    blocks2 = [json.loads(x) for x in second.stdout.decode().splitlines()]
    assert [b["launch"]["pid"] for b in blocks2] == [4103]
    assert blocks2[0]["previous"]["launch_id"] == blocks1[1]["launch"]["launch_id"]
    res = cli_process("ingest", "--journal", "--file", journal, "--db", plain, "-q")
    assert res.returncode == 0, res.stderr
    # line numbers count entries from where each run started reading: the rest must agree
    assert differences(store_state(db, line_numbers=False), store_state(plain, line_numbers=False)) == []
    con = duckdb.connect(str(db), read_only=True)
    cursors = con.execute("SELECT host, unit FROM journal_cursors").fetchall()
    con.close()
    assert cursors == [("gpu-7", "sglang.service")]
    third = cli_process("watch", "--journal", "--file", journal, "--once", "--db", db, "--format", "ndjson")
    assert third.returncode == 0 and third.stdout == b""  # nothing new since the cursor


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_watch_journal_stops_cleanly_with_the_cursor_saved(tmp_path, signum):
    require_tools()
    entries = _entries()
    journal = build_journal(entries, tmp_path / "journal")
    db = tmp_path / "watch.duckdb"
    w = Watch("--journal", "--file", journal, "--db", db, "--format", "ndjson")
    blocks = [w.block() for _ in range(3)]
    w.proc.send_signal(signum)
    assert w.proc.wait(timeout=GUARD_S) == 0
    assert [b["launch"]["pid"] for b in blocks] == [4101, 4102, 4103]
    con = duckdb.connect(str(db), read_only=True)
    (cursor,) = con.execute("SELECT cursor FROM journal_cursors").fetchone()
    con.close()
    last = subprocess.run(
        ["journalctl", "--file", str(journal), "-o", "export", "-n", "1"], capture_output=True
    ).stdout.split(b"\n")[0]
    assert last == b"__CURSOR=" + cursor.encode()


def test_watch_names_the_engine_and_its_release(tmp_path):
    db = tmp_path / "w.duckdb"
    vllm = cli_process("watch", SAMPLES / "vllm" / "v1-defaults-0.20.2.log", "--once", "--db", db, "-q")
    assert vllm.returncode == 0, vllm.stderr
    assert "· vLLM 0.20.2\n" in vllm.stdout.decode() and "SGLang" not in vllm.stdout.decode()
    sglang = cli_process("watch", RESTARTS, "--once", "--db", db, "-q")
    assert sglang.stdout.decode().count("· SGLang 0.5.12–0.5.12.post1\n") == 3


def test_other_commands_use_the_store_while_watch_runs(tmp_path):
    log, db = tmp_path / "sglang.log", tmp_path / "w.duckdb"
    lines = log_lines()
    log.write_bytes(b"".join(lines[:39]))
    w = Watch(log, "--db", db, "--format", "ndjson", "--lock-timeout", "5")
    try:
        first = w.block()
        # watch holds no lock between writes: a reader, a query and a second writer get through
        listed = cli_process("launches", "--db", db, "--format", "json")
        assert listed.returncode == 0, listed.stderr
        assert [la["launch_id"] for la in json.loads(listed.stdout)] == [first["launch"]["launch_id"]]
        queried = cli_process("query", "SELECT count(*) AS n FROM launches", "--db", db, "--format", "csv")
        assert queried.returncode == 0 and queried.stdout.split() == [b"n", b"1"], queried.stderr
        other = cli_process("ingest", SAMPLES / "sglang-0.5" / "crash-oom-0.5.6.log", "--db", db, "-q")
        assert other.returncode == 0, other.stderr
        with open(log, "ab") as fh:  # and watch goes on writing after them
            fh.writelines(lines[39:74])
        second = w.block()
    finally:
        rc, err = w.stop()
    assert rc == 0, err
    assert second["previous"]["launch_id"] == first["launch"]["launch_id"]


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        out += [int(x) for x in (task / "children").read_text().split()]
    return out


def test_watch_journal_waits_out_a_journalctl_that_ends(tmp_path):
    require_tools()
    entries = _entries()
    cut = next(i for i, e in enumerate(entries) if b"09:42:23" in e.message)
    journal = build_journal(entries[:cut], tmp_path / "journal")
    db, plain = tmp_path / "watch.duckdb", tmp_path / "plain.duckdb"
    w = Watch("--journal", "--file", journal, "--db", db, "--format", "ndjson")
    try:
        blocks = [w.block(), w.block()]
        (journalctl,) = _children(w.proc.pid)
        os.kill(journalctl, signal.SIGKILL)  # as when journald restarts under it
        w.note("starting it again from the stored cursor")
        more = subprocess.run(
            [journal_remote(), f"--output={journal}", "-"], input=export_stream(entries[cut:]), capture_output=True
        )
        assert more.returncode == 0, more.stderr
        blocks.append(w.block())
    finally:
        rc, err = w.stop()
    assert rc == 0, err
    assert [b["launch"]["pid"] for b in blocks] == [4101, 4102, 4103]
    res = cli_process("ingest", "--journal", "--file", journal, "--db", plain, "-q")
    assert res.returncode == 0, res.stderr
    assert differences(store_state(db, line_numbers=False), store_state(plain, line_numbers=False)) == []


def line_references(db) -> dict[str, list]:
    """Every line a store's launches refer to: their ranges (per input too), their events' lines and
    the unrecognized lines, without the input's name (each command names the journal its own way)."""
    queries = {
        "launches": "SELECT launch_id, first_line, last_line FROM launches ORDER BY launch_id",
        # a launch that goes on in a later batch has a row for that batch too, without lines of its own
        "launch_sources": "SELECT launch_id, first_line, last_line FROM launch_sources "
        "WHERE first_line IS NOT NULL ORDER BY ALL",
        "events": "SELECT launch_id, seq, line_no, kind FROM events ORDER BY launch_id, seq",
        "unrecognized": "SELECT line_no, reason FROM unrecognized ORDER BY ALL",
    }
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {name: con.execute(sql).fetchall() for name, sql in queries.items()}
    finally:
        con.close()


def _serving(after: Entry, until: Entry) -> list[Entry]:
    """Decode batch lines of ``after``'s process, as SGLang prints them, between two entries: enough
    for a batch of them to take the vectorized path (FAST_MIN_BYTES of export stream)."""
    n = FAST_MIN_BYTES // len(export_stream([after])) + 1
    step = (until.realtime_us - after.realtime_us) // (n + 1)
    out = []
    for k in range(n):
        s = k * 1500 // n  # 09:13 to 09:37: after the launch's last line, before its SIGTERM (09:38:32)
        line = (
            f"[2026-05-18 09:{13 + s // 60}:{s % 60:02d}] Decode batch, #running-req: 3, #token: {5400 + k % 4000}, "
            "token usage: 0.03, cuda graph: True, gen throughput (token/s): 180.00, #queue-req: 0"
        )
        out.append(replace(after, realtime_us=after.realtime_us + (k + 1) * step, message=line.encode()))
    return out


def test_watch_journal_numbers_a_large_batch_as_ingest_does(tmp_path):
    """A batch of 4 MiB or more is read by the vectorized path, which numbered its lines from 1
    again (the launches it held referred to lines of the batch, not of the journal), and a later
    batch went on from the entries written, not the lines (an entry is several lines of the export
    stream). Whichever path reads a batch, each line keeps the number ``ingest --journal`` gives it."""
    require_tools()
    entries = _entries()
    first = next(i for i, e in enumerate(entries) if b"SIGTERM received" in e.message)  # launch 1 serving
    serving = _serving(entries[first - 1], entries[first])
    assert len(export_stream(serving)) >= FAST_MIN_BYTES
    journal = build_journal(entries[:first], tmp_path / "journal")
    db, plain = tmp_path / "watch.duckdb", tmp_path / "plain.duckdb"
    w = Watch("--journal", "--file", journal, "--db", db, "--format", "ndjson", "--runtime-interval", "600")
    try:
        blocks = [w.block()]  # launch 1, written alone
        more = subprocess.run(
            [journal_remote(), f"--output={journal}", "-"],
            input=export_stream(serving + entries[first:]),
            capture_output=True,
        )
        assert more.returncode == 0, more.stderr
        blocks += [w.block(), w.block()]  # launches 2 and 3, in the batch after the serving lines
    finally:
        rc, err = w.stop()
    assert rc == 0, err
    assert [b["launch"]["pid"] for b in blocks] == [4101, 4102, 4103]
    res = cli_process("ingest", "--journal", "--file", journal, "--db", plain, "-q")
    assert res.returncode == 0, res.stderr
    assert line_references(db) == line_references(plain)
    assert differences(store_state(db, line_numbers=False), store_state(plain, line_numbers=False)) == []


#: vLLM's statistics lines in its wordings (V1 with its engine index and process tag, V0), our own figures.
VLLM_STATS = [
    b"(APIServer pid=900) INFO 05-12 08:01:10 [loggers.py:257] Engine 000: Avg prompt throughput: 30.0 tokens/s, "
    b"Avg generation throughput: 250.5 tokens/s, Running: 7 reqs, Waiting: 0 reqs, GPU KV cache usage: 12.5%, "
    b"Prefix cache hit rate: 20.0%",
    b"INFO 01-15 12:31:02 metrics.py:467] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 140.3 "
    b"tokens/s, Running: 31 reqs, Swapped: 2 reqs, Pending: 9 reqs, GPU KV cache usage: 97.6%, CPU KV cache usage: 1.5%.",
]


def test_watch_counts_every_engines_runtime_lines_as_runtime_only():
    """What only feeds runtime aggregates may wait for ``runtime_interval``: SGLang's batch lines,
    vLLM's statistics lines (the words of every engine's spec), access lines; a startup line may not."""
    from logparse.store.watch import JournalWatch, runtime_only

    startup = b"(APIServer pid=900) INFO 05-12 08:01:11 [api_server.py:1900] Starting vLLM API server 0 on http://0.0.0.0:8000"
    access = b'(APIServer pid=900) INFO:     10.0.0.4:51234 - "POST /v1/chat/completions HTTP/1.1" 200 OK'
    runtime = [*VLLM_STATS, SAME_SECOND[0].encode(), access]
    assert runtime_only(b"\n".join(runtime) + b"\n")
    assert not runtime_only(b"\n".join([*runtime, startup]))
    entries = [
        Entry(1_779_095_527_000_000 + i, BOOT, "gpu-7", "vllm.service", "vllm", 900, m) for i, m in enumerate(runtime)
    ]
    batch = JournalWatch(SimpleNamespace())  # type: ignore[arg-type]  # its batch alone: no store, no journalctl
    for e in entries:
        batch.take(export_stream([e]))
    assert batch.pending_is_runtime_only()
    batch.take(export_stream([replace(entries[0], message=startup)]))
    assert not batch.pending_is_runtime_only()


class _Pending:
    def __init__(self, runtime_only: bool) -> None:
        self.runtime_only = runtime_only

    def pending_is_runtime_only(self) -> bool:
        return self.runtime_only


def test_runtime_lines_of_a_long_running_launch_wait_in_proportion_to_their_cost():
    """Each write of a file re-reads the launch in progress: the older the launch, the rarer its
    runtime-only writes, so that watch's share of a core stays bounded; anything else is written at once."""
    from logparse.store.watch import Policy, write_due

    p = Policy(settle_s=0.3, runtime_interval_s=60.0, runtime_cost_factor=20.0)
    runtime, startup = _Pending(True), _Pending(False)
    assert write_due(runtime, p, idle=1.0, since_write=61.0, last_cost=0.5)  # a young launch: the interval
    assert not write_due(runtime, p, idle=1.0, since_write=61.0, last_cost=10.0)  # 10 s a write: wait 200 s
    assert write_due(runtime, p, idle=1.0, since_write=201.0, last_cost=10.0)
    assert write_due(startup, p, idle=1.0, since_write=1.0, last_cost=10.0)  # a new launch is not delayed
    assert not write_due(startup, p, idle=0.1, since_write=1.0, last_cost=0.0)  # still being written


# ------------------------------------------------------------------------------ a busy store


def _store_with_one_launch(db: Path) -> None:
    """A store that exists (so that a second process can hold it) and holds another deployment."""
    res = cli_process("ingest", SAMPLES / "sglang-0.5" / "crash-oom-0.5.6.log", "--db", db, "-q")
    assert res.returncode == 0, res.stderr


def test_watch_waits_for_a_reader_and_loses_nothing(tmp_path):
    """A second process reads the store (a real read-only DuckDB connection) while the launches
    become ready: watch says once that the store is busy, keeps what it read, never exits, and
    writes it all once the reader is gone: the store is a plain ingest's (issue 18, item 5)."""
    log, db, plain = tmp_path / "sglang.log", tmp_path / "watch.duckdb", tmp_path / "plain.duckdb"
    for store in (db, plain):
        _store_with_one_launch(store)
    log.write_bytes(b"")
    w = Watch(log, "--db", db, "--format", "ndjson", "--lock-timeout", "1")
    try:
        with StoreHolder(db) as holder:
            log.write_bytes(RESTARTS.read_bytes())
            w.note("the store is busy: another process (PID ")
            time.sleep(3)  # watch keeps trying: it must neither exit nor say it again
            assert w.proc.poll() is None
            assert w.lines.empty()  # nothing written, so no block yet
            holder.release()
        blocks = [w.block() for _ in range(3)]
        w.note("the store is free again")
    finally:
        rc, err = w.stop()
    assert rc == 0, err
    assert err.count("the store is busy") == 1, err
    assert [b["launch"]["outcome"] for b in blocks] == ["ready"] * 3
    assert cli_process("ingest", log, "--db", plain, "-q").returncode == 0
    assert differences(store_state(db), store_state(plain)) == []


def test_watch_stopped_while_the_store_is_busy_loses_nothing(tmp_path):
    """SIGTERM while the store is held: watch stops as asked (exit 0), says what it did not write,
    and the next watch stores it."""
    log, db, plain = tmp_path / "sglang.log", tmp_path / "watch.duckdb", tmp_path / "plain.duckdb"
    for store in (db, plain):
        _store_with_one_launch(store)
    log.write_bytes(RESTARTS.read_bytes())
    with StoreHolder(db):
        w = Watch(log, "--db", db, "--format", "ndjson", "--lock-timeout", "0.5")
        w.note("the store is busy")
        rc, err = w.stop()
    assert rc == 0, err
    assert "stopped while the store was busy" in err and "the next watch reads it again" in err
    assert "Traceback" not in err
    again = cli_process("watch", log, "--once", "--db", db, "--format", "ndjson")
    assert again.returncode == 0, again.stderr
    assert len(again.stdout.decode().splitlines()) == 3
    assert cli_process("ingest", log, "--db", plain, "-q").returncode == 0
    assert differences(store_state(db), store_state(plain)) == []


def test_watch_journal_keeps_its_entries_while_the_store_is_busy(tmp_path):
    """The journal: the entries read while the store is held stay in memory (the cursor is only
    stored with them), and are all written once it is free."""
    require_tools()
    entries = _entries()
    journal = build_journal(entries, tmp_path / "journal")
    db, plain = tmp_path / "watch.duckdb", tmp_path / "plain.duckdb"
    for store in (db, plain):
        _store_with_one_launch(store)
    with StoreHolder(db) as holder:
        w = Watch("--journal", "--file", journal, "--db", db, "--format", "ndjson", "--lock-timeout", "1")
        try:
            w.note("the store is busy")
            time.sleep(2)
            assert w.proc.poll() is None and w.lines.empty()
            holder.release()
            blocks = [w.block() for _ in range(3)]
        finally:
            rc, err = w.stop()
    assert rc == 0, err
    assert [b["launch"]["pid"] for b in blocks] == [4101, 4102, 4103]
    res = cli_process("ingest", "--journal", "--file", journal, "--db", plain, "-q")
    assert res.returncode == 0, res.stderr
    assert differences(store_state(db, line_numbers=False), store_state(plain, line_numbers=False)) == []
