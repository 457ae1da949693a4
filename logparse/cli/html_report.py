"""``logparse report --html``: the store's overview (:mod:`logparse.reports.overview`) as one page.

A dashboard, problems first: what needs attention (failed starts, regressions, a KV drop, low
headroom: :mod:`logparse.reports.problems`) heads the page with a link to each deployment; the
deployments follow, those with problems first and unfolded, the others folded (``<details>``) to
one line each (latest outcome, check verdict, KV tokens, headroom, release).  Each deployment's
charts are dated, its restarts steps, and every change line numbered with what it changed listed
under the charts.

Self-contained: the style is inline, the charts are inline SVG (:mod:`logparse.cli.charts`, the one backend
of every chart),
there is no script and nothing is fetched, so the file can be mailed or opened offline.  The layout
is one column on a phone and two on a laptop; wide tables scroll sideways inside their box.
"""

from __future__ import annotations

from html import escape
from typing import Any

from logparse.cli.charts import history_chart, waterfall_svg
from logparse.cli.charts.svg import ARGS_COLOR, OUTCOME_COLOR, VERSION_COLOR
from logparse.launches.deployment import engine_name, short_label
from logparse.reports.charts import explain_chart, history_series, numbered_changes
from logparse.reports.problems import KINDS

#: Problem kinds, most harmful first (for the order of the list of problems).
KIND_ORDER = {k: i for i, k in enumerate(KINDS)}

#: The width of the budget chart (user units): it fills half a laptop page or a phone's width.
WATERFALL_W = 420

CSS = """
:root { color-scheme: light; --fg:#1d1d1f; --muted:#5f6368; --line:#dadce0; --bg:#fff; --card:#f8f9fa; }
* { box-sizing: border-box; }
body { margin:0; font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; color:var(--fg); background:var(--bg); }
main { max-width:1180px; margin:0 auto; padding:16px; }
h1 { font-size:1.5rem; margin:.2rem 0 .4rem; } h2 { font-size:1.2rem; margin:0 0 .3rem; }
h3 { font-size:1rem; margin:1rem 0 .4rem; }
.meta, .note { color:var(--muted); font-size:.88rem; }
code { font-size:.85em; overflow-wrap:anywhere; }
.charts { display:grid; grid-template-columns:repeat(auto-fit,minmax(250px,1fr)); gap:10px; }
.cols { display:grid; grid-template-columns:repeat(auto-fit,minmax(320px,1fr)); gap:16px; }
.cols > div, .charts > div { min-width:0; }
.box { background:var(--bg); border:1px solid var(--line); border-radius:8px; padding:8px; min-width:0; }
svg.chart { width:100%; height:auto; display:block; }  /* the charts style themselves (logparse.cli.charts) */
.scroll { overflow-x:auto; }
table { border-collapse:collapse; width:100%; font-size:.86rem; background:var(--bg); }
th, td { border-bottom:1px solid var(--line); padding:4px 6px; text-align:left; vertical-align:top; overflow-wrap:anywhere; }
td.label { min-width:9em; }
td.n, th.n { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
.badge { white-space:nowrap; display:inline-block; padding:1px 8px; border-radius:10px; color:#fff; font-size:.8rem; font-weight:600; background:#546e7a; }
.ok, .ready { background:#2e7d32; } .improved { background:#1565c0; } .regression, .failed { background:#c62828; }
.nothing_to_compare, .skipped, .incomplete { background:#757575; }
ul { padding-left:1.2rem; margin:.3rem 0; } li { margin:.2rem 0; }
li, p, h2, h3 { overflow-wrap:anywhere; }  /* long flags and paths break instead of widening a phone's page */
nav a { margin-right:.8rem; white-space:nowrap; }
li.dim { color:var(--muted); } ul.answer li { font-weight:500; } ol.recs li { margin:.5rem 0; }
details.dep { border:1px solid var(--line); border-radius:10px; margin:10px 0; background:var(--card); }
details.dep > summary { cursor:pointer; padding:10px 14px; list-style-position:inside; }
details.dep > summary h2 { display:inline; font-size:1.05rem; }
details.dep[open] > summary { border-bottom:1px solid var(--line); }
details.dep > .body { padding:10px 14px 14px; }
details.dep.problem { border-color:#c62828; border-width:2px; }
.facts { color:var(--muted); font-size:.88rem; margin-left:.3rem; }
.trouble { color:#c62828; font-weight:600; font-size:.88rem; margin-left:.3rem; }
section.attention { border:2px solid #c62828; border-radius:10px; padding:10px 14px; margin:14px 0; }
section.attention.clear { border-color:#2e7d32; }
section.attention h2 { margin:0 0 .3rem; }
ol.changes { font-size:.86rem; margin:.3rem 0 .6rem; } ol.changes li { overflow-wrap:anywhere; }
.failed_start, .kv_drop { background:#c62828; } .low_headroom { background:#ef6c00; }
details.more { margin:.8rem 0; } details.more > summary { cursor:pointer; font-weight:600; }
details.sources { margin:18px 0; } details.sources > summary { cursor:pointer; font-weight:600; }
@media (max-width:600px) { main { padding:8px; } details.dep > .body { padding:8px; } body { font-size:14px; } }
"""


