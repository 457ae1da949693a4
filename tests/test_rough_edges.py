"""Rough edges a new user hits: no traceback anywhere, every DuckDB type in every format, help text,
option conflicts, piped stdin, GiB wording, quotes never cut mid-word."""

from __future__ import annotations

import json
import subprocess

import pytest
from helpers import LOGPARSE, SAMPLES, cli, cli_env

from logparse.reports.launch_facts import quote

KIMI = SAMPLES / "kimi-k25" / "launch-1-baseline.log"
COMMANDS = ("parse", "ingest", "launches", "show", "history", "query", "export", "doctor", "explain", "diff", "check")


def test_version_alone():
    code, out, _ = cli("--version")
    assert code == 0 and out.startswith("logparse ")


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_no_type_tags_and_names_the_default_store(command):
    code, out, _ = cli(command, "--help")
    assert code == 0
    for tag in ("<bool>", "<str>", "<int>", "<float>", "<list"):
        assert tag not in out, (command, tag)
    if "--db" in out:
        assert "history.duckdb" in out and "LOGPARSE_DB" in out


def test_history_plot_into_a_missing_directory_is_one_line(tmp_path, db, three):
    assert cli("ingest", three, db=db).code == 0
    code, _, err = cli("history", "--plot", tmp_path / "no" / "such" / "dir" / "h.png", db=db)
    assert code == 2 and "Traceback" not in err and err.count("\n") == 1


@pytest.mark.parametrize("fmt", ["table", "csv", "json", "ndjson", "parquet"])
def test_query_every_duckdb_type_in_every_format(tmp_path, db, three, fmt):
    assert cli("ingest", three, db=db).code == 0
    sql = (
        "SELECT [1, 2] AS l, {'a': 1} AS s, map([1], ['x']) AS m, union_value(k := 1) AS u, INTERVAL 3 DAY AS i, "
        "'\\x01'::BLOB AS b, 170141183460469231731687303715884105727::HUGEINT AS h, now()::TIMESTAMPTZ AS t, "
        "1.5::DECIMAL(10, 2) AS d, 'x'::VARIANT AS v"
    )
    out_file = tmp_path / f"q.{fmt}"
    args = ["query", sql, "--format", fmt] + (["--output", out_file] if fmt == "parquet" else [])
    code, out, err = cli(*args, db=db)
    assert code == 0, err
    if fmt == "json":
        (row,) = json.loads(out)
        assert row["l"] == [1, 2] and row["s"] == {"a": 1} and row["h"] == 170141183460469231731687303715884105727
    if fmt == "parquet":
        import pyarrow.parquet as pq

        assert pq.read_table(out_file).num_rows == 1
    code, out, err = cli("query", "SELECT * FROM duckdb_settings()", "--format", fmt, "--output", out_file, db=db)
    assert code == 0, err


def test_option_conflicts_are_refused_with_a_clear_line():
    code, _, err = cli("parse", KIMI, "--events")
    assert code == 2 and "--events" in err and "json" in err
    code, _, err = cli("parse", KIMI, "--json", "--ndjson")
    assert code == 2 and "disagree" in err
    code, _, err = cli("explain", KIMI, "--json", "--format", "csv")
    assert code == 2 and "disagree" in err


def test_piped_stdin_is_read_without_a_dash(tmp_path):
    proc = subprocess.run(
        [*LOGPARSE, "parse", "--format", "json"],
        input=KIMI.read_bytes(),
        capture_output=True,
        env=cli_env(),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)["launches"]) == 1


def test_what_ifs_say_gib():
    code, out, _ = cli("explain", KIMI, "--json")
    assert code == 0
    doc = json.loads(out)
    changes = " ".join(w["change"] for w in doc["what_if"] if "mem_fraction_static" in w["change"])
    assert "GiB" in changes and " GB" not in changes
    assert "GiB" in cli("explain", "--help").out


def test_quotes_are_never_cut_mid_word():
    text = "RuntimeError: " + " ".join(["allocation"] * 80)
    q = quote(text, 100)
    assert len(q) <= 102 and q.endswith(" …") and q[:-2].split(" ")[-1] == "allocation"
    assert quote("short error") == "short error"


def test_text_and_tables_round_the_same_way():
    code, out, _ = cli("explain", KIMI, "--json")
    assert code == 0
    doc = json.loads(out)
    text = " ".join(doc["sentences"])
    assert f"{doc['headroom_gb']:.2f} GiB is left free" in text
    assert f"{doc['reserved_gb']:.2f} GiB" in text


# ---------------------------------------------------------------------------- advice and figures

CRASH_OOM = SAMPLES / "sglang-0.5" / "crash-cuda-oom-0.5.18.log"


