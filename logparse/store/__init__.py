"""The history store: launches kept in an embedded DuckDB file.

Python API::

    from logparse import Store
    store = Store()                       # --db / $LOGPARSE_DB / ~/.local/share/logparse/history.duckdb
    store.ingest_paths(["samples/"], labels={"team": "infra"})
    store.launches(host="gpu-1", outcome="ready")        # polars DataFrame
    store.history(metric="kv_tokens")                    # polars DataFrame
    store.query("SELECT count(*) FROM launches")         # polars DataFrame (read-only)
    store.load_launch("@latest")                         # logparse.launches.model.Launch, events included
    store.close()

Every method opens the database for as long as it needs it and closes it again, so
several processes can share a store (DuckDB admits one writer at a time; others wait up
to ``lock_timeout`` seconds).  See ``logparse.store.schema`` for the tables and views.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from logparse import figures
from logparse.store.bounds import QueryBoundError, QueryLimits, QueryTimeout, QueryTooBig, bounded
from logparse.store.db import (
    DEFAULT_LOCK_TIMEOUT,
    StoreBusy,
    StoreCorrupt,
    StoreError,
    StoreMissing,
    StoreTooNew,
    connection,
    default_db_path,
    resolve_db_path,
)
from logparse.store.doctor import DoctorReport
from logparse.store.querysafe import QueryRefused, check_read_only, check_write

if TYPE_CHECKING:  # the ingest machinery (parser, lark, polars) is imported only when ingesting
    from logparse.store.ingest_types import IngestOptions, IngestReport, SourceOutcome
from logparse.store.schema import HISTORY_METRICS, SCHEMA_VERSION

__all__ = [
    "HISTORY_METRICS",
    "METRIC_ALIASES",
    "SCHEMA_VERSION",
    "IngestReport",
    "QueryBoundError",
    "QueryLimits",
    "QueryRefused",
    "QueryTimeout",
    "QueryTooBig",
    "SourceOutcome",
    "Store",
    "StoreBusy",
    "StoreCorrupt",
    "StoreError",
    "StoreMissing",
    "StoreTooNew",
    "default_db_path",
    "parse_when",
    "resolve_db_path",
]

#: Columns of ``logparse launches`` (from the ``launch_summary`` view): the ``launches`` surface of
#: :mod:`logparse.figures`.
LIST_COLUMNS = figures.names("launches")

METRIC_ALIASES = {
    "avail_before_load": "avail_before_load_gb",
    "weights": "weights_gb",
    "avail_after_load": "avail_after_load_gb",
    "kv_size": "kv_size_gb",
    "avail_after_pool": "avail_after_pool_gb",
    "graph": "graph_gb",
    "avail_after_graph": "avail_after_graph_gb",
    "headroom": "headroom_gb",
    "min_headroom": "min_headroom_gb",
    "available_mem": "available_mem_gb",
    "tokens": "kv_tokens",
    "max_running_requests": "max_running_requests_effective",
}


@dataclass
class Rows:
    """Query rows without polars: the columns and the tuples (``height``/``iter_rows`` as polars)."""

    columns: list[str]
    rows: list[tuple]

    @property
    def height(self) -> int:
        return len(self.rows)

    def iter_rows(self, named: bool = False):
        if not named:
            yield from self.rows
            return
        cols = self.columns
        for r in self.rows:
            yield dict(zip(cols, r))


#: The columns of :meth:`Store.history`; ``metric`` stands for the metric, ``metric_change`` for its change.
HISTORY_COLUMNS = (
    "deployment",
    "launch_no",
    "launch_id",
    "host",
    "model_path",
    "started_at",
    "outcome",
    "version",
    "metric",
    "metric_change",
    "version_changed",
    "version_change",
    "args_changed",
    "changed_args",
    "changed_arg_names",
    "arg_changes",
    "defaults_moved",
    "derived_changes",
    "fields_added",
    "fields_removed",
    "release_fields_change",
    "prev_launch_id",
    "engine",
    "kv_tokens_definition_change",
    "time_zone",
)


def parse_when(text: str, *, now: datetime | None = None) -> datetime:
    """``2026-05-18``, ``2026-05-18T10:00``, ``today``, ``yesterday``, ``7d``/``-7d``/``12h``/``30m``/``2w`` ago."""
    now = now or datetime.now()
    t = text.strip().lower()
    if t in ("now",):
        return now
    if t == "today":
        return now.replace(hour=0, minute=0, second=0, microsecond=0)
    if t == "yesterday":
        return now.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=1)
    m = re.fullmatch(r"-?(\d+)\s*(s|m|min|h|d|w)(?:\s+ago)?", t)
    if m:
        n, unit = int(m.group(1)), m.group(2)
        delta = {
            "s": timedelta(seconds=n),
            "m": timedelta(minutes=n),
            "min": timedelta(minutes=n),
            "h": timedelta(hours=n),
            "d": timedelta(days=n),
            "w": timedelta(weeks=n),
        }[unit]
        return now - delta
    try:
        return datetime.fromisoformat(text.strip().replace(" ", "T", 1) if " " in text.strip() else text.strip())
    except ValueError:
        raise ValueError(
            f"cannot read the time {text!r}: give an ISO date (2026-05-18), a date and time, 'today', "
            "'yesterday', or an age such as 7d, 12h, 2w"
        ) from None


def deployment_match(text: str) -> tuple[str, list[str]]:
    """The one rule by which ``--deployment TEXT`` picks deployments in every command, as a SQL
    condition on a ``deployment`` column and its parameters: the deployment named ``TEXT`` when
    there is one, else every deployment whose name contains ``TEXT`` (case ignored; ``%`` and ``_``
    are plain characters).  ``--deployment prod`` then means the deployment ``prod`` and not also
    ``prod-canary``, while ``--deployment Kimi`` finds ``sglang|gpu-1|/models/Kimi-K2|tp=8|...``."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    sql = (
        "(deployment = ? OR (NOT EXISTS (SELECT 1 FROM launches d WHERE d.deployment = ?) "
        "AND deployment ILIKE ? ESCAPE '\\'))"
    )
    return sql, [text, text, f"%{escaped}%"]


