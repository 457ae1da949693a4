"""The store's columns, derived from the one declaration of each record.

A launch's fields are declared once, by :class:`~logparse.launches.model.Launch` (and
:class:`~logparse.launches.model.RankMemory`); a budget's by
:class:`~logparse.budget.model.Budget` (and :class:`~logparse.budget.model.RankBudget`).  The
JSON keys, the DataFrame columns (:mod:`logparse.store.frames`) and the table columns
(:mod:`logparse.store.schema`) all derive from those declarations plus the few columns only the
store has (where a launch came from, its labels, its deployment...), declared here.

Each column has a *kind* (``str``, ``int``, ``float``, ``bool``, ``json``, ``timestamp``) that maps to
a polars type and a DuckDB type.
"""

from __future__ import annotations

from typing import Any

from logparse.budget.model import Budget, RankBudget
from logparse.launches.model import Launch, RankMemory, declared

SQL_TYPES = {
    "str": "VARCHAR",
    "int": "BIGINT",
    "float": "DOUBLE",
    "bool": "BOOLEAN",
    "json": "JSON",
    "timestamp": "TIMESTAMP",
}

#: Columns of ``launches`` that only the store has.
LAUNCH_STORE_COLUMNS = {
    "labels": "json",
    "source_id": "str",
    "deployment": "str",
    "version_min": "str",
    "version_max": "str",
    "sglang_version_given": "str",
    "started_at_text": "str",
    "ready_at_text": "str",
    "startup_s": "float",
    "n_ranks": "int",
    "n_events": "int",
    "n_warnings": "int",
    "ingested_at": "timestamp",
    "updated_at": "timestamp",
    # the parts of the launch's identity a later rendering is matched by (logparse.launches.identity)
    "identity_content": "str",
    "record_started_at": "str",
    "source_ordinal": "int",
}


def launch_columns() -> dict[str, str]:
    cols = {k: v for k, v in declared(Launch).items() if k != "ranks"}
    return cols | LAUNCH_STORE_COLUMNS


def json_launch_columns() -> tuple[str, ...]:
    return tuple(k for k, v in launch_columns().items() if v == "json")


def rank_columns() -> dict[str, str]:
    """``rank_memory``: one row per launch x rank x worker, as printed, plus the rank's headroom."""
    return (
        {"launch_id": "str", "rank_idx": "int"}
        | declared(RankMemory)
        | {"headroom_gb": "float", "kv_bytes_per_token": "float", "extra": "json"}
    )


def budget_columns() -> dict[str, str]:
    """``launch_budget``: one row per launch, the :class:`Budget` (ranks in ``rank_budget``)."""
    return {"launch_id": "str"} | {k: v for k, v in declared(Budget).items() if k not in ("launch_id", "ranks")}


def rank_budget_columns() -> dict[str, str]:
    """``rank_budget``: one row per launch x physical rank, the :class:`RankBudget`."""
    return {"launch_id": "str", "rank_idx": "int"} | declared(RankBudget)


EVENT_COLUMNS = {
    "launch_id": "str",
    "seq": "int",
    "source_id": "str",
    "source": "str",
    "line_no": "int",
    "ts": "timestamp",
    "ts_text": "str",
    "dp_rank": "int",
    "pp_rank": "int",
    "tp_rank": "int",
    "ep_rank": "int",
    "attn_cp_rank": "int",
    "moe_dp_rank": "int",
    "worker": "str",
    "tagged": "bool",
    "kind": "str",
    "form": "str",
    "variant": "str",
    "fields": "json",
    "text": "str",
    "line_hash": "str",
    "cursor": "str",
    "record_ts": "timestamp",
}

RUNTIME_COLUMNS = {
    "launch_id": "str",
    "peak_running_req": "int",
    "peak_token_usage": "float",
    "peak_queue_req": "int",
    "peak_tokens": "int",
    "retractions": "int",
    "batch_lines": "int",
    "first_runtime_at": "timestamp",
    "last_runtime_at": "timestamp",
    "runtime": "json",
}

#: ``launch_args``: one row per launch x server argument; ``origin`` is default | derived | set | unknown
#: (:func:`logparse.launches.args.origin`).
ARG_COLUMNS = {"launch_id": "str", "name": "str", "value": "json", "origin": "str"}


def polars_schema(columns: dict[str, str]) -> dict[str, Any]:
    """Column -> polars type (JSON is text until DuckDB reads it)."""
    import polars as pl

    types = {
        "str": pl.String,
        "int": pl.Int64,
        "float": pl.Float64,
        "bool": pl.Boolean,
        "json": pl.String,
        "timestamp": pl.Datetime("us"),
    }
    return {name: types[kind] for name, kind in columns.items()}


def create_table_sql(table: str, columns: dict[str, str], *, key: str | None = None) -> str:
    body = ",\n    ".join(
        f"{name} {SQL_TYPES[kind]}" + (" NOT NULL PRIMARY KEY" if name == key else "") for name, kind in columns.items()
    )
    return f"CREATE TABLE {table} (\n    {body}\n)"


def add_missing_columns(con, table: str, columns: dict[str, str]) -> list[str]:
    """Columns are added, never renamed or dropped: add the declared ones the table lacks."""
    have = {r[0] for r in con.execute(f"SELECT * FROM {table} LIMIT 0").description}
    added = []
    for name, kind in columns.items():
        if name not in have:
            con.execute(f"ALTER TABLE {table} ADD COLUMN {name} {SQL_TYPES[kind]}")
            added.append(name)
    return added