def _badge(status: str | None) -> str:
    s = escape(status or "?")
    return f'<span class="badge {s}">{s.replace("_", " ")}</span>'


def _n(v: Any, nd: int = 0) -> str:
    if v is None:
        return "—"
    if isinstance(v, bool) or not isinstance(v, int | float):
        return escape(str(v))
    return f"{v:,.0f}" if float(v).is_integer() else f"{v:,.{nd}f}"


def _history_table(points: list[dict[str, Any]]) -> str:
    rows = []
    for p in points:
        change = p.get("version_change") or ""
        change += ("; " if change and p.get("arg_changes") else "") + (p.get("arg_changes") or "")
        rows.append(
            f"<tr><td class=n>#{p['launch_no']}</td><td>{_n(p['started_at'])}</td><td>{_badge(p['outcome'])}</td>"
            f"<td>{_n(p['version'])}</td><td class=n>{_n(p['kv_tokens'])}</td><td class=n>{_n(p['headroom_gb'], 2)}</td>"
            f"<td class=n>{_n(p['weights_gb'], 2)}</td><td>{escape(change)}</td></tr>"
        )
    head = (
        "<tr><th class=n>launch</th><th>started</th><th>outcome</th><th>version</th><th class=n>KV tokens</th>"
        "<th class=n>headroom GiB</th><th class=n>weights GiB</th><th>changed at this restart</th></tr>"
    )
    return f'<div class="scroll"><table>{head}{"".join(rows)}</table></div>'


def _explain(d: dict[str, Any]) -> str:
    ex = d.get("explain") or {}
    latest = d["latest"]
    out = [f"<h3>Latest launch {_badge(latest['outcome'])} <code>{escape(latest['launch_id'][:12])}</code></h3>"]
    if ex.get("waterfall"):
        title = f"Budget of {ex.get('binding_rank') or 'the binding rank'} (GiB)"
        chart = waterfall_svg(explain_chart(ex, title), width=WATERFALL_W, standalone=False)
        out.append(f'<div class="box">{chart}</div>')
    out.append(_advice(ex))
    sentences = "".join(f"<li>{escape(s)}</li>" for s in ex.get("sentences") or [])
    n = len(ex.get("sentences") or [])
    out.append(
        f'<details class="more"><summary>Why: the budget step by step ({n} points)</summary><ul>{sentences}</ul></details>'
        if sentences
        else '<p class="note">No explanation: the log has no budget.</p>'
    )
    warnings = latest.get("warnings") or []
    if warnings:
        items = "".join(f"<li>{escape(w)}</li>" for w in warnings[:MAX_WARNINGS_SHOWN])
        more = len(warnings) - MAX_WARNINGS_SHOWN
        items += f"<li>… and {more} more (logparse show {escape(latest['launch_id'][:12])})</li>" if more > 0 else ""
        out.append(f"<h3>Warnings of this launch</h3><ul>{items}</ul>")
    return "".join(out)


