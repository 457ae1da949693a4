"""Store commands end to end: ingest, launches, show, history, query, export, doctor; concurrency."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl
import pytest
from helpers import LOGPARSE, ROOT, SAMPLES, cli, cli_env, cli_process
from store_fixture import launch_lines

# ---------------------------------------------------------------------------- ingest and listing


def test_ingest_then_list_show_history(db, three, tmp_path):
    code, out, err = cli("ingest", str(three), "--db", db, "--host", "gpu-1", "--label", "team=infra")
    assert code == 0, err
    assert "3 launch(es) added" in err
    code, out, err = cli("ingest", str(three), "--db", db)
    assert code == 0 and "skipped" in err and "1 input(s) skipped" in err

    code, out, _ = cli("launches", "--db", db)
    assert code == 0 and "3 launch(es)" in out and "Qwen3-32B" in out
    code, out, _ = cli("launches", "--db", db, "--format", "json")
    rows = json.loads(out)
    assert [r["mem_fraction_static"] for r in rows] == [0.85, 0.88, 0.88]
    assert all(r["host"] == "gpu-1" for r in rows)
    code, out, _ = cli("launches", "--db", db, "--format", "ndjson", "--limit", "1")
    assert len(out.splitlines()) == 1 and json.loads(out)["kv_tokens"] == 310000
    code, out, _ = cli("launches", "--db", db, "--format", "csv", "--since", "2026-05-18T10:30")
    assert out.splitlines()[0].startswith("launch_id,") and len(out.splitlines()) == 2
    code, _, err = cli("launches", "--db", db, "--format", "parquet")
    assert code == 2 and "--output" in err
    pq = tmp_path / "l.parquet"
    code, _, _ = cli("launches", "--db", db, "--format", "parquet", "--output", str(pq))
    assert code == 0 and pl.read_parquet(pq).height == 3
    code, _, err = cli("launches", "--db", db, "--since", "someday")
    assert code == 2 and "cannot read the time" in err

    code, out, _ = cli("show", "@latest", "--db", db)
    assert code == 0
    assert "per-rank GPU memory" in out and "runtime KV pressure" in out and "events" in out
    assert "kv_alloc" in out and "ready" in out
    code, out, _ = cli("show", "@-3", "--db", db, "--format", "json")
    d = json.loads(out)
    assert d["mem_fraction_static"] == 0.85 and d["events"] and d["ranks"][0]["kv_tokens"] == 283501
    code, out, _ = cli("show", f"{three}#2", "--db", db, "--format", "json")
    assert json.loads(out)["mem_fraction_static"] == 0.88
    code, _, err = cli("show", "@-7", "--db", db)
    assert code == 2 and "only 3 launch" in err

    code, out, _ = cli("history", "--db", db)
    assert code == 0
    assert "mem_fraction_static: 0.85 -> 0.88" in out and "+26,499" in out
    assert "random_seed" not in out
    code, out, _ = cli("history", "--db", db, "--metric", "headroom", "--format", "json")
    rows = json.loads(out)
    assert [r["args_changed"] for r in rows] == [None, True, False]
    assert rows[1]["changed_arg_names"] == ["mem_fraction_static"]
    code, _, err = cli("history", "--db", db, "--metric", "bogus")
    assert code == 2 and "unknown metric" in err


def test_history_plot_png_and_svg(db, three, tmp_path):
    assert cli("ingest", str(three), "--db", db)[0] == 0
    png = tmp_path / "kv.png"
    code, _, err = cli("history", "--db", db, "--plot", str(png))
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    svg = tmp_path / "kv.svg"
    assert cli("history", "--db", db, "--metric", "avail_after_graph_gb", "--plot", str(svg))[0] == 0
    text = svg.read_text()
    assert "<svg" in text and "mem_fraction_static" in text
    assert cli("history", "--db", db, "--plot", str(tmp_path / "x.jpg"))[0] == 2


def test_quick_start_command(tmp_path):
    db = str(tmp_path / "quick.duckdb")
    code, out, err = cli("ingest", str(SAMPLES), "--history", "--db", db)
    assert code == 0, err
    assert "launch(es) added" in err
    assert "kv_tokens" in out and "Qwen2.5-14B-Instruct" in out
    assert "mem_fraction_static: 0.8 -> 0.88" in out


def test_ingest_usage_errors(db, tmp_path):
    assert cli("ingest", "--db", db)[0] == 2
    code, _, err = cli("ingest", str(tmp_path / "missing.log"), "--db", db)
    assert code == 2 and "no such file" in err
    code, _, err = cli("ingest", str(ROOT / "pyproject.toml"), "--db", db, "--label", "oops")
    assert code == 2 and "key=value" in err
    code, _, err = cli("ingest", str(ROOT / "pyproject.toml"), "--db", db)
    assert code == 2 and "no SGLang or vLLM launch" in err


# ---------------------------------------------------------------------------- query


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM launches",
        "DROP TABLE events",
        "ATTACH '/tmp/x.duckdb' AS x",
        "COPY launches TO '/tmp/x.csv'",
        "INSTALL httpfs",
        "SET threads = 1",
        "CHECKPOINT",
        "EXPORT DATABASE '/tmp/dump'",
        "SELECT 1; SELECT 2",
    ],
)
def test_query_cli_refuses_writes(db, three, sql):
    assert cli("ingest", str(three), "--db", db)[0] == 0
    code, _out, err = cli("query", sql, "--db", db)
    assert code == 2 and ("refused" in err or "statements in one query" in err), err


def test_query_cli_reads_and_writes_with_write(db, three, tmp_path):
    assert cli("ingest", str(three), "--db", db)[0] == 0
    code, out, _ = cli("query", "SELECT count(*) AS n FROM launches", "--db", db, "--format", "csv")
    assert code == 0 and out.splitlines() == ["n", "3"]
    code, out, _ = cli("query", "UPDATE launches SET deployment = 'prod'", "--db", db, "--write")
    assert code == 0
    code, out, _ = cli("query", "SELECT DISTINCT deployment FROM history", "--db", db, "--format", "json")
    assert json.loads(out) == [{"deployment": "prod"}]
    code, _, err = cli("query", "SELECT * FROM nope", "--db", db)
    assert code == 2 and "SQL error" in err


def test_query_write_never_creates_a_store_or_its_folder(tmp_path):
    missing = tmp_path / "no" / "such" / "dir" / "x.duckdb"
    for sql in ("CREATE TABLE t (a INTEGER)", "SELECT 1"):
        code, out, err = cli("query", sql, "--db", missing, "--write")
        assert code == 3 and out == "" and len(err.strip().splitlines()) == 1, err
        assert f"no history store at {missing}" in err
    assert not (tmp_path / "no").exists()
    code, _, err = cli("query", "CREATE TABLE t (a INTEGER)", "--db", tmp_path / "new.duckdb", "--write")
    assert code == 3 and not (tmp_path / "new.duckdb").exists()


# ---------------------------------------------------------------------------- store errors


def test_cli_store_errors_exit_3(tmp_path, three):
    junk = tmp_path / "junk.duckdb"
    junk.write_bytes(b"not a database" * 100)
    digest = hashlib.sha256(junk.read_bytes()).hexdigest()
    code, _, err = cli("ingest", str(three), "--db", str(junk))
    assert code == 3 and "not a DuckDB database" in err
    assert hashlib.sha256(junk.read_bytes()).hexdigest() == digest
    code, _, err = cli("launches", "--db", str(tmp_path / "none.duckdb"))
    assert code == 3 and "no history store" in err

    newer = str(tmp_path / "newer.duckdb")
    assert cli("ingest", str(three), "--db", newer)[0] == 0
    con = duckdb.connect(newer)
    con.execute("INSERT INTO schema_version VALUES (42, now()::TIMESTAMP, '9')")
    con.close()
    from logparse.store import db as dbm

    dbm._VALIDATED.clear()
    code, _, err = cli("launches", "--db", newer)
    assert code == 3 and "newer logparse" in err


def test_doctor_and_export_merge(db, three, tmp_path):
    assert cli("ingest", str(three), "--db", db, "--host", "gpu-1")[0] == 0
    code, out, _ = cli("doctor", "--db", db)
    assert code == 0 and "healthy" in out and "launches: 3" in out
    exp = tmp_path / "exp"
    code, _, err = cli("export", str(exp), "--db", db)
    assert code == 0 and "exported 3 launch(es)" in err
    assert (exp / "launches" / "host=gpu-1").is_dir()
    other = str(tmp_path / "fleet.duckdb")
    code, _, err = cli("ingest", str(exp), "--db", other)
    assert code == 0 and "3 added" in err
    code, _, err = cli("ingest", db, "--db", other)
    assert code == 0 and "3 unchanged" in err
    assert cli("query", "DELETE FROM sources", "--db", db, "--write")[0] == 0
    code, out, err = cli("doctor", "--db", db)
    assert code == 3 and "launch(es) without a source" in out
    notempty = tmp_path / "notempty"
    notempty.mkdir()
    (notempty / "x.txt").write_text("x")
    assert cli("export", str(notempty), "--db", other)[0] == 2


# ---------------------------------------------------------------------------- concurrency


def _logs(tmp_path: Path, tag: str, n: int) -> list[str]:
    out = []
    for i in range(n):
        start = datetime(2026, 6, 1 + (i % 20), 9) + timedelta(minutes=int(tag) * 7)
        p = tmp_path / f"{tag}-{i}.log"
        p.write_text("\n".join(launch_lines(start, kv_tokens=200000 + 1000 * i + int(tag), random_seed=i)) + "\n")
        out.append(str(p))
    return out


def test_two_concurrent_ingests_never_corrupt(tmp_path):
    db = str(tmp_path / "shared.duckdb")
    a, b = _logs(tmp_path, "1", 8), _logs(tmp_path, "2", 8)
    env = cli_env(LOGPARSE_DB=db)
    procs = [
        subprocess.Popen(
            [*LOGPARSE, "ingest", *files, "--lock-timeout", "60"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for files in (a, b)
    ]
    results = [p.communicate(timeout=300) + (p.returncode,) for p in procs]
    for _out, err, rc in results:
        assert rc in (0, 3), err
        if rc == 3:
            assert "store is busy" in err
    applied = sum(8 for _, _, rc in results if rc == 0)
    con = duckdb.connect(db, read_only=True)
    n = con.execute("SELECT count(*) FROM launches").fetchall()[0][0]
    con.close()
    assert n >= applied and n <= 16
    code, out, _ = cli("doctor", "--db", db)
    assert code == 0, out


def test_busy_store_gives_up_with_exit_3(tmp_path, three):
    db = str(tmp_path / "busy.duckdb")
    assert cli("ingest", str(three), "--db", db)[0] == 0
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import duckdb, sys, time\n"
                f"con = duckdb.connect({db!r})\n"
                "con.execute('BEGIN TRANSACTION')\n"
                "print('locked', flush=True)\n"
                "sys.stdin.readline()\n"
            ),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        other = tmp_path / "other.log"
        other.write_text("\n".join(launch_lines(datetime(2026, 7, 1, 8))) + "\n")
        t0 = time.monotonic()
        proc = cli_process("ingest", other, "--db", db, "--lock-timeout", "1.5", text=True, timeout=120)
        waited = time.monotonic() - t0
        assert proc.returncode == 3, proc.stderr
        assert "store is busy" in proc.stderr and "--lock-timeout" in proc.stderr
        assert waited >= 1.5
    finally:
        holder.communicate("\n", timeout=30)
    code, out, _ = cli("doctor", "--db", db)
    assert code == 0 and "launches: 3" in out


# ---------------------------------------------------------------------------- a genuine journal


def test_journal_ingest_resumes_from_the_stored_cursor(tmp_path):
    from journal_fixture import Entry, export_stream, require_tools

    jr = require_tools()
    lines = launch_lines(datetime(2026, 5, 18, 9), runtime=6)
    boot = "0" * 31 + "1"
    t0 = 1_779_000_000_000_000
    entries = [
        Entry(
            realtime_us=t0 + i * 1000,
            boot=boot,
            host="gpu-9",
            unit="sglang.service",
            ident="python3",
            pid=777,
            message=ln.encode(),
        )
        for i, ln in enumerate(lines)
    ]
    journal = tmp_path / "j" / "test.journal"
    journal.parent.mkdir()
    db = str(tmp_path / "h.duckdb")
    cut = next(i for i, ln in enumerate(lines) if "Memory pool end" in ln)
    for part, expect in ((entries[:cut], "1 launch(es) added"), (entries[cut:], "1 updated")):
        # systemd-journal-remote appends to an existing journal file, as journald does
        proc = subprocess.run(
            [jr, f"--output={journal}", "-"], input=export_stream(part), capture_output=True, timeout=60
        )
        assert proc.returncode == 0, proc.stderr
        code, _, err = cli("ingest", "--journal", "--file", str(journal), "--db", db)
        assert code == 0 and expect in err, err
    code, out, _ = cli(
        "query", "SELECT outcome, n_events, batch_lines, host, pid FROM launch_summary", "--db", db, "--format", "json"
    )
    assert json.loads(out) == [{"outcome": "ready", "n_events": 15, "batch_lines": 6, "host": "gpu-9", "pid": 777}]
    code, _, err = cli("ingest", "--journal", "--file", str(journal), "--db", db)
    assert code == 0 and "nothing new in the journal since the last cursor" in err, err
    code, out, _ = cli("query", "SELECT path, lines FROM sources ORDER BY ingested_at", "--db", db, "--format", "json")
    srcs = json.loads(out)
    assert [s["lines"] for s in srcs] == [cut, len(lines) - cut]  # the second run read only what was new
    assert "--after-cursor" in srcs[1]["path"]
    # nothing new: nothing read, nothing changes
    code, _, err = cli("ingest", "--journal", "--file", str(journal), "--db", db)
    assert code == 0 and "0 launch(es) added, 0 updated" in err


def test_read_commands_end_without_teardown_and_lose_no_output(tmp_path, three):
    """show, explain, diff, launches and history end their process at once (no Python teardown):
    what they print, to a pipe or to --output, is all there, with the exit code."""
    from logparse.store import Store

    db = tmp_path / "s.duckdb"
    Store(db).ingest_paths([three])
    env = {k: v for k, v in cli_env().items() if k != "PYTHONUNBUFFERED"}  # stdout to a pipe is buffered
    for args in (
        ["launches", "--format", "json"],
        ["history", "--format", "csv"],
        ["history"],
        ["show", "@latest", "--json"],
        ["explain", "@latest"],
        ["diff", "@-2", "@latest", "--json"],
    ):
        proc = cli_process(*args, "--db", db, text=True, env=env)
        assert (proc.returncode, proc.stdout) == (0, cli(*args, db=db).out), args
    out = tmp_path / "h.txt"
    assert cli_process("history", "--db", db, "-o", out, env=env).returncode == 0
    assert out.read_text() == cli("history", db=db).out
