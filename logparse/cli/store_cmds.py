"""Store commands: ingest, launches, show, history, query, export, doctor.

The store is ``--db PATH`` when given, else ``$LOGPARSE_DB``, else
``$XDG_DATA_HOME/logparse/history.duckdb`` (``~/.local/share/logparse/history.duckdb``).
Store problems (busy, damaged, too new, missing) exit with code 3; a bad reference,
option or refused query with code 2.
"""

from __future__ import annotations

import json
from typing import Any, Optional

import typer

from logparse.cli.app import (
    EXIT_OK,
    EXIT_STORE,
    EXIT_TIMEOUT,
    EXIT_TOO_BIG,
    EXIT_USAGE,
    allow_quick_exit,
    app,
    fail,
    say,
)
from logparse.cli.cells import for_terminal, terminal_text
from logparse.cli.options import deployment_option, limit_option, sglang_version_option, undated_note
from logparse.cli.output import DOCUMENT_FORMATS, TABLE_FORMATS, Output, dumps, output_options
from logparse.cli.store_options import db_option, open_store, parse_labels, plot_path, store_errors
from logparse.cli.store_tables import HISTORY_TABLE_COLUMNS, history_table, launch_table
from logparse.grammar.bounds import OUT_OF_RANGE
from logparse.store.bounds import DEFAULT_TIMEOUT_S

# ---------------------------------------------------------------------------- ingest


def _show_outcome(quiet: bool):
    def show(outcome) -> None:
        if outcome.status == "failed":  # even with --quiet: an error
            typer.echo(f"logparse: {outcome.message}; not stored", err=True)
            return
        if quiet:
            return
        if outcome.status in ("skipped", "binary"):
            say(f"skipped {outcome.name}: {outcome.message}")
        elif outcome.status == "imported":
            say(
                f"merged {outcome.name}: {outcome.added} added, {outcome.updated} updated, "
                f"{outcome.unchanged} unchanged"
            )
        elif outcome.dropped_lines:
            say(
                f"{outcome.name}: {outcome.dropped_lines} runtime line(s) of a launch that is not in the store "
                "were dropped"
            )

    return show


@app.command()
@output_options(
    formats=("table", "json", "ndjson"),
    tables=False,
    pager=False,
    extra_help="table: a line per input on stderr; json: the report on stdout; ndjson: one line per input.",
)
def ingest(
    paths: list[str] = typer.Argument(
        None, help="Log files, directories, '-' for stdin, export directories or other .duckdb stores to merge."
    ),
    journal: bool = typer.Option(
        False,
        "--journal",
        help="Read the systemd journal with journalctl, from where the last --journal ingest of the same query stopped.",
    ),
    unit: Optional[str] = typer.Option(None, "-u", "--unit", help="journalctl -u UNIT"),
    since: Optional[str] = typer.Option(None, "--since", help="journalctl --since"),
    until: Optional[str] = typer.Option(None, "--until", help="journalctl --until"),
    directory: Optional[str] = typer.Option(None, "-D", "--directory", help="journalctl -D DIR"),
    jfile: Optional[str] = typer.Option(None, "--file", help="journalctl --file F.journal"),
    no_resume: bool = typer.Option(False, "--no-resume", help="With --journal: ignore the stored cursor."),
    host: Optional[str] = typer.Option(None, "--host", help="Host name for inputs that do not say (plain files)."),
    label: Optional[list[str]] = typer.Option(
        None, "--label", help="key=value label on every launch ingested (repeatable); 'deployment' sets the deployment."
    ),
    sglang_version: Optional[str] = sglang_version_option(),
    input_format: Optional[str] = typer.Option(None, "--input-format", help="Force the input format (see README)."),
    db: Optional[str] = db_option(),
    lock_timeout: float = typer.Option(
        30.0,
        "--lock-timeout",
        help="Seconds to wait while another process holds the store (a writer, or a reader: query, report, ...), "
        "then 'store is busy' (exit 3).",
    ),
    history_after: bool = typer.Option(False, "--history", help="Print the history table after ingesting."),
    summary_after: bool = typer.Option(
        False, "--summary", help="After ingesting: the store in a few lines, what needs attention, what to run next."
    ),
    metric: str = typer.Option("kv_tokens", "--metric", help="With --history: the metric to show."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="Only errors and the closing line."),
    *,
    out: Output,
) -> None:
    """Parse logs and add their launches to the history store (idempotent)."""
    from logparse.cli.parse_cmd import journal_options_used

    opts = {"host": host, "labels": parse_labels(label), "sglang_version": sglang_version, "input_format": input_format}
    store = open_store(db, lock_timeout)
    use_journal = journal_options_used(journal, unit, since, until, directory, jfile)
    inputs = _ingest_paths(paths, use_journal)
    _text_only(out, "--history" if history_after else "--summary" if summary_after else None)
    journal_query = _journal_query(unit, since, until, directory, jfile, no_resume) if use_journal else None
    report = _ingest_inputs(store, journal_query, inputs, opts, _show_outcome(quiet))
    history_metric, tour_db = (metric if history_after else None), ((db or "") if summary_after else None)
    _close_ingest(
        store, report, quiet=quiet, journal=use_journal, history_metric=history_metric, out=out, tour_db=tour_db
    )