def _advice(ex: dict[str, Any]) -> str:
    """The short answer and the ranked recommendations, as explain gives them (one item each)."""
    answer = "".join(f"<li>{escape(line)}</li>" for line in ex.get("answer") or [])
    out = [f'<h3>Answer</h3><ul class="answer">{answer}</ul>'] if answer else []
    items = "".join(_recommendation(r) for r in ex.get("recommendations") or [])
    if items:
        out.append(f'<h3>Recommendations, best first</h3><ol class="recs">{items}</ol>')
    terms = ex.get("engine_reserve_terms") or []
    if ex.get("engine_reserve_gb") is not None and terms:
        parts = ", ".join(
            f"{t['name']} {t['gb']:.2f}" + ("" if t.get("counted", True) else " (not counted)") for t in terms
        )
        out.append(f'<p class="note">Engine reserve {ex["engine_reserve_gb"]:.2f} GiB: {escape(parts)}</p>')
    return "".join(out)


def _recommendation(r: dict[str, Any]) -> str:
    if not r.get("possible", True):
        return f'<li class="dim">{escape(r["action"])}: not possible: {escape(r["reason"])}</li>'
    figs = [f"{_n(r['kv_tokens'])} KV tokens" if r.get("kv_tokens") is not None else ""]
    figs.append(f"KV {r['kv_gb']:.2f} GiB/rank" if r.get("kv_gb") is not None else "")
    figs.append(f"headroom {r['headroom_gb']:.2f} GiB" if r.get("headroom_gb") is not None else "")
    cost, risk = r.get("cost") or {}, r.get("risk") or {}
    costs = [f"{cost['more_gpus']} more GPU(s)" if cost.get("more_gpus") else ""]
    costs.append(f"GPU {cost['gpu_memory_gb']:+.2f} GiB/rank" if cost.get("gpu_memory_gb") else "")
    costs.append(f"host {cost['host_memory_gb']:,.2f} GB (decimal)" if cost.get("host_memory_gb") else "")
    costs.append(f"accuracy: {cost['accuracy']}" if cost.get("accuracy") not in (None, "", "none") else "")
    costs.append(f"throughput: {cost['throughput']}" if cost.get("throughput") else "")
    flags = f"<code>{escape(' '.join(r['flags']))}</code> " if r["flags"] else ""
    return (
        f"<li>{flags}{escape(r['action'])}"
        f"<br><b>{escape(' · '.join(f for f in figs if f) or 'no figures')}</b>"
        f'<br><span class="note">cost: {escape("; ".join(c for c in costs if c) or "none")}</span>'
        f"<br><b>risk {escape(risk.get('level', '?'))}</b>: {escape(risk.get('why', ''))}"
        + (f'<br><span class="note">fixes: {escape(r["fixes"])}</span>' if r.get("fixes") else "")
        + f'<br><span class="note">why: {escape(r.get("reason", ""))}</span></li>'
    )


#: Warnings of a launch the report lists (``show`` lists them all).
MAX_WARNINGS_SHOWN = 12


def _attribution(att: dict[str, Any]) -> str:
    if not att.get("supported"):
        return ""
    rows = "".join(
        f"<tr><td>{escape(s['input'])}</td><td>{escape(str(s.get('a')))} -> {escape(str(s.get('b')))}</td>"
        f"<td class=n>{s['delta_tokens']:+,}</td></tr>"
        for s in att.get("steps", [])
        if s.get("delta_tokens")
    )
    un = att.get("unexplained_tokens")
    if un:
        rows += f"<tr><td>unexplained ({escape(str(att.get('unexplained_points_at') or ''))})</td><td></td><td class=n>{un:+,}</td></tr>"
    head = "<tr><th>why KV tokens moved</th><th>from -> to</th><th class=n>tokens</th></tr>"
    return f'<div class="scroll"><table>{head}{rows}</table></div>' if rows else ""


