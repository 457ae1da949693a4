"""Text renderers of the reports (rich): ``explain``, ``diff`` and ``check``.

Each takes the report's plain data (its ``to_dict()``) and prints it; nothing here computes a
figure (datasette's rule: views compute plain data, renderers format it).
"""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from logparse import engines
from logparse.cli.render import fmt_value, print_rich_table
from logparse.launches.args import value_text
from logparse.launches.times import iso_time


def _known(rep: dict[str, Any], name: str) -> Any:
    """A figure, or ``not known: why`` as the budget words it."""
    v = rep.get(name)
    return v if v is not None else "not known: " + (rep.get("unknown") or {}).get(name, "not in this launch")


def render_explain(rep: dict[str, Any], console) -> None:
    _explain_head(rep, console)
    _explain_answer(rep, console)
    _explain_recommendations(rep, console)
    unit = "GiB" + (" (system memory)" if rep["memory_kind"] == "cpu" else "")
    _explain_waterfall(rep, console, unit)
    _explain_kv_pool(rep, console)
    render_config_check(rep, console)
    _explain_ranks(rep, console, unit)
    console.print(Text("Why", style="bold"))
    for line in rep.get("sentences") or []:
        console.print(Text("  • " + line))
    _explain_what_if(rep, console)
    for wmsg in rep.get("warnings") or []:
        console.print(Text("  warning: " + wmsg, style="yellow"))


def _explain_head(rep: dict[str, Any], console) -> None:
    """The launch: id, outcome, its engine's release, model, parallel sizes; its source and formula."""
    head = Text()
    head.append(f"launch {rep['launch_id']}  ", style="bold")
    head.append(rep["outcome"], style={"ready": "bold green", "failed": "bold red"}.get(rep["outcome"], "bold yellow"))
    head.append(f"  {engines.of(rep).explain_version_text(rep)}  {rep.get('model_path') or ''}")
    if rep.get("tp_size"):
        head.append(f"  tp={rep['tp_size']}" + (f" dp={rep['dp_size']}" if (rep.get("dp_size") or 1) > 1 else ""))
    console.print(head)
    why = f"; {rep['outcome']} by {rep['outcome_evidence']}" if rep.get("outcome_evidence") else ""
    console.print(f"  {rep['source']}{why}", style="dim")
    console.print(f"  formula: {rep.get('formula_features') or rep.get('formula') or 'unknown era'}", style="dim")


def _explain_answer(rep: dict[str, Any], console) -> None:
    """The short answer: KV tokens and what bounds them, the run's verdict, the reserve, the best action."""
    lines = rep.get("answer") or []
    if not lines:
        return
    console.print(Text("Answer", style="bold"))
    for line in lines:
        console.print(Text("  " + line))


def recommendation_lines(r: dict[str, Any]) -> list[str]:
    """One recommendation in words: its flags and figures, then cost, risk and evidence (also used by watch)."""
    if not r.get("possible", True):
        return [f"{r['action']}: not possible: {r['reason']}"]
    figs = []
    if r.get("kv_tokens") is not None:
        gain = r.get("gain_tokens")
        figs.append(
            f"{r['kv_tokens']:,} KV tokens"
            + (f" ({gain:+,})" if gain and gain > 0 else f" ({-gain:,} fewer)" if gain else "")
        )
    if r.get("kv_gb") is not None:
        figs.append(f"KV {r['kv_gb']:.2f} GiB/rank")
    if r.get("headroom_gb") is not None:
        figs.append(f"headroom {r['headroom_gb']:.2f} GiB")
    al = r.get("allows") or {}
    if al.get("full_context_requests") is not None:
        figs.append(f"{al['full_context_requests']:g} full-context request(s)")
    if al.get("requests_at_observed_size") is not None:
        figs.append(f"≈{al['requests_at_observed_size']:,} requests of this run's size")
    if al.get("distinct_tokens") is not None:
        figs.append(f"{al['distinct_tokens']:,} distinct tokens over {al['dp_ranks']} DP ranks")
    flags = " ".join(r["flags"])
    head = (f"{flags}  — {r['action']}" if flags else r["action"]) + (": " + ", ".join(figs) if figs else "")
    cost = r.get("cost") or {}
    bits = [f"{cost['more_gpus']} more GPU(s)"] if cost.get("more_gpus") else []
    if cost.get("gpu_memory_gb"):
        bits.append(f"GPU {cost['gpu_memory_gb']:+.2f} GiB/rank")
    if cost.get("host_memory_gb"):
        bits.append(f"host {cost['host_memory_gb']:,.2f} GB (decimal)")
    if cost.get("accuracy") and cost["accuracy"] != "none":
        bits.append(f"accuracy: {cost['accuracy']}")
    if cost.get("throughput"):
        bits.append(f"throughput: {cost['throughput']}")
    risk = r.get("risk") or {}
    out = [head]
    if bits:
        out.append("cost: " + "; ".join(bits))
    out.append(f"risk {risk.get('level', '?')}: {risk.get('why', '')}")
    if r.get("fixes"):
        out.append(f"fixes: {r['fixes']}")
    out.append(f"why: {r.get('reason', '')}")
    return out