def _ingest_paths(paths: list[str] | None, use_journal: bool) -> list[str] | None:
    """The paths to ingest: stdin when it is piped and nothing else is named."""
    from logparse.cli.parse_cmd import stdin_is_piped

    if not paths and not use_journal and stdin_is_piped():
        return ["-"]
    if not paths and not use_journal:
        raise fail("nothing to ingest: give one or more paths, '-' for stdin, or --journal", EXIT_USAGE)
    return paths


def _text_only(out: Output, option: str | None) -> None:
    """``--history`` and ``--summary`` print text: refused with a machine-readable format."""
    if option is not None and out.fmt != "table":
        raise fail(f"{option} prints text: it does not go with --format {out.fmt}", EXIT_USAGE)


def _journal_query(unit, since, until, directory, jfile, no_resume: bool) -> dict[str, Any]:
    return {
        "unit": unit,
        "since": since,
        "until": until,
        "directory": directory,
        "file": jfile,
        "resume": not no_resume,
    }


def _close_ingest(
    store, report, *, quiet: bool, journal: bool, history_metric: str | None, out: Output, tour_db: str | None = None
) -> None:
    """The closing lines of an ingest and its exit: 2 only when nothing useful could be read."""
    if out.fmt == "json":
        out.write(dumps({"store": str(store.path), **report.to_dict()}, indent=2) + "\n")
    elif out.fmt == "ndjson":
        from logparse.store.ingest import source_dict

        out.write("".join(dumps(source_dict(s)) + "\n" for s in report.sources))
    if report.sources and len(report.failed) == len(report.sources):
        raise typer.Exit(EXIT_USAGE)  # nothing could be read: each input's line said why
    if not quiet:
        for w in dict.fromkeys(report.warnings):
            say(f"warning: {w}")
    say(report.summary() + f" [{store.path}]")
    if history_metric is not None:
        _print_history(store, history_metric, None, None, None, Output("table", None), None)
    if tour_db is not None:
        _print_tour(store, tour_db or None)
    if report.sources and all(s.status in ("empty", "failed") for s in report.sources) and not journal:
        raise fail("no SGLang or vLLM launch found in the input(s)", EXIT_USAGE)
    raise typer.Exit(EXIT_OK)


def _print_tour(store, db_arg: str | None) -> None:
    """``--summary``: the store in a few lines and three commands to try (the quick start's ending)."""
    from logparse.cli.render_tour import program, tour_lines
    from logparse.reports.tour import store_tour

    with store_errors():
        tour = store_tour(store.path, db_arg)
    typer.echo("\n".join(tour_lines(tour.to_dict(), program())))


def _ingest_inputs(store, journal_query: dict[str, Any] | None, paths: list[str] | None, opts: dict[str, Any], show):
    """Ingest the journal query (if any), then the paths; one report of both."""
    from logparse.store import IngestReport

    report = IngestReport()
    with store_errors():
        if journal_query is not None:
            q = journal_query
            cursor = store.journal_cursor(q["unit"], q["directory"], q["file"]) if q["resume"] else None
            sub = store.ingest_journal(**journal_query, on_outcome=show, **opts)
            report.sources += sub.sources
            report.warnings += sub.warnings
            if cursor and all(o.status == "empty" for o in sub.sources):
                typer.echo("nothing new in the journal since the last cursor", err=True)
        if paths:
            try:
                sub = store.ingest_paths(paths, on_outcome=show, **opts)
            except ValueError as exc:
                raise fail(str(exc), EXIT_USAGE) from None
            report.sources += sub.sources
            report.warnings += sub.warnings
    return report


# ---------------------------------------------------------------------------- launches


