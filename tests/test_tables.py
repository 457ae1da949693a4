"""Tables that fit the terminal, the figures table behind them, and one set of output options.

Rendered through the real CLI (typer's runner: stdout is not a terminal) with ``$COLUMNS`` set to
80, 100, 120 and 200, and without it (a pipe: no width, no padding, nothing cut).
"""

from __future__ import annotations

import csv
import io
import json
import re
import sys

import pytest
from helpers import SAMPLES

from logparse import figures
from logparse.store import Store

WIDTHS = (80, 100, 120, 200)
#: every width the "no value cut" tests render at
NARROW_TO_WIDE = (60, 70, 80, 100, 200)


def run(*args, db=None, columns: int | None = None, **env: str):
    """``logparse ARGS`` with ``$COLUMNS`` (None: unset, as on a pipe); (code, stdout, stderr)."""
    from typer.testing import CliRunner

    from logparse.cli import app

    environ = {"COLUMNS": str(columns) if columns else None, "LINES": None, **env}
    if db is not None:
        environ["LOGPARSE_DB"] = str(db)
    res = CliRunner().invoke(app, [str(a) for a in args], env=environ)
    return res.exit_code, res.stdout, res.stderr


@pytest.fixture(scope="module")
def samples_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("tables") / "h.duckdb"
    Store(path).ingest_paths([SAMPLES], progress=False)
    return path


@pytest.fixture(scope="module")
def listed(samples_db):
    code, out, _ = run("launches", "--json", db=samples_db)
    assert code == 0
    return json.loads(out)


def _cell_width(line: str) -> int:
    from rich.cells import cell_len

    return cell_len(line)


# ---------------------------------------------------------------------------- the figures table


def test_each_figure_names_known_surfaces_and_once():
    assert len({f.name for f in figures.FIGURES}) == len(figures.FIGURES)
    for f in figures.FIGURES:
        assert f.surfaces and f.surfaces <= set(figures.SURFACES), f.name
        assert f.higher_is_better in (True, False, None)
    with pytest.raises(ValueError):
        figures.on("nowhere")


def test_launches_json_and_csv_have_the_launches_surface(samples_db, listed):
    want = list(figures.names("launches"))
    assert all(list(r) == want for r in listed)
    code, out, _ = run("launches", "--format", "csv", db=samples_db)
    assert code == 0 and next(csv.reader(io.StringIO(out))) == want


def test_the_launches_table_shows_every_label_of_its_surface_in_order(samples_db):
    code, out, _ = run("launches", "--wide", db=samples_db, columns=80)
    assert code == 0
    header = next(line for line in out.splitlines() if line.startswith("launch "))
    labels = [h.strip() for h in header.split("┃")]
    assert labels == [f.label for f in figures.on("launches_table")]


def test_parse_csv_has_the_parse_surface_and_one_engine_column():
    import polars as pl

    code, out, _ = run("parse", SAMPLES / "sglang-0.5", "--format", "csv")
    assert code == 0
    header = next(csv.reader(io.StringIO(out)))
    assert header == list(figures.names("parse_csv"))
    assert header.count("engine") == 1
    frame = pl.read_csv(io.StringIO(out), infer_schema_length=0)
    assert not [c for c in frame.columns if "duplicated" in c]
    docs = [json.loads(x) for x in run("parse", SAMPLES / "sglang-0.5", "--ndjson")[1].splitlines()]
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["kv_tokens"] for r in rows] == [str(d["budget"]["kv_tokens"] or "") for d in docs]


def test_the_show_line_has_the_show_surface(samples_db, listed):
    from logparse.cli.render import LAUNCH_LINE_FIELDS

    assert figures.names("show") == LAUNCH_LINE_FIELDS
    lid = next(r["launch_id"] for r in listed if r["mem_fraction_static"] is not None)
    out = run("show", lid, "--events", "none", db=samples_db)[1]
    assert f"mem_fraction_static={next(r for r in listed if r['launch_id'] == lid)['mem_fraction_static']}" in out


