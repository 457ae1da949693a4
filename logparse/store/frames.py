"""Normalization of parsed launches into each table's rows, ready for the store.

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
from typing import TYPE_CHECKING, Any

from logparse.budget.model import Budget, launch_budget
from logparse.grammar.events import Event
from logparse.launches.args import origin as arg_origin
from logparse.launches.args import value_text
from logparse.launches.deployment import deployment_key
from logparse.launches.identity import identity
from logparse.launches.model import LAUNCH_FIELDS, RANK_FIELDS, Launch
from logparse.store import columns as C
from logparse.store.meta import JSON_LAUNCH_COLUMNS, LaunchMeta

if TYPE_CHECKING:
    import polars as pl

#: ISO text as the parser writes it: date, 'T', time, optional fraction.
TS_FORMAT = "%Y-%m-%dT%H:%M:%S%.f"

#: Each written table's columns and their kinds (:mod:`logparse.store.columns`), in the table's order.
TABLE_KINDS: dict[str, dict[str, str]] = {
    "launches": C.launch_columns(),
    "rank_memory": C.rank_columns(),
    "events": C.EVENT_COLUMNS,
    "runtime_stats": C.RUNTIME_COLUMNS,
    "launch_args": C.ARG_COLUMNS,
    "launch_budget": C.budget_columns(),
    "rank_budget": C.rank_budget_columns(),
}
#: Columns whose values are ISO text until they are parsed (a time without a date is no timestamp).
TEXT_TIMESTAMPS = {
    "launches": ("started_at", "ready_at"),
    "events": ("ts", "record_ts"),
    "runtime_stats": ("first_runtime_at", "last_runtime_at"),
}


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
        return ((table, getattr(self, table)) for table in TABLE_KINDS)


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


def _coerce(value: Any, kind: str) -> Any:
    """A value of the column's kind, or None (a value of another type is not stored as truth)."""
    if value is None:
        return None
    if kind == "bool":
        return value if isinstance(value, bool) else None
    if kind == "int":
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            return value if -(1 << 63) <= value < (1 << 63) else None
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return None
    if kind == "float":
        if isinstance(value, bool):
            return None
        if isinstance(value, (int, float)):
            try:
                f = float(value)
            except OverflowError:  # an int beyond any double (the parse bounded it before: a safety net)
                return None
            return f if math.isfinite(f) else None
        return None
    if kind in ("str", "json"):  # JSON is text until DuckDB reads it
        return value if isinstance(value, str) else str(value)
    return value


def _coerced(cols: dict[str, list], kinds: dict[str, str]) -> dict[str, list]:
    """Each value checked against its column's kind."""
    return {name: [_coerce(v, kinds[name]) for v in vals] for name, vals in cols.items()}


def _text_kinds(table: str) -> dict[str, str]:
    """The table's kinds, its timestamps read from text being text until they are parsed."""
    text = TEXT_TIMESTAMPS.get(table, ())
    return {k: "str" if k in text else v for k, v in TABLE_KINDS[table].items()}


# ---------------------------------------------------------------------------- rows
#
# Each table's rows as plain columns (name -> values, in the table's order), the values checked
# against their kinds, the timestamps of ``TEXT_TIMESTAMPS`` still ISO text and ``launches.startup_s``
# still None: :func:`to_frame` (polars) and :mod:`logparse.store.rows` (small inputs) finish them.


def launch_rows(launches: list[Launch], metas: list[LaunchMeta]) -> dict[str, list]:
    kinds = TABLE_KINDS["launches"]
    cols: dict[str, list] = {k: [] for k in kinds}
    for launch, meta in zip(launches, metas):
        for k in LAUNCH_FIELDS:
            if k == "ranks":
                continue
            v = getattr(launch, k)
            cols[k].append(to_json(v) if k in JSON_LAUNCH_COLUMNS else v)
        rng = launch.version_range
        labels = dict(meta.labels)
        ident = identity(launch)
        extra = {
            "labels": to_json(labels),
            "source_id": meta.source_id,
            "deployment": deployment_key(launch, labels),
            "identity_content": ident.content,
            "record_started_at": ident.record_started_at,
            "source_ordinal": launch.source_ordinal,
            "version_min": rng[0] if rng else None,
            "version_max": rng[1] if rng else None,
            "sglang_version_given": meta.sglang_version_given,
            "n_ranks": len(launch.ranks),
            "n_events": len(launch.events),
            "n_warnings": len(launch.warnings),
            "ingested_at": meta.ingested_at,
            "updated_at": meta.updated_at,
            "startup_s": None,
            "started_at_text": launch.started_at,
            "ready_at_text": launch.ready_at,
        }
        for k, v in extra.items():
            cols[k].append(v)
    return _coerced(cols, _text_kinds("launches"))


def rank_rows(launches: list[Launch], budgets: list[Budget]) -> dict[str, list]:
    """Rows as printed; ``headroom_gb`` and ``kv_bytes_per_token`` are the rank's budget figures."""
    cols: dict[str, list] = {k: [] for k in TABLE_KINDS["rank_memory"]}
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
    return _coerced(cols, TABLE_KINDS["rank_memory"])