@app.command("launches")
@output_options(formats=TABLE_FORMATS)
def launches_cmd(
    host: Optional[str] = typer.Option(None, "--host", help="Only this host."),
    model: Optional[str] = typer.Option(None, "--model", help="Model path contains this text."),
    since: Optional[str] = typer.Option(None, "--since", help="Started at or after (2026-05-01, 7d, today...)."),
    until: Optional[str] = typer.Option(None, "--until", help="Started before."),
    outcome: Optional[str] = typer.Option(None, "--outcome", help="ready, failed or incomplete."),
    deployment: Optional[str] = deployment_option(),
    limit: Optional[int] = limit_option(),
    db: Optional[str] = db_option(),
    *,
    out: Output,
) -> None:
    """List stored launches, one line each, oldest first (figures from each launch's budget)."""
    if outcome and outcome not in ("ready", "failed", "incomplete"):
        raise fail(f"--outcome {outcome!r}: expected ready, failed or incomplete", EXIT_USAGE)
    store = open_store(db)
    with store_errors():
        try:
            rows = store.launches(
                host=host,
                model=model,
                since=since,
                until=until,
                outcome=outcome,
                deployment=deployment,
                limit=limit,
                as_rows=True,
            )
        except ValueError as exc:
            raise fail(str(exc), EXIT_USAGE) from None
        undated_note(store, since, until, host=host, model=model, outcome=outcome, deployment=deployment)
    out.rows(rows.columns, rows.rows, render_table=launch_table)
    allow_quick_exit()


# ---------------------------------------------------------------------------- show

_TIMELINE_SKIP = frozenset({"decode_batch", "prefill_batch"})


def _event_summary(ev) -> str:
    f = ev.fields or {}
    if ev.kind == "server_args":
        return f"server_args ({len(f.get('payload', ''))} chars)"
    parts = []
    aside = f.get(OUT_OF_RANGE) or {}
    for k, v in f.items():
        if k in ("payload", OUT_OF_RANGE):
            continue
        if isinstance(v, (dict, list)):
            v = json.dumps(v)[:60]
        elif v is None and k in aside:
            v = f"out of range ({str(aside[k]).split(' ', 1)[0]})"  # the raw text: see the warnings
        parts.append(f"{k}={v}")
    return ", ".join(parts)[:150]


@app.command()
@output_options(formats=DOCUMENT_FORMATS, extra_help="csv: one row per rank of the budget.")
def show(
    launch_ref: str = typer.Argument(
        ...,
        metavar="LAUNCH",
        help="launch id prefix, @latest, @-N (@-1 the newest), HOST@latest, or a log file (FILE#N, FILE#-1).",
    ),
    events: str = typer.Option("startup", "--events", help="Timeline: startup (default), all, or none."),
    db: Optional[str] = db_option(),
    *,
    out: Output,
) -> None:
    """Everything known about one launch: per-rank memory and budget, timeline, warnings, runtime KV pressure."""
    from logparse.cli.parse_cmd import launch_document
    from logparse.store.refs import ref_notes, resolve_launch

    if events not in ("startup", "all", "none"):
        raise fail("--events: expected startup, all or none", EXIT_USAGE)
    for note in ref_notes([launch_ref]):
        say(note)
    with store_errors():
        launch = resolve_launch(launch_ref, db)
    doc = launch_document(launch, with_events=events != "none")
    doc.update(_config_check(launch))

    def render(doc: dict[str, Any], console) -> None:
        _render_show(launch, doc, events, console)

    out.document(doc, lambda: [dict(r) for r in doc["budget"]["ranks"]], render)
    allow_quick_exit()
    raise typer.Exit(EXIT_OK)


def _config_check(launch) -> dict[str, Any]:
    """``config_check``: the launch's known model config against its pool, as ``explain`` has it."""
    from logparse.budget.config_check import check_launch, config_of

    cfg = config_of(launch)
    if cfg is None:
        return {}
    from logparse.budget.model import launch_budget

    return {"config_check": check_launch(cfg, launch, launch_budget(launch)).to_dict()}


def _render_show(launch, doc: dict[str, Any], events: str, console) -> None:
    from logparse.cli.render import print_launch, terminal_launch
    from logparse.cli.render_reports import render_config_check

    launch = terminal_launch(launch)
    print_launch(console, launch, doc["budget"])
    render_config_check(doc, console)
    if launch.server_args:
        console.print(
            f"  server_args: {len(launch.server_args)} argument(s) ({launch.server_args_form} form)", style="dim"
        )
    _render_runtime(launch.runtime or {}, console)
    if events != "none" and launch.events:
        _render_timeline(launch, events, console)


def _render_runtime(rt: dict[str, Any], console) -> None:
    from rich.table import Table
    from rich.text import Text

    from logparse.cli.cells import cell
    from logparse.cli.render import print_rich_table

    if not (rt.get("batch_lines") or rt.get("retractions")):
        return
    kv = Table(title="runtime KV pressure", title_justify="left", show_edge=False, pad_edge=False)
    for c in (
        "batch lines",
        "peak #running-req",
        "peak token usage",
        "peak #token",
        "peak #queue-req",
        "retractions",
        "first",
        "last",
    ):
        kv.add_column(c, justify="right" if c not in ("first", "last") else "left")
    usage = rt.get("peak_token_usage")
    kv.add_row(
        str(rt.get("batch_lines", 0)),
        cell(rt.get("peak_running_req")),
        f"{usage:.0%}" if isinstance(usage, (int, float)) else "—",
        cell(rt.get("peak_tokens")),
        cell(rt.get("peak_queue_req")),
        str(rt.get("retractions", 0)),
        str(rt.get("first_runtime_at") or "—"),
        str(rt.get("last_runtime_at") or "—"),
    )
    print_rich_table(console, kv)
    if rt.get("retractions"):
        console.print(
            Text(f"  the KV cache pool filled up {rt['retractions']} time(s): requests were retracted", style="yellow")
        )