def test_history_metrics_are_the_history_surface(samples_db):
    from logparse.store.changes import HISTORY_METRICS

    named = {f.name for f in figures.FIGURES if "history" in f.surfaces}
    assert set(HISTORY_METRICS) == named and len(HISTORY_METRICS) == len(named)
    import duckdb

    con = duckdb.connect(str(samples_db), read_only=True)
    try:
        cols = {r[0] for r in con.execute("DESCRIBE history").fetchall()}
    finally:
        con.close()
    assert {f"{m}_change" for m in named} <= cols and named <= cols
    out = run("history", "--metric", "headroom_gb", db=samples_db, columns=200)[1]
    assert figures.label("headroom_gb") in out.splitlines()[1]


# ---------------------------------------------------------------------------- widths


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize(
    "command", (["launches"], ["history"], ["show", "@latest"], ["explain", "@latest"], ["check", "@latest"])
)
def test_tables_fit_the_width(samples_db, listed, command, width):
    code, out, _ = run(*command, db=samples_db, columns=width)
    assert code == 0
    widest = max(map(_cell_width, out.splitlines()))
    assert widest <= width, (command, width, widest)
    if command == ["launches"]:
        for r in listed:  # launch references whole, in every width
            assert r["launch_id"][:12] in out


@pytest.mark.parametrize("width", (120, 200))
def test_key_cells_are_never_shortened(samples_db, width):
    out = run("launches", db=samples_db, columns=width)[1]
    rows = [line for line in out.splitlines() if re.match(r"[0-9a-f]{12} ", line)]
    assert rows
    header = next(line for line in out.splitlines() if line.startswith("launch "))
    heads = [h.strip() for h in header.split("┃")]
    for line in rows:
        cells = dict(zip(heads, (c.strip() for c in line.split("│"))))
        for key in ("launch", "started", "outcome", "version", "KV tokens"):
            assert "…" not in cells[key], (key, line)


def test_a_narrow_table_of_text_wraps_it_and_one_of_figures_splits(samples_db, listed):
    kimi = [r["launch_id"] for r in listed if "Kimi" in (r["model_path"] or "")]
    out = run("check", kimi[-1], db=samples_db, columns=80)[1]
    assert "…" not in out and "needs ≥ 5" in out and "have 1" in out  # the threshold's words, wrapped
    out = run("show", kimi[-1], "--events", "none", db=samples_db, columns=80)[1]
    rank_headers = [line for line in out.splitlines() if line.startswith("rank ")]
    assert len(rank_headers) >= 2 and "…" not in out  # the per-rank table in groups, each led by the rank


def test_narrow_tables_name_what_they_left_out(samples_db):
    out = run("launches", db=samples_db, columns=80)[1]
    note = " ".join(out.split("(left out", 1)[1].splitlines())
    assert "to fit the width: host" in note and "--wide shows every column" in note
    wide = run("launches", "--wide", db=samples_db, columns=80)[1]
    assert "left out" not in wide and "…" not in wide


def test_history_keeps_launch_references_whole(samples_db, listed):
    for width in (80, 100):
        out = run("history", db=samples_db, columns=width)[1]
        assert max(map(_cell_width, out.splitlines())) <= width
        for r in listed:
            assert r["launch_id"][:12] in out


@pytest.mark.parametrize(
    "command",
    (
        ["launches"],
        ["history"],
        ["show", "@latest"],
        ["explain", "@latest"],
        ["query", "select launch_id, model_path from launches"],
        ["doctor"],
    ),
)
def test_piped_output_has_no_padding_and_cuts_nothing(samples_db, listed, command):
    code, out, _ = run(*command, db=samples_db)
    assert code == 0 and out
    assert not [line for line in out.splitlines() if line.endswith(" ")], command
    if command[0] in ("launches", "query"):
        assert "…" not in out
    if command[0] == "query":
        for r in listed:
            assert (r["model_path"] or "—") in out


def test_a_one_row_one_column_query_reads_as_a_table(samples_db, listed):
    code, out, _ = run("query", "select count(*) as n from launches", db=samples_db, columns=80)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "1 row"
    assert lines[1].strip() == "n"
    assert lines[3].strip() == str(len(listed))


