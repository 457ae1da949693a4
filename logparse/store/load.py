"""Rebuilding full :class:`~logparse.launches.model.Launch` objects from store rows."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from logparse import engines
from logparse.grammar.bounds import bound_fields, out_of_range_warning
from logparse.grammar.events import Event
from logparse.launches.figures import check_launch
from logparse.launches.model import LAUNCH_FIELDS, RANK_FIELDS, Launch, RankMemory
from logparse.store.meta import JSON_LAUNCH_COLUMNS, LaunchMeta


def _rows(con, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    cur = con.execute(sql, list(params))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def _json(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, str):
        try:
            return json.loads(v)
        except ValueError:
            return v
    return v


def _iso(v: Any) -> str | None:
    return v.isoformat(timespec="seconds") if v is not None and hasattr(v, "isoformat") else v


def launch_from_rows(
    row: dict[str, Any],
    ranks: Iterable[dict[str, Any]],
    events: Iterable[dict[str, Any]],
    runtime: dict[str, Any] | None,
) -> tuple[Launch, LaunchMeta]:
    """A Launch equal to the parsed one (events included), and what the store knows beside it."""
    launch = Launch()
    for k in LAUNCH_FIELDS:
        if k != "ranks":
            setattr(launch, k, _launch_value(row, k))
    if row.get("version_min") and row.get("version_max"):
        launch.version_range = (row["version_min"], row["version_max"])
    if launch.outcome is None:
        launch.outcome = "incomplete"
    launch.engine = launch.engine or engines.default().name  # stores before the engine column
    launch.source_ordinal = row.get("source_ordinal")
    launch.ranks.extend(_rank_from_row(r) for r in ranks)
    meta = LaunchMeta(
        source_id=row.get("source_id"),
        labels=_json(row.get("labels")) or {},
        sglang_version_given=row.get("sglang_version_given"),
        ingested_at=row.get("ingested_at"),
        updated_at=row.get("updated_at"),
    )
    for e in events:
        ev = _event_from_row(e)
        launch.events.append(ev)
        meta.event_origin[id(ev)] = (e.get("source_id"), e.get("cursor"))
    launch.runtime = (_json(runtime.get("runtime")) if runtime else None) or {}
    meta.batch_edges = launch.runtime.pop("_batch_span", None)
    meta.disagreeing = launch.runtime.pop("_disagreeing", None) or {}
    _validated(launch)
    return launch, meta


def _validated(launch: Launch) -> None:
    """What was read back, checked as a parse checks it (:mod:`logparse.grammar.bounds`): a store
    an older logparse wrote may hold text (``"inf"``) or figures beyond every bound where the
    budget and the reports compute; each is set aside (None) with a warning, never computed with."""
    if not isinstance(launch.runtime, dict):
        launch.runtime = {}
    for rank in launch.ranks:
        if not isinstance(rank.extra, dict):
            rank.extra = {}
    for k in ("warnings", "version_evidence"):
        if not isinstance(getattr(launch, k), list):
            setattr(launch, k, [])
    check_launch(launch, stored=True)
    for ev in launch.events:
        if _SUSPECT_JSON.search(ev.text) or any(_odd(v) for v in ev.fields.values()):
            notes = bound_fields(ev.fields, ev.text, strings=True)
            if notes:
                launch.warnings.extend(
                    f"stored figure {out_of_range_warning(ev.line_no, path, note)}" for path, note in notes.items()
                )


#: Event lines whose fields an older logparse may have stored out of bounds: a figure with an
#: exponent, inf, nan or many digits.
_SUSPECT_JSON = re.compile(r"[0-9][eE][+-]?[0-9]|\b(?:inf|nan)\b|[0-9]{13}", re.IGNORECASE)


def _odd(v: Any) -> bool:
    return isinstance(v, str) and v.lower().lstrip("+-") in ("inf", "nan", "infinity")


def _launch_value(row: dict[str, Any], k: str) -> Any:
    """One launch field as the parser gave it: times as SGLang printed them, JSON columns decoded."""
    if k in ("started_at", "ready_at"):
        v = row.get(k + "_text")
        if v is None and row.get(k) is not None:
            v = row[k].isoformat()
        return v
    if k in JSON_LAUNCH_COLUMNS:
        v = _json(row.get(k))
        if k in ("warnings", "version_evidence") and v is None:
            v = []
        return v
    return row.get(k)


def _rank_from_row(r: dict[str, Any]) -> RankMemory:
    stored: dict[str, Any] = {k: r.get(k) for k in RANK_FIELDS}
    rm = RankMemory(**stored)
    if rm.worker is None:
        rm.worker = "target"
    rm.extra = _json(r.get("extra")) or {}
    return rm


def _event_from_row(e: dict[str, Any]) -> Event:
    return Event(
        kind=e["kind"],
        fields=_json(e.get("fields")) or {},
        form=e.get("form"),
        variant=e.get("variant"),
        source=e.get("source") or "",
        line_no=e.get("line_no") or 0,
        ts=e.get("ts_text"),
        record_ts=_iso(e.get("record_ts")),
        dp_rank=e.get("dp_rank"),
        pp_rank=e.get("pp_rank"),
        tp_rank=e.get("tp_rank"),
        ep_rank=e.get("ep_rank"),
        attn_cp_rank=e.get("attn_cp_rank"),
        moe_dp_rank=e.get("moe_dp_rank"),
        worker=e.get("worker"),
        tagged=bool(e.get("tagged")),
        text=e.get("text") or "",
        seq=e.get("seq") or 0,
    )


#: Up to this many launches are read with one placeholder per id, more with a list joined to each table.
_FEW = 64


def fetch_launches(con, ids: Sequence[str], *, schema_prefix: str = "") -> dict[str, tuple[Launch, LaunchMeta]]:
    """Launches by id (missing ids are absent from the result).  ``schema_prefix``: e.g. ``other.``."""
    ids = list(dict.fromkeys(ids))
    if not ids:
        return {}
    p = schema_prefix
    params: list[Any]
    if len(ids) <= _FEW:
        # one placeholder per id: DuckDB then filters each table's scan (its key index, its zone maps)
        # instead of joining the whole table to a list, a third less time for the launches a report reads
        these, params = f"launch_id IN ({', '.join('?' * len(ids))})", list(ids)
    else:
        these, params = "launch_id IN (SELECT unnest(?::VARCHAR[]))", [ids]
    rows = _rows(con, f"SELECT * FROM {p}launches WHERE {these}", params)
    ranks: dict[str, list] = {}
    for r in _rows(con, f"SELECT * FROM {p}rank_memory WHERE {these} ORDER BY launch_id, rank_idx", params):
        ranks.setdefault(r["launch_id"], []).append(r)
    events: dict[str, list] = {}
    for e in _rows(con, f"SELECT * EXCLUDE (ts) FROM {p}events WHERE {these} ORDER BY launch_id, seq", params):
        events.setdefault(e["launch_id"], []).append(e)
    runtime = {
        r["launch_id"]: r
        for r in _rows(
            con, f"SELECT launch_id, runtime::VARCHAR AS runtime FROM {p}runtime_stats WHERE {these}", params
        )
    }
    out: dict[str, tuple[Launch, LaunchMeta]] = {}
    for row in rows:
        lid = row["launch_id"]
        if lid in out:
            continue
        out[lid] = launch_from_rows(row, ranks.get(lid, []), events.get(lid, []), runtime.get(lid))
    return out


def read_line_ranges(con, launches: Sequence[Launch]) -> None:
    """Each launch's inputs and its lines there (``launch_sources``), onto ``line_ranges``: the input
    it names (``source_id``, whose range its ``first_line`` / ``last_line`` are) first."""
    ids = sorted({launch.launch_id for launch in launches if launch.launch_id})
    if not ids:
        return
    rows = con.execute(
        "SELECT ls.launch_id, s.path, ls.first_line, ls.last_line, ls.source_id = l.source_id AS named "
        "FROM launch_sources ls JOIN sources s USING (source_id) JOIN launches l USING (launch_id) "
        "WHERE ls.launch_id IN (SELECT unnest(?::VARCHAR[])) AND ls.first_line IS NOT NULL "
        "AND ls.last_line IS NOT NULL ORDER BY ls.launch_id, named DESC, ls.first_line, s.path",
        [ids],
    ).fetchall()
    found: dict[str, list[tuple[str, int, int]]] = {}
    for lid, path, lo, hi, _named in rows:
        found.setdefault(lid, []).append((path, lo, hi))
    for launch in launches:
        launch.line_ranges = found.get(launch.launch_id, [])
