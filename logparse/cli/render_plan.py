"""Text rendering of ``logparse plan`` (its ``to_dict()`` document: one engine's plan, or a list of two).
Nothing here computes a figure."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from logparse import engines
from logparse.cli.render import print_rich_table


def _n(v: Any) -> str:
    return "—" if v is None else f"{v:,}"


def _gb(v: Any) -> str:
    return "—" if v is None else f"{v:,.2f}"


def _range(r: list | None, fmt=_n) -> str:
    return "" if not r else f"{fmt(r[0])} – {fmt(r[-1])}"


def _rows(p: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) of one engine's plan."""
    fname = p.get("fraction_name") or "fraction"
    rows = [
        (
            "KV tokens",
            f"{_n(p['kv_tokens'])}" + (f"  ({_range(p.get('kv_tokens_range'))})" if p.get("kv_tokens_range") else ""),
        ),
        ("KV pool (GiB per rank)", _gb(p.get("kv_pool_gb"))),
        (
            "headroom (GiB)",
            _gb(p.get("headroom_gb"))
            + (f"  ({_range(p.get('headroom_gb_range'), _gb)})" if p.get("headroom_gb_range") else ""),
        ),
        ("bytes per token (per rank)", _n(p.get("bytes_per_token"))),
        (fname, f"{p.get('fraction'):g} ({p.get('fraction_source')})" if p.get("fraction") is not None else "—"),
        (f"default {fname}", "—" if p.get("default_fraction") is None else f"{p['default_fraction']:g}"),
        ("engine's own reserve (GiB)", _gb(p.get("engine_reserve_gb"))),
        (
            f"largest {fname} keeping it",
            "—" if p.get("fraction_keeping_reserve") is None else f"{p['fraction_keeping_reserve']:g}",
        ),
        ("weights (GiB per rank)", _gb(p.get("weights_gb"))),
    ]
    if p.get("context_length"):
        conc = p.get("max_concurrency")
        rows.append(
            ("context", f"{p['context_length']:,} tokens: {'—' if conc is None else f'{conc:g}'} request(s) at once")
        )
    if p.get("logged_kv_tokens") is not None:
        rows.append(("logged KV tokens (--from)", _n(p["logged_kv_tokens"])))
    return rows


def _head(p: dict[str, Any], console) -> None:
    t = Text()
    t.append(f"{engines.label(p['engine'])} {p['release']}", style="bold")
    t.append(
        f"  tp {p['tp']}"
        + (f" pp {p['pp']}" if p.get("pp", 1) > 1 else "")
        + f"  KV {p.get('kv_cache_dtype') or 'auto'}"
    )
    if p.get("gpu") or p.get("gpu_total_gb"):
        t.append(
            f"  {p.get('gpu') or ''} {'' if p.get('gpu_total_gb') is None else str(p['gpu_total_gb']) + ' GiB'}".rstrip()
        )
    if p.get("calibrated_from"):
        t.append(f"  calibrated on {p['calibrated_from']}", style="cyan")
    console.print(t)


def _one(p: dict[str, Any], console, *, figures: bool = True) -> None:
    _head(p, console)
    if figures:
        t = Table(show_header=False, show_edge=False, pad_edge=False, box=None)
        t.add_column("")
        t.add_column("", justify="right")
        for k, v in _rows(p):
            t.add_row(f"  {k}", v)
        print_rich_table(console, t)
    if p.get("not_possible"):
        console.print(Text(f"  not possible: {p['not_possible']}", style="bold red"))
    for n in p.get("notes") or []:
        console.print(Text(f"  {n}" if n.startswith("warning: ") else f"  note: {n}", style="yellow"))
    for s in p.get("steps") or []:
        console.print(f"    {s}", style="dim")
    console.print(Text("  assumptions", style="bold"))
    for a in p.get("assumptions") or []:
        console.print(Text(f"    • {a}", style="dim"))


def _side_by_side(plans: list[dict[str, Any]], console) -> None:
    t = Table(title="side by side", title_justify="left", show_edge=False, pad_edge=False)
    t.add_column("")
    for p in plans:
        t.add_column(f"{engines.label(p['engine'])} {p['release']}", justify="right")
    rows = [_rows(p) for p in plans]
    for i, (label, _) in enumerate(rows[0]):
        label = label.replace("mem_fraction_static", "fraction (f / u)")
        t.add_row(label, *[r[i][1] if i < len(r) else "" for r in rows])
    print_rich_table(console, t)


def _targets(p: dict[str, Any], console) -> None:
    tg = p.get("target")
    if not tg:
        return
    console.print(Text(f"Target: {tg['what']}", style="bold"))
    console.print(Text(f"  {tg['verdict']}", style="green" if tg.get("reached") else "bold red"))
    if tg.get("note"):
        console.print(Text(f"  note: {tg['note']}", style="yellow"))
    for i, o in enumerate(p.get("targets") or [], 1):
        mark = "✓" if o.get("reaches") else "·"
        console.print(
            Text(
                f"  {mark} {i}. {o['action']}: {_n(o.get('kv_tokens'))} tokens, headroom {_gb(o.get('headroom_gb'))} GiB"
            )
        )
        console.print(Text(f"       cost: {o['cost']}; risk: {o['risk']}", style="dim"))


def render_plan(doc: dict[str, Any] | list[dict[str, Any]], console) -> None:
    plans = doc if isinstance(doc, list) else [doc]
    console.print(Text(f"plan  {plans[0].get('model')}", style="bold"))
    console.print(f"  {plans[0].get('config')}", style="dim")
    if len(plans) > 1:
        _side_by_side(plans, console)
        console.print(Text("Why they differ", style="bold"))
        for line in plans[0].get("differs_because") or []:
            console.print(Text(f"  • {line}"))
    for p in plans:
        _one(p, console, figures=len(plans) == 1)
        _targets(p, console)
