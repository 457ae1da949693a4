"""``logparse explain``, ``logparse diff``, ``logparse check``: the regression tracker.

LAUNCH is a log file (its last launch), ``FILE#N`` (its N-th launch), or a store reference
(launch_id prefix, ``@latest``, ``@-1``, ``HOST@latest``) when the store is available.
"""

from __future__ import annotations

import json
import sys
from typing import Optional

import typer

from logparse.cli.app import EXIT_OK, EXIT_PROBLEM, EXIT_STORE, EXIT_USAGE, app, fail

_DB_HELP = "The DuckDB store (for store references and history); default: $LOGPARSE_DB."


def _format(as_json: bool, fmt: str | None) -> str:
    f = (fmt or ("json" if as_json else "table")).lower()
    if f not in ("table", "json"):
        raise fail(f"--format must be table or json, not {fmt!r}", EXIT_USAGE)
    return f


def _resolve(ref: str, db: str | None):
    from logparse.store.resolve import RefError, StoreUnavailable, resolve

    try:
        return resolve(ref, db)
    except StoreUnavailable as exc:
        raise fail(str(exc), EXIT_USAGE)
    except RefError as exc:
        raise fail(str(exc), EXIT_USAGE)
    except Exception as exc:  # the store's own errors
        if type(exc).__module__.startswith("logparse.store") or "duckdb" in type(exc).__module__:
            raise fail(f"store error: {exc}", EXIT_STORE)
        raise


def _dump(obj) -> None:
    json.dump(obj, sys.stdout, indent=2, default=str, ensure_ascii=False)
    sys.stdout.write("\n")


def _plot_path(plot: str | None) -> str | None:
    if plot and not plot.lower().endswith((".png", ".svg", ".pdf")):
        raise fail(f"--plot {plot}: the file must end in .png, .svg or .pdf", EXIT_USAGE)
    return plot


