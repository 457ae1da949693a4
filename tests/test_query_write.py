"""``query --write`` changes the store and nothing else: no file read or written, no extension, no
network, no setting; statements it cannot show as rows print one line, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import SAMPLES, cli


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("w") / "h.duckdb"
    assert cli("ingest", SAMPLES / "vllm", db=path).code in (0, 1)
    return path


@pytest.mark.parametrize(
    ("sql", "says"),
    [
        ("SET threads = 1", "SET statement refused"),
        ("RESET threads", "statement refused"),
        ("ATTACH '{tmp}/other.duckdb'", "ATTACH statement refused"),
        ("COPY (SELECT 1) TO '{tmp}/out.csv'", "COPY statement refused"),
        ("EXPORT DATABASE '{tmp}/exp'", "statement refused"),
        ("INSTALL httpfs", "INSTALL statement refused"),
        ("LOAD httpfs", "LOAD statement refused"),
        ("SELECT * FROM read_text('{tmp}/secret.txt')", "file system operations are disabled"),
        ("CREATE TABLE t AS SELECT * FROM read_csv('{tmp}/secret.txt')", "file system operations are disabled"),
        ("PRAGMA enable_profiling", "statement refused"),
    ],
)
def test_write_mode_never_reaches_outside_the_store(db: Path, tmp_path: Path, sql: str, says: str) -> None:
    (tmp_path / "secret.txt").write_text("a\n1\n")
    res = cli("query", "--write", sql.format(tmp=tmp_path), db=db)
    assert res.code == 2, res
    assert says in res.err and res.err.count("\n") == 1 and "Traceback" not in res.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["secret.txt"]


@pytest.mark.parametrize(
    "sql",
    [
        "CHECKPOINT",
        "FORCE CHECKPOINT",
        "UPDATE ignored_args SET reason = reason WHERE name = 'port'",
        "CREATE TABLE notes AS SELECT 1 AS a; DROP TABLE notes",
        "SELECT * FROM launches WHERE false",
    ],
)
def test_what_changes_or_reads_the_store_runs_without_a_traceback(db: Path, sql: str) -> None:
    res = cli("query", "--write", sql, db=db)
    assert res.code == 0, res
    assert "Traceback" not in res.err + res.out