def budget_rows(budgets: list[Budget]) -> dict[str, list]:
    kinds = TABLE_KINDS["launch_budget"]
    cols: dict[str, list] = {k: [] for k in kinds}
    for b in budgets:
        d = b.to_dict()
        for k, kind in kinds.items():
            cols[k].append(to_json(d.get(k)) if kind == "json" else d.get(k))
    return _coerced(cols, kinds)


def rank_budget_rows(budgets: list[Budget]) -> dict[str, list]:
    kinds = TABLE_KINDS["rank_budget"]
    cols: dict[str, list] = {k: [] for k in kinds}
    for b in budgets:
        for idx, rb in enumerate(b.ranks):
            d = rb.to_dict()
            cols["launch_id"].append(b.launch_id)
            cols["rank_idx"].append(idx)
            for k in kinds:
                if k not in ("launch_id", "rank_idx"):
                    cols[k].append(d[k])
    return _coerced(cols, kinds)


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


#: Event attributes stored as they are.
_EVENT_ATTRS = (
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
)


def event_rows(launches: list[Launch], metas: list[LaunchMeta]) -> dict[str, list]:
    """The events as the parse typed them (``ts`` and ``record_ts`` still text)."""
    cols: dict[str, list] = {k: [] for k in TABLE_KINDS["events"]}
    for launch, meta in zip(launches, metas):
        for ev in launch.events:
            src_id, cursor = meta.event_origin.get(id(ev), (meta.source_id, None))
            cols["launch_id"].append(launch.launch_id)
            cols["seq"].append(ev.seq)
            cols["source_id"].append(src_id)
            cols["source"].append(ev.source)
            cols["line_no"].append(ev.line_no)
            cols["ts"].append(ev.ts)
            cols["ts_text"].append(ev.ts)
            for k in _EVENT_ATTRS:
                cols[k].append(getattr(ev, k))
            cols["fields"].append(to_json(ev.fields))
            cols["line_hash"].append(line_hash(ev.ts, ev.text))
            cols["cursor"].append(cursor)
            cols["record_ts"].append(ev.record_ts)
    return cols


def runtime_rows(launches: list[Launch], metas: list[LaunchMeta] | None = None) -> dict[str, list]:
    cols: dict[str, list] = {k: [] for k in TABLE_KINDS["runtime_stats"]}
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
    return _coerced(cols, _text_kinds("runtime_stats"))


#: A launch's arguments as the store keeps them: (launch id, arguments, release range, engine).
ArgsOfLaunch = tuple[str, dict | None, tuple[str, str] | None, str | None]


def arg_rows(launches: Iterable[ArgsOfLaunch]) -> dict[str, list]:
    """One row per (launch, server argument): the value as JSON text, and its origin (release default,
    derived by the engine, or set) for the launch's release."""
    cols: dict[str, list] = {"launch_id": [], "name": [], "value": [], "origin": []}
    for launch_id, args, version_range, engine in launches:
        if not isinstance(args, dict):
            continue
        for k, v in args.items():
            cols["launch_id"].append(launch_id)
            cols["name"].append(str(k))
            cols["value"].append(to_json(v) if v is not None else "null")
            cols["origin"].append(arg_origin(str(k), v, version_range, engine))
    return cols


def table_rows(launches: list[Launch], metas: list[LaunchMeta]) -> dict[str, dict[str, list]]:
    """Every table's rows for these launches (each launch's budget computed once)."""
    budgets = [launch_budget(launch) for launch in launches]
    return {
        "launches": launch_rows(launches, metas),
        "rank_memory": rank_rows(launches, budgets),
        "events": event_rows(launches, metas),
        "runtime_stats": runtime_rows(launches, metas),
        "launch_args": arg_rows((x.launch_id, x.server_args, x.version_range, x.engine) for x in launches),
        "launch_budget": budget_rows(budgets),
        "rank_budget": rank_budget_rows(budgets),
    }


# ---------------------------------------------------------------------------- frames


def to_frame(table: str, cols: dict[str, list]) -> pl.DataFrame:
    """A table's rows (:func:`table_rows`) as a polars frame of exactly the table's columns, the text
    timestamps parsed (a text that is not one is null) and ``launches.startup_s`` computed."""
    import polars as pl

    kinds = TABLE_KINDS[table]
    if not next(iter(cols.values())):
        return pl.DataFrame(schema=C.polars_schema(kinds))
    types = C.polars_schema(_text_kinds(table))
    df = pl.DataFrame([pl.Series(name, cols[name], dtype=types[name], strict=False) for name in kinds])
    text = TEXT_TIMESTAMPS.get(table, ())
    if text:
        df = df.with_columns(pl.col(text).str.to_datetime(TS_FORMAT, strict=False, time_unit="us"))
    if table == "launches":
        startup = (pl.col("ready_at") - pl.col("started_at")).dt.total_milliseconds() / 1000.0
        df = df.with_columns(startup.alias("startup_s"))
    return df


def args_frame(launches: Iterable[ArgsOfLaunch]) -> pl.DataFrame:
    return to_frame("launch_args", arg_rows(launches))


def frames(launches: list[Launch], metas: list[LaunchMeta]) -> Frames:
    """Every table's rows for these launches, normalized, as polars frames."""
    return Frames(**{table: to_frame(table, cols) for table, cols in table_rows(launches, metas).items()})