def _explain_recommendations(rep: dict[str, Any], console) -> None:
    recs = rep.get("recommendations") or []
    if not recs:
        return
    console.print(Text("Recommendations (best first)", style="bold"))
    for i, r in enumerate(recs, 1):
        lines = recommendation_lines(r)
        console.print(Text(f"  {i}. " + lines[0], style="" if r.get("possible", True) else "dim"))
        for extra in lines[1:]:
            console.print(Text("       " + extra, style="dim"))


def _explain_waterfall(rep: dict[str, Any], console, unit: str) -> None:
    """The binding rank's memory, step by step (nothing when the report has no steps)."""
    wf = rep.get("waterfall") or []
    if not wf:
        return
    note = engines.of(rep).waterfall_note
    t = Table(
        title=f"memory budget of {rep.get('binding_rank')} (the binding rank), {unit}" + (f" — {note}" if note else ""),
        title_justify="left",
        show_edge=False,
        pad_edge=False,
    )
    t.add_column("step")
    t.add_column("GiB", justify="right")
    t.add_column("", justify="left")
    for st in wf:
        lab, gb = st["label"], st["gb"]
        if st["kind"] == "start":
            t.add_row(lab, f"{gb:.2f}", "")
        elif st["kind"] == "minus":
            extra = ""
            if lab == "KV pool" and st.get("predicted_gb") is not None:
                extra = f"predicted {st['predicted_gb']:.2f}, Δ {gb - st['predicted_gb']:+.2f}"
            t.add_row(f"  − {lab}", f"{gb:.2f}", extra)
        elif st["kind"] == "subtotal":
            t.add_row(Text(f"  = {lab}", style="bold"), Text(f"{gb:.2f}", style="bold"), "")
        elif st["kind"] == "note":
            t.add_row(Text(f"      {lab}", style="dim"), Text(f"{gb:.2f}", style="dim"), "")
        else:
            t.add_row(Text(f"  = {lab}", style="bold green"), Text(f"{gb:.2f}", style="bold green"), "")
    print_rich_table(console, t)


def _explain_kv_pool(rep: dict[str, Any], console) -> None:
    """The KV pool's sizing: the formula's inputs, predicted and logged figures, the derivation."""
    kv = Table(title="KV pool", title_justify="left", show_edge=False, pad_edge=False, show_header=False)
    kv.add_column("")
    kv.add_column("", justify="right")
    rows = [
        ("mem_fraction_static", rep.get("mem_fraction_static")),
        ("free before weights (M_pre, min rank)", rep.get("pre_load_avail_gb")),
        ("free after weights (M_post, min rank)", rep.get("post_load_avail_gb")),
        ("held back (1 − f) × M_pre", rep.get("reserved_gb")),
        ("KV budget (rest)", rep.get("rest_gb")),
        ("bytes per token", round(rep["bytes_per_token"]) if rep.get("bytes_per_token") else None),
        ("predicted tokens", rep.get("predicted_kv_tokens")),
        ("logged tokens", rep.get("kv_tokens")),
        ("predicted KV GiB", rep.get("predicted_kv_gb")),
        ("logged KV GiB", rep.get("kv_pool_gb")),
        ("headroom left (binding rank)", _known(rep, "headroom_gb")),
    ]
    # a figure the launch cannot know is said in words under the table: a sentence in the value
    # column would push every number to its far end
    unknown = [(k, v) for k, v in rows if isinstance(v, str)]
    for k, v in rows:
        if v is not None and not isinstance(v, str):
            kv.add_row(k, _kv_pool_value(k, v))
    print_rich_table(console, kv)
    for k, v in unknown:
        console.print(f"  {k}: {v}")
    if rep.get("derivation"):
        for line in rep["derivation"]:
            console.print(f"    {line}", style="dim")


