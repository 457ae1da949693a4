"""Normalization of parsed launches into columnar frames (polars), ready for the store.

One frame per table: ``launches``, ``rank_memory`` (one row per launch x rank x worker),
``events``, ``runtime_stats`` (one row per launch) and ``launch_args`` (one row per
launch x server argument).  Types follow the store schema (``logparse.store.schema``);
JSON columns are JSON text; timestamps are parsed from the log's ISO text (the text is
kept too, because a time without a date -- SGLang 0.2.14-0.3.3 -- is no timestamp).

Derived columns:

* ``rank_memory.headroom_gb`` = ``avail_after_graph_gb``, else ``avail_after_pool_gb``
  (what is left on the device once SGLang holds weights, KV pool and graphs);
* ``rank_memory.kv_bytes_per_token`` = ``kv_size_gb * 2^30 / (kv_tokens + page_size)``
  when both sizes are known (SGLang allocates ``page_size`` padding slots beyond
  ``#tokens``; a launch that prints no page size pays one slot, as before paging);
* ``launches.startup_s`` = ``ready_at - started_at`` in seconds;
* ``launches.deployment``: the ``deployment`` label when given, else
  ``host|model_path|tp=..|dp=..|pp=..|ep=..`` (unknown sizes count as 1);
* ``launches.version_min`` / ``version_max``: the ends of the SGLang release range.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import polars as pl

from logparse.grammar.events import Event
from logparse.launches.model import LAUNCH_FIELDS, RANK_FIELDS, Launch

GIB = float(1 << 30)
#: ISO text as the parser writes it: date, 'T', time, optional fraction.
TS_FORMAT = "%Y-%m-%dT%H:%M:%S%.f"

_S, _I, _F, _B = pl.String, pl.Int64, pl.Float64, pl.Boolean
_TS = pl.Datetime("us")

#: launches: column -> polars type (JSON columns are text here).
LAUNCH_COLUMNS: dict[str, Any] = {
    "launch_id": _S,
    "source": _S,
    "host": _S,
    "unit": _S,
    "pid": _I,
    "boot": _S,
    "started_at": _TS,
    "ready_at": _TS,
    "outcome": _S,
    "error": _S,
    "sglang_version": _S,
    "sglang_version_range": _S,
    "version_evidence": _S,
    "model_path": _S,
    "tp_size": _I,
    "dp_size": _I,
    "pp_size": _I,
    "ep_size": _I,
    "mem_fraction_static": _F,
    "kv_cache_dtype": _S,
    "page_size": _I,
    "context_length": _I,
    "chunked_prefill_size": _I,
    "max_running_requests": _I,
    "max_total_tokens": _I,
    "speculative_algorithm": _S,
    "enable_hierarchical_cache": _B,
    "hicache_ratio": _F,
    "hicache_size": _F,
    "enable_dp_attention": _B,
    "device": _S,
    "server_args": _S,
    "server_args_form": _S,
    "max_total_num_tokens": _I,
    "max_prefill_tokens": _I,
    "max_running_requests_effective": _I,
    "context_len": _I,
    "available_mem_gb": _F,
    "available_mem_kind": _S,
    "hicache_host_gb": _F,
    "hicache_host_tokens": _I,
    "first_line": _I,
    "last_line": _I,
    "warnings": _S,
    "labels": _S,
    "source_id": _S,
    "deployment": _S,
    "version_min": _S,
    "version_max": _S,
    "sglang_version_given": _S,
    "started_at_text": _S,
    "ready_at_text": _S,
    "startup_s": _F,
    "n_ranks": _I,
    "n_events": _I,
    "n_warnings": _I,
    "ingested_at": _TS,
    "updated_at": _TS,
}
JSON_LAUNCH_COLUMNS = ("version_evidence", "server_args", "warnings", "labels")

RANK_COLUMNS: dict[str, Any] = {
    "launch_id": _S,
    "rank_idx": _I,
    "dp_rank": _I,
    "pp_rank": _I,
    "tp_rank": _I,
    "ep_rank": _I,
    "worker": _S,
    "avail_before_load_gb": _F,
    "weights_gb": _F,
    "avail_after_load_gb": _F,
    "load_s": _F,
    "kv_dtype": _S,
    "kv_tokens": _I,
    "k_size_gb": _F,
    "v_size_gb": _F,
    "kv_size_gb": _F,
    "avail_after_pool_gb": _F,
    "graph_gb": _F,
    "avail_after_graph_gb": _F,
    "graph_s": _F,
    "headroom_gb": _F,
    "kv_bytes_per_token": _F,
    "extra": _S,
}

EVENT_COLUMNS: dict[str, Any] = {
    "launch_id": _S,
    "seq": _I,
    "source_id": _S,
    "source": _S,
    "line_no": _I,
    "ts": _TS,
    "ts_text": _S,
    "dp_rank": _I,
    "pp_rank": _I,
    "tp_rank": _I,
    "ep_rank": _I,
    "attn_cp_rank": _I,
    "moe_dp_rank": _I,
    "worker": _S,
    "tagged": _B,
    "kind": _S,
    "form": _S,
    "variant": _S,
    "fields": _S,
    "text": _S,
    "line_hash": _S,
    "cursor": _S,
}

RUNTIME_COLUMNS: dict[str, Any] = {
    "launch_id": _S,
    "peak_running_req": _I,
    "peak_token_usage": _F,
    "peak_queue_req": _I,
    "peak_tokens": _I,
    "retractions": _I,
    "batch_lines": _I,
    "first_runtime_at": _TS,
    "last_runtime_at": _TS,
    "runtime": _S,
}

ARG_COLUMNS: dict[str, Any] = {"launch_id": _S, "name": _S, "value": _S}


@dataclass
class LaunchMeta:
    """What the store knows about a launch beyond the parse: where it came from, labels."""

    source_id: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    sglang_version_given: str | None = None
    ingested_at: datetime | None = None
    updated_at: datetime | None = None
    #: id(event) -> (source_id, journal cursor) for events whose origin differs from ``source_id``.
    event_origin: dict[int, tuple[str | None, str | None]] = field(default_factory=dict)
    #: The stored span of batch lines (see ``logparse.store.runtime``), kept in ``runtime_stats.runtime``.
    batch_edges: dict[str, Any] | None = None


@dataclass
class Frames:
    launches: pl.DataFrame
    rank_memory: pl.DataFrame
    events: pl.DataFrame
    runtime_stats: pl.DataFrame
    launch_args: pl.DataFrame

    def items(self):
        return (
            ("launches", self.launches),
            ("rank_memory", self.rank_memory),
            ("events", self.events),
            ("runtime_stats", self.runtime_stats),
            ("launch_args", self.launch_args),
        )


# ---------------------------------------------------------------------------- helpers


def to_json(value: Any) -> str | None:
    """JSON text that DuckDB accepts (no NaN/Infinity; tuples as lists; other objects as text)."""
    if value is None:
        return None
    return json.dumps(_clean(value), ensure_ascii=False, separators=(",", ":"))


def _clean(v: Any) -> Any:
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, dict):
        return {str(k): _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set)):
        return [_clean(x) for x in v]
    if v is None or isinstance(v, (str, int, bool)):
        return v
    return str(v)


def line_hash(ts: str | None, text: str | None) -> str:
    """Identity of a log line across inputs: its timestamp and its text."""
    h = hashlib.blake2b(digest_size=8)
    h.update((ts or "").encode())
    h.update(b"\x00")
    h.update((text or "").encode("utf-8", "replace"))
    return h.hexdigest()


def _coerce(value: Any, dtype: Any) -> Any:
    """A value of the column's type, or None (a value of another type is not stored as truth)."""
    if value is None:
        return None
    if dtype == _B:
        return value if isinstance(value, bool) else None
    if dtype == _I:
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            return value if -(1 << 63) <= value < (1 << 63) else None
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return None
    if dtype == _F:
        if isinstance(value, bool):
            return None
        if isinstance(value, (int, float)):
            f = float(value)
            return f if math.isfinite(f) else None
        return None
    if dtype == _S:
        return value if isinstance(value, str) else str(value)
    return value


