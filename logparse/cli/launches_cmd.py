"""``logparse launches``: the stored launches, one line each, oldest first (the table in
:mod:`logparse.cli.store_tables`).
"""

from __future__ import annotations

from typing import Optional

import typer

from logparse.cli.app import EXIT_USAGE, allow_quick_exit, app, fail
from logparse.cli.options import deployment_option, limit_option, undated_note
from logparse.cli.output import TABLE_FORMATS, Output, output_options
from logparse.cli.store_options import db_option, open_store, store_errors
from logparse.cli.store_tables import launch_table


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