def _kv_pool_value(name: str, v: Any) -> str:
    """An int with thousands separators, a float with two decimals (bytes per token: one), else as is."""
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:,.2f}" if name != "bytes per token" else f"{v:,.1f}"
    return str(v)


def render_config_check(rep: dict[str, Any], console) -> None:
    """The model config's bytes per token against the logged pool (``explain``, ``show``)."""
    cc = rep.get("config_check")
    if not cc:
        return
    style = {True: "green", False: "bold red"}.get(cc.get("consistent"), "yellow")
    console.print(Text("Model config", style="bold"))
    console.print(Text(f"  {cc['verdict']}", style=style))
    console.print(Text(f"    {cc['model']}  ({cc['config']})", style="dim"))
    if cc.get("terms"):
        console.print(f"    {cc['terms']}", style="dim")
    for note in cc.get("notes") or []:
        console.print(f"    {note}", style="dim")


#: The per-rank table of ``explain``: (header, budget field).
_EXPLAIN_RANK_COLUMNS = [
    ("rank", "rank"),
    ("before", "free_before_weights_gb"),
    ("weights", "weights_gb"),
    ("after", "free_after_weights_gb"),
    ("KV", "kv_pool_gb"),
    ("graphs (all)", "graph_gb"),
    ("draft w", "draft_weights_gb"),
    ("draft KV", "draft_kv_gb"),
    ("other", "other_gb"),
    ("lowest free", "lowest_free_gb"),
    ("headroom", "headroom_gb"),
]


def _explain_ranks(rep: dict[str, Any], console, unit: str) -> None:
    """Every rank's budget, in the columns some rank has (only with more than one rank)."""
    ranks = rep.get("ranks") or []
    if len(ranks) <= 1:
        return
    rt = Table(title=f"per rank ({unit})", title_justify="left", show_edge=False, pad_edge=False)
    present = [(h, k) for h, k in _EXPLAIN_RANK_COLUMNS if k == "rank" or any(r.get(k) is not None for r in ranks)]
    if len(present) == 1:
        return  # no rank printed a memory figure (0.1.x)
    for h, _ in present:
        rt.add_column(h, justify="left" if h == "rank" else "right")
    for r in ranks:
        rt.add_row(*[str(r[k]) if k == "rank" else ("—" if r.get(k) is None else f"{r[k]:.2f}") for _, k in present])
    print_rich_table(console, rt)


def _explain_what_if(rep: dict[str, Any], console) -> None:
    """One line per what-if: the figures it would give, or why it cannot be computed."""
    wi = rep.get("what_if") or []
    if not wi:
        return
    console.print(Text("What if", style="bold"))
    for w in wi:
        bits = []
        if w.get("kv_tokens") is not None:
            bits.append(f"{w['kv_tokens']:,} tokens")
        if w.get("kv_gb") is not None:
            bits.append(f"KV {w['kv_gb']:.2f} GiB")
        if w.get("headroom_gb") is not None:
            bits.append(f"headroom {w['headroom_gb']:.2f} GiB")
        if w.get("host_gb") is not None:
            bits.append(
                f"host pool {w['host_gb']:.2f} GB/rank ({w['host_tokens']:,} tokens)"
                + (f", {w['host_gb_all_ranks']:.2f} GB on all ranks" if w.get("host_gb_all_ranks") else "")
            )
        line = f"  • {w['change']}: " + (", ".join(bits) if bits else "")
        if not w.get("supported", True):
            line += f" — not computable: {w.get('reason')}"
        elif w.get("note"):
            line += f" ({w['note']})"
        console.print(Text(line))