def _frame(columns: dict[str, list], schema: dict[str, Any], *, coerce: bool = True) -> pl.DataFrame:
    """A frame of exactly ``schema``; with ``coerce``, each value is checked against its column type."""
    data = {}
    for name, dtype in schema.items():
        vals = columns[name]
        if coerce:
            vals = [_coerce(v, dtype) for v in vals]
        data[name] = pl.Series(name, vals, dtype=dtype, strict=False)
    return pl.DataFrame(data)


def _parse_ts(col: str) -> pl.Expr:
    return pl.col(col).str.to_datetime(TS_FORMAT, strict=False, time_unit="us")


def _empty(schema: dict[str, Any]) -> pl.DataFrame:
    return pl.DataFrame(schema=schema)


# ---------------------------------------------------------------------------- frames


def deployment_key(
    host: str | None, model_path: str | None, tp: int | None, dp: int | None, pp: int | None, ep: int | None
) -> str:
    return f"{host or '?'}|{model_path or '?'}|tp={tp or 1}|dp={dp or 1}|pp={pp or 1}|ep={ep or 1}"


def launches_frame(launches: list[Launch], metas: list[LaunchMeta]) -> pl.DataFrame:
    if not launches:
        return _empty(LAUNCH_COLUMNS)
    cols: dict[str, list] = {k: [] for k in LAUNCH_COLUMNS}
    for launch, meta in zip(launches, metas):
        for k in LAUNCH_FIELDS:
            if k == "ranks":
                continue
            v = getattr(launch, k)
            if k in ("started_at", "ready_at"):
                cols[k + "_text"].append(v)
                cols[k].append(v)
            elif k in JSON_LAUNCH_COLUMNS:
                cols[k].append(to_json(v))
            else:
                cols[k].append(v)
        rng = launch.version_range
        labels = dict(meta.labels)
        cols["labels"].append(to_json(labels))
        cols["source_id"].append(meta.source_id)
        cols["deployment"].append(
            labels.get("deployment")
            or deployment_key(
                launch.host, launch.model_path, launch.tp_size, launch.dp_size, launch.pp_size, launch.ep_size
            )
        )
        cols["version_min"].append(rng[0] if rng else None)
        cols["version_max"].append(rng[1] if rng else None)
        cols["sglang_version_given"].append(meta.sglang_version_given)
        cols["n_ranks"].append(len(launch.ranks))
        cols["n_events"].append(len(launch.events))
        cols["n_warnings"].append(len(launch.warnings))
        cols["ingested_at"].append(meta.ingested_at)
        cols["updated_at"].append(meta.updated_at)
        cols["startup_s"].append(None)
    text_cols = {k: v for k, v in cols.items() if LAUNCH_COLUMNS[k] != _TS}
    df = _frame(text_cols, {k: t for k, t in LAUNCH_COLUMNS.items() if t != _TS})
    df = df.with_columns(
        pl.Series("started_at", cols["started_at"], dtype=pl.String),
        pl.Series("ready_at", cols["ready_at"], dtype=pl.String),
        pl.Series("ingested_at", cols["ingested_at"], dtype=_TS),
        pl.Series("updated_at", cols["updated_at"], dtype=_TS),
    ).with_columns(_parse_ts("started_at"), _parse_ts("ready_at"))
    df = df.with_columns(
        ((pl.col("ready_at") - pl.col("started_at")).dt.total_milliseconds() / 1000.0).alias("startup_s")
    )
    return df.select(list(LAUNCH_COLUMNS))


