"""A new store is created from grammars/sql/store_v<N>.sql: the same store its migrations build."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import duckdb

from logparse.data import tables
from logparse.store import db, schema

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("build_store_schema", ROOT / "tools" / "build_store_schema.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _state(con) -> dict:
    """Everything a store's catalog and rows say, but when it was made."""
    state: dict = {
        "tables": schema.catalog_sql(con),
        "views": sorted(con.execute("SELECT view_name, sql FROM duckdb_views() WHERE NOT internal").fetchall()),
        "constraints": sorted(
            con.execute("SELECT table_name, constraint_type, constraint_text FROM duckdb_constraints()").fetchall()
        ),
        "versions": con.execute("SELECT version, logparse_version FROM schema_version ORDER BY 1").fetchall(),
    }
    for (name,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE NOT internal").fetchall():
        if name != "schema_version":
            state[name] = sorted(map(repr, con.execute(f'SELECT * FROM "{name}"').fetchall()))
    return state


def test_the_file_is_what_the_migrations_build():
    path, text = _tool().render()
    assert Path(path).name == f"store_v{schema.SCHEMA_VERSION}.sql"
    assert tables.sql(f"store_v{schema.SCHEMA_VERSION}") == text, "run: python tools/build_store_schema.py"


def test_a_new_store_is_the_store_its_migrations_build(tmp_path, monkeypatch):
    fast = db.open_store(tmp_path / "new.duckdb", write=True, create=True)
    monkeypatch.setattr(schema, "current_tables_sql", lambda: None)  # every migration, as before the file
    slow = db.open_store(tmp_path / "migrated.duckdb", write=True, create=True)
    try:
        assert _state(fast) == _state(slow)
        assert _state(fast)["ignored_args"], "the rows a new store starts with"
    finally:
        fast.close()
        slow.close()


def test_an_older_version_is_still_built_by_its_migrations(tmp_path):
    con = duckdb.connect(str(tmp_path / "old.duckdb"))
    try:
        assert db.migrate(con, to=schema.SCHEMA_VERSION - 1) == schema.SCHEMA_VERSION - 1
        assert db.migrate(con) == schema.SCHEMA_VERSION  # then the last migration, as any older store
        assert con.execute("SELECT count(*) FROM schema_version").fetchone() == (schema.SCHEMA_VERSION,)
    finally:
        con.close()