def _ab_table(console, title: str, items: dict[str, dict[str, Any]]) -> None:
    """A / B / Δ / Δ% rows of the figures that either launch has (nothing when none has any)."""

    rows = [(k, d) for k, d in items.items() if d["a"] is not None or d["b"] is not None]
    if not rows:
        return
    t = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    for h in ("", "A", "B", "Δ", "Δ%"):
        t.add_column(h, justify="left" if not h else "right")
    for k, d in rows:
        t.add_row(k, *_cell(d))
    print_rich_table(console, t)


#: What the Δ column says of two figures whose rounding intervals overlap.
EQUAL_WITHIN_ROUNDING = "equal within the log's rounding"


def _cell(d: dict[str, Any], nd: int = 2) -> tuple[str, str, str, str]:
    def f(v):
        return fmt_value(v, nd)

    if d.get("within_rounding") and d.get("equal_within"):
        lo, hi = d["equal_within"]
        both = f"{lo:,}" if lo == hi else f"{lo:,}–{hi:,}"
        return both, both, EQUAL_WITHIN_ROUNDING, ""
    delta = d.get("delta")
    ds = "" if delta in (None, 0, 0.0) else (f"{delta:+,}" if isinstance(delta, int) else f"{delta:+,.{nd}f}")
    pct = d.get("pct")
    ps = "" if pct in (None, 0, 0.0) else f"{pct:+.2f}%"
    if d.get("not_comparable"):
        ds = "not comparable"
    return f(d.get("a")), f(d.get("b")), ds, ps


def render_diff(rep: dict[str, Any], console, max_rank_rows: int = 40) -> None:
    for side in ("A", "B"):
        x = rep[side.lower()]
        when = f" started {iso_time(x['started_at'], x.get('time_zone'))}" if x.get("started_at") else ""
        pid = f" pid {x['pid']}" if x.get("pid") else ""
        console.print(Text(f"{side}: {x['launch_id']} {x['outcome']}{when}{pid}  {x['source']}", style="bold"))
    if rep["identical"]:
        console.print(rep["summary"][0])
        return
    for line in rep["summary"]:
        console.print(Text("  • " + line))
    if rep.get("engines"):
        _diff_engines(rep["engines"], console)
    else:
        _diff_args(rep["server_args"], console)
    _diff_budget(rep["budget"], console)
    _diff_ranks(rep["ranks"], console, max_rank_rows)
    _ab_table(console, "runtime KV pressure", rep["runtime"])
    _ab_table(console, "startup durations (s)", rep["durations"])
    _diff_attribution(rep["attribution"], console)


def _diff_engines(eng: dict[str, Any], console) -> None:
    """Each engine's sizing side by side (the arguments of two engines are not compared)."""
    a, b = eng["a"], eng["b"]
    t = Table(title="how each engine sizes its KV pool", title_justify="left", show_edge=False, pad_edge=False)
    for h in ("", f"A ({a['name']})", f"B ({b['name']})"):
        t.add_column(h)
    rows = (
        ("release", a["release"] or "—", b["release"] or "—"),
        ("formula era", a["era"] or "—", b["era"] or "—"),
        ("formula", a["formula"] or "—", b["formula"] or "—"),
        ("fraction", _fraction_cell(a["fraction"]), _fraction_cell(b["fraction"])),
        ("this launch", _derivation_cell(a), _derivation_cell(b)),
    )
    for row in rows:
        t.add_row(*row)
    print_rich_table(console, t)


def _derivation_cell(side: dict[str, Any]) -> str:
    return "; ".join(side["derivation"]) or "the log does not print the formula's terms"


def _fraction_cell(fr: dict[str, Any]) -> str:
    value = "not known" if fr["value"] is None else f"{fr['value']:g}"
    if fr["source"] == "default":
        return f"{fr['name']} {value} (the release's default)"
    return f"{fr['name']} {value} ({fr['source'] or 'source not known'}; the default: {fr['default_text']})"