def _launch_filters(
    host: str | None, model: str | None, outcome: str | None, deployment: str | None
) -> tuple[list[str], list[Any]]:
    """The conditions (and parameters) of the launch filters that are not times."""
    where: list[str] = []
    params: list[Any] = []
    if host:
        where.append("host = ?")
        params.append(host)
    if model:
        where.append("model_path ILIKE ?")
        params.append(f"%{model}%")
    if outcome:
        where.append("outcome = ?")
        params.append(outcome)
    if deployment:
        sql, args = deployment_match(deployment)
        where.append(sql)
        params += args
    return where, params


def resolve_metric(name: str) -> str:
    m = name.strip()
    m = METRIC_ALIASES.get(m, m)
    if m not in HISTORY_METRICS and m + "_gb" in HISTORY_METRICS:
        m = m + "_gb"
    if m not in HISTORY_METRICS:
        raise ValueError(f"unknown metric {name!r}; known: {', '.join(HISTORY_METRICS)}")
    return m


class Store:
    """A history store (a DuckDB file).  See the module documentation."""

    def __init__(self, path: str | os.PathLike | None = None, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT):
        self.path = resolve_db_path(path)
        self.lock_timeout = lock_timeout

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r})"

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Nothing stays open between calls; kept for symmetry and ``with`` blocks."""

    # ------------------------------------------------------------------ connections
    def connect(
        self, *, write: bool = False, create: bool = False, safe_read: bool = False, settings: dict | None = None
    ):
        """A context manager giving a DuckDB connection (read-only unless ``write``)."""
        return connection(
            self.path,
            write=write,
            lock_timeout=self.lock_timeout,
            create=create or write,
            safe_read=safe_read,
            settings=settings,
        )

    def _df(self, sql: str, params: Sequence[Any] = ()):
        with self.connect() as con:
            return con.sql(sql, params=list(params)).pl()

    # ------------------------------------------------------------------ ingest
    def _opts(self, **kw) -> IngestOptions:
        from logparse.store.ingest_types import IngestOptions

        labels = kw.pop("labels", None) or {}
        lock_timeout = kw.pop("lock_timeout", None)
        return IngestOptions(
            lock_timeout=self.lock_timeout if lock_timeout is None else lock_timeout, labels=dict(labels), **kw
        )

    def ingest_sources(
        self, sources: Iterable, *, journal_scope: str | None = None, on_outcome=None, **opts
    ) -> IngestReport:
        """Ingest :class:`logparse.sources.Source` objects (one transaction each)."""
        from logparse.store.ingest import ingest_sources

        return ingest_sources(
            self.path, sources, self._opts(**opts), journal_scope_key=journal_scope, on_outcome=on_outcome
        )

    def ingest_paths(self, paths: Sequence[str | os.PathLike] | str, *, on_outcome=None, **opts) -> IngestReport:
        """Ingest files, directories, ``-``, export directories and other ``.duckdb`` stores.

        Options: ``host``, ``labels`` (dict), ``sglang_version``, ``input_format``, ``progress``.
        A path or file that cannot be read is not stored and the others are: its outcome's status is
        ``failed``, with why (``IngestReport.failed``).
        """
        from logparse.sources import open_inputs
        from logparse.store import exchange
        from logparse.store.ingest import ingest_sources
        from logparse.store.ingest_types import IngestReport

        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        o = self._opts(**opts)
        report = IngestReport()
        plain: list[str] = []

        def flush() -> None:
            if plain:
                sub = ingest_sources(
                    self.path,
                    open_inputs(list(plain), input_format=o.input_format, each=True),
                    o,
                    on_outcome=on_outcome,
                )
                report.sources.extend(sub.sources)
                report.warnings.extend(sub.warnings)
                plain.clear()

        for p in paths:
            path = Path(p)
            if str(p) != "-" and (exchange.is_export_dir(path) or exchange.is_duckdb_file(path)):
                flush()
                out = exchange.import_store(self.path, path, o)
                report.sources.append(out)
                if on_outcome is not None:
                    on_outcome(out)
            else:
                plain.append(str(p))
        flush()
        return report

    def ingest_text(self, text: str | bytes, name: str = "<text>", **opts) -> IngestReport:
        from logparse.sources import text_source

        return self.ingest_sources([text_source(name, text)], **opts)

    def journal_cursor(
        self, unit: str | None = None, directory: str | None = None, file: str | None = None, host: str | None = None
    ) -> str | None:
        from logparse.store.journal_cursors import journal_scope, stored_cursor

        try:
            with self.connect() as con:
                return stored_cursor(con, journal_scope(unit, directory, file), host)
        except StoreMissing:
            return None

    def ingest_journal(
        self,
        unit: str | None = None,
        since: str | None = None,
        until: str | None = None,
        directory: str | None = None,
        file: str | None = None,
        *,
        resume: bool = True,
        source_factory=None,
        on_outcome=None,
        **opts,
    ) -> IngestReport:
        """Read the journal with journalctl (from the stored cursor on) and ingest it."""
        from logparse.sources import InputError, journal_source
        from logparse.store.journal_cursors import journal_scope

        source_factory = source_factory or journal_source
        # the cursor of the same query (unit, directory, file), whatever host the entries name

        after = self.journal_cursor(unit, directory, file) if resume else None
        scope = journal_scope(unit, directory, file)
        src = source_factory(unit=unit, since=since, until=until, directory=directory, file=file, after_cursor=after)
        try:
            return self.ingest_sources([src], journal_scope=scope, on_outcome=on_outcome, **opts)
        except InputError as exc:
            if after is None or "cursor" not in str(exc).lower():
                raise
        # The stored cursor is gone (journal rotated or vacuumed): read the query again from its
        # start; what is already stored is recognised line by line and not counted twice.
        src = source_factory(unit=unit, since=since, until=until, directory=directory, file=file, after_cursor=None)
        report = self.ingest_sources([src], journal_scope=scope, on_outcome=on_outcome, **opts)
        report.warnings.insert(
            0,
            "the stored journal cursor is no longer in the journal (rotated or vacuumed?): "
            "read the query from its start instead",
        )
        return report

    # ------------------------------------------------------------------ reading
    def launches(
        self,
        *,
        host: str | None = None,
        model: str | None = None,
        since: str | datetime | None = None,
        until: str | datetime | None = None,
        outcome: str | None = None,
        deployment: str | None = None,
        limit: int | None = None,
        columns: Sequence[str] | None = LIST_COLUMNS,
        as_rows: bool = False,
    ):
        """One row per launch (from ``launch_summary``), oldest first; ``limit`` keeps the newest N
        (0: none).  ``since`` and ``until`` compare start times: a launch without one is left out
        (:meth:`undated` counts them).  ``deployment``: :func:`deployment_match`.

        A polars DataFrame, or with ``as_rows`` a light :class:`Rows` (same columns)."""
        if limit is not None and limit < 0:
            raise ValueError(f"limit {limit}: give a number of launches, 0 or more")
        where, params = _launch_filters(host, model, outcome, deployment)
        for op, when in ((">=", since), ("<", until)):
            if when:
                where.append(f"started_at {op} ?")
                params.append(parse_when(when) if isinstance(when, str) else when)
        cols = ", ".join(columns) if columns else "*"
        inner = "SELECT * FROM launch_summary"
        if where:
            inner += " WHERE " + " AND ".join(where)
        if limit is not None:
            inner += f" ORDER BY started_at DESC NULLS LAST, ingested_at DESC, launch_id DESC LIMIT {int(limit)}"
        sql = f"SELECT {cols} FROM ({inner}) ORDER BY started_at NULLS FIRST, ingested_at, launch_id"
        if as_rows:
            return self._rows(sql, params)
        return self._df(sql, params)

    def undated(
        self,
        *,
        host: str | None = None,
        model: str | None = None,
        outcome: str | None = None,
        deployment: str | None = None,
    ) -> int:
        """How many launches the other filters keep that have no start time: what ``since`` and
        ``until`` leave out, as no time says whether they fall in the window."""
        where, params = _launch_filters(host, model, outcome, deployment)
        where.append("started_at IS NULL")
        rows = self._rows("SELECT count(*) FROM launch_summary WHERE " + " AND ".join(where), params)
        return int(rows.rows[0][0])

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        """Plain rows, without polars or pyarrow (the CLI's table output starts faster)."""
        with self.connect() as con:
            cur = con.execute(sql, list(params))
            cols = [d[0] for d in cur.description]
            return Rows(cols, cur.fetchall())

    def history(
        self,
        metric: str = "kv_tokens",
        deployment: str | None = None,
        *,
        host: str | None = None,
        model: str | None = None,
        as_rows: bool = False,
        columns: Sequence[str] | None = None,
    ):
        """The metric over the launches of each deployment, with its change and what changed in between.

        A polars DataFrame, or with ``as_rows`` a light :class:`Rows` (same columns); ``columns``:
        only these of them (``metric`` and ``metric_change`` name the metric's columns)."""
        m = resolve_metric(metric)
        where, params = [], []
        if deployment:
            sql, args = deployment_match(deployment)
            where.append(sql)
            params += args
        if host:
            where.append("host = ?")
            params.append(host)
        if model:
            where.append("model_path ILIKE ?")
            params.append(f"%{model}%")
        unknown = [c for c in columns or () if c not in HISTORY_COLUMNS]
        if unknown:
            raise ValueError(f"not a history column: {', '.join(unknown)}; known: {', '.join(HISTORY_COLUMNS)}")
        named = {"metric": m, "metric_change": f"{m}_change"}
        cols = [named.get(c, c) for c in columns or HISTORY_COLUMNS]
        sql = f"SELECT {', '.join(cols)} FROM history"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY deployment, launch_no"
        return self._rows(sql, params) if as_rows else self._df(sql, params)

    def query(self, sql: str, *, write: bool = False, as_rows: bool = False, limits: QueryLimits | None = None):
        """Run SQL on the store, which must exist; read-only unless ``write`` (see :mod:`logparse.store.querysafe`), within ``limits``
        (time, memory and spill: :mod:`logparse.store.bounds`; default 60 s and a quarter of the RAM).

        A polars DataFrame, or with ``as_rows`` plain :class:`Rows` (any DuckDB type, as Python values).
        Raises :class:`QueryTimeout` or :class:`QueryTooBig` past a bound."""

        def result(con, query: str, bound):
            if not as_rows:
                import polars as pl

                rel = con.sql(query)
                return None if rel is None else pl.from_arrow(bound.arrow(rel))
            cur = con.execute(query)
            if cur.description is None:
                return None
            return Rows([d[0] for d in cur.description], bound.rows(cur))

        limits = limits or QueryLimits()
        settings = limits.settings(self.path)
        if not write:
            check_read_only(sql)
            with self.connect(safe_read=True, settings=settings) as con, bounded(con, limits, self.path) as bound:
                return result(con, sql, bound)
        import duckdb

        check_write(sql)
        stmts = duckdb.extract_statements(sql)
        # no file, extension or network from SQL, and no setting changed after these (querysafe)
        settings = {**settings, "enable_external_access": "false", "lock_configuration": "true"}
        # a query changes a store that exists: it never creates one (nor its folder) from a mistyped --db
        write_con = connection(self.path, write=True, lock_timeout=self.lock_timeout, settings=settings)
        with write_con as con, bounded(con, limits, self.path) as bound:
            for st in stmts[:-1]:
                con.execute(st.query)
            return result(con, stmts[-1].query, bound) if stmts else None

    def load_launch(self, ref: str):
        """A full Launch (ranks, server_args, runtime, warnings, events) by reference; see :mod:`logparse.store.refs`."""
        from logparse.store.refs import resolve_launch

        return resolve_launch(ref, db=str(self.path), lock_timeout=self.lock_timeout)

    def launch_ids(self) -> list[str]:
        with self.connect() as con:
            return [r[0] for r in con.execute("SELECT launch_id FROM launches ORDER BY launch_id").fetchall()]

    # ------------------------------------------------------------------ export, doctor
    def export(
        self, directory: str | os.PathLike, on_table: Callable[[str, int], None] | None = None
    ) -> dict[str, int]:
        from logparse.store.exchange import export

        with self.connect() as con:
            return export(con, Path(directory), on_table=on_table)

    def doctor(self) -> DoctorReport:
        """The schema, every table and index read in full, the counts and the consistency checks
        (:func:`logparse.store.doctor.examine`); each problem says what is wrong."""
        from logparse.store.doctor import examine

        return examine(self.path, self.connect)


def __getattr__(name: str) -> Any:
    """``IngestReport`` and friends, imported on first use (keeps read-only commands light)."""
    if name in ("IngestOptions", "IngestReport", "SourceOutcome"):
        from logparse.store import ingest_types

        return getattr(ingest_types, name)
    raise AttributeError(f"module 'logparse.store' has no attribute {name!r}")