def test_a_wide_single_row_is_shown_a_column_a_line(samples_db, listed):
    code, out, _ = run("query", "select * from launches limit 1", db=samples_db, columns=80)
    assert code == 0 and max(map(_cell_width, out.splitlines())) <= 80
    assert re.search(r"^launch_id +[0-9a-f]{16}$", out, re.M)
    assert re.search(r"^model_path ", out, re.M)


def test_explain_of_a_vllm_launch_does_not_pad_its_kv_table(samples_db, listed):
    lid = next(r["launch_id"] for r in listed if r["engine"] == "vllm" and r["headroom_gb"] is None)
    out = run("explain", lid, db=samples_db, columns=200)[1]
    lines = out.splitlines()
    start = lines.index("KV pool")
    table = [x for x in lines[start + 1 :] if "│" in x][:12]
    assert table and max(map(len, table)) < 60, table
    assert any(x.strip().startswith("headroom left (binding rank): not known") for x in lines)


def test_shorten_keeps_a_path_s_last_part():
    from logparse.cli.layout import shorten

    path = "/data/models/Meta-Llama-3.1-8B-Instruct"
    assert shorten(path, 30) == "/d…/Meta-Llama-3.1-8B-Instruct"
    assert shorten(path, 20) == "…ama-3.1-8B-Instruct" and len(shorten(path, 20)) == 20
    assert shorten(path, 60) == path
    assert len(shorten("x" * 50, 17, "end")) == 17


def test_strip_trailing_writes_lines_without_their_spaces():
    from logparse.cli.layout import StripTrailing

    buf = io.StringIO()
    s = StripTrailing(buf)
    s.write("a  \nb ")
    s.write(" c   \n")
    s.write("tail  ")
    s.close()
    assert buf.getvalue() == "a\nb  c\ntail"


# ---------------------------------------------------------------------------- the pager


def test_long_output_goes_through_the_pager(tmp_path, monkeypatch):
    from logparse.cli import pager

    seen = tmp_path / "paged.txt"
    monkeypatch.setenv(
        "LOGPARSE_PAGER", f"{sys.executable} -c \"import sys; open({str(seen)!r}, 'w').write(sys.stdin.read())\""
    )
    monkeypatch.setenv("LINES", "5")
    monkeypatch.delenv("LESS", raising=False)
    short, long = io.StringIO(), io.StringIO()
    pager.page("one\ntwo\n", short)
    assert short.getvalue() == "one\ntwo\n" and not seen.exists()
    text = "".join(f"line {i}\n" for i in range(50))
    pager.page(text, long)
    assert seen.read_text() == text and long.getvalue() == ""


def test_the_pager_follows_git_s_rules(monkeypatch):
    from logparse.cli import pager

    monkeypatch.delenv("LOGPARSE_PAGER", raising=False)
    monkeypatch.delenv("PAGER", raising=False)
    assert pager.pager_command() == ["less"]
    monkeypatch.setenv("PAGER", "cat")
    assert pager.pager_command() is None
    monkeypatch.setenv("LOGPARSE_PAGER", "")
    assert pager.pager_command() is None
    assert not pager.wants_pager(io.StringIO())  # not a terminal


def test_no_pager_is_an_option_of_the_table_commands(samples_db):
    for command in (["launches"], ["history"], ["show", "@latest"], ["query", "select 1"]):
        assert run(*command, "--no-pager", db=samples_db)[0] == 0


# ---------------------------------------------------------------------------- output options


@pytest.mark.parametrize("command", (["launches"], ["history"], ["query", "select launch_id, kv_tokens from launches"]))
def test_tables_in_every_format(samples_db, command, tmp_path):
    import pyarrow.parquet as pq

    as_json = json.loads(run(*command, "--json", db=samples_db)[1])
    nd = [json.loads(x) for x in run(*command, "--ndjson", db=samples_db)[1].splitlines()]
    assert nd == as_json and as_json
    tsv = list(csv.reader(io.StringIO(run(*command, "--format", "tsv", db=samples_db)[1]), delimiter="\t"))
    assert tsv[0] == list(as_json[0]) and len(tsv) == len(as_json) + 1
    code, out, _ = run(*command, "--format", "csv", "-o", "-", db=samples_db)
    assert code == 0 and out.splitlines()[0] == ",".join(as_json[0])
    target = tmp_path / "t.parquet"
    assert run(*command, "--format", "parquet", "-o", target, db=samples_db)[0] == 0
    assert pq.read_table(target).num_rows == len(as_json)


