"""Commands on the store as a whole: ``query`` (SQL within a time and a memory limit), ``export``
(Parquet) and ``doctor`` (its health).

The other store commands have a module each (``ingest_cmd``, ``launches_cmd``, ``show_cmd``,
``history_cmd``); what they share is in :mod:`logparse.cli.store_options`.
"""

from __future__ import annotations

from typing import Optional

import typer

from logparse.cli.app import EXIT_OK, EXIT_STORE, EXIT_TIMEOUT, EXIT_TOO_BIG, EXIT_USAGE, app, fail
from logparse.cli.cells import terminal_text
from logparse.cli.output import TABLE_FORMATS, Output, dumps, output_options
from logparse.cli.store_options import db_option, open_store, store_errors
from logparse.store.bounds import DEFAULT_TIMEOUT_S


@app.command()
@output_options(formats=TABLE_FORMATS)
def query(
    sql: str = typer.Argument(
        ...,
        help="One SQL statement (tables: launches, rank_memory, launch_budget, rank_budget, events, runtime_stats, "
        "sources, unrecognized, launch_aliases, launch_sequence, launch_change, journal_cursors; views: launch_summary, history).",
    ),
    write: bool = typer.Option(False, "--write", help="Allow statements that change the store."),
    timeout: float = typer.Option(
        DEFAULT_TIMEOUT_S, "--timeout", metavar="S", help="Stop the query after S seconds (0: no limit); exit 4."
    ),
    memory_limit: Optional[str] = typer.Option(
        None,
        "--memory-limit",
        metavar="SIZE",
        help="Memory the query may use (4GB, 512MiB, 25%% of the RAM; default 25%%); past it (and past a "
        "spill of a quarter of the free disk by the store): exit 5.",
    ),
    db: Optional[str] = db_option(),
    *,
    out: Output,
) -> None:
    """Run SQL against the store (read-only unless --write), within a time and a memory limit."""
    import duckdb

    from logparse.store import QueryLimits, QueryTimeout, QueryTooBig
    from logparse.store.bounds import parse_size

    if timeout < 0:
        raise fail(f"--timeout {timeout:g}: give a number of seconds (0: no limit)", EXIT_USAGE)
    try:
        memory = parse_size(memory_limit) if memory_limit else None
    except ValueError as exc:
        raise fail(f"--memory-limit: {exc}", EXIT_USAGE) from None
    limits = QueryLimits(timeout_s=timeout or None, memory_bytes=memory)
    store = open_store(db)
    with store_errors():
        try:
            rows = store.query(sql, write=write, as_rows=True, limits=limits)
        except QueryTimeout as exc:
            raise fail(str(exc), EXIT_TIMEOUT) from None
        except QueryTooBig as exc:
            raise fail(str(exc), EXIT_TOO_BIG) from None
        except duckdb.Error as exc:
            raise fail(f"SQL error: {str(exc).strip().splitlines()[0]}", EXIT_USAGE) from None
    if rows is None:
        typer.echo("ok", err=True)
        raise typer.Exit(EXIT_OK)
    out.rows(rows.columns, rows.rows)


@app.command()
def export(
    directory: str = typer.Argument(..., metavar="DIR", help="Directory to write (hive-partitioned Parquet)."),
    db: Optional[str] = db_option(),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress bar and no summary line."),
) -> None:
    """Export every table as Parquet, partitioned by host and month (DuckDB and polars read it as is)."""
    from logparse.cli.progress import Bar

    if directory == "-":  # '-' is stdout everywhere else: a tree of files cannot go there
        raise fail("export writes a directory of Parquet files: give a directory, not '-'", EXIT_USAGE)
    store = open_store(db)
    with store_errors(), Bar("export", quiet=quiet, unit="rows", show_bytes=False) as bar:
        try:
            counts = store.export(directory, on_table=lambda _t, n: bar.advance(0, n))
        except ValueError as exc:
            raise fail(str(exc), EXIT_USAGE) from None
    if quiet:
        return
    total = sum(counts.values())
    typer.echo(
        f"exported {counts.get('launches', 0)} launch(es), {total} row(s) in {len(counts)} table(s) to {directory}",
        err=True,
    )


@app.command()
@output_options(formats=("table", "json", "ndjson"), tables=False, pager=False)
def doctor(db: Optional[str] = db_option(), *, out: Output) -> None:
    """Check the store: schema version, every table and index read in full, referential integrity, counts.
    Exit 0 when healthy, 3 otherwise (each problem says which table or index)."""
    store = open_store(db)
    with store_errors():
        rep = store.doctor()
    if out.fmt in ("json", "ndjson"):
        out.write(dumps(rep.to_dict(), indent=2 if out.fmt == "json" else None) + "\n")
    else:
        out.write(_doctor_text(rep))
    if rep.problems:
        raise fail(f"the store has {len(rep.problems)} problem(s)", EXIT_STORE)
    raise typer.Exit(EXIT_OK)


def _doctor_text(rep) -> str:
    lines = [f"store: {terminal_text(str(rep.path))}", f"schema version: {rep.schema_version}"]
    lines += [f"  {t}: {n}" for t, n in rep.counts.items()]
    if rep.problems:
        lines += [f"problem: {terminal_text(p)}" for p in rep.problems]
        lines += [f"note: {terminal_text(note)}" for note in rep.notes]
    else:
        lines.append("healthy")
    return "\n".join(lines) + "\n"