def rank_frame(launches: list[Launch]) -> pl.DataFrame:
    cols: dict[str, list] = {k: [] for k in RANK_COLUMNS}
    page: list = []
    for launch in launches:
        for idx, r in enumerate(launch.ranks):
            cols["launch_id"].append(launch.launch_id)
            cols["rank_idx"].append(idx)
            for k in RANK_FIELDS:
                cols[k].append(getattr(r, k))
            cols["extra"].append(to_json(r.extra) if r.extra else None)
            cols["headroom_gb"].append(None)
            cols["kv_bytes_per_token"].append(None)
            page.append(launch.page_size if isinstance(launch.page_size, int) and launch.page_size > 0 else None)
    if not cols["launch_id"]:
        return _empty(RANK_COLUMNS)
    df = _frame(cols, RANK_COLUMNS).with_columns(pl.Series("_page", page, dtype=pl.Int64))
    df = df.with_columns(
        pl.coalesce(pl.col("avail_after_graph_gb"), pl.col("avail_after_pool_gb")).alias("headroom_gb"),
        pl.when(pl.col("kv_size_gb").is_not_null() & pl.col("kv_tokens").is_not_null() & (pl.col("kv_tokens") > 0))
        .then(pl.col("kv_size_gb") * GIB / (pl.col("kv_tokens") + pl.col("_page").fill_null(1)))
        .otherwise(None)
        .alias("kv_bytes_per_token"),
    )
    return df.select(list(RANK_COLUMNS))


