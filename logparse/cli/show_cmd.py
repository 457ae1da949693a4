"""``logparse show``: everything known about one launch (per-rank memory and budget, its model
config checked, runtime KV pressure, the timeline of its events).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Optional

import typer

from logparse import engines
from logparse.cli.app import EXIT_OK, EXIT_USAGE, allow_quick_exit, app, fail, say
from logparse.cli.cells import for_terminal
from logparse.cli.output import DOCUMENT_FORMATS, Output, output_options
from logparse.cli.store_options import db_option, store_errors
from logparse.grammar.bounds import OUT_OF_RANGE

if TYPE_CHECKING:
    from logparse.engines.base import RuntimeTerms

_TIMELINE_SKIP = frozenset({"decode_batch", "prefill_batch"})


def _event_summary(ev) -> str:
    f = ev.fields or {}
    if ev.kind in engines.kinds_of_every("start_args_kinds"):
        return f"{ev.kind} ({len(f.get('payload', ''))} chars)"
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
    _render_runtime(launch.runtime or {}, engines.of(launch).runtime_terms, console)
    if events != "none" and launch.events:
        _render_timeline(launch, events, console)


def _render_runtime(rt: dict[str, Any], words: RuntimeTerms, console) -> None:
    from rich.table import Table
    from rich.text import Text

    from logparse.cli.cells import cell
    from logparse.cli.render import print_rich_table

    if not (rt.get("batch_lines") or rt.get("retractions")):
        return
    kv = Table(title="runtime KV pressure", title_justify="left", show_edge=False, pad_edge=False)
    for c in (
        f"{words.line}s",
        f"peak {words.running}",
        f"peak {words.usage}",
        f"peak {words.tokens}",
        f"peak {words.queue}",
        f"{words.retraction}s",
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
            Text(
                f"  the KV cache pool filled up {rt['retractions']} time(s): requests were {words.retracted}",
                style="yellow",
            )
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
        line = engines.of(launch).runtime_terms.line
        console.print(f"  … and {skipped} runtime {line}(s) (--events all to list them)", style="dim")
