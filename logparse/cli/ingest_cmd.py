"""``logparse ingest``: logs, the journal, exports and other stores into the history store, a
line per input, the closing summary (and with ``--history`` / ``--summary``, what to read next).
"""

from __future__ import annotations

from typing import Any, Optional

import typer

from logparse import engines
from logparse.cli.app import EXIT_OK, EXIT_USAGE, app, fail, say
from logparse.cli.options import sglang_version_option
from logparse.cli.output import Output, dumps, output_options
from logparse.cli.store_options import db_option, open_store, parse_labels, store_errors


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
        from logparse.store.ingest_types import source_dict

        out.write("".join(dumps(source_dict(s)) + "\n" for s in report.sources))
    if report.sources and len(report.failed) == len(report.sources):
        raise typer.Exit(EXIT_USAGE)  # nothing could be read: each input's line said why
    if not quiet:
        for w in dict.fromkeys(report.warnings):
            say(f"warning: {w}")
    say(report.summary() + f" [{store.path}]")
    if history_metric is not None:
        from logparse.cli.history_cmd import print_history

        print_history(store, history_metric, None, None, None, Output("table", None), None)
    if tour_db is not None:
        _print_tour(store, tour_db or None)
    if report.sources and all(s.status in ("empty", "failed") for s in report.sources) and not journal:
        raise fail(f"no {engines.labels()} launch found in the input(s)", EXIT_USAGE)
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