def _diff_and_check(d: dict[str, Any]) -> str:
    out = []
    if d.get("diff"):
        items = "".join(f"<li>{escape(s)}</li>" for s in d["diff"]["summary"] or [])
        out.append(f"<h3>Last restart: what changed</h3><ul>{items}</ul>{_attribution(d['diff']['attribution'])}")
    else:
        out.append('<h3>Last restart</h3><p class="note">One launch so far: nothing to compare.</p>')
    ck = d.get("check") or {}
    out.append(f"<h3>Check {_badge(ck.get('status'))}</h3>")
    judged = [r for r in ck.get("results", []) if r.get("status") != "skipped"]
    if judged:
        rows = "".join(
            f"<tr><td class=label>{escape(r.get('label') or r.get('metric') or '')}</td><td>{_badge(r.get('status'))}</td>"
            f"<td class=n>{_n(r.get('baseline'), 2)}</td><td class=n>{_n(r.get('value'), 2)}</td>"
            f"<td>{escape(r.get('note') or r.get('likely_cause') or '')}</td></tr>"
            for r in judged
        )
        head = "<tr><th>check</th><th>verdict</th><th class=n>before</th><th class=n>now</th><th>note</th></tr>"
        out.append(f'<div class="scroll"><table>{head}{rows}</table></div>')
    return "".join(out)


def _failed(d: dict[str, Any]) -> str:
    if not d.get("failed"):
        return ""
    rows = "".join(
        f"<tr><td class=n>#{p['launch_no']}</td><td class=n>{_n(p['started_at'])}</td><td>{escape(p.get('error') or '(no error line)')}</td></tr>"
        for p in d["failed"]
    )
    return f'<h3>Failed starts</h3><div class="scroll"><table><tr><th class=n>launch</th><th>started</th><th>error</th></tr>{rows}</table></div>'


#: The history charts of each deployment: (figure, title, unit).
HISTORY_CHARTS = (
    ("kv_tokens", "KV tokens", "tokens"),
    ("headroom_gb", "Headroom left (GiB)", "GiB"),
    ("weights_gb", "Weights (GiB)", "GiB"),
)

#: How to read the history charts (said once, above the deployments).
LEGEND = (
    f'<span style="color:{OUTCOME_COLOR["ready"]}">● ready</span> '
    f'<span style="color:{OUTCOME_COLOR["failed"]}">● / × failed</span> '
    f'<span style="color:{OUTCOME_COLOR["incomplete"]}">● incomplete</span> · '
    f'<span style="color:{VERSION_COLOR}">purple line: version change</span> · '
    f'<span style="color:{ARGS_COLOR}">dashed line: arguments changed</span> (each line numbered; '
    "what it changed is listed under the charts) · a figure holds until the next restart, so restarts are steps"
)


def _label(d: dict[str, Any]) -> str:
    """The deployment as every surface names it (:func:`logparse.launches.deployment.short_label`)."""
    return short_label(d["who"]["deployment"] or "")


def _changes(pts: list[dict[str, Any]]) -> str:
    """What each numbered change line of the charts changed (the same marks in every chart)."""
    series = history_series(pts, "kv_tokens", title="")
    items = "".join(
        f'<li value="{n}"><span class="meta">{escape(when)}</span> {escape(m.detail)}</li>'
        for n, when, m in numbered_changes(series)
    )
    return f'<ol class="changes">{items}</ol>' if items else ""


def _fold_line(d: dict[str, Any]) -> str:
    """The line a folded deployment shows: its name, latest outcome and verdict, figures, problems."""
    who, latest, ex = d["who"], d["latest"], d.get("explain") or {}
    facts = [f"{len(d['history'])} launch(es)", f"{engine_name(who.get('engine'))} {_n(latest.get('version'))}"]
    if ex.get("kv_tokens") is not None:
        facts.append(f"{_n(ex['kv_tokens'])} KV tokens")
    if ex.get("headroom_gb") is not None:
        facts.append(f"headroom {ex['headroom_gb']:.2f} GiB")
    problems = d.get("problems") or []
    trouble = f'<span class="trouble">{len(problems)} to look at</span>' if problems else ""
    check = (d.get("check") or {}).get("status")
    verdict = _badge(check) if check != "nothing_to_compare" else ""  # (one launch: nothing to say)
    return (
        f"<summary><h2>{escape(_label(d))}</h2> {_badge(latest['outcome'])} {verdict}"
        f'<span class="facts">{escape(" · ".join(facts))}</span>{trouble}</summary>'
    )


