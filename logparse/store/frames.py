"""Normalization of parsed launches into columnar frames (polars), ready for the store.

One frame per table: ``launches``, ``rank_memory`` (one row per launch x rank x worker),
``events``, ``runtime_stats`` (one row per launch), ``launch_args`` (one row per launch x
server argument), ``launch_budget`` (one row per launch) and ``rank_budget`` (one row per launch x
physical rank).  Columns derive from the declarations (:mod:`logparse.store.columns`); JSON
columns are JSON text; timestamps are parsed from the log's ISO text (the text is kept too,
because a time without a date -- SGLang 0.2.14-0.3.3 -- is no timestamp).

Every budget figure (headroom, actual KV tokens, bytes per token...) is the launch's
:func:`~logparse.budget.model.launch_budget`, computed here once per written launch, so the store
holds exactly what ``explain`` computes.  Other derived columns:

* ``launches.deployment``: the ``deployment`` label when given, else
  :func:`logparse.launches.deployment.deployment_key`;
* ``launches.version_min`` / ``version_max``: the ends of the SGLang release range;
* ``launches.identity_content`` / ``record_started_at`` / ``source_ordinal``: the parts of the
  launch's identity (:mod:`logparse.launches.identity`) that a later rendering is matched by.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import polars as pl

from logparse.budget.model import Budget, launch_budget
from logparse.grammar.events import Event
from logparse.launches.args import origin as arg_origin
from logparse.launches.args import value_text
from logparse.launches.deployment import deployment_key
from logparse.launches.identity import identity
from logparse.launches.model import LAUNCH_FIELDS, RANK_FIELDS, Launch
from logparse.store import columns as C
from logparse.store.meta import JSON_LAUNCH_COLUMNS, LaunchMeta

#: ISO text as the parser writes it: date, 'T', time, optional fraction.
TS_FORMAT = "%Y-%m-%dT%H:%M:%S%.f"

_S, _I, _F, _B = pl.String, pl.Int64, pl.Float64, pl.Boolean
_TS = pl.Datetime("us")

LAUNCH_COLUMNS = C.polars_schema(C.launch_columns())
RANK_COLUMNS = C.polars_schema(C.rank_columns())
EVENT_COLUMNS = C.polars_schema(C.EVENT_COLUMNS)
RUNTIME_COLUMNS = C.polars_schema(C.RUNTIME_COLUMNS)
ARG_COLUMNS = C.polars_schema(C.ARG_COLUMNS)
BUDGET_COLUMNS = C.polars_schema(C.budget_columns())
RANK_BUDGET_COLUMNS = C.polars_schema(C.rank_budget_columns())


@dataclass
class Frames:
    launches: pl.DataFrame
    rank_memory: pl.DataFrame
    events: pl.DataFrame
    runtime_stats: pl.DataFrame
    launch_args: pl.DataFrame
    launch_budget: pl.DataFrame
    rank_budget: pl.DataFrame

    def items(self):
        return (
            ("launches", self.launches),
            ("rank_memory", self.rank_memory),
            ("events", self.events),
            ("runtime_stats", self.runtime_stats),
            ("launch_args", self.launch_args),
            ("launch_budget", self.launch_budget),
            ("rank_budget", self.rank_budget),
        )


# ---------------------------------------------------------------------------- helpers


def to_json(value: Any) -> str | None:
    """JSON text that DuckDB accepts (:func:`logparse.launches.args.value_text`)."""
    return None if value is None else value_text(value)


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
            try:
                f = float(value)
            except OverflowError:  # an int beyond any double (the parse bounded it before: a safety net)
                return None
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


def launches_frame(launches: list[Launch], metas: list[LaunchMeta]) -> pl.DataFrame:
    if not launches:
        return _empty(LAUNCH_COLUMNS)
    cols: dict[str, list] = {k: [] for k in LAUNCH_COLUMNS}
    for launch, meta in zip(launches, metas):
        for k in LAUNCH_FIELDS:
            if k == "ranks":
                continue
            v = getattr(launch, k)
            if k in JSON_LAUNCH_COLUMNS:
                cols[k].append(to_json(v))
            else:
                cols[k].append(v)
        rng = launch.version_range
        labels = dict(meta.labels)
        cols["labels"].append(to_json(labels))
        cols["source_id"].append(meta.source_id)
        cols["deployment"].append(deployment_key(launch, labels))
        ident = identity(launch)
        cols["identity_content"].append(ident.content)
        cols["record_started_at"].append(ident.record_started_at)
        cols["source_ordinal"].append(launch.source_ordinal)
        cols["version_min"].append(rng[0] if rng else None)
        cols["version_max"].append(rng[1] if rng else None)
        cols["sglang_version_given"].append(meta.sglang_version_given)
        cols["n_ranks"].append(len(launch.ranks))
        cols["n_events"].append(len(launch.events))
        cols["n_warnings"].append(len(launch.warnings))
        cols["ingested_at"].append(meta.ingested_at)
        cols["updated_at"].append(meta.updated_at)
        cols["startup_s"].append(None)
        cols["started_at_text"].append(launch.started_at)
        cols["ready_at_text"].append(launch.ready_at)
    text_cols = {k: v for k, v in cols.items() if LAUNCH_COLUMNS[k] != _TS}  # timestamps parsed below
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


def rank_frame(launches: list[Launch], budgets: list[Budget]) -> pl.DataFrame:
    """Rows as printed; ``headroom_gb`` and ``kv_bytes_per_token`` are the rank's budget figures."""
    cols: dict[str, list] = {k: [] for k in RANK_COLUMNS}
    for launch, budget in zip(launches, budgets):
        by_rank = {rb.key: rb for rb in budget.ranks}
        for idx, r in enumerate(launch.ranks):
            rb = by_rank.get((r.dp_rank, r.pp_rank, r.tp_rank, r.ep_rank))
            cols["launch_id"].append(launch.launch_id)
            cols["rank_idx"].append(idx)
            for k in RANK_FIELDS:
                cols[k].append(getattr(r, k))
            cols["extra"].append(to_json(r.extra) if r.extra else None)
            cols["headroom_gb"].append(rb.headroom_gb if rb else None)
            cols["kv_bytes_per_token"].append(rb.bytes_per_token if rb and r.worker == "target" else None)
    if not cols["launch_id"]:
        return _empty(RANK_COLUMNS)
    return _frame(cols, RANK_COLUMNS)