def test_explain_on_an_oom_failure_leads_out_of_it():
    code, out, _ = cli("explain", CRASH_OOM, "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["outcome"] == "failed" and doc["headroom_gb"] is None
    first = doc["what_if"][0]
    assert first["mem_fraction_static"] < doc["mem_fraction_static"]  # lower, not raise
    assert "out of memory" in first["change"]
    assert not [w for w in doc["what_if"] if w["change"].startswith(("kv_cache_dtype", "--enable-hierarchical"))]
    text = " ".join(doc["sentences"])
    assert "There is no headroom figure" in text and "was free when the start failed" in text


def test_explain_agrees_with_the_minimum_sglang_printed(tmp_path):
    from helpers import CORPUS

    log = CORPUS / "sglang-0.5.23" / "fail-weights-vs-memfrac.log"
    if not log.exists():
        pytest.skip("genuine corpus not available")
    doc = json.loads(cli("explain", log, "--json").out)
    (first,) = [w for w in doc["what_if"] if "smallest that starts" in w["change"]]
    assert first["mem_fraction_static"] == 0.036 and first["sglang_says_minimum"] == pytest.approx(0.0359)


def test_diff_of_identical_pools_reports_no_rounding_change():
    a, b = SAMPLES / "kimi-k25" / "launch-1-baseline.log", SAMPLES / "kimi-k25" / "launch-2-hicache.log"
    doc = json.loads(cli("diff", a, b, "--json").out)
    assert doc["budget"]["kv_tokens"]["delta"] == 0
    for name in ("bytes_per_token", "predicted_kv_tokens"):
        d = doc["budget"][name]
        assert not d["delta"], (name, d)


def test_explain_says_whether_the_pool_is_mla_or_mha():
    mla = json.loads(cli("explain", SAMPLES / "sglang-0.4" / "deepseek-v3-tp8-eagle-0.4.7.log", "--json").out)
    mha = json.loads(cli("explain", SAMPLES / "sglang-0.5" / "qwen-tp2-0.5.22-dict.log", "--json").out)
    assert any("an MLA pool" in s for s in mla["sentences"])
    assert any("an MHA pool" in s for s in mha["sentences"])
    assert not any("or the whole MLA latent" in s for s in mla["sentences"] + mha["sentences"])


def test_plots_tell_a_from_b_and_mark_failed_launches(tmp_path, db):
    restarts = SAMPLES / "sglang-0.5" / "restarts-0.5.12.log"
    svg = tmp_path / "d.svg"
    assert cli("diff", f"{restarts}#1", f"{restarts}#2", "--plot", svg).code == 0
    text = svg.read_text()
    assert "09:12:07" in text and "09:41:40" in text  # A's and B's start times in the title
    assert cli("ingest", CRASH_OOM, db=db).code == 0
    hsvg = tmp_path / "h.svg"
    assert cli("history", "--metric", "headroom_gb", "--plot", hsvg, db=db).code == 0
    assert "failed" in hsvg.read_text()


def test_ctrl_c_during_a_parse_is_one_line():
    """Ctrl-C while logparse reads a stream (a journal pipe that is still being written): exit 130 and one
    line, no traceback and no 'Exception ignored' from a reader left behind."""
    import signal
    import time

    proc = subprocess.Popen(
        [*LOGPARSE, "parse", "-", "--format", "json"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=cli_env(),
    )
    assert proc.stdin is not None
    proc.stdin.write(KIMI.read_bytes())
    proc.stdin.flush()
    time.sleep(3)  # imports done, the first lines read; the pipe stays open
    proc.send_signal(signal.SIGINT)
    try:
        err = proc.communicate(timeout=60)[1].decode()
    finally:
        proc.kill()
    assert proc.returncode == 130, (proc.returncode, err)
    assert "Traceback" not in err and "Exception ignored" not in err
    assert err.strip().endswith("logparse: interrupted")


def test_explain_of_a_failed_start_without_its_arguments(tmp_path):
    """Found by ``make fuzz`` (seed 2042954279): a failed start whose log lost its ``server_args`` line
    has no mem_fraction_static; explain's "smallest that starts" what-if took it from nowhere and
    crashed.  It now reads the fraction SGLang's error names (``under --mem-fraction-static=0.5``)."""
    sample = SAMPLES / "sglang-0.5" / "fail-weights-leave-no-memory-0.5.16.log"
    log = tmp_path / "no-args.log"
    log.write_text("".join(ln for ln in sample.read_text().splitlines(True) if "server_args=" not in ln))
    res = cli("explain", log, "--json")
    assert res.code == 0, res.err
    (start,) = [w for w in json.loads(res.out)["what_if"] if "smallest that starts" in w["change"]]
    assert start["change"] == "mem_fraction_static 0.5 → 0.554 (smallest that starts)"
    text = cli("explain", log)
    assert text.code == 0 and "mem_fraction_static 0.5 → 0.554" in text.out, text.err