def test_parquet_to_stdout(samples_db):
    from typer.testing import CliRunner

    from logparse.cli import app

    res = CliRunner().invoke(app, ["launches", "--format", "parquet", "-o", "-"], env={"LOGPARSE_DB": str(samples_db)})
    assert res.exit_code == 0 and res.stdout_bytes[:4] == b"PAR1"
    assert not (SAMPLES.parent / "-").exists()


def test_json_and_ndjson_flags_disagree_with_another_format(samples_db):
    code, _, err = run("launches", "--json", "--ndjson", db=samples_db)
    assert code == 2 and "disagree" in err
    code, _, err = run("launches", "--ndjson", "--format", "csv", db=samples_db)
    assert code == 2 and "disagree" in err


def test_doctor_in_json(samples_db):
    code, out, _ = run("doctor", "--json", db=samples_db)
    doc = json.loads(out)
    assert code == 0 and doc["healthy"] is True and doc["counts"]["launches"] >= 15
    assert doc["schema_version"] >= 1 and doc["problems"] == []


def test_ingest_in_json_and_ndjson(tmp_path):
    db = tmp_path / "i.duckdb"
    code, out, _ = run("ingest", SAMPLES / "sglang-0.5", "--json", db=db)
    doc = json.loads(out)
    assert code == 0 and doc["added"] >= 1 and doc["store"] == str(db)
    assert {s["status"] for s in doc["sources"]} <= {"stored", "empty", "skipped"}
    again = run("ingest", SAMPLES / "sglang-0.5", "--ndjson", db=db)[1].splitlines()
    rows = [json.loads(x) for x in again]
    assert len(rows) == len(doc["sources"]) and all(r["added"] == 0 for r in rows)
    code, _, err = run("ingest", SAMPLES / "sglang-0.5", "--json", "--history", db=db)
    assert code == 2 and "--history" in err


def test_watch_json_is_the_old_name_of_ndjson(tmp_path):
    log = SAMPLES / "sglang-0.5" / "qwen-tp2-0.5.22-dict.log"
    code, out, err = run("watch", log, "--once", "--format", "json", "-q", db=tmp_path / "w.duckdb")
    assert code == 0 and "ndjson" in err
    lines = out.splitlines()
    assert lines and all(isinstance(json.loads(x), dict) for x in lines)


def test_report_html_dash_writes_stdout(samples_db, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, _ = run("report", "--html", "-", "-q", db=samples_db)
    assert code == 0 and out.startswith("<!DOCTYPE html>") and out.rstrip().endswith("</html>")
    assert not (tmp_path / "-").exists()


def test_metrics_dash_writes_stdout(samples_db, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, _ = run("metrics", "-o", "-", db=samples_db)
    assert code == 0 and "# TYPE" in out and not (tmp_path / "-").exists()


# ---------------------------------------------------------------------------- on a real terminal


def _stdout_on_a_terminal(args: list, env: dict[str, str]) -> tuple[int, str]:
    """``logparse ARGS`` with stdout on a pseudo-terminal of 100 x 20; (exit code, what it showed)."""
    import fcntl
    import os
    import pty
    import struct
    import subprocess
    import termios

    from helpers import LOGPARSE, cli_env

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 20, 100, 0, 0))
    environ = {k: v for k, v in cli_env(**env).items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.Popen([*LOGPARSE, *map(str, args)], stdout=slave, stderr=subprocess.DEVNULL, env=environ)
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 1 << 16)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    code = proc.wait(timeout=300)
    os.close(master)
    return code, re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown.decode("utf-8", "replace"))


