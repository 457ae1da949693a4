"""``logparse explain``, ``logparse diff``, ``logparse check``: the regression tracker.

LAUNCH is a log file (its last launch), ``FILE#N`` (its N-th launch, ``#-1`` the last), or a store
reference (launch_id prefix, ``@latest``, ``@-1`` the newest and ``@-2`` the one before, ``HOST@latest``):
see :mod:`logparse.store.refs`.
"""

from __future__ import annotations

import sys
from typing import Optional

import typer

from logparse.cli.app import EXIT_OK, EXIT_PROBLEM, EXIT_USAGE, allow_quick_exit, app, fail, say
from logparse.cli.output import DOCUMENT_FORMATS, Output, output_options
from logparse.cli.store_options import DB_HELP, plot_path, store_errors


def resolve(ref: str, db: str | None):
    """The launch a reference names; a bad reference is exit 2, a store problem exit 3."""
    return resolve_all([ref], db)[0]


def resolve_all(refs: list[str], db: str | None) -> list:
    """The launches references name (the stored ones read through one connection)."""
    from logparse.store.refs import ref_notes, resolve_launches

    for note in ref_notes(refs):
        say(note)
    with store_errors():
        return resolve_launches(refs, db)


def load_config_option(path: str | None, named: str = "--model-config "):
    """The model config at ``path`` (``named``: how the command line gave it: an option, or ""
    for plan's argument), or one clear line and exit 2."""
    if path is None:
        return None
    from logparse.budget.model_config import ModelConfigError, load_model_config

    try:
        return load_model_config(path)
    except ModelConfigError as exc:
        raise fail(f"{named}{exc}", EXIT_USAGE) from None


def _plot(kind: str, doc: dict, plot: str | None) -> None:
    """``--plot``: the chart of ``kind`` (``explain`` or ``diff``) written to ``plot``; the charts'
    modules are imported only then (~10 ms of a command without it)."""
    if not plot:
        return
    from logparse.cli import charts

    plotter = charts.plot_explain if kind == "explain" else charts.plot_diff
    try:
        plotter(doc, plot)
    except charts.PlotUnavailable as exc:
        raise fail(f"--plot {plot}: {exc}", EXIT_USAGE) from None
    except OSError as exc:
        raise fail(f"--plot {plot}: {exc.strerror or exc}", EXIT_USAGE) from None
    doc["plot"] = plot
    typer.echo(f"chart written to {plot}", err=True)


@app.command()
@output_options(formats=DOCUMENT_FORMATS, extra_help="csv: the budget steps of the binding rank.")
def explain(
    launch: str = typer.Argument(
        ..., metavar="LAUNCH|FILE", help="A log file (its last launch), FILE#N, or a store reference."
    ),
    plot: Optional[str] = typer.Option(None, "--plot", metavar="FILE.png|.svg|.pdf", help="Write a waterfall chart."),
    margin: Optional[float] = typer.Option(
        None,
        "--margin",
        metavar="GiB",
        help="Headroom (GiB) the fraction recommendation leaves after startup, even below the engine's own "
        "reserve; without it a fraction never holds back less than the engine's own logic would.",
    ),
    model_config: Optional[str] = typer.Option(
        None,
        "--model-config",
        metavar="PATH",
        help="The model's config.json (or its directory): compare its bytes per token with the logged pool.",
    ),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    *,
    out: Output,
) -> None:
    """Explain a launch's memory budget: why the KV pool has its size, where the rest went, and what-ifs."""
    plot = plot_path(plot)
    if margin is not None and not 0 <= margin < 1e6:
        raise fail("--margin must be ≥ 0 (GiB)", EXIT_USAGE)
    cfg = load_config_option(model_config)
    la = resolve(launch, db)
    from logparse.cli.render_reports import render_explain
    from logparse.reports.explain import explain_launch

    rep = explain_launch(la, margin_gb=margin, cfg=cfg)  # (with the config check when a config is known)
    doc = rep.to_dict()
    _plot("explain", doc, plot)
    out.document(doc, rep.rows, render_explain)
    if not plot:
        allow_quick_exit()
    raise typer.Exit(EXIT_OK)


@app.command()
@output_options(formats=DOCUMENT_FORMATS, extra_help="csv: one row per compared figure.")
def diff(
    a: str = typer.Argument(..., metavar="A", help="The earlier launch (file, FILE#N or store reference)."),
    b: str = typer.Argument(..., metavar="B", help="The later launch."),
    plot: Optional[str] = typer.Option(None, "--plot", metavar="FILE.png|.svg|.pdf", help="Write side-by-side bars."),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    *,
    out: Output,
) -> None:
    """Compare two launches: arguments, version, per-rank budget, runtime, durations, and why KV tokens moved."""
    plot = plot_path(plot)
    la, lb = resolve_all([a, b], db)
    from logparse.cli.render_reports import render_diff
    from logparse.reports.diff import diff_launches

    rep = diff_launches(la, lb)
    doc = rep.to_dict()
    _plot("diff", doc, plot)
    out.document(doc, rep.rows, render_diff)
    if not plot:
        allow_quick_exit()
    raise typer.Exit(EXIT_OK)


