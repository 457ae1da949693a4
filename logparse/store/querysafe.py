"""Read-only SQL for ``logparse query``: which statements are allowed.

Two layers: the store is opened ``read_only=True`` with ``enable_external_access=false``
(and the configuration locked), and before that every statement is classified with
DuckDB's own parser (``extract_statements``): only one statement per call, and only
queries (SELECT, WITH, FROM-first, DESCRIBE/SHOW/SUMMARIZE, PIVOT), EXPLAIN of a query
(not EXPLAIN ANALYZE of anything else) and read-only PRAGMAs.  Refused: DDL, DML,
ATTACH/DETACH, COPY, EXPORT/IMPORT, INSTALL/LOAD, SET/RESET/USE, CALL (CHECKPOINT is a
CALL), transactions, PREPARE/EXECUTE, VACUUM, and several statements in one string.
``--write`` opens the store for writing and allows what changes the store itself (DML, DDL,
CHECKPOINT, VACUUM, transactions), never what reaches outside it: :func:`check_write` refuses
ATTACH/DETACH, COPY, EXPORT/IMPORT, INSTALL/LOAD, SET/RESET, other CALLs and writing PRAGMAs, and the
connection itself runs with ``enable_external_access=false`` and its configuration locked.
"""

from __future__ import annotations

import re


class QueryRefused(Exception):
    """A statement that ``logparse query`` will not run without ``--write``."""


#: PRAGMAs that only read.
READ_PRAGMAS = frozenset(
    {
        "version",
        "table_info",
        "show",
        "show_tables",
        "show_tables_expanded",
        "database_list",
        "database_size",
        "storage_info",
        "functions",
        "collations",
        "metadata_info",
        "platform",
        "user_agent",
        "show_databases",
    }
)

_REFUSED_WHY = {
    "INSERT": "it writes (DML)",
    "UPDATE": "it writes (DML)",
    "DELETE": "it writes (DML)",
    "MERGE_INTO": "it writes (DML)",
    "CREATE": "it changes the schema (DDL)",
    "DROP": "it changes the schema (DDL)",
    "ALTER": "it changes the schema (DDL)",
    "ATTACH": "it attaches another database",
    "DETACH": "it detaches a database",
    "COPY": "it reads or writes files",
    "EXPORT": "it writes files",
    "LOAD": "it installs or loads an extension",
    "SET": "it changes settings",
    "VARIABLE_SET": "it changes settings",
    "CALL": "it calls a procedure (CHECKPOINT and friends)",
    "TRANSACTION": "it controls transactions",
    "VACUUM": "it rewrites the store",
    "PREPARE": "prepared statements are not needed here",
    "EXECUTE": "prepared statements are not needed here",
    "ANALYZE": "it updates statistics",
    "COPY_DATABASE": "it copies the database",
    "UPDATE_EXTENSIONS": "it installs extensions",
}


def _type_name(stmt) -> str:
    try:
        t = stmt.type
        return getattr(t, "name", str(t)).split(".")[-1].upper()
    except ValueError:  # a statement type this duckdb's Python enum does not know
        return "UNKNOWN"


def check_read_only(sql: str) -> None:
    """Raise :class:`QueryRefused` unless ``sql`` is one statement that only reads."""
    import duckdb

    try:
        stmts = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryRefused(f"SQL error: {str(exc).splitlines()[0]}") from None
    if not stmts:
        raise QueryRefused("no SQL statement given")
    if len(stmts) > 1:
        raise QueryRefused(f"{len(stmts)} statements in one query: give one statement per call")
    stmt = stmts[0]
    kind = _type_name(stmt)
    text = stmt.query.strip().rstrip(";").strip()
    head = text.split(None, 1)[0].upper() if text else ""
    if kind == "SELECT":
        return
    if kind == "MULTI" and head in ("PIVOT", "UNPIVOT"):
        return
    if kind == "EXPLAIN":
        m = re.match(r"(?is)\s*explain\s+(analy[sz]e\s+)?(.*)$", text)
        inner = m.group(2) if m else ""
        try:
            inner_stmts = duckdb.extract_statements(inner)
        except duckdb.Error:
            inner_stmts = []
        if len(inner_stmts) == 1 and _type_name(inner_stmts[0]) == "SELECT":
            return
        raise QueryRefused("EXPLAIN is allowed for queries only")
    if kind == "PRAGMA":
        m = re.match(r"(?is)\s*pragma\s+([a-z_][a-z0-9_]*)\s*(=)?", text)
        name = m.group(1).lower() if m else ""
        if name in READ_PRAGMAS and not (m and m.group(2)):
            return
        raise QueryRefused(
            f"PRAGMA {name or '?'} is refused: it may change the store or its settings "
            "(read-only PRAGMAs: " + ", ".join(sorted(READ_PRAGMAS)) + ")"
        )
    why = _REFUSED_WHY.get(kind, "it is not a query")
    raise QueryRefused(
        f"{head or kind} statement refused: {why}. logparse query is read-only; use --write to change the store"
    )


#: Statement kinds ``--write`` refuses: they reach files, extensions, the network or the settings.
WRITE_REFUSED = frozenset(
    {"ATTACH", "DETACH", "COPY", "EXPORT", "LOAD", "SET", "VARIABLE_SET", "COPY_DATABASE", "UPDATE_EXTENSIONS"}
)
#: CALLs that only touch the store.
STORE_CALLS = re.compile(r"(?is)\s*(force\s+)?checkpoint\s*;?\s*$")


def check_write(sql: str) -> None:
    """Raise :class:`QueryRefused` unless every statement of ``sql`` changes or reads the store only."""
    import duckdb

    try:
        stmts = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryRefused(f"SQL error: {str(exc).splitlines()[0]}") from None
    for stmt in stmts:
        kind = _type_name(stmt)
        text = stmt.query.strip()
        head = text.split(None, 1)[0].upper() if text else kind
        if kind == "CALL" and STORE_CALLS.match(text):
            continue
        if kind in WRITE_REFUSED or kind == "CALL" or (kind == "PRAGMA" and not _read_pragma(text)):
            why = _REFUSED_WHY.get(kind, "it may reach outside the store")
            raise QueryRefused(f"{head} statement refused: {why}; query --write changes the store only")


def _read_pragma(text: str) -> bool:
    m = re.match(r"(?is)\s*pragma\s+([a-z_][a-z0-9_]*)\s*(=)?", text)
    return m is not None and m.group(1).lower() in READ_PRAGMAS and not m.group(2)
