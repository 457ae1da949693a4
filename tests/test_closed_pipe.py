"""``logparse … | head -1``: when the reader closes the pipe, a command ends as a Unix filter does:
no message, and the status of SIGPIPE (141 in a shell) or 0, never exit 1, which ``check`` uses for a
regression (rich's own way out, and typer's, were exit 1)."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest
from helpers import LOGPARSE, SAMPLES, cli, cli_env

KIMI = SAMPLES / "kimi-k25"


@pytest.fixture(scope="module")
def kimi_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    db = str(tmp_path_factory.mktemp("pipe") / "h.duckdb")
    assert cli("ingest", KIMI, db=db).code == 0
    return db


def run_into_closed_pipe(*args: object, db: str) -> subprocess.CompletedProcess:
    """The command with its stdout a pipe whose reader has already gone: its first write fails."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [*LOGPARSE, *map(str, args)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            env=cli_env(LOGPARSE_DB=db, COLUMNS="80"),
            timeout=120,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    "args",
    [
        ("launches",),  # a rich table
        ("history",),
        ("launches", "--json"),  # a document written at once
        ("query", "select * from launches", "--format", "csv"),
        ("parse", KIMI, "--ndjson"),
        ("explain", "@latest"),
    ],
    ids=lambda a: " ".join(map(str, a[:2])),
)
def test_a_closed_pipe_ends_the_command_quietly(kimi_store: str, args: tuple) -> None:
    ran = run_into_closed_pipe(*args, db=kimi_store)
    assert ran.returncode in (0, -signal.SIGPIPE), (ran.returncode, ran.stderr[-400:])
    assert ran.stderr == b""