@app.command()
@output_options(formats=DOCUMENT_FORMATS, extra_help="csv: one row per check.")
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
        help="Log files whose launches form the history for noisy metrics (repeatable); default: the store's.",
    ),
    kv_tol: float = typer.Option(
        1.0, "--kv-tokens-tolerance", metavar="PCT", help="Allowed drop of KV tokens and pool size, in percent."
    ),
    mad_k: float = typer.Option(
        3.5, "--mad-k", metavar="K", help="Flag a noisy metric when |x − median| > K·1.4826·MAD."
    ),
    min_history: int = typer.Option(
        5, "--min-history", metavar="N", help="Launches needed before noisy metrics are judged."
    ),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    *,
    out: Output,
) -> None:
    """CI / upgrade gate: exit 0 within thresholds, 1 on a regression, 2 on bad input."""
    if kv_tol < 0 or mad_k <= 0 or min_history < 2:
        raise fail("--kv-tokens-tolerance ≥ 0, --mad-k > 0 and --min-history ≥ 2 are required", EXIT_USAGE)
    from logparse.cli.render_reports import render_check
    from logparse.reports import check as ck

    new = resolve(launch or "@latest", db)
    base, base_ref, notes = _baseline(new, baseline, db)
    hist_launches = _history_launches(history)
    rep = ck.run_check(
        new,
        base,
        baseline_ref=base_ref,
        history_launches=hist_launches,
        db=db,
        thresholds=ck.Thresholds(kv_tokens_tolerance_pct=kv_tol, mad_k=mad_k, min_history=min_history),
        notes=notes,
    )
    out.document(rep.to_dict(), rep.rows, render_check)
    if rep.status == "nothing_to_compare":
        # The first launch of a deployment has no baseline: nothing regressed, and a CI gate
        # must not fail on it.  (A --baseline that cannot be read is an input error, above.)
        typer.echo("logparse: no baseline to compare against: nothing checked", err=True)
        raise typer.Exit(EXIT_OK)
    raise typer.Exit(EXIT_PROBLEM if rep.status == "regression" else EXIT_OK)


def _baseline(new, baseline: str | None, db: str | None):
    """The launch to compare with, how it was named, and notes: ``--baseline``, else the previous
    launch of the same deployment in the store (the note says which, or why there is none)."""
    from logparse.reports import check as ck

    notes: list[str] = []
    if baseline:
        return resolve(baseline, db), baseline, notes
    base, why = ck.previous_in_store(new, db)
    notes.append(why)
    return base, ("previous launch in the store" if base is not None else None), notes


def _history_launches(paths: list[str] | None):
    if not paths:
        return None
    from logparse.store.refs import RefError, launches_of_file

    launches = []
    for p in paths:
        try:
            launches.extend(launches_of_file(p))
        except RefError as exc:
            raise fail(str(exc), EXIT_USAGE) from None
    return launches


@app.command()
def report(
    html: str = typer.Option(
        ..., "--html", metavar="FILE", help="Write the report as one self-contained HTML page ('-': stdout)."
    ),
    title: str = typer.Option("logparse report", "--title", help="The page's title."),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress bar."),
) -> None:
    """One page per store: per deployment its history, latest budget and explanation, last restart, check."""
    from datetime import UTC, datetime

    from logparse.cli.html_report import render_html
    from logparse.cli.progress import Bar
    from logparse.reports.overview import overview
    from logparse.store.db import resolve_db_path

    path = resolve_db_path(db)
    with store_errors(), Bar("report", quiet=quiet, unit="deployments", show_bytes=False) as bar:
        doc = overview(path, on_deployment=lambda _d: bar.advance(0, 1)).to_dict()
    stamp = datetime.now(UTC).strftime("generated %Y-%m-%d %H:%M UTC")
    page = render_html(doc, title=title, generated=stamp)
    if html == "-":
        sys.stdout.write(page)
        raise typer.Exit(EXIT_OK)
    from logparse.files import write_atomic

    try:
        write_atomic(html, page)  # a full disk leaves the previous report as it was
    except OSError as exc:
        raise fail(f"--html {html}: {exc.strerror or exc}", EXIT_USAGE) from None
    if not quiet:
        typer.echo(f"report written to {html}", err=True)
    raise typer.Exit(EXIT_OK)
