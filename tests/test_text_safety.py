"""Every text field is safe to store, to print and to hand to a hook (issue 18, items 2, 6 and 8).

* **Lone surrogates** (``logparse.text``): Python prints a file name it could not decode as
  ``'/models/caf\\udce9'`` in ``server_args``; such a launch is stored with the others, ``watch``
  stores it, and every output format prints it (the escape kept as text: valid UTF-8).  A real
  surrogate (a file name from the OS, a string from the Python API) becomes the same escape.
* **Terminal escapes**: ESC, C1 and bidi controls in a model path, an argument, an unrecognized
  line or a file name are shown escaped (``\\x1b``) by every command that prints a table or text,
  and rich's markup in a path is text.  JSON escapes them; the values read back are exact.
* **watch --exec**: a NUL in a launch field reaches the hook (escaped in the environment, exact in
  the JSON on stdin); at ``--exec-timeout`` the hook's whole process group ends.

The CLI runs in subprocesses with a strict UTF-8 stdout (``PYTHONIOENCODING=utf-8``), as on a
terminal: an unencodable character fails there as it does for a user.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import duckdb
import pytest
from helpers import cli, cli_env, cli_process, copy_store
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logparse.cli.exec_hook import end_group, hook_environment, hook_input
from logparse.grammar.pyliteral import parse_literal
from logparse.pipeline import parse_text
from logparse.text import UNSAFE_FOR_TERMINAL, terminal_text, valid_text

#: Strict UTF-8 on stdout and stderr, as a UTF-8 terminal has it.
STRICT = cli_env(PYTHONIOENCODING="utf-8", TZ="UTC")

#: What a terminal would act on, in a model path: a colour, a window title (OSC), rich markup and
#: an emoji code, a C1 CSI (clear the screen), a bidi override, a NUL.
HOSTILE = "/m/\x1b[31mRED\x1b]0;pwned\x07[bold red]B:smile:\x9b2J\u202eevil\x00nul"
#: How it shows on a terminal (the path's own text, every control escaped).
HOSTILE_SHOWN = "/m/\\x1b[31mRED\\x1b]0;pwned\\x07[bold red]B:smile:\\x9b2J\\u202eevil\\x00nul"
#: An argument that differs between the two launches (``diff`` shows it).
BACKEND = ("\x1b[1mA\u202e", "\x1b[1mB\u202e")
#: A line no grammar reads: a terminal reset (ESC c), a raw C1 CSI, a bidi override, a bell.
JUNK = "raw junk \x1bc reset \x9b2J \u202eevil \x07bell"


def launch_lines(hour: int, model: str, *, backend: str = "flashinfer", kv: int = 100_000) -> list[str]:
    """One ready SGLang launch whose ``server_args`` is Python's repr (as SGLang prints it)."""
    t = f"[2026-10-20 {hour:02d}:01:0"
    return [
        f"{t}0] server_args=ServerArgs(model_path={model!r}, tp_size=1, mem_fraction_static=0.8, "
        f"attention_backend={backend!r})",
        f"{t}1 TP0] Load weight begin. avail mem=79.00 GB",
        f"{t}2 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=64.00 GB, mem usage=15.00 GB.",
        f"{t}3 TP0] KV Cache is allocated. #tokens: {kv}, K size: 20.00 GB, V size: 20.00 GB",
        f"{t}4 TP0] Memory pool end. avail mem=20.00 GB",
        f"{t}6] The server is fired up and ready to roll!",
    ]


def write_log(path: Path, lines: list[str]) -> Path:
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))
    return path


def run(*args, env=STRICT) -> tuple[int, str, str]:
    """``logparse ARGS`` in a subprocess: exit code, stdout and stderr as strict UTF-8."""
    res = cli_process(*args, env=env)
    return res.returncode, res.stdout.decode("utf-8"), res.stderr.decode("utf-8")


