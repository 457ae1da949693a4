"""``logparse parse``: read logs, print launches."""

from __future__ import annotations

import json
import sys
from typing import Optional

import typer

from logparse.cli.app import EXIT_OK, EXIT_USAGE, app, fail


def _journal_options_used(journal: bool, unit, since, until, directory, jfile) -> bool:
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
    if _journal_options_used(journal, unit, since, until, directory, jfile):
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


@app.command()
def parse(
    paths: list[str] = typer.Argument(None, help="Log files, directories, .gz/.zst archives, or '-' for stdin."),
    as_json: bool = typer.Option(False, "--json", help="Print the parse result as one JSON document."),
    ndjson: bool = typer.Option(False, "--ndjson", help="Print one JSON object per launch."),
    events: bool = typer.Option(False, "--events", help="With --json/--ndjson: include every parsed event."),
    input_format: Optional[str] = typer.Option(None, "--input-format", help="Force the input format (see README)."),
    sglang_version: Optional[str] = typer.Option(None, "--sglang-version", help="The SGLang version, if you know it."),
    journal: bool = typer.Option(False, "--journal", help="Read the systemd journal with journalctl."),
    unit: Optional[str] = typer.Option(None, "-u", "--unit", help="journalctl -u UNIT"),
    since: Optional[str] = typer.Option(None, "--since", help="journalctl --since"),
    until: Optional[str] = typer.Option(None, "--until", help="journalctl --until"),
    directory: Optional[str] = typer.Option(
        None, "-D", "--directory", help="journalctl -D DIR (e.g. a central journal)"
    ),
    jfile: Optional[str] = typer.Option(None, "--file", help="journalctl --file F.journal"),
    show_unrecognized: int = typer.Option(10, "--show-unrecognized", help="How many unrecognized lines to list."),
) -> None:
    """Parse SGLang logs into launches: outcome, version range, parallel sizes, per-rank memory."""
    from logparse import sources as src_mod
    from logparse.pipeline import parse_sources

    try:
        srcs = open_requested_sources(paths or [], input_format, journal, unit, since, until, directory, jfile)
        result = parse_sources(srcs, sglang_version=sglang_version)
    except src_mod.InputError as exc:
        raise fail(str(exc), EXIT_USAGE) from None

    if as_json:
        json.dump(result.to_dict(with_events=events), sys.stdout, indent=2, default=str, ensure_ascii=False)
        sys.stdout.write("\n")
    elif ndjson:
        for launch in result.launches:
            sys.stdout.write(json.dumps(launch.to_dict(with_events=events), default=str, ensure_ascii=False) + "\n")
        for w in result.warnings:
            typer.echo(f"warning: {w}", err=True)
    else:
        from logparse.cli.render import print_parse_result

        print_parse_result(result, show_unrecognized=show_unrecognized)

    if not result.launches:
        total = result.lines.total
        raise fail(
            f"no SGLang launch found ({total} line(s) read: {result.lines.parsed} parsed, "
            f"{result.lines.noise} noise, {result.lines.unrecognized} unrecognized)",
            EXIT_USAGE,
        )
    raise typer.Exit(EXIT_OK)