def test_on_a_terminal_tables_fit_and_long_output_is_paged(samples_db, tmp_path):
    paged = tmp_path / "paged.txt"
    pager = f"{sys.executable} -c \"import sys; open({str(paged)!r}, 'w').write(sys.stdin.read())\""
    env = {"LOGPARSE_DB": str(samples_db), "LOGPARSE_PAGER": pager, "TERM": "xterm-256color"}
    code, shown = _stdout_on_a_terminal(["launches"], env)
    assert code == 0 and shown.strip() == ""  # 22 launches on 20 rows: all of it through the pager
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", paged.read_text())
    assert "launch(es)" in text and max(map(_cell_width, text.splitlines())) <= 100
    paged.unlink()
    code, shown = _stdout_on_a_terminal(["launches", "--no-pager"], env)
    assert code == 0 and "launch(es)" in shown and not paged.exists()
    code, shown = _stdout_on_a_terminal(["query", "select 1 as one"], env)
    assert code == 0 and "one" in shown and not paged.exists()  # short: no pager


def test_export_refuses_dash_instead_of_making_a_folder_of_that_name(samples_db, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run("export", "-", db=samples_db)
    assert code == 2 and "directory" in err and not (tmp_path / "-").exists()


# ------------------------------------------------------------------- no value is ever cut

#: a figure as the text shows it: 159,277  10.42  0.880  +0.00 (not a piece of a name: Qwen2, 3b)
FIGURE = re.compile(r"(?<![\w.…,])\d+(?:,\d{3})*(?:\.\d+)?(?![\w…])")


def _table_rows(out: str) -> list[dict[str, str]]:
    """The rows of the table in ``out`` (headers split on ┃, cells on │), by header."""
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if "┃" in line)
    heads = [h.strip() for h in lines[header].split("┃")]
    rows = []
    for line in lines[header + 2 :]:
        if "│" not in line:
            break
        rows.append(dict(zip(heads, (c.strip() for c in line.split("│")))))
    return rows


@pytest.mark.parametrize("width", NARROW_TO_WIDE)
def test_launches_show_each_value_as_its_json_value(samples_db, listed, width):
    """Every figure shown equals its JSON value, every other cell its unbounded text: a column is
    left out, a name shortened (``…``), a figure never (an 80-column terminal showed 1,886,067
    tokens as ``1,886,06``)."""
    from logparse.cli.cells import figure_cell

    rows = _table_rows(run("launches", db=samples_db, columns=width)[1])
    wide = _table_rows(run("launches", "--wide", db=samples_db)[1])
    assert len(rows) == len(wide) == len(listed) and {"launch", "KV tokens"} <= set(rows[0])
    by_label = {f.label: f for f in figures.on("launches_table")}
    for shown, unbounded, doc in zip(rows, wide, listed):
        assert doc["launch_id"].startswith(shown["launch"])
        for label, text in shown.items():
            f = by_label[label]
            if f.fmt in ("int", "gib", "share", "percent"):  # (vLLM's utilization sits in "mem frac")
                assert text == unbounded[label], (label, text, unbounded[label])
                assert doc[f.name] is None or text == figure_cell(f, doc[f.name]), (label, text, doc[f.name])
            elif not ("…" in text and f.fmt in ("path", "model", "text")):  # else a name, shortened
                assert text == unbounded[label], (label, text, unbounded[label])


@pytest.mark.parametrize("width", NARROW_TO_WIDE)
@pytest.mark.parametrize(
    "command",
    (
        ["launches"],
        ["history"],
        ["show", "@latest"],
        ["show", "@latest", "--events", "all"],
        ["explain", "@latest"],
        ["check", "@latest"],
        ["diff", "@-2", "@latest"],
        ["query", "select launch_id, model_path, kv_tokens, outcome from launches"],
        ["parse", str(SAMPLES / "kimi-k25" / "launch-2-hicache.log")],
        ["plan", str(SAMPLES / "models" / "Qwen3-32B" / "config.json"), "--gpu", "H100", "--tp", "2"],
        ["doctor"],
    ),
    ids=lambda c: " ".join(c[:2]).replace(str(SAMPLES), "samples"),
)
def test_no_figure_is_cut_at_any_width(samples_db, command, width):
    """Each figure a narrow terminal shows is one the unbounded output shows whole (a figure cut
    short, ``1,886,06``, or folded over two lines, ``72.3`` / ``3``, is not)."""
    code, out, err = run(*command, db=samples_db, columns=width)
    assert code in (0, 1), err
    whole = set(FIGURE.findall(run(*command, db=samples_db)[1]))
    cut = [f for f in FIGURE.findall(out) if f not in whole]
    assert not cut, (command, width, cut[:5])