def _deployment(i: int, d: dict[str, Any]) -> str:
    who, pts = d["who"], d["history"]
    charts = "".join(
        f'<div class="box">{history_chart(pts, key, title, unit)}</div>' for key, title, unit in HISTORY_CHARTS
    )
    where = " · ".join(escape(str(who[k])) for k in ("host", "unit", "engine") if who.get(k))
    problems = d.get("problems") or []
    found = "".join(f"<li>{_badge(p['kind'])} {escape(p['text'])}</li>" for p in problems)
    cls, opened = ("dep problem", " open") if problems else ("dep", "")
    return (
        f'<details class="{cls}" id="d{i}"{opened}>{_fold_line(d)}<div class="body">'
        f'<p class="meta"><code>{escape(who["deployment"] or "")}</code><br>{where} · '
        f"TP {who.get('tp_size') or '?'} · DP {who.get('dp_size') or '?'}</p>"
        + (f"<ul>{found}</ul>" if found else "")
        + f'<div class="charts">{charts}</div>{_changes(pts)}'
        f'<div class="cols"><div>{_explain(d)}</div><div>{_diff_and_check(d)}{_failed(d)}</div></div>'
        f'<details class="more"{" open" if len(pts) > 1 else ""}><summary>History ({len(pts)} launch(es))</summary>'
        f"{_history_table(pts)}</details></div></details>"
    )


def _attention(deployments: list[dict[str, Any]]) -> str:
    """Every problem of the store, most harmful first, each linked to its deployment."""
    found = [(i, p) for i, d in enumerate(deployments) for p in d.get("problems") or []]
    if not found:
        return (
            '<section class="attention clear"><h2>Nothing needs attention</h2><p class="note">No failed start, '
            "no regression or KV drop at the last restart, every latest launch has at least 2 GiB of headroom.</p>"
            "</section>"
        )
    found.sort(key=lambda x: (x[1]["latest"] is False, KIND_ORDER.get(x[1]["kind"], 9), x[0]))
    items = "".join(
        f'<li>{_badge(p["kind"])} <a href="#d{i}">{escape(p["label"])}</a>: {escape(p["text"])}</li>' for i, p in found
    )
    return f'<section class="attention"><h2>Needs attention ({len(found)})</h2><ul>{items}</ul></section>'


def _sources(sources: list[dict[str, Any]]) -> str:
    rows = "".join(
        f"<tr><td><code>{escape(str(s['path']))}</code></td><td>{escape(str(s['kind']))}</td>"
        f"<td class=n>{_n(s['lines'])}</td><td class=n>{_n(s['parsed'])}</td><td class=n>{_n(s['noise'])}</td>"
        f"<td class=n>{_n(s['unrecognized'])}</td></tr>"
        for s in sources
    )
    head = (
        "<tr><th>source</th><th>kind</th><th class=n>lines</th><th class=n>parsed</th><th class=n>noise</th>"
        "<th class=n>unrecognized</th></tr>"
    )
    unrec = sum(s["unrecognized"] or 0 for s in sources)
    return (
        f'<details class="sources" id="sources"{" open" if unrec else ""}><summary>Sources ({len(sources)}, '
        f'{unrec} unrecognized line(s))</summary><div class="scroll"><table>{head}{rows}</table></div></details>'
    )


def render_html(doc: dict[str, Any], *, title: str = "logparse report", generated: str = "") -> str:
    """The page of an overview (``Overview.to_dict()``): problems first, then every deployment."""
    t, deps = doc["totals"], doc["deployments"]
    body = "".join(_deployment(i, d) for i, d in enumerate(deps))
    summary = (
        f"{t['deployments']} deployment(s), {t['launches']} launch(es), {t['failed']} failed start(s), "
        f"{t['sources']} source(s), {t['unrecognized']} unrecognized line(s)"
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body><main>"
        f'<h1>{escape(title)}</h1><p class="meta">{escape(summary)}<br>store <code>{escape(doc["store"])}</code>'
        f"{' · ' + escape(generated) if generated else ''}</p>{_attention(deps)}"
        f'<h2>Deployments</h2><p class="note">Deployments with something to look at first and unfolded; '
        f"click a line to unfold it. {LEGEND}</p>"
        f"{body}{_sources(doc['sources'])}</main></body></html>\n"
    )
