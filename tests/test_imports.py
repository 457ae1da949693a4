"""What a command imports: the small commands stay small (issue 22, item 7).

Deterministic checks of the import graph, run in a subprocess as the ``logparse`` script runs: the
heavy libraries a path does not need are not in ``sys.modules`` when the command ends.  The time it
takes is measured by ``bench/small`` (ratios against ``logparse --help``), never here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from helpers import SAMPLES, cli_env

SMALL_SGLANG = SAMPLES / "kimi-k25" / "launch-1-baseline.log"
SMALL_VLLM = SAMPLES / "vllm" / "v1-defaults-0.20.2.log"

#: Run ``logparse.cli.main`` with the given arguments; at its end (also through ``os._exit``, the
#: read commands' quick exit) write the top-level names of the imported modules to the file named
#: by the first argument.
_PROBE = """
import json, os, sys
out, args = sys.argv[1], sys.argv[2:]
quick = os._exit

def report():
    with open(out, "w") as f:
        json.dump(sorted({m.split(".")[0] for m in sys.modules} | set(sys.modules)), f)

def _exit(code):
    report()
    quick(code)

os._exit = _exit
sys.argv = ["logparse", *args]
from logparse.cli import main
try:
    main()
finally:
    report()
"""

#: The heavy libraries (and what only some commands need).
HEAVY = {"polars", "duckdb", "numpy", "pyarrow", "cairosvg", "rich", "lark", "pandas"}


def imported(tmp_path: Path, *args: object, stdin: bytes | None = None) -> set[str]:
    """The modules imported by ``logparse ARGS`` (top-level names and full names)."""
    out = tmp_path / "modules.json"
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, str(out), *map(str, args)],
        input=stdin,
        capture_output=True,
        env=cli_env(),
        timeout=300,
    )
    assert proc.returncode in (0, 1), proc.stderr.decode(errors="replace")[-2000:]
    assert b"Traceback" not in proc.stderr, proc.stderr.decode(errors="replace")[-2000:]
    return set(json.loads(out.read_text()))


@pytest.mark.parametrize("args", [("--help",), ("parse", "--help"), ("ingest", "--help"), ("report", "--help")])
def test_help_imports_no_heavy_library(tmp_path, args):
    assert imported(tmp_path, *args) & HEAVY == set()


@pytest.mark.parametrize("sample", [SMALL_SGLANG, SMALL_VLLM], ids=["sglang", "vllm"])
def test_parse_of_a_small_file_imports_neither_polars_nor_numpy_nor_duckdb(tmp_path, sample):
    mods = imported(tmp_path, "parse", sample)
    assert "lark" in mods  # the probe sees the imports a parse needs: the grammar's parser
    assert mods & {"polars", "duckdb", "numpy", "pyarrow", "cairosvg", "pandas"} == set()
    # machine-readable output needs no terminal tables either
    assert imported(tmp_path, "parse", "--json", sample) & (HEAVY - {"lark"}) == set()


def test_parse_of_a_small_file_imports_no_other_command(tmp_path):
    mods = imported(tmp_path, "parse", "--json", SMALL_SGLANG)
    assert "logparse.cli.parse_cmd" in mods and "logparse.pipeline" in mods
    store = ("ingest_cmd", "launches_cmd", "show_cmd", "history_cmd", "store_cmds")
    others = {f"logparse.cli.{m}" for m in (*store, "report_cmds", "plan_cmd", "watch_cmd", "systemd_cmd")}
    assert mods & others == set()
    assert not any(m == "logparse.store" or m.startswith("logparse.store.") for m in mods)
    assert "logparse.engines.sglang.bulk_template" not in mods  # numpy's templates: large inputs only


@pytest.mark.parametrize("store", ["new", "existing"])
def test_ingest_of_a_small_file_takes_the_record_path(tmp_path, store):
    """A small input is written by DuckDB itself (``logparse.store.rows``): neither polars frames nor
    Arrow tables (pyarrow brings numpy), nor the bulk path's templates, terminal tables or charts,
    into a new store (its schema created) as into one that holds launches."""
    db = tmp_path / "s.duckdb"
    if store == "existing":
        imported(tmp_path, "ingest", "-q", "--db", db, SMALL_VLLM)
    mods = imported(tmp_path, "ingest", "-q", "--db", db, SMALL_SGLANG)
    assert {"duckdb", "lark", "logparse.store.rows"} <= mods and db.exists()
    assert mods & {"polars", "pyarrow", "numpy", "cairosvg", "rich", "pandas"} == set()
    assert "logparse.engines.sglang.bulk_template" not in mods
    assert not any(m.startswith("logparse.cli.") and m.endswith(("report_cmds", "plan_cmd", "watch_cmd")) for m in mods)
    con = duckdb.connect(str(db), read_only=True)  # the probe saw a real ingest
    try:
        assert con.execute("SELECT count(*) FROM launches").fetchone()[0] == (2 if store == "existing" else 1)
    finally:
        con.close()


def test_read_commands_import_no_polars(tmp_path):
    db = tmp_path / "s.duckdb"
    imported(tmp_path, "ingest", "-q", "--db", db, SMALL_SGLANG)
    for args in (("launches", "--db", db), ("show", "@latest", "--db", db), ("explain", "@latest", "--db", db)):
        mods = imported(tmp_path, *args)
        assert "duckdb" in mods, args
        assert mods & {"polars", "numpy", "pyarrow", "cairosvg", "pandas"} == set(), args


def test_large_inputs_still_take_numpy_templates(tmp_path):
    """The guard against a probe that sees nothing: a large input on stdin (the one size rule,
    ``pipeline.FAST_MIN_BYTES``) takes the fast stage, with numpy."""
    from logparse.pipeline import FAST_MIN_BYTES

    text = SMALL_SGLANG.read_bytes()
    batch = next(line for line in text.splitlines(keepends=True) if b"Decode batch" in line)
    data = text + batch * (FAST_MIN_BYTES // len(batch) + 1)
    mods = imported(tmp_path, "parse", "--json", "-", stdin=data)
    assert {"numpy", "logparse.engines.sglang.bulk_template"} <= mods


def test_every_command_is_registered_by_the_module_the_table_names():
    """``logparse CMD`` imports only ``COMMAND_MODULES[CMD]``: the table names every command of the
    application, in the help's order, by the module that defines it.  In a fresh interpreter: a test
    that imported one command module earlier in this process registered its commands first."""
    probe = (
        "import json; from typer.main import get_command_name; import logparse.cli as c; app = c.app;"
        "print(json.dumps([[x.name or get_command_name(x.callback.__name__), x.callback.__module__]"
        " for x in app.registered_commands]))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    commands = json.loads(done.stdout)
    import logparse.cli as cli_pkg

    assert [name for name, _ in commands] == list(cli_pkg.COMMAND_MODULES)
    for name, module in commands:
        assert module == f"logparse.cli.{cli_pkg.COMMAND_MODULES[name]}", name


def test_the_application_of_a_test_has_every_command():
    from logparse.cli import COMMAND_MODULES, app

    assert len(app.registered_commands) == len(COMMAND_MODULES) >= 16


def test_an_unknown_command_still_gets_typer_s_suggestion(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "logparse", "lanches"], capture_output=True, text=True, env=cli_env(), timeout=120
    )
    assert proc.returncode == 2 and "launches" in proc.stderr
