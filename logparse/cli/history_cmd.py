"""``logparse history``: a metric over the launches of each deployment, with what changed between
them (the table in :mod:`logparse.cli.store_tables`), and its chart with ``--plot``.
"""

from __future__ import annotations

from typing import Optional

import typer

from logparse.cli.app import EXIT_OK, EXIT_USAGE, allow_quick_exit, app, fail
from logparse.cli.options import deployment_option
from logparse.cli.output import TABLE_FORMATS, Output, output_options
from logparse.cli.store_options import db_option, open_store, plot_path, store_errors
from logparse.cli.store_tables import HISTORY_TABLE_COLUMNS, history_table


def print_history(store, metric, deployment, host, model, out: Output, plot, axis: str = "auto") -> None:
    """The history of ``metric`` as ``out`` asks (the table, CSV, JSON), and with ``plot``, its chart."""
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
    print_history(open_store(db), metric, deployment, host, model, out, plot, axis)
    if not plot:
        allow_quick_exit()
    raise typer.Exit(EXIT_OK)