def _diff_args(args: dict[str, Any], console) -> None:
    """The server arguments that differ (changed, then added and removed) and the arguments that
    differ on every start; the settings a feature brings are in the summary above, not repeated."""
    if args["changed"] or args["added"] or args["removed"]:
        t = Table(title="server arguments", title_justify="left", show_edge=False, pad_edge=False)
        t.add_column("arg")
        t.add_column("A")
        t.add_column("B")
        for c in args["changed"]:
            t.add_row(c["arg"], _short(c["a"]), _short(c["b"]))
        lim = 0 if args["added_removed_by_version"] else 15
        for c in args["added"][:lim]:
            t.add_row(c["arg"], Text("(absent)", style="dim"), _short(c["b"]))
        for c in args["removed"][:lim]:
            t.add_row(c["arg"], _short(c["a"]), Text("(absent)", style="dim"))
        more = max(len(args["added"]) - lim, 0) + max(len(args["removed"]) - lim, 0)
        print_rich_table(console, t)
        if more:
            why = " (fields of one release's arguments only)" if args["added_removed_by_version"] else ""
            console.print(f"  … {more} fields only in one launch{why} (see --json)", style="dim")
    if args["ignored_noise"]:
        console.print(f"  ignored (differ on every start): {', '.join(args['ignored_noise'])}", style="dim")


#: The rows of the diff's budget table: budget field -> label.
_DIFF_BUDGET_LABELS = {
    "mem_fraction_static": "mem_fraction_static",
    "pre_load_avail_gb": "free before weights",
    "weights_gb": "weights",
    "post_load_avail_gb": "free after weights",
    "reserved_gb": "held back (1−f)·M_pre",
    "rest_gb": "KV budget",
    "bytes_per_token": "bytes per token",
    "kv_tokens": "KV tokens",
    "kv_pool_gb": "KV pool GiB",
    "predicted_kv_tokens": "predicted tokens",
    "draft_weights_gb": "draft weights",
    "draft_kv_gb": "draft KV",
    "graph_gb": "CUDA graphs",
    "other_gb": "other",
    "headroom_gb": "headroom left",
    "hicache_host_gb": "HiCache host GB (decimal)",
}


def _diff_budget(budget: dict[str, Any], console) -> None:
    """The binding rank's budget of both launches, the figures either one has."""
    t = Table(title="budget (binding rank, GiB)", title_justify="left", show_edge=False, pad_edge=False)
    for h in ("", "A", "B", "Δ", "Δ%"):
        t.add_column(h, justify="left" if not h else "right")
    for k, lab in _DIFF_BUDGET_LABELS.items():
        d = budget.get(k)
        if d is None or (d["a"] is None and d["b"] is None):
            continue
        t.add_row(lab, *_cell(d, {"mem_fraction_static": 3, "bytes_per_token": 0}.get(k, 2)))
    print_rich_table(console, t)


def _diff_ranks(ranks: list[dict[str, Any]], console, max_rank_rows: int) -> None:
    """The per-rank figures that changed (the first ``max_rank_rows``), or that none did."""
    changed_rows = []
    for row in ranks:
        for f in (k for k in row if k != "rank"):
            d = row[f]
            if d["a"] != d["b"]:
                changed_rows.append((row["rank"], f, d))
    if not changed_rows:
        console.print("  per-rank memory figures: unchanged on every rank")
        return
    t = Table(title="per rank (changes only)", title_justify="left", show_edge=False, pad_edge=False)
    for h in ("rank", "figure", "A", "B", "Δ", "Δ%"):
        t.add_column(h, justify="left" if h in ("rank", "figure") else "right")
    for rank, f, d in changed_rows[:max_rank_rows]:
        t.add_row(rank, f, *_cell(d))
    print_rich_table(console, t)
    if len(changed_rows) > max_rank_rows:
        console.print(f"  … {len(changed_rows) - max_rank_rows} more (see --json)", style="dim")


