"""Progress bars on stderr when it is a terminal (a pseudo-terminal here), silent with ``-q`` or when
stderr is a pipe; and shell completion (typer's ``--show-completion`` and the completion protocol)."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import tempfile

import pytest
from helpers import LOGPARSE, SAMPLES, cli_env, cli_process

RESTARTS = SAMPLES / "sglang-0.5" / "restarts-0.5.12.log"
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


def on_a_terminal(*args) -> tuple[int, bytes, bytes]:
    """Run logparse with stderr on a pseudo-terminal; (exit code, stdout, stderr without colours)."""
    master, slave = pty.openpty()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(
            [*LOGPARSE, *map(str, args)], stdout=out, stderr=slave, stdin=subprocess.DEVNULL, env=cli_env(COLUMNS="160")
        )
        os.close(slave)
        err = b""
        while True:
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:  # the terminal's other side closed: the process has ended
                break
            if not chunk:
                break
            err += chunk
        rc = proc.wait(timeout=300)
        os.close(master)
        out.seek(0)
        return rc, out.read(), ANSI.sub(b"", err)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    db = tmp_path_factory.mktemp("progress") / "h.duckdb"
    assert cli_process("ingest", RESTARTS, "--db", db, "-q").returncode == 0
    return db


def test_parse_shows_bytes_lines_and_rate_on_a_terminal():
    rc, out, err = on_a_terminal("parse", RESTARTS, "--format", "json")
    assert rc == 0 and out.startswith(b"{")
    size_kb = RESTARTS.stat().st_size / 1000
    assert re.search(rb"parse .*%.1f/%.1f kB .* 106 lines [\d,]+ lines/s" % (size_kb, size_kb), err), err


def test_export_report_and_watch_catch_up_show_progress(store, tmp_path):
    rc, _, err = on_a_terminal("export", tmp_path / "x", "--db", store)
    assert rc == 0 and re.search(rb"export .* [\d,]+ rows [\d,]+ rows/s", err), err
    rc, _, err = on_a_terminal("report", "--html", tmp_path / "r.html", "--db", store)
    assert rc == 0 and re.search(rb"report .* 1 deployments", err), err
    rc, _, err = on_a_terminal("watch", RESTARTS, "--once", "--db", tmp_path / "w.duckdb", "--format", "ndjson")
    assert rc == 0 and re.search(rb"catching up restarts-0\.5\.12\.log .* 106 lines", err), err


@pytest.mark.parametrize(
    "args",
    [
        ("parse", RESTARTS, "--format", "json", "-q"),
        ("export", "{tmp}/x", "--db", "{db}", "-q"),
        ("report", "--html", "{tmp}/r.html", "--db", "{db}", "-q"),
        ("watch", RESTARTS, "--once", "--db", "{tmp}/w.duckdb", "--format", "ndjson", "-q"),
    ],
)
def test_quiet_on_a_terminal_and_silent_on_a_pipe(store, tmp_path, args):
    args = [str(a).format(tmp=tmp_path, db=store) for a in args]
    rc, _, err = on_a_terminal(*args)
    assert rc == 0 and err.strip() == b"", err
    res = cli_process(*[a for a in args if a != "-q"])
    assert res.returncode == 0
    assert b"lines/s" not in res.stderr and b"rows/s" not in res.stderr and b"\x1b[" not in res.stderr


def test_shell_completion():
    for shell, marker in (("bash", b"complete -o default -F"), ("zsh", b"compdef"), ("fish", b"complete --command")):
        env = cli_env(_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION="1")  # name the shell, not detect it
        res = cli_process("--show-completion", shell, env=env)
        assert res.returncode == 0 and marker in res.stdout, (shell, res.stdout[:200])
    for words, cword, want in (("logparse wat", "1", b"watch"), ("logparse watch --jou", "2", b"--journal")):
        env = cli_env(_LOGPARSE_COMPLETE="complete_bash", COMP_WORDS=words, COMP_CWORD=cword)
        res = subprocess.run(LOGPARSE, env=env, capture_output=True)
        assert res.stdout.split() == [want], res
