"""Store commands: ingest, launches, show, history, query, export, doctor.

The store is ``--db PATH`` when given, else ``$LOGPARSE_DB``, else
``$XDG_DATA_HOME/logparse/history.duckdb`` (``~/.local/share/logparse/history.duckdb``).
Store problems (busy, damaged, too new, missing) exit with code 3; a bad reference,
option or refused query with code 2.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Optional

import typer

from logparse.cli.app import EXIT_OK, EXIT_STORE, EXIT_USAGE, app, fail

FORMATS = ("table", "csv", "json", "ndjson", "parquet")

_DB_HELP = "History store (default: $LOGPARSE_DB, else ~/.local/share/logparse/history.duckdb)."
_FMT_HELP = "Output format: table, csv, json, ndjson, parquet (parquet needs --output)."


def _db_opt():
    return typer.Option(None, "--db", help=_DB_HELP, envvar=None)


@contextmanager
def _errors() -> Iterator[None]:
    """Library errors -> one line on stderr and the documented exit code."""
    from logparse.sources import InputError
    from logparse.store import QueryRefused, StoreError
    from logparse.store.refs import RefError

    try:
        yield
    except StoreError as exc:
        raise fail(str(exc), EXIT_STORE)
    except (RefError, InputError, QueryRefused) as exc:
        raise fail(str(exc), EXIT_USAGE)
    except OSError as exc:  # disk full, read-only file system, permissions on the store's folder
        raise fail(f"store: {exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else ""), EXIT_STORE)
    except Exception as exc:  # duckdb.Error and friends: the transaction was rolled back
        import duckdb

        if not isinstance(exc, duckdb.Error):
            raise
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
        raise fail(f"store error: {first}", EXIT_STORE)


def _store(db: Optional[str], lock_timeout: float | None = None):
    from logparse.store import Store

    return Store(db) if lock_timeout is None else Store(db, lock_timeout=lock_timeout)


def _check_format(fmt: str, output: Optional[str]) -> str:
    fmt = (fmt or "table").lower()
    if fmt not in FORMATS:
        raise fail(f"unknown --format {fmt!r}; choose one of {', '.join(FORMATS)}", EXIT_USAGE)
    if fmt == "parquet" and not output:
        raise fail("--format parquet needs --output FILE", EXIT_USAGE)
    return fmt


def _plain_value(v: Any) -> Any:
    from datetime import date, datetime

    if isinstance(v, (datetime, date)):
        return v.isoformat()
    if isinstance(v, float) and v != v:
        return None
    return v


def emit(df, fmt: str, output: Optional[str] = None, *, title: str | None = None, json_columns=()) -> None:
    """Write a polars DataFrame as a table, CSV, JSON array, NDJSON or Parquet."""
    import polars as pl

    if fmt == "parquet":
        df.write_parquet(output)
        typer.echo(f"wrote {df.height} row(s) to {output}", err=True)
        return
    if fmt in ("json", "ndjson"):
        rows = []
        for row in df.to_dicts():
            out = {}
            for k, v in row.items():
                if k in json_columns and isinstance(v, str):
                    with suppress(ValueError):
                        v = json.loads(v)
                out[k] = _plain_value(v)
            rows.append(out)
        if fmt == "json":
            text = json.dumps(rows, indent=2, default=str, ensure_ascii=False) + "\n"
        else:
            text = "".join(json.dumps(r, default=str, ensure_ascii=False) + "\n" for r in rows)
        _write_text(text, output)
        return
    if fmt == "csv":
        flat = df.with_columns(
            [pl.col(c).cast(pl.List(pl.String)).list.join(", ") for c, t in df.schema.items() if isinstance(t, pl.List)]
        )
        flat = flat.with_columns(
            [
                pl.col(c).cast(pl.String)
                for c, t in flat.schema.items()
                if isinstance(t, (pl.Struct, pl.Array, pl.Object))
            ]
        )
        _write_text(flat.write_csv(datetime_format="%Y-%m-%dT%H:%M:%S%.f"), output)
        return
    from rich.table import Table

    from logparse.cli.render import make_console

    table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    numeric = {c for c, t in df.schema.items() if t.is_numeric()}
    for c in df.columns:
        table.add_column(c, justify="right" if c in numeric else "left", overflow="fold")
    for row in df.iter_rows():
        table.add_row(*[_cell(v) for v in row])
    from logparse.cli.render import print_table

    if output:
        from rich.console import Console

        with open(output, "w", encoding="utf-8") as fh:
            print_table(Console(file=fh, width=200, highlight=False), table)
        return
    print_table(make_console(), table)


def _cell(v: Any) -> str:
    from datetime import datetime

    from logparse.cli.render import _fmt

    if isinstance(v, datetime):
        return v.isoformat(sep=" ", timespec="seconds")
    if isinstance(v, list):
        return ", ".join(str(x) for x in v)
    if isinstance(v, bool):
        return "yes" if v else "no"
    return _fmt(v)


def _write_text(text: str, output: Optional[str]) -> None:
    if output:
        Path(output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


def _parse_labels(labels: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in labels or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise fail(f"--label {item!r}: expected key=value", EXIT_USAGE)
        out[key.strip()] = value.strip()
    return out


# ---------------------------------------------------------------------------- ingest


@app.command()
def ingest(
    paths: list[str] = typer.Argument(
        None, help="Log files, directories, '-' for stdin, export directories or other .duckdb stores to merge."
    ),
    journal: bool = typer.Option(
        False,
        "--journal",
        help="Read the systemd journal with journalctl, from where "
        "the last --journal ingest of the same query stopped.",
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
    sglang_version: Optional[str] = typer.Option(None, "--sglang-version", help="The SGLang version, if you know it."),
    input_format: Optional[str] = typer.Option(None, "--input-format", help="Force the input format (see README)."),
    db: Optional[str] = _db_opt(),
    lock_timeout: float = typer.Option(30.0, "--lock-timeout", help="Seconds to wait for another writer."),
    history_after: bool = typer.Option(False, "--history", help="Print the history table after ingesting."),
    metric: str = typer.Option("kv_tokens", "--metric", help="With --history: the metric to show."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="Only errors and the closing line."),
) -> None:
    """Parse logs and add their launches to the history store (idempotent)."""
    from logparse.cli.parse_cmd import _journal_options_used

    labels = _parse_labels(label)
    store = _store(db, lock_timeout)
    opts = {"host": host, "labels": labels, "sglang_version": sglang_version, "input_format": input_format}

    def show(out) -> None:
        if quiet:
            return
        if out.status == "skipped":
            typer.echo(f"skipped {out.name}: {out.message}", err=True)
        elif out.status == "imported":
            typer.echo(
                f"merged {out.name}: {out.added} added, {out.updated} updated, {out.unchanged} unchanged", err=True
            )
        elif out.dropped_lines:
            typer.echo(
                f"{out.name}: {out.dropped_lines} runtime line(s) of a launch that is not in the store were dropped",
                err=True,
            )

    use_journal = _journal_options_used(journal, unit, since, until, directory, jfile)
    if not paths and not use_journal:
        raise fail("nothing to ingest: give one or more paths, '-' for stdin, or --journal", EXIT_USAGE)
    from logparse.store import IngestReport

    report = IngestReport()
    with _errors():
        if use_journal:
            from logparse import sources as src_mod

            factory = getattr(src_mod, "journal_source", None)
            if factory is None:
                raise fail("reading the journal is not available in this build", EXIT_USAGE)
            sub = store.ingest_journal(
                unit=unit,
                since=since,
                until=until,
                directory=directory,
                file=jfile,
                resume=not no_resume,
                on_outcome=show,
                source_factory=factory,
                **opts,
            )
            report.sources += sub.sources
            report.warnings += sub.warnings
        if paths:
            try:
                sub = store.ingest_paths(paths, on_outcome=show, **opts)
            except ValueError as exc:
                raise fail(str(exc), EXIT_USAGE)
            report.sources += sub.sources
            report.warnings += sub.warnings
    if not quiet:
        for w in dict.fromkeys(report.warnings):
            typer.echo(f"warning: {w}", err=True)
    typer.echo(report.summary() + f" [{store.path}]", err=True)
    nothing = all(s.status == "empty" for s in report.sources)
    if history_after:
        _print_history(store, metric, None, None, None, "table", None, None)
    if report.sources and nothing and not use_journal:
        raise fail("no SGLang launch found in the input(s)", EXIT_USAGE)
    raise typer.Exit(EXIT_OK)


# ---------------------------------------------------------------------------- launches


@app.command("launches")
def launches_cmd(
    host: Optional[str] = typer.Option(None, "--host", help="Only this host."),
    model: Optional[str] = typer.Option(None, "--model", help="Model path contains this text."),
    since: Optional[str] = typer.Option(None, "--since", help="Started at or after (2026-05-01, 7d, today...)."),
    until: Optional[str] = typer.Option(None, "--until", help="Started before."),
    outcome: Optional[str] = typer.Option(None, "--outcome", help="ready, failed or incomplete."),
    deployment: Optional[str] = typer.Option(None, "--deployment", help="Only this deployment."),
    limit: Optional[int] = typer.Option(None, "--limit", help="Only the newest N launches."),
    fmt: str = typer.Option("table", "--format", help=_FMT_HELP),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write to this file."),
    db: Optional[str] = _db_opt(),
) -> None:
    """List stored launches, one line each, oldest first."""
    fmt = _check_format(fmt, output)
    if outcome and outcome not in ("ready", "failed", "incomplete"):
        raise fail(f"--outcome {outcome!r}: expected ready, failed or incomplete", EXIT_USAGE)
    store = _store(db)
    with _errors():
        try:
            # the table needs no DataFrame: plain rows start faster (no polars, no pyarrow)
            df = store.launches(
                host=host,
                model=model,
                since=since,
                until=until,
                outcome=outcome,
                deployment=deployment,
                limit=limit,
                as_rows=fmt == "table",
            )
        except ValueError as exc:
            raise fail(str(exc), EXIT_USAGE)
    if fmt == "table":
        _launch_table(df)
        return
    emit(df, fmt, output, title=f"{df.height} launch(es)")


def _launch_table(df) -> None:
    from rich.table import Table
    from rich.text import Text

    from logparse.cli.render import OUTCOME_STYLE, _fmt, make_console

    t = Table(title=f"{df.height} launch(es)", title_justify="left", show_edge=False, pad_edge=False)
    cols = [
        ("launch", "left"),
        ("host", "left"),
        ("started", "left"),
        ("outcome", "left"),
        ("SGLang", "left"),
        ("model", "left"),
        ("tp", "right"),
        ("dp", "right"),
        ("mem frac", "right"),
        ("KV tokens", "right"),
        ("max tokens", "right"),
        ("weights GiB", "right"),
        ("headroom GiB", "right"),
        ("peak usage", "right"),
        ("retract", "right"),
        ("warn", "right"),
    ]
    for name, just in cols:
        t.add_column(name, justify=just, no_wrap=name in ("launch", "started", "outcome"))
    for r in df.iter_rows(named=True):
        model = (r.get("model_path") or "—").rstrip("/").rsplit("/", 1)[-1]
        usage = r.get("peak_token_usage")
        mf = r.get("mem_fraction_static")
        t.add_row(
            r["launch_id"][:12],
            r.get("host") or "—",
            _cell(r.get("started_at")),
            Text(r.get("outcome") or "?", style=OUTCOME_STYLE.get(r.get("outcome"), "")),
            r.get("version") or "?",
            model,
            _fmt(r.get("tp_size")),
            _fmt(r.get("dp_size")),
            "—" if mf is None else f"{mf:g}",
            _fmt(r.get("kv_tokens")),
            _fmt(r.get("max_total_num_tokens")),
            _fmt(r.get("weights_gb")),
            _fmt(r.get("min_headroom_gb")),
            "—" if usage is None else f"{usage:.0%}",
            _fmt(r.get("retractions")),
            _fmt(r.get("n_warnings")),
        )
    from logparse.cli.render import print_table

    print_table(make_console(), t)


# ---------------------------------------------------------------------------- show

_TIMELINE_SKIP = frozenset({"decode_batch", "prefill_batch"})


def _event_summary(ev) -> str:
    f = ev.fields or {}
    if ev.kind == "server_args":
        return f"server_args ({len(f.get('payload', ''))} chars)"
    parts = []
    for k, v in f.items():
        if k == "payload":
            continue
        if isinstance(v, (dict, list)):
            v = json.dumps(v)[:60]
        parts.append(f"{k}={v}")
    return ", ".join(parts)[:150]


@app.command()
def show(
    launch_ref: str = typer.Argument(
        ...,
        metavar="LAUNCH",
        help="launch id prefix, @latest, @-N, HOST@latest, or a log file (path#N for its N-th launch).",
    ),
    events: str = typer.Option("startup", "--events", help="Timeline: startup (default), all, or none."),
    fmt: str = typer.Option("table", "--format", help="table or json."),
    db: Optional[str] = _db_opt(),
) -> None:
    """Everything known about one launch: per-rank budget, timeline, warnings, runtime KV pressure."""
    from logparse.store.refs import resolve_launch

    if events not in ("startup", "all", "none"):
        raise fail("--events: expected startup, all or none", EXIT_USAGE)
    with _errors():
        launch = resolve_launch(launch_ref, db)
    if fmt == "json":
        sys.stdout.write(
            json.dumps(launch.to_dict(with_events=events != "none"), indent=2, default=str, ensure_ascii=False) + "\n"
        )
        raise typer.Exit(EXIT_OK)
    if fmt != "table":
        raise fail("show: --format is table or json", EXIT_USAGE)
    from rich.table import Table
    from rich.text import Text

    from logparse.cli.render import make_console, print_launch, rank_label

    console = make_console()
    print_launch(console, launch)
    if launch.server_args:
        console.print(
            f"  server_args: {len(launch.server_args)} argument(s) ({launch.server_args_form} form)", style="dim"
        )
    rt = launch.runtime or {}
    if rt.get("batch_lines") or rt.get("retractions"):
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
            _cell(rt.get("peak_running_req")),
            f"{usage:.0%}" if isinstance(usage, (int, float)) else "—",
            _cell(rt.get("peak_tokens")),
            _cell(rt.get("peak_queue_req")),
            str(rt.get("retractions", 0)),
            str(rt.get("first_runtime_at") or "—"),
            str(rt.get("last_runtime_at") or "—"),
        )
        console.print(kv)
        if rt.get("retractions"):
            console.print(
                Text(
                    f"  the KV cache pool filled up {rt['retractions']} time(s): requests were retracted",
                    style="yellow",
                )
            )
    if events != "none" and launch.events:
        tl = Table(title="events", title_justify="left", show_edge=False, pad_edge=False)
        for c in ("line", "time", "rank", "worker", "event", "details"):
            tl.add_column(c, overflow="fold")
        skipped = 0
        for ev in launch.events:
            if events == "startup" and ev.kind in _TIMELINE_SKIP:
                skipped += 1
                continue
            rank = rank_label(ev) if ev.tagged or ev.tp_rank is not None else ""
            tl.add_row(
                str(ev.line_no),
                (ev.ts or "").replace("T", " "),
                rank,
                ev.worker or "",
                ev.kind + (f" ({ev.form})" if ev.form else ""),
                _event_summary(ev),
            )
        console.print(tl)
        if skipped:
            console.print(f"  … and {skipped} runtime batch line(s) (--events all to list them)", style="dim")
    raise typer.Exit(EXIT_OK)


# ---------------------------------------------------------------------------- history


def _print_history(store, metric, deployment, host, model, fmt, output, plot) -> None:
    with _errors():
        try:
            df = store.history(metric=metric, deployment=deployment, host=host, model=model)
        except ValueError as exc:
            raise fail(str(exc), EXIT_USAGE)
    from logparse.store import resolve_metric

    m = resolve_metric(metric)
    if plot:
        from logparse.cli.history_plot import plot_history

        try:
            n = plot_history(df, m, plot)
        except ValueError as exc:
            raise fail(str(exc), EXIT_USAGE)
        typer.echo(f"wrote {plot} ({n} deployment(s), {df.height} launch(es))", err=True)
    if fmt != "table":
        emit(df, fmt, output)
        return
    if df.height == 0:
        typer.echo("no launches in the store match", err=True)
        return
    from rich.table import Table
    from rich.text import Text

    from logparse.cli.render import make_console

    t = Table(title=f"{m} over launches, by deployment", title_justify="left", show_edge=False, pad_edge=False)
    for c in ("deployment", "#", "launch", "started", "outcome", "SGLang", m, "change", "what changed"):
        t.add_column(
            c,
            justify="right" if c in ("#", m, "change") else "left",
            overflow="fold",
            no_wrap=c in ("launch", "started"),
        )
    groups = list(df.group_by(["deployment"], maintain_order=True))
    for gi, ((dep,), part) in enumerate(groups):
        rows = list(part.iter_rows(named=True))
        for ri, row in enumerate(rows):
            what = Text("")
            if row["version_changed"]:
                what.append(f"SGLang {row['version_change']}", style="bold magenta")
            if row["args_changed"]:
                if what:
                    what.append("; ")
                what.append(row["arg_changes"] or "", style="cyan")
            elif row["args_changed"] is None and row["prev_launch_id"]:
                what.append(("; " if what else "") + "(server_args unknown)", style="dim")
            change = row[f"{m}_change"]
            ctext = Text(
                "—" if change is None else (f"{change:+,}" if isinstance(change, int) else f"{change:+.2f}"),
                style="" if not change else ("green" if change > 0 else "red"),
            )
            t.add_row(
                _deployment_label(dep) if ri == 0 else "",
                str(row["launch_no"]),
                row["launch_id"][:12],
                _cell(row["started_at"]),
                row["outcome"] or "",
                row["version"] or "?",
                _cell(row[m]),
                ctext,
                what,
                end_section=ri == len(rows) - 1 and gi < len(groups) - 1,
            )
    from logparse.cli.render import print_table

    print_table(make_console(), t)


def _deployment_label(dep: str) -> str:
    """``host|model|tp=..`` keys shown shorter: host, model path, the sizes that are not 1."""
    parts = dep.split("|")
    if len(parts) != 6:
        return dep
    host, model, *sizes = parts
    extra = " ".join(x for x in sizes if not x.endswith("=1"))
    return " ".join(x for x in ((host + ":" if host != "?" else ""), model, extra) if x)


@app.command()
def history(
    metric: str = typer.Option(
        "kv_tokens",
        "--metric",
        help="kv_tokens, max_total_num_tokens, avail_after_graph_gb, "
        "weights_gb, headroom_gb, kv_size_gb, available_mem_gb, ...",
    ),
    deployment: Optional[str] = typer.Option(
        None, "--deployment", help="Only this deployment (or a part of its name)."
    ),
    host: Optional[str] = typer.Option(None, "--host", help="Only this host."),
    model: Optional[str] = typer.Option(None, "--model", help="Model path contains this text."),
    plot: Optional[str] = typer.Option(None, "--plot", help="Also draw the metric to FILE.png or FILE.svg."),
    fmt: str = typer.Option("table", "--format", help=_FMT_HELP),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write to this file."),
    db: Optional[str] = _db_opt(),
) -> None:
    """A metric over the launches of each deployment, with SGLang version and argument changes marked."""
    fmt = _check_format(fmt, output)
    if plot and not plot.lower().endswith((".png", ".svg")):
        raise fail("--plot: give a .png or .svg file name", EXIT_USAGE)
    _print_history(_store(db), metric, deployment, host, model, fmt, output, plot)
    raise typer.Exit(EXIT_OK)


# ---------------------------------------------------------------------------- query, export, doctor


@app.command()
def query(
    sql: str = typer.Argument(
        ...,
        help="One SQL statement (tables: launches, rank_memory, events, runtime_stats, "
        "sources, unrecognized, journal_cursors; views: launch_summary, history).",
    ),
    write: bool = typer.Option(False, "--write", help="Allow statements that change the store."),
    fmt: str = typer.Option("table", "--format", help=_FMT_HELP),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write to this file."),
    db: Optional[str] = _db_opt(),
) -> None:
    """Run SQL against the store (read-only unless --write)."""
    import duckdb

    fmt = _check_format(fmt, output)
    store = _store(db)
    with _errors():
        try:
            df = store.query(sql, write=write)
        except duckdb.Error as exc:
            raise fail(f"SQL error: {str(exc).strip().splitlines()[0]}", EXIT_USAGE)
    if df is None:
        typer.echo("ok", err=True)
        raise typer.Exit(EXIT_OK)
    emit(df, fmt, output)


@app.command()
def export(
    directory: str = typer.Argument(..., metavar="DIR", help="Directory to write (hive-partitioned Parquet)."),
    db: Optional[str] = _db_opt(),
) -> None:
    """Export every table as Parquet, partitioned by host and month (DuckDB and polars read it as is)."""
    store = _store(db)
    with _errors():
        try:
            counts = store.export(directory)
        except ValueError as exc:
            raise fail(str(exc), EXIT_USAGE)
    total = sum(counts.values())
    typer.echo(
        f"exported {counts.get('launches', 0)} launch(es), {total} row(s) in {len(counts)} table(s) to {directory}",
        err=True,
    )


@app.command()
def doctor(db: Optional[str] = _db_opt()) -> None:
    """Check the store: schema version, referential integrity, counts.  Exit 0 when healthy, 3 otherwise."""
    store = _store(db)
    with _errors():
        rep = store.doctor()
    typer.echo(f"store: {rep.path}")
    typer.echo(f"schema version: {rep.schema_version}")
    for t, n in rep.counts.items():
        typer.echo(f"  {t}: {n}")
    if rep.problems:
        for p in rep.problems:
            typer.echo(f"problem: {p}")
        raise fail(f"the store has {len(rep.problems)} problem(s)", EXIT_STORE)
    typer.echo("healthy")
    raise typer.Exit(EXIT_OK)
