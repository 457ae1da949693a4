"""``logparse parse``: read logs, print launches."""

from __future__ import annotations

import sys
from typing import Any, Optional

import typer

from logparse import engines
from logparse.cli.app import EXIT_OK, EXIT_USAGE, app, fail, say
from logparse.cli.options import sglang_version_option
from logparse.cli.output import TABLE_FORMATS, Output, dumps, output_options


def journal_options_used(journal: bool, unit, since, until, directory, jfile) -> bool:
    return journal or any(x for x in (unit, since, until, directory, jfile))


def open_requested_sources(
    paths: list[str],
    input_format: str | None,
    journal: bool,
    unit: str | None,
    since: str | None,
    until: str | None,
    directory: str | None,
    jfile: str | None,
    after_cursor: str | None = None,
) -> list:
    """The sources a command was asked to read (files and/or a journal query)."""
    from logparse import sources

    out = []
    if journal_options_used(journal, unit, since, until, directory, jfile):
        out.append(
            sources.journal_source(
                unit=unit, since=since, until=until, directory=directory, file=jfile, after_cursor=after_cursor
            )
        )
    if paths:
        out.extend(sources.open_inputs(paths, input_format=input_format))
    if not out:
        raise sources.InputError("nothing to read: give one or more paths, '-' for stdin, or --journal")
    return out


def stdin_is_piped() -> bool:
    """stdin is a pipe or a redirected file (not a terminal, not closed)."""
    import os
    import stat

    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def launch_document(launch, *, with_events: bool = False) -> dict[str, Any]:
    """A launch as the JSON contract has it, plus its budget (the figures every command shows)."""
    from logparse.budget.model import launch_budget

    d = launch.to_dict(with_events=with_events)
    d["budget"] = launch_budget(launch).to_dict()
    # the launch field holds what vLLM printed; the actual KV tokens of any engine are the budget's
    d["kv_tokens"] = d["budget"]["kv_tokens"]
    return d


def _launch_row(doc: dict[str, Any]) -> dict[str, Any]:
    """A launch's row of ``parse --format csv``: the figures of the ``parse_csv`` surface
    (:mod:`logparse.figures`), a budget figure from the launch's budget."""
    from logparse import figures

    return {f.name: (doc["budget"] if f.of == figures.BUDGET else doc).get(f.name) for f in figures.on("parse_csv")}


@app.command()
@output_options(formats=TABLE_FORMATS, extra_help="json: the whole parse result; ndjson: one launch per line.")
def parse(
    paths: list[str] = typer.Argument(None, help="Log files, directories, .gz/.zst archives, or '-' for stdin."),
    events: bool = typer.Option(False, "--events", help="With --format json/ndjson: include every parsed event."),
    input_format: Optional[str] = typer.Option(None, "--input-format", help="Force the input format (see README)."),
    sglang_version: Optional[str] = sglang_version_option(),
    journal: bool = typer.Option(False, "--journal", help="Read the systemd journal with journalctl."),
    unit: Optional[str] = typer.Option(None, "-u", "--unit", help="journalctl -u UNIT"),
    since: Optional[str] = typer.Option(None, "--since", help="journalctl --since"),
    until: Optional[str] = typer.Option(None, "--until", help="journalctl --until"),
    directory: Optional[str] = typer.Option(None, "-D", "--directory", help="journalctl -D DIR (a central journal)"),
    jfile: Optional[str] = typer.Option(None, "--file", help="journalctl --file F.journal"),
    show_unrecognized: int = typer.Option(10, "--show-unrecognized", help="How many unrecognized lines to list."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress bar."),
    *,
    out: Output,
) -> None:
    """Parse SGLang and vLLM logs into launches: outcome, version range, parallel sizes, per-rank memory, budget."""
    from logparse import sources as src_mod

    if events and out.fmt not in ("json", "ndjson"):
        raise fail("--events lists every parsed event: use it with --format json or ndjson", EXIT_USAGE)
    if not paths and not journal_options_used(journal, unit, since, until, directory, jfile) and stdin_is_piped():
        paths = ["-"]  # piped or redirected input: read it without asking for '-'
    try:
        srcs = open_requested_sources(paths or [], input_format, journal, unit, since, until, directory, jfile)
        result = _parse_with_progress(srcs, sglang_version, quiet)
    except src_mod.InputError as exc:
        raise fail(str(exc), EXIT_USAGE) from None
    _print_result(result, out, events, show_unrecognized)
    if not result.launches:
        lc = result.lines
        raise fail(
            f"no {engines.labels()} launch found ({lc.total} line(s) read: {lc.parsed} parsed, {lc.noise} noise, "
            f"{lc.unrecognized} unrecognized"
            + (f", {lc.other_units} of other units" if lc.other_units else "")
            + ")"
            + _first_warning(result.warnings),
            EXIT_USAGE,
        )
    raise typer.Exit(EXIT_OK)


def _first_warning(warnings: list[str]) -> str:
    """The input's warnings folded into the one line of a parse that found nothing (why it found nothing)."""
    if not warnings:
        return ""
    more = f" (and {len(warnings) - 1} more warning(s))" if len(warnings) > 1 else ""
    return f"; warning: {warnings[0]}{more}"


def _parse_with_progress(srcs: list, sglang_version: str | None, quiet: bool):
    """Parse, with a bar on stderr when it is a terminal (bytes, lines and their rate)."""
    from logparse.cli.progress import SourcesProgress
    from logparse.pipeline import parse_sources

    sizes = [getattr(s, "size", None) for s in srcs]
    total = sum(x for x in sizes if isinstance(x, int)) if all(isinstance(x, int) for x in sizes) else None
    with SourcesProgress("parse", total=total, quiet=quiet) as progress:
        return parse_sources(srcs, sglang_version=sglang_version, on_source=progress.source)


def _print_result(result, out: Output, events: bool, show_unrecognized: int) -> None:
    docs = [launch_document(launch, with_events=events) for launch in result.launches]
    if out.fmt == "table":  # the table shows the input's warnings itself
        from logparse.cli.render import print_parse_result

        budgets = [d["budget"] for d in docs]
        out.render(
            lambda console: print_parse_result(result, budgets, show_unrecognized=show_unrecognized, console=console)
        )
        return
    if out.fmt == "json":
        whole = result.to_dict(with_events=events)
        whole["launches"] = docs
        out.write(dumps(whole, indent=2) + "\n")
    elif out.fmt == "ndjson":
        out.write("".join(dumps(d) + "\n" for d in docs))
    else:  # csv, tsv, parquet
        from logparse.figures import names

        cols = list(names("parse_csv"))
        out.rows(cols, [tuple(_launch_row(d).values()) for d in docs])
    if result.launches:  # every other format says them on stderr, the same way (a cut .gz)
        for w in result.warnings:
            say(f"warning: {w}")