def _diff_attribution(at: dict[str, Any], console) -> None:
    """The KV-token change, input by input through the formula, or why it cannot be computed."""
    console.print(Text("Attribution of the KV-token change", style="bold"))
    if not at.get("supported"):
        console.print(f"  not computable: {at.get('reason')}")
        if at.get("delta_pool_gb") is not None and at.get("delta_tokens") is not None:
            # (without a token change the summary gives the pool's change)
            console.print(f"  KV pool change: {at['delta_pool_gb']:+.2f} GiB")
        for n in at.get("notes", []):
            console.print(f"  • {n}")
        return
    t = Table(show_edge=False, pad_edge=False)
    for h in ("input", "A", "B", "Δ tokens"):
        t.add_column(h, justify="right" if h == "Δ tokens" else "left")
    predicted_a = f"{at['predicted_a']:,}" if at.get("predicted_a") is not None else "—"
    t.add_row("formula on A's inputs", predicted_a, "", "")  # tokens of A, not a change: in A's column
    for st in at["steps"]:
        dt = st["delta_tokens"]
        t.add_row(st["input"], str(st["a"]), str(st["b"]), "—" if dt is None else f"{dt:+,}")
    if at.get("unexplained_tokens") is not None:
        t.add_row("not explained by the formula", "", "", f"{at['unexplained_tokens']:+,}")
        t.add_row(
            Text("logged change", style="bold"),
            f"{at['a_tokens']:,}",
            f"{at['b_tokens']:,}",
            Text(f"{at['delta_tokens']:+,}", style="bold"),
        )
    print_rich_table(console, t)
    if at.get("unexplained_tokens"):
        console.print(f"  the unexplained part points at {at['unexplained_points_at']}", style="dim")
    for n in at.get("notes", []):
        console.print(f"  note: {n}", style="dim")


def _short(v: Any, n: int = 60) -> str:
    # a string of the document is terminal-safe already (escaped by ``for_terminal``): quoted as
    # value_text quotes, without escaping its escapes a second time
    s = f'"{v}"' if isinstance(v, str) else value_text(v)
    return s if len(s) <= n else s[: n - 1] + "…"


def render_check(rep: dict[str, Any], console) -> None:

    st = rep["status"]
    head = Text()
    label = {"regression": ("REGRESSION", "bold red"), "ok": ("OK", "bold green")}.get(
        st, ("NOTHING TO COMPARE", "bold yellow")
    )
    head.append(label[0], style=label[1])
    head.append(f"  launch {rep['launch']['launch_id']} ({rep['launch']['source']})")
    console.print(head)
    if rep["baseline"]:
        b = rep["baseline"]
        ref = f"; {b['ref']}" if b.get("ref") and b["ref"] != b["source"] else ""
        console.print(f"  baseline: {b['launch_id']} ({b['source']}{ref})", style="dim")
    t = Table(show_edge=False, pad_edge=False)
    for h in ("metric", "value", "baseline", "change", "threshold", "status"):
        t.add_column(h, justify="right" if h in ("value", "change") else "left")
    style = {"regression": "bold red", "ok": "green", "improved": "cyan", "skipped": "dim"}
    for r in rep["results"]:
        val = r.get("value")
        base = r.get("median") if r["kind"] == "history" and r.get("median") is not None else r.get("baseline")
        ch = r.get("change")
        chs = "" if ch is None else (f"{ch:+,}" if isinstance(ch, int) else f"{ch:+,.2f}")
        if r.get("change_pct") not in (None, 0):
            chs += f" ({r['change_pct']:+.2f}%)"
        t.add_row(
            r["label"],
            _f(val),
            _f(base),
            chs,
            r.get("threshold") or r.get("note") or "",
            Text(r["status"], style=style.get(r["status"], "")),
        )
    print_rich_table(console, t)
    for r in rep["results"]:
        if r["status"] == "regression":
            line = f"  ✗ {r['label']}: {_f(r.get('value'))} vs {_f(r.get('median', r.get('baseline')))}"
            if r.get("likely_cause"):
                line += f" — likely cause: {r['likely_cause']}"
            if r.get("note"):
                line += f" ({r['note']})"
            console.print(Text(line, style="red"))
    for n in rep["notes"]:
        console.print(f"  note: {n}", style="dim")


def _f(v) -> str:
    return fmt_value(v)