@app.command()
def explain(
    launch: str = typer.Argument(
        ..., metavar="LAUNCH|FILE", help="A log file (its last launch), FILE#N, or a store reference."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON (same as --format json)."),
    fmt: Optional[str] = typer.Option(None, "--format", help="table (default) or json."),
    plot: Optional[str] = typer.Option(
        None, "--plot", metavar="FILE.png|.svg", help="Write a waterfall chart of the budget."
    ),
    margin: float = typer.Option(
        2.0, "--margin", metavar="GB", help="Headroom the mem_fraction_static what-if aims for (GiB)."
    ),
    db: Optional[str] = typer.Option(None, "--db", envvar="LOGPARSE_DB", help=_DB_HELP),
) -> None:
    """Explain a launch's memory budget: why the KV pool has its size, where the rest went, and what-ifs."""
    fmt_ = _format(as_json, fmt)
    plot = _plot_path(plot)
    if margin < 0:
        raise fail("--margin must be ≥ 0", EXIT_USAGE)
    la = _resolve(launch, db)
    from logparse.reports.explain import explain_launch, render_explain

    rep = explain_launch(la, margin_gb=margin)
    from logparse.cli.plots import plot_explain

    _emit(rep, fmt_, plot, plot_explain, render_explain)


@app.command()
def diff(
    a: str = typer.Argument(..., metavar="A", help="The earlier launch (file, FILE#N or store reference)."),
    b: str = typer.Argument(..., metavar="B", help="The later launch."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON (same as --format json)."),
    fmt: Optional[str] = typer.Option(None, "--format", help="table (default) or json."),
    plot: Optional[str] = typer.Option(None, "--plot", metavar="FILE.png|.svg", help="Write side-by-side bars."),
    db: Optional[str] = typer.Option(None, "--db", envvar="LOGPARSE_DB", help=_DB_HELP),
) -> None:
    """Compare two launches: arguments, version, per-rank budget, runtime, durations, and why KV tokens moved."""
    fmt_ = _format(as_json, fmt)
    plot = _plot_path(plot)
    la, lb = _resolve(a, db), _resolve(b, db)
    from logparse.reports.diff import diff_launches, render_diff

    rep = diff_launches(la, lb)
    from logparse.cli.plots import plot_diff

    _emit(rep, fmt_, plot, plot_diff, render_diff)


def _emit(rep: dict, fmt_: str, plot: Optional[str], plotter, renderer) -> None:
    """Write the chart if asked, print the report (table or JSON), exit 0."""
    if plot:
        try:
            plotter(rep, plot)
        except OSError as exc:
            raise fail(f"--plot {plot}: {exc.strerror or exc}", EXIT_USAGE)
        rep["plot"] = plot
    if fmt_ == "json":
        _dump(rep)
    else:
        from logparse.cli.render import make_console

        console = make_console()
        renderer(rep, console)
        if plot:
            console.print(f"chart written to {plot}", style="dim")
    raise typer.Exit(EXIT_OK)


@app.command()
def check(
    launch: Optional[str] = typer.Argument(
        None, metavar="[LAUNCH]", help="The launch to judge (file, FILE#N, store reference); default @latest."
    ),
    baseline: Optional[str] = typer.Option(
        None,
        "--baseline",
        metavar="REF",
        help="The launch to compare with; default: the previous launch of the same deployment in the store.",
    ),
    history: Optional[list[str]] = typer.Option(
        None,
        "--history",
        metavar="PATH",
        help="Log files whose launches form the history for noisy metrics "
        "(repeatable); the store's history is used with --db.",
    ),
    kv_tol: float = typer.Option(
        1.0,
        "--kv-tokens-tolerance",
        metavar="PCT",
        help="Allowed drop of KV tokens and pool size vs the baseline, in percent.",
    ),
    mad_k: float = typer.Option(
        3.5, "--mad-k", metavar="K", help="Flag a noisy metric when |x − median| > K·1.4826·MAD."
    ),
    min_history: int = typer.Option(
        5, "--min-history", metavar="N", help="Launches needed before noisy metrics are judged."
    ),
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
    fmt: Optional[str] = typer.Option(None, "--format", help="table (default) or json."),
    db: Optional[str] = typer.Option(None, "--db", envvar="LOGPARSE_DB", help=_DB_HELP),
) -> None:
    """CI / upgrade gate: exit 0 within thresholds, 1 on a regression, 2 on bad input."""
    fmt_ = _format(as_json, fmt)
    if kv_tol < 0 or mad_k <= 0 or min_history < 2:
        raise fail("--kv-tokens-tolerance ≥ 0, --mad-k > 0 and --min-history ≥ 2 are required", EXIT_USAGE)
    from logparse.reports import check as ck

    new = _resolve(launch or "@latest", db)
    base = None
    base_ref = baseline
    notes: list[str] = []
    if baseline:
        base = _resolve(baseline, db)
    else:
        base, why = ck.previous_in_store(new, db)
        notes.append(why)
        base_ref = "previous launch in the store" if base is not None else None
    hist_launches = None
    if history:
        hist_launches = []
        for p in history:
            from logparse.store.resolve import RefError, launches_of_file

            try:
                hist_launches.extend(launches_of_file(p))
            except RefError as exc:
                raise fail(str(exc), EXIT_USAGE)
    rep = ck.run_check(
        new,
        base,
        baseline_ref=base_ref,
        history_launches=hist_launches,
        db=db,
        thresholds=ck.Thresholds(kv_tokens_tolerance_pct=kv_tol, mad_k=mad_k, min_history=min_history),
        notes=notes,
    )
    if fmt_ == "json":
        _dump(rep)
    else:
        from logparse.cli.render import make_console

        ck.render_check(rep, make_console())
    if rep["status"] == "nothing_to_compare":
        # The first launch of a deployment has no baseline: nothing regressed, and a CI gate
        # must not fail on it.  (A --baseline that cannot be read is an input error, above.)
        typer.echo("logparse: no baseline to compare against: nothing checked", err=True)
        raise typer.Exit(EXIT_OK)
    raise typer.Exit(EXIT_PROBLEM if rep["status"] == "regression" else EXIT_OK)