def _render_timeline(launch, events: str, console) -> None:
    from rich.table import Table

    from logparse.cli.render import print_rich_table, rank_label

    tl = Table(title="events", title_justify="left", show_edge=False, pad_edge=False)
    for c in ("line", "time", "rank", "worker", "event", "details"):
        tl.add_column(c, overflow="fold")
    skipped = 0
    for ev in launch.events:
        if events == "startup" and ev.kind in _TIMELINE_SKIP:
            skipped += 1
            continue
        rank = rank_label(ev) if ev.tagged or ev.tp_rank is not None else ""
        cells = (
            str(ev.line_no),
            (ev.ts or "").replace("T", " "),
            rank,
            ev.worker or "",
            ev.kind + (f" ({ev.form})" if ev.form else ""),
            _event_summary(ev),
        )
        tl.add_row(*for_terminal(cells))
    print_rich_table(console, tl)
    if skipped:
        console.print(f"  … and {skipped} runtime batch line(s) (--events all to list them)", style="dim")


# ---------------------------------------------------------------------------- history


def _print_history(store, metric, deployment, host, model, out: Output, plot, axis: str = "auto") -> None:
    from logparse.store import resolve_metric

    # the table shows a few of the columns: only those are read (thousands of rows become Python values)
    columns = HISTORY_TABLE_COLUMNS if out.fmt == "table" and not plot else None
    with store_errors():
        try:
            rows = store.history(
                metric=metric, deployment=deployment, host=host, model=model, as_rows=True, columns=columns
            )
        except ValueError as exc:
            raise fail(str(exc), EXIT_USAGE) from None
    m = resolve_metric(metric)
    if plot:
        _plot_history(rows, m, plot, axis)
    if out.fmt == "table" and not rows.rows:
        typer.echo("no launches in the store match", err=True)
        return
    out.rows(rows.columns, rows.rows, render_table=lambda c, r, console: history_table(c, r, m, console))


def _plot_history(rows, metric: str, plot: str, axis: str) -> None:
    from logparse.cli.charts import PlotUnavailable, plot_history

    try:
        chart = plot_history([dict(zip(rows.columns, r)) for r in rows.rows], metric, plot, axis=axis)
    except ValueError as exc:
        raise fail(str(exc), EXIT_USAGE) from None
    except PlotUnavailable as exc:
        raise fail(f"--plot {plot}: {exc}", EXIT_USAGE) from None
    except OSError as exc:
        raise fail(f"--plot {plot}: {exc.strerror or exc}", EXIT_USAGE) from None
    from logparse.reports.charts import left_out

    shown = len(chart.series)
    what = f"{shown} deployment(s)" if shown == chart.deployments else left_out(shown, chart.deployments).strip(" ()")
    typer.echo(f"wrote {plot} ({what}, {chart.launches} launch(es))", err=True)


@app.command()
@output_options(formats=TABLE_FORMATS)
def history(
    metric: str = typer.Option(
        "kv_tokens", "--metric", help="kv_tokens, headroom_gb, weights_gb, kv_pool_gb, predicted_kv_tokens, ..."
    ),
    deployment: Optional[str] = deployment_option(),
    host: Optional[str] = typer.Option(None, "--host", help="Only this host."),
    model: Optional[str] = typer.Option(None, "--model", help="Model path contains this text."),
    plot: Optional[str] = typer.Option(None, "--plot", metavar="FILE.png|.svg|.pdf", help="Also draw the metric."),
    axis: str = typer.Option(
        "auto",
        "--axis",
        metavar="auto|time|launch",
        help="x axis of --plot: time (dated; launches need start times), launch (launch order), "
        "auto (time where every launch has a start time).",
    ),
    db: Optional[str] = db_option(),
    *,
    out: Output,
) -> None:
    """A metric over the launches of each deployment, with version (SGLang or vLLM) and argument changes marked."""
    if axis not in ("auto", "time", "launch"):
        raise fail(f"--axis {axis}: use auto, time or launch", EXIT_USAGE)
    plot = plot_path(plot)  # before any work: a file kind that cannot be written is exit 2 at once
    _print_history(open_store(db), metric, deployment, host, model, out, plot, axis)
    if not plot:
        allow_quick_exit()
    raise typer.Exit(EXIT_OK)


# ---------------------------------------------------------------------------- query, export, doctor


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