def event_keys(events: Iterable[Event]) -> list[tuple[str, int]]:
    """(line hash, occurrence of that hash so far): equal for the same line read from two inputs."""
    seen: dict[str, int] = {}
    out = []
    for ev in events:
        h = line_hash(ev.ts, ev.text)
        n = seen.get(h, 0)
        seen[h] = n + 1
        out.append((h, n))
    return out


def events_frame(launches: list[Launch], metas: list[LaunchMeta]) -> pl.DataFrame:
    cols: dict[str, list] = {k: [] for k in EVENT_COLUMNS if k != "ts"}
    for launch, meta in zip(launches, metas):
        for ev in launch.events:
            src_id, cursor = meta.event_origin.get(id(ev), (meta.source_id, None))
            cols["launch_id"].append(launch.launch_id)
            cols["seq"].append(ev.seq)
            cols["source_id"].append(src_id)
            cols["source"].append(ev.source)
            cols["line_no"].append(ev.line_no)
            cols["ts_text"].append(ev.ts)
            for k in (
                "dp_rank",
                "pp_rank",
                "tp_rank",
                "ep_rank",
                "attn_cp_rank",
                "moe_dp_rank",
                "worker",
                "tagged",
                "kind",
                "form",
                "variant",
                "text",
            ):
                cols[k].append(getattr(ev, k))
            cols["fields"].append(to_json(ev.fields))
            cols["line_hash"].append(line_hash(ev.ts, ev.text))
            cols["cursor"].append(cursor)
    if not cols["launch_id"]:
        return _empty(EVENT_COLUMNS)
    df = _frame(cols, {k: v for k, v in EVENT_COLUMNS.items() if k != "ts"}, coerce=False)
    df = df.with_columns(pl.col("ts_text").str.to_datetime(TS_FORMAT, strict=False, time_unit="us").alias("ts"))
    return df.select(list(EVENT_COLUMNS))


def runtime_frame(launches: list[Launch], metas: list[LaunchMeta] | None = None) -> pl.DataFrame:
    cols: dict[str, list] = {k: [] for k in RUNTIME_COLUMNS}
    for i, launch in enumerate(launches):
        rt = launch.runtime or {}
        edges = metas[i].batch_edges if metas else None
        cols["launch_id"].append(launch.launch_id)
        for k in ("peak_running_req", "peak_token_usage", "peak_queue_req", "peak_tokens"):
            cols[k].append(rt.get(k))
        cols["retractions"].append(rt.get("retractions", 0))
        cols["batch_lines"].append(rt.get("batch_lines", 0))
        cols["first_runtime_at"].append(rt.get("first_runtime_at"))
        cols["last_runtime_at"].append(rt.get("last_runtime_at"))
        cols["runtime"].append(to_json({**rt, "_batch_span": edges} if edges else rt))
    if not cols["launch_id"]:
        return _empty(RUNTIME_COLUMNS)
    schema = dict(RUNTIME_COLUMNS, first_runtime_at=_S, last_runtime_at=_S)
    df = _frame(cols, schema).with_columns(_parse_ts("first_runtime_at"), _parse_ts("last_runtime_at"))
    return df.select(list(RUNTIME_COLUMNS))


def args_frame(pairs: Iterable[tuple[str, dict | None]]) -> pl.DataFrame:
    """One row per (launch, server argument); the value as JSON text."""
    ids: list = []
    names: list = []
    values: list = []
    for launch_id, args in pairs:
        if not isinstance(args, dict):
            continue
        for k, v in args.items():
            ids.append(launch_id)
            names.append(str(k))
            values.append(to_json(v) if v is not None else "null")
    return pl.DataFrame({"launch_id": ids, "name": names, "value": values}, schema=ARG_COLUMNS)


def frames(launches: list[Launch], metas: list[LaunchMeta]) -> Frames:
    """Every table's rows for these launches, normalized."""
    return Frames(
        launches=launches_frame(launches, metas),
        rank_memory=rank_frame(launches),
        events=events_frame(launches, metas),
        runtime_stats=runtime_frame(launches, metas),
        launch_args=args_frame((l.launch_id, l.server_args) for l in launches),
    )
