"""Secrets never sit in readable files, and outputs are never replaced by half files.

* The values of secret arguments (``api_key``, ``admin_api_key``, ``ssl_keyfile_password``,
  vLLM's ``hf_token``, ``--api-key`` on a command line, URL credentials) are replaced by a
  fingerprint where a line enters the parser: nothing stored, exported or printed holds them.
* The store, its folder, exports and reports are their owner's only (0600 / 0700).
* ``report --html FILE`` and ``--output FILE`` on a disk that fills up (here: a file-size limit,
  which makes ``write`` fail with EFBIG as ENOSPC would) leave the previous file as it was.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from helpers import LOGPARSE, SAMPLES, cli, cli_env

from logparse.sources.redact import fingerprint, redact

SGLANG_DICT = SAMPLES / "sglang-0.5" / "qwen-tp2-0.5.22-dict.log"
KEY = "sk-live-Zq81xw"
ADMIN = "adm-7Hh2"


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        (f"server_args=ServerArgs(model_path='m', api_key='{KEY}', admin_api_key=None, port=30000)", KEY),
        (f"server_args={{'model_path': 'm', 'api_key': \"{KEY}\", 'tp_size': 2}}", KEY),
        (f"ServerArgs(ssl_keyfile='k.pem', ssl_keyfile_password='{KEY}', host='0.0.0.0')", KEY),
        (f"non-default args: {{'model': 'org/m', 'hf_token': '{KEY}', 'tensor_parallel_size': 2}}", KEY),
        (f"args: Namespace(host=None, api_key='{KEY}', model='org/m')", KEY),
        (f"Running: python -m sglang.launch_server --model-path m --api-key {KEY} --port 30000", KEY),
        (f"Running: vllm serve org/m --api-key={KEY}", KEY),
        (f"cache url redis://svc:{KEY}@cache:6379/0 ready", KEY),
    ],
)
def test_every_form_of_a_secret_is_replaced_by_its_fingerprint(line: str, secret: str) -> None:
    out = redact(line)
    assert secret not in out
    assert f"<redacted:{fingerprint(secret)}>" in out
    assert redact(out) == out  # idempotent


@pytest.mark.parametrize(
    "line",
    [
        "server_args=ServerArgs(api_key=None, admin_api_key=None, ssl_keyfile_password=None)",
        "non-default args: {'model': 'org/m', 'api_key': '***'}",
        "Decode batch. #running-req: 3, #token: 1200, token usage: 0.02, gen throughput (token/s): 88.1",
        "server_args=ServerArgs(max_total_tokens=None, kt_max_deferred_experts_per_token=None, tokenizer_path='t')",
        "connect http://host:8000/v1 ok",
    ],
)
def test_lines_without_a_secret_are_left_as_they_are(line: str) -> None:
    assert redact(line) == line


def _with_secrets(tmp_path: Path) -> Path:
    text = SGLANG_DICT.read_text()
    text = text.replace("'api_key': None", f"'api_key': '{KEY}'").replace(
        "'admin_api_key': None", f"'admin_api_key': '{ADMIN}'"
    )
    assert KEY in text and ADMIN in text
    log = tmp_path / "secret.log"
    log.write_text(text)
    return log


def test_no_stored_exported_or_printed_byte_holds_the_secret(tmp_path: Path) -> None:
    log = _with_secrets(tmp_path)
    db = tmp_path / "store" / "h.duckdb"
    assert cli("ingest", log, db=db).code == 0
    args = cli("query", "SELECT name, value FROM launch_args WHERE name LIKE '%api_key'", "--format", "json", db=db)
    values = {r["name"]: r["value"] for r in json.loads(args.out)}
    assert values == {
        "api_key": f'"<redacted:{fingerprint(KEY)}>"',
        "admin_api_key": f'"<redacted:{fingerprint(ADMIN)}>"',
    }
    export = tmp_path / "export"
    assert cli("export", export, db=db).code == 0
    [lid] = [r["launch_id"] for r in json.loads(cli("launches", "--format", "json", db=db).out)]
    printed = [
        cli("parse", log, "--json").out,
        cli("show", lid, "--json", db=db).out,
        cli("parse", log, "--events").out,
    ]
    for blob in [
        *(p.read_bytes() for p in [*db.parent.iterdir(), *export.rglob("*")] if p.is_file()),
        *map(str.encode, printed),
    ]:
        assert KEY.encode() not in blob and ADMIN.encode() not in blob


def test_a_changed_key_still_shows_as_changed(tmp_path: Path) -> None:
    one = redact(f"ServerArgs(api_key='{KEY}')")
    two = redact("ServerArgs(api_key='sk-live-other')")
    assert one != two and redact(f"ServerArgs(api_key='{KEY}')") == one


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _run(*args: object, env: dict[str, str], limit_kib: int | None = None) -> subprocess.CompletedProcess:
    cmd = " ".join(f"'{a}'" for a in [*LOGPARSE, *map(str, args)])
    if limit_kib is not None:  # what a full disk does to write(): it fails part way
        cmd = f"ulimit -f {limit_kib}; exec {cmd}"
    return subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=env, timeout=300)


def test_store_export_and_report_are_their_owners_only(tmp_path: Path) -> None:
    db = tmp_path / "new" / "h.duckdb"
    env = cli_env(LOGPARSE_DB=str(db))
    old = os.umask(0o022)  # the usual umask: without logparse's own, files would be 0644
    try:
        assert _run("ingest", _with_secrets(tmp_path), "-q", env=env).returncode == 0
        assert _run("export", tmp_path / "exp", env=env).returncode == 0
        assert _run("report", "--html", tmp_path / "r.html", "-q", env=env).returncode == 0
        assert _run("launches", "--format", "parquet", "-o", tmp_path / "l.parquet", env=env).returncode == 0
    finally:
        os.umask(old)
    assert _mode(db.parent) == 0o700
    assert _mode(db) == 0o600
    assert _mode(tmp_path / "r.html") == 0o600
    assert _mode(tmp_path / "l.parquet") == 0o600
    for p in (tmp_path / "exp").rglob("*"):
        assert _mode(p) == (0o700 if p.is_dir() else 0o600), p


def test_a_full_disk_never_replaces_an_output_with_a_cut_one(tmp_path: Path) -> None:
    db = tmp_path / "h.duckdb"
    env = cli_env(LOGPARSE_DB=str(db))
    assert _run("ingest", SAMPLES, "-q", env=env).returncode in (0, 1)
    outputs = {
        "r.html": ("report", "--html", tmp_path / "r.html", "-q"),
        "q.txt": ("query", "SELECT * FROM launch_summary", "-o", tmp_path / "q.txt"),
        "l.csv": ("launches", "--format", "csv", "-o", tmp_path / "l.csv"),
        "l.parquet": ("launches", "--format", "parquet", "-o", tmp_path / "l.parquet"),
    }
    for name, args in outputs.items():
        assert _run(*args, env=env).returncode == 0, name
        before = (tmp_path / name).read_bytes()
        res = _run(*args, env=env, limit_kib=1)
        assert res.returncode == 2, (name, res.stderr)
        assert res.stderr.strip().count("\n") == 0 and "File too large" in res.stderr, res.stderr
        assert (tmp_path / name).read_bytes() == before, name
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []


def test_a_store_an_older_release_wrote_loses_its_secrets_when_migrated(tmp_path: Path) -> None:
    """A store of schema 13 (written before secrets were redacted) holds the key in its lines, its
    payloads and its arguments; opening it with this release migrates every one of them."""
    import duckdb

    db = tmp_path / "h.duckdb"
    assert cli("ingest", SGLANG_DICT, db=db).code == 0
    con = duckdb.connect(str(db))
    con.execute("UPDATE launch_args SET value = ? WHERE name = 'api_key'", [json.dumps(KEY)])
    con.execute("UPDATE events SET text = replace(text, '''api_key'': None', '''api_key'': ''' || ? || '''')", [KEY])
    con.execute(
        "UPDATE launches SET server_args = replace(server_args::VARCHAR, '\"api_key\":null', '\"api_key\":\"' || ? || '\"')",
        [KEY],
    )
    con.execute("DELETE FROM schema_version WHERE version > 13")
    planted = con.execute(
        "SELECT (SELECT count(*) FROM events WHERE contains(text, ?)) + (SELECT count(*) FROM launches "
        "WHERE contains(server_args::VARCHAR, ?)) + (SELECT count(*) FROM launch_args WHERE contains(value::VARCHAR, ?))",
        [KEY, KEY, KEY],
    ).fetchone()[0]
    con.close()
    assert planted == 3
    assert cli("doctor", db=db).code == 0  # opening the store migrates it
    con = duckdb.connect(str(db), read_only=True)
    for table, column in con.execute(
        "SELECT table_name, column_name FROM duckdb_columns() WHERE schema_name = 'main' AND data_type IN ('VARCHAR', 'JSON') "
        "AND table_name IN (SELECT table_name FROM duckdb_tables())"
    ).fetchall():
        assert (
            con.execute(f'SELECT count(*) FROM {table} WHERE contains("{column}"::VARCHAR, ?)', [KEY]).fetchone()[0]
            == 0
        )
    value = con.execute("SELECT value::VARCHAR FROM launch_args WHERE name = 'api_key'").fetchone()[0]
    assert value == json.dumps(f"<redacted:{fingerprint(KEY)}>")