def stored(db: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def raw_controls(text: str, *, allow_sgr: bool = False) -> list[str]:
    """The characters of printed text a terminal would act on (newlines apart)."""
    if allow_sgr:  # rich's own colours when it writes to a terminal: ESC [ ... m
        import re

        text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    return [c for c in UNSAFE_FOR_TERMINAL.findall(text) if c != "\n"]


# ------------------------------------------------------------------------------ lone surrogates

#: A file of four launches: a plain one, Python's escape of an undecodable byte, a lone high
#: surrogate's escape, and an escape beyond U+10FFFF.  Each is read back as the text printed.
SURROGATE_MODELS = ["/m/ok", "/models/caf\\udce9", "/models/x\\ud800y", "/models/big\\U00110000"]


@pytest.fixture
def surrogate_log(tmp_path) -> Path:
    lines = []
    for i, model in enumerate(SURROGATE_MODELS):
        lines += [
            f"[2026-10-20 {8 + i:02d}:01:00] server_args=ServerArgs(model_path='{model}', tp_size=1)",
            f"[2026-10-20 {8 + i:02d}:01:06] The server is fired up and ready to roll!",
        ]
    return write_log(tmp_path / "surrogates.log", lines)


def test_pyliteral_keeps_an_escape_that_names_no_character():
    assert parse_literal("'caf\\udce9'") == "caf\\udce9"
    assert parse_literal("'x\\ud800y\\U00110000'") == "x\\ud800y\\U00110000"
    assert parse_literal("'caf\\u00e9 \\x1b \\U0001f600'") == "café \x1b \U0001f600"


def test_valid_text_writes_a_lone_surrogate_as_its_escape():
    assert valid_text("/m/caf\udce9") == "/m/caf\\udce9"
    assert valid_text("a\ud800b\udfff") == "a\\ud800b\\udfff"
    assert valid_text("café 中 \x1b") == "café 中 \x1b"


def test_a_surrogate_launch_is_ingested_with_the_others(surrogate_log, tmp_path):
    db = tmp_path / "s.duckdb"
    code, _, err = run("ingest", "--db", db, surrogate_log)
    assert code == 0, err
    assert "4 launch(es) added" in err
    rows = stored(db, "SELECT model_path, server_args->>'model_path' FROM launches ORDER BY started_at")
    assert rows == [(m, m) for m in SURROGATE_MODELS]
    assert run("doctor", "--db", db)[0] == 0


def test_watch_over_a_surrogate_file_stores_every_launch(surrogate_log, tmp_path):
    db = tmp_path / "w.duckdb"
    code, out, err = run("watch", surrogate_log, "--once", "--db", db, "--format", "ndjson", "-q")
    assert code == 0, err
    blocks = [json.loads(line) for line in out.splitlines()]
    assert [b["launch"]["model_path"] for b in blocks] == SURROGATE_MODELS
    assert [r[0] for r in stored(db, "SELECT model_path FROM launches ORDER BY started_at")] == SURROGATE_MODELS
    code, out, err = run("watch", surrogate_log, "--once", "--db", db)  # table blocks; nothing new
    assert code == 0 and out == "", err


@pytest.mark.parametrize("fmt", ["table", "json", "ndjson", "csv", "parquet"])
def test_parse_prints_surrogates_in_every_format(surrogate_log, tmp_path, fmt):
    target = tmp_path / "out.parquet"
    extra = ["--output", target] if fmt == "parquet" else []
    code, out, err = run("parse", surrogate_log, "--format", fmt, *extra, "-q")
    assert code == 0, err
    if fmt == "table":
        assert all(f"  {m}  tp=1" in out for m in SURROGATE_MODELS)
        return
    if fmt == "json":
        models = [la["model_path"] for la in json.loads(out)["launches"]]
    elif fmt == "ndjson":
        models = [json.loads(line)["model_path"] for line in out.splitlines()]
    elif fmt == "csv":
        models = [row["model_path"] for row in csv.DictReader(io.StringIO(out))]
    else:
        import pyarrow.parquet as pq

        models = pq.read_table(target).column("model_path").to_pylist()
    assert models == SURROGATE_MODELS


def test_a_file_name_that_is_not_utf8_is_stored_as_its_escape(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    name = os.fsdecode(b"caf\xe9.log")  # the surrogateescape str Python gives for the bytes
    write_log(folder / name, launch_lines(8, "/m/ok"))
    db = tmp_path / "f.duckdb"
    code, _, err = run("ingest", "--db", db, folder)
    assert code == 0, err
    want = str(folder / "caf\\udce9.log")
    assert stored(db, "SELECT path, kind FROM sources") == [(want, "file")]
    assert stored(db, "SELECT source FROM launches") == [(want,)]
    code, out, err = run("parse", folder / name, "--json", "-q")
    assert code == 0 and json.loads(out)["launches"][0]["source"] == want, err
    code, out, err = run("watch", folder / name, "--once", "--db", tmp_path / "w.duckdb", "--json", "-q")
    assert code == 0 and json.loads(out)["launch"]["launch_id"], err


def test_real_surrogates_from_the_python_api_become_escapes(store):
    text = "\n".join(launch_lines(8, "placeholder")).replace("'placeholder'", "'/m/caf\udce9'")
    result = parse_text(text, name="api\udcff.log")
    la = result.launches[0]
    assert (la.model_path, la.source) == ("/m/caf\\udce9", "api\\udcff.log")
    store.ingest_text(text, name="api\udcff.log", host="h\udce9")
    assert store.query("SELECT model_path, host, source FROM launches", as_rows=True).rows == [
        ("/m/caf\\udce9", "h\\udce9", "api\\udcff.log")
    ]


# ------------------------------------------------------------------------------ terminal escapes


@pytest.fixture(scope="module")
def hostile_store(tmp_path_factory) -> tuple[Path, Path]:
    """Two launches of a hostile model path (their arguments differ by a hostile value), a junk
    line between them, in a store."""
    tmp = tmp_path_factory.mktemp("hostile")
    lines = launch_lines(8, HOSTILE, backend=BACKEND[0]) + [JUNK] + launch_lines(9, HOSTILE, backend=BACKEND[1])
    log = write_log(tmp / "hostile.log", lines)
    db = tmp / "h.duckdb"
    code, _, err = run("ingest", "--db", db, log)
    assert code == 0, err
    return log, db


#: Per command: its arguments (``LOG``: the hostile log) and what of the input it must show, escaped.
COMMANDS = {
    "parse": (["parse", "LOG", "-q"], [HOSTILE_SHOWN, "raw junk \\x1bc reset \\x9b2J \\u202eevil \\x07bell"]),
    "launches": (["launches"], ["\\x1b[31mRED"]),
    "history": (["history"], ["/m/\\x1b[31mRED\\x1b]0;pwned\\x07[bold"]),
    "show": (["show", "@latest", "--events", "all"], [HOSTILE_SHOWN]),
    "explain": (["explain", "@latest"], [HOSTILE_SHOWN]),
    "diff": (
        ["diff", "@-2", "@latest"],
        ['attention_backend: "\\u001b[1mA\\u202e" -> "\\u001b[1mB\\u202e"', 'attention_backend │ "\\x1b[1mA\\u202e"'],
    ),
    "check": (["check", "@latest"], [HOSTILE_SHOWN]),
    "query": (["query", "SELECT model_path FROM launches"], [HOSTILE_SHOWN]),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_no_command_sends_an_escape_sequence_of_the_input_to_the_terminal(hostile_store, command):
    log, db = hostile_store
    args, shown = COMMANDS[command]
    args = [log if a == "LOG" else a for a in args] + ([] if command == "parse" else ["--db", db])
    code, out, err = run(*args)
    assert code in (0, 1), err  # check: 1 when it finds a regression
    assert raw_controls(out) == [] and raw_controls(err) == []
    for text in shown:
        assert text in out, f"{command}: {text!r} not shown"


def test_large_tables_escape_the_input_too(tmp_path):
    """Above FAST_TABLE_ROWS rows, launches, history and query print plain text without rich."""
    from logparse.cli.cells import FAST_TABLE_ROWS

    n = FAST_TABLE_ROWS + 2
    lines = [x for i in range(n) for x in launch_lines(0, HOSTILE, kv=100_000 + i)]
    lines = [
        x.replace("[2026-10-20 00:", f"[2026-10-{1 + i // 6 // 24:02d} {i // 6 % 24:02d}:") for i, x in enumerate(lines)
    ]
    log = write_log(tmp_path / "many.log", lines)
    db = tmp_path / "many.duckdb"
    assert run("ingest", "--db", db, log)[0] == 0
    for args, shown in (
        (["launches"], "\\x1b[31mRED"),
        (["history"], "/m/\\x1b[31mRED"),
        (["query", "SELECT model_path, kv_tokens FROM launches"], HOSTILE_SHOWN),
    ):
        code, out, err = run(*args, "--db", db)
        assert code == 0 and out.count("\n") > n, (args, err)
        assert raw_controls(out) == [] and shown in out, args


@pytest.mark.parametrize("command", ["parse", "show"])
def test_rich_colours_on_a_terminal_but_not_the_inputs(hostile_store, command):
    """With colours on (FORCE_COLOR: rich writes its own SGR codes), the input's codes stay escaped
    and its markup stays text."""
    log, db = hostile_store
    args = ["parse", log, "-q"] if command == "parse" else ["show", "@latest", "--db", db]
    code, out, err = run(*args, env={**STRICT, "FORCE_COLOR": "1", "TERM": "xterm-256color", "COLUMNS": "250"})
    assert code == 0, err
    assert "\x1b[" in out  # rich's colours are there
    assert raw_controls(out, allow_sgr=True) == []
    assert "[bold red]B:smile:" in out


def test_rich_markup_in_a_path_is_text(tmp_path):
    log = write_log(tmp_path / "m.log", launch_lines(8, "/m/[bold]x[/bold] [red]y[/] :thumbs_up:"))
    db = tmp_path / "m.duckdb"
    assert run("ingest", "--db", db, log)[0] == 0
    for args in (["parse", log, "-q"], ["show", "@latest", "--db", db], ["history", "--db", db]):
        code, out, err = run(*args)
        assert code == 0 and "/m/[bold]x[/bold] [red]y[/] :thumbs_up:" in out, (args, out, err)


def test_json_output_escapes_terminal_controls_and_keeps_the_value(hostile_store):
    log, db = hostile_store
    code, out, _ = run("parse", log, "--json", "-q")
    assert code == 0 and raw_controls(out) == []
    assert "\\u001b[31mRED" in out and "\\u009b2J\\u202eevil\\u0000nul" in out
    assert {la["model_path"] for la in json.loads(out)["launches"]} == {HOSTILE}
    code, out, _ = run("show", "@latest", "--json", "--db", db)
    assert json.loads(out)["server_args"]["attention_backend"] == BACKEND[1]


def test_file_names_and_store_paths_on_stderr_are_escaped(tmp_path):
    name = "x\x1b]0;pwned\x07.log"
    log = write_log(tmp_path / name, launch_lines(8, "/m/ok") + [JUNK])
    db = tmp_path / "st\x1b[2J.duckdb"
    code, _, err = run("ingest", "--db", db, log)
    assert code == 0 and raw_controls(err) == [], err
    assert "x\\x1b]0;pwned\\x07.log: 1 unrecognized line(s)" in err
    code, out, err = run("doctor", "--db", db)
    assert code == 0 and raw_controls(out) == [] and "st\\x1b[2J.duckdb" in out
    code, _, err = run("parse", tmp_path / "nothing\x1b[2J.log")
    assert code == 2 and raw_controls(err) == [] and "nothing\\x1b[2J.log" in err


def test_watch_blocks_escape_the_input(hostile_store, tmp_path):
    log, _ = hostile_store
    code, out, err = run("watch", log, "--once", "--db", tmp_path / "w.duckdb")
    assert code == 0, err
    assert raw_controls(out) == [] and raw_controls(err) == []
    assert out.count(f"✔ ready  {HOSTILE_SHOWN}") == 2


# ------------------------------------------------------------------------------ watch --exec


def test_a_nul_in_a_field_reaches_the_hook(tmp_path):
    log = write_log(tmp_path / "nul.log", launch_lines(8, "/m/a\x00b"))
    got, env_file = tmp_path / "got.json", tmp_path / "env.txt"
    hook = f'cat > {got}; printf %s "$LOGPARSE_DEPLOYMENT" > {env_file}'
    code, _, err = run("watch", log, "--once", "--db", tmp_path / "n.duckdb", "--exec", hook, "-q")
    assert code == 0, err
    assert "embedded null" not in err
    assert json.loads(got.read_text())["launch"]["model_path"] == "/m/a\x00b"
    assert "|/m/a\\x00b|tp=1|" in env_file.read_text()


def test_hook_environment_and_input():
    block = {"launch": {"launch_id": "1", "outcome": "ready", "deployment": "d\x00\x1b\u202e"}, "check": {}}
    env = hook_environment(block, base={})
    assert env == {
        "LOGPARSE_LAUNCH_ID": "1",
        "LOGPARSE_OUTCOME": "ready",
        "LOGPARSE_DEPLOYMENT": "d\\x00\x1b\u202e",
        "LOGPARSE_CHECK": "",
    }
    assert json.loads(hook_input(block)) == block and hook_input(block).isascii()


def _alive(pid: int) -> bool:
    """The process exists and is not a zombie (an orphan its new parent has not reaped yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_gone(pid: int, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_exec_timeout_ends_the_hooks_whole_process_group(tmp_path):
    log = write_log(tmp_path / "a.log", launch_lines(8, "/m/ok"))
    pid_file = tmp_path / "child.pid"
    hook = f"sleep 300 & echo $! > {pid_file}; wait"
    code, _, err = run("watch", log, "--once", "--db", tmp_path / "t.duckdb", "--exec", hook, "--exec-timeout", "1")
    assert code == 0, err
    assert "--exec took more than 1 s" in err
    child = int(pid_file.read_text())
    try:
        assert _wait_gone(child), "the hook's child outlived the time-out"
    finally:
        if _alive(child):
            os.kill(child, 9)


def test_a_group_that_ignores_sigterm_is_killed_after_the_grace():
    pid_file = Path(tempfile.mkdtemp()) / "child.pid"
    proc = subprocess.Popen(
        ["sh", "-c", f"trap '' TERM; sleep 300 & echo $! > {pid_file}; wait"],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 10
    while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.02)
    child = int(pid_file.read_text())
    end_group(proc, grace=0.3)
    assert proc.returncode == -9
    assert _wait_gone(child)


# ------------------------------------------------------------------------------ properties

#: Any character: surrogates (Cs) and controls included.
ANY_TEXT = st.text(st.characters(exclude_categories=()), min_size=1, max_size=16)
PROPERTY = settings(
    max_examples=int(os.environ.get("LOGPARSE_TEXT_EXAMPLES", "25")),
    deadline=None,
    suppress_health_check=list(HealthCheck),
)


@PROPERTY
@given(model=ANY_TEXT)
def test_any_model_path_goes_through_parse_ingest_and_show(model, empty_store):
    """A model path of any characters, printed as SGLang prints it (Python's repr), reads back as
    the valid text of it; stored and shown (JSON exact, the table escaped)."""
    want = valid_text(model)
    text = "\n".join(launch_lines(8, model)) + "\n"
    assert parse_text(text).launches[0].model_path == want
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "any.log"
        log.write_text(text, encoding="utf-8")
        db = copy_store(empty_store, Path(tmp) / "any.duckdb")  # a new store, without its migrations
        assert cli("ingest", log, db=db).code == 0
        res = cli("show", "@latest", "--json", db=db)
        assert res.code == 0 and json.loads(res.out)["model_path"] == want
        res = cli("show", "@latest", db=db)
        assert res.code == 0 and raw_controls(res.out) == []
        assert terminal_text(want) in res.out


#: A raw line's text: any character but a line break (surrogates as the bytes a file would hold).
RAW_TEXT = st.text(st.characters(exclude_categories=(), exclude_characters="\n\r"), max_size=40)


@PROPERTY
@given(error=RAW_TEXT, junk=RAW_TEXT)
def test_control_characters_in_raw_lines_never_reach_the_terminal(error, junk, empty_store):
    """An exception line and an unknown line of raw text (controls, ESC, invalid UTF-8): stored,
    printed escaped, read back as JSON."""
    crash = [
        "[2026-10-20 08:01:02] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/srv/sglang/scheduler.py", line 7, in run',
        f"RuntimeError: {error}",
        "",
    ]
    lines = launch_lines(8, "/m/x")[:2] + crash + [junk]
    data = ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "raw.log"
        log.write_bytes(data)
        db = copy_store(empty_store, Path(tmp) / "raw.duckdb")  # a new store, without its migrations
        res = cli("ingest", log, db=db)
        assert res.code == 0, res.err
        assert raw_controls(res.err) == []
        for args in (["parse", log, "-q"], ["show", "@latest"], ["launches"]):
            res = cli(*args, db=db)
            assert res.code == 0 and raw_controls(res.out) == [], args
        doc = json.loads(cli("show", "@latest", "--json", db=db).out)
        assert doc["outcome"] == "failed" and doc["error"]