def budget_frame(budgets: list[Budget]) -> pl.DataFrame:
    kinds = C.budget_columns()
    cols: dict[str, list] = {k: [] for k in kinds}
    for b in budgets:
        d = b.to_dict()
        for k, kind in kinds.items():
            cols[k].append(to_json(d.get(k)) if kind == "json" else d.get(k))
    if not budgets:
        return _empty(BUDGET_COLUMNS)
    return _frame(cols, BUDGET_COLUMNS)


def rank_budget_frame(budgets: list[Budget]) -> pl.DataFrame:
    cols: dict[str, list] = {k: [] for k in RANK_BUDGET_COLUMNS}
    for b in budgets:
        for idx, rb in enumerate(b.ranks):
            d = rb.to_dict()
            cols["launch_id"].append(b.launch_id)
            cols["rank_idx"].append(idx)
            for k in RANK_BUDGET_COLUMNS:
                if k not in ("launch_id", "rank_idx"):
                    cols[k].append(d[k])
    if not cols["launch_id"]:
        return _empty(RANK_BUDGET_COLUMNS)
    return _frame(cols, RANK_BUDGET_COLUMNS)


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
            cols["record_ts"].append(ev.record_ts)
    if not cols["launch_id"]:
        return _empty(EVENT_COLUMNS)
    df = _frame(cols, {k: (_S if k == "record_ts" else v) for k, v in EVENT_COLUMNS.items() if k != "ts"}, coerce=False)
    df = df.with_columns(
        pl.col("ts_text").str.to_datetime(TS_FORMAT, strict=False, time_unit="us").alias("ts"), _parse_ts("record_ts")
    )
    return df.select(list(EVENT_COLUMNS))


def runtime_frame(launches: list[Launch], metas: list[LaunchMeta] | None = None) -> pl.DataFrame:
    cols: dict[str, list] = {k: [] for k in RUNTIME_COLUMNS}
    for i, launch in enumerate(launches):
        rt = launch.runtime or {}
        edges = metas[i].batch_edges if metas else None
        extra = {"_batch_span": edges} if edges else {}
        if metas and metas[i].disagreeing:
            extra["_disagreeing"] = metas[i].disagreeing
        cols["launch_id"].append(launch.launch_id)
        for k in ("peak_running_req", "peak_token_usage", "peak_queue_req", "peak_tokens"):
            cols[k].append(rt.get(k))
        cols["retractions"].append(rt.get("retractions", 0))
        cols["batch_lines"].append(rt.get("batch_lines", 0))
        cols["first_runtime_at"].append(rt.get("first_runtime_at"))
        cols["last_runtime_at"].append(rt.get("last_runtime_at"))
        # keys in a fixed order: the same runtime is the same JSON however it was merged
        cols["runtime"].append(to_json(dict(sorted({**rt, **extra}.items()))))
    if not cols["launch_id"]:
        return _empty(RUNTIME_COLUMNS)
    schema = dict(RUNTIME_COLUMNS, first_runtime_at=_S, last_runtime_at=_S)
    df = _frame(cols, schema).with_columns(_parse_ts("first_runtime_at"), _parse_ts("last_runtime_at"))
    return df.select(list(RUNTIME_COLUMNS))


def args_frame(launches: Iterable[tuple[str, dict | None, tuple[str, str] | None]]) -> pl.DataFrame:
    """One row per (launch, server argument): the value as JSON text, and its origin (release default,
    derived by SGLang, or set) for the launch's release."""
    cols: dict[str, list] = {"launch_id": [], "name": [], "value": [], "origin": []}
    for launch_id, args, version_range in launches:
        if not isinstance(args, dict):
            continue
        for k, v in args.items():
            cols["launch_id"].append(launch_id)
            cols["name"].append(str(k))
            cols["value"].append(to_json(v) if v is not None else "null")
            cols["origin"].append(arg_origin(str(k), v, version_range))
    return pl.DataFrame(cols, schema=ARG_COLUMNS)


def frames(launches: list[Launch], metas: list[LaunchMeta]) -> Frames:
    """Every table's rows for these launches, normalized (each launch's budget computed once)."""
    budgets = [launch_budget(launch) for launch in launches]
    return Frames(
        launches=launches_frame(launches, metas),
        rank_memory=rank_frame(launches, budgets),
        events=events_frame(launches, metas),
        runtime_stats=runtime_frame(launches, metas),
        launch_args=args_frame((x.launch_id, x.server_args, x.version_range) for x in launches),
        launch_budget=budget_frame(budgets),
        rank_budget=rank_budget_frame(budgets),
    )
