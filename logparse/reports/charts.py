"""What each chart shows, as plain data: the budget waterfall of ``explain``, the bars of ``diff``, a
deployment's history.  Nothing here draws; :mod:`logparse.cli.charts` renders these specs as SVG (and,
through the ``plot`` extra, as PNG or PDF).

The figures are the reports' own (``explain``'s waterfall steps, ``diff``'s budget and attribution,
the store's ``history`` rows): a spec only places them (where a bar starts and ends, which level a
rank reaches after each step, which restart changed what), so every chart says what the text says.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from logparse import engines
from logparse.launches.deployment import short_label

# ------------------------------------------------------------------------------ the waterfall

#: The kinds of explain's waterfall steps that set the level (a bar from zero).
LEVEL_KINDS = ("start", "subtotal", "end")
NO_START = "the log prints no figure to start from: each step is drawn at its own size"


@dataclass(frozen=True)
class WaterfallBar:
    """One step of a budget: ``lo``..``hi`` on the memory axis (GiB)."""

    label: str
    kind: str  #: start | minus | subtotal | end | note (explain's step kinds)
    role: str  #: level | end | weights | kv | draft | graphs | other | note: what the bar is, for its colour
    gb: float
    lo: float
    hi: float
    predicted_gb: float | None = None  #: the KV pool the formula predicts (the KV pool bar only)
    #: each rank's own level after this step (rank, GiB), when the launch has several ranks
    rank_levels: tuple[tuple[str, float], ...] = ()

    @property
    def level(self) -> float:
        """Where the memory stands after this step."""
        return self.lo if self.kind == "minus" else self.hi


@dataclass(frozen=True)
class WaterfallPanel:
    title: str
    bars: tuple[WaterfallBar, ...]
    reserved_gb: float | None = None  #: the part held back, drawn as a line across the panel
    note: str = ""  #: how to read it, when it is not a plain waterfall


@dataclass(frozen=True)
class WaterfallChart:
    title: str
    subtitle: str
    unit: str
    panels: tuple[WaterfallPanel, ...]
    empty: str = ""  #: why there is nothing to draw

    @property
    def bars(self) -> list[WaterfallBar]:
        return [b for p in self.panels for b in p.bars]


def step_role(step: dict[str, Any]) -> str:
    """The colour class of a step: levels, the end, and what each deduction is."""
    label, kind = str(step.get("label") or ""), step["kind"]
    if kind == "note":
        return "note"
    if label == "KV pool":
        return "kv"
    if kind == "end":
        return "end"
    if kind in LEVEL_KINDS:
        return "level"
    if label == "weights" or label.startswith("consumed"):
        return "weights"
    if label.startswith("draft"):
        return "draft"
    if "graph" in label.lower():
        return "graphs"
    return "other"


def waterfall_bars(steps: list[dict[str, Any]]) -> list[WaterfallBar]:
    """The bars of explain's steps.  A level (start, subtotal, end) is a bar from zero; a deduction
    hangs from the level before it and lowers it; one with no level above it (a vLLM log without the
    budget line, a drift larger than what was left) is its size from zero.  A run of notes splits
    what is there from the bottom up (SGLang's part held back, then the KV budget); a lone note is
    its size from zero."""
    bars: list[WaterfallBar] = []
    level: float | None = None
    note_top: float | None = None
    for st in steps:
        if st.get("gb") is None:
            continue
        gb, kind = float(st["gb"]), st["kind"]
        if kind == "note":  # a negative one (held back more than was free) spans back from where it starts
            lo = note_top or 0.0
            note_top = lo + gb
            bars.append(_bar(st, min(lo, lo + gb), max(lo, lo + gb)))
            continue
        note_top = None
        if kind in LEVEL_KINDS:  # a negative one (vLLM's KV memory of a failed start) lies left of zero
            lo, hi, level = min(0.0, gb), max(0.0, gb), gb
        elif level is not None and level >= gb:
            lo, hi, level = level - gb, level, level - gb
        else:
            lo, hi, level = 0.0, gb, (None if level is None else 0.0)
        bars.append(_bar(st, lo, hi))
    return bars


def _bar(st: dict[str, Any], lo: float, hi: float) -> WaterfallBar:
    pred = st.get("predicted_gb")
    return WaterfallBar(
        label=str(st.get("label") or st["kind"]),
        kind=st["kind"],
        role=step_role(st),
        gb=float(st["gb"]),
        lo=lo,
        hi=hi,
        predicted_gb=None if pred is None else float(pred),
    )


def _with_rank_levels(bars: list[WaterfallBar], ranks: list[dict[str, Any]]) -> list[WaterfallBar]:
    """Each bar with every rank's own level after the same step (only for launches of several ranks)."""
    if len(ranks) < 2:
        return bars
    own: list[tuple[str, dict[str, float]]] = []
    for r in ranks:
        levels = {b.label: b.level for b in waterfall_bars(r.get("waterfall") or []) if b.kind != "note"}
        own.append((str(r.get("rank") or "?"), levels))
    out = []
    for b in bars:
        if b.kind == "note":
            out.append(b)
            continue
        marks = tuple((name, levels[b.label]) for name, levels in own if b.label in levels)
        out.append(WaterfallBar(**{**b.__dict__, "rank_levels": marks}))
    return out


def explain_chart(doc: dict[str, Any], title: str | None = None) -> WaterfallChart:
    """The budget of the binding rank (``Explanation.to_dict()``, or the report's part of it): the
    whole device down to what is free after the weights, then what became of that memory, with the
    part held back and every rank's level after each step."""
    unit = "GiB" + (" of system memory" if doc.get("memory_kind") == "cpu" else "")
    bars = waterfall_bars(doc.get("waterfall") or [])
    binding = doc.get("binding_rank") or "the binding rank"
    split = next((i for i, b in enumerate(bars) if b.kind == "subtotal"), None)
    reserved = doc.get("reserved_gb")
    reserved = float(reserved) if reserved else None
    panels: tuple[WaterfallPanel, ...]
    if split:
        after = _with_rank_levels(bars[split:], doc.get("ranks") or [])
        panels = (
            WaterfallPanel("whole device", tuple(bars[: split + 1])),
            WaterfallPanel(f"after the weights ({binding}, the rank with the least headroom)", tuple(after), reserved),
        )
    elif bars:
        alone = _with_rank_levels(bars, doc.get("ranks") or [])
        first = next((b for b in bars if b.kind != "note"), None)
        note = "" if first is None or first.kind in LEVEL_KINDS else NO_START
        panels = (WaterfallPanel(f"budget of {binding} (the binding rank)", tuple(alone), reserved, note),)
    else:
        panels = ()
    return WaterfallChart(
        title=title or _launch_title(doc),
        subtitle=_launch_subtitle(doc) if title is None else "",
        unit=unit,
        panels=panels,
        empty="" if panels else "no memory figures in this launch",
    )


def _launch_title(doc: dict[str, Any]) -> str:
    version = doc.get("engine_version") or doc.get("sglang_version_range") or "?"
    return f"{doc.get('model_path') or 'launch'} — {engines.label(doc.get('engine'))} {version}"


def _launch_subtitle(doc: dict[str, Any]) -> str:
    bits = [str(doc.get("era_label") or "")]
    for name in ("mem_fraction_static", "gpu_memory_utilization"):
        if doc.get(name) is not None:
            bits.append(f"{name}={doc[name]}")
    if doc.get("launch_id"):
        bits.append(f"launch {str(doc['launch_id'])[:12]}")
    return ", ".join(b for b in bits if b)


# ------------------------------------------------------------------------------ diff


@dataclass(frozen=True)
class PairBar:
    """One figure of A and of B (None: the launch does not have it)."""

    label: str
    a: float | None
    b: float | None


@dataclass(frozen=True)
class TokenStep:
    """One bar of the KV-token attribution: A's tokens, an input's change, B's tokens."""

    label: str
    tokens: int
    lo: float
    hi: float
    role: str  #: a | b | up | down | zero


@dataclass(frozen=True)
class DiffChart:
    a_title: str
    b_title: str
    budget: tuple[PairBar, ...]
    budget_unit: str
    tokens_title: str
    tokens: tuple[TokenStep, ...]
    hicache: PairBar


#: The budget figures ``diff --plot`` draws: (field of diff's budget, label).
DIFF_FIELDS = (
    ("weights_gb", "weights"),
    ("post_load_avail_gb", "free after weights"),
    ("reserved_gb", "held back"),
    ("kv_pool_gb", "KV pool"),
    ("graph_gb", "CUDA graphs"),
    ("draft_weights_gb", "draft weights"),
    ("draft_kv_gb", "draft KV"),
    ("other_gb", "other"),
    ("headroom_gb", "headroom"),
)


def diff_chart(doc: dict[str, Any]) -> DiffChart:
    """``diff``'s budget of A and B side by side, why the KV tokens moved, and the HiCache host pools."""
    bud = doc.get("budget") or {}
    budget = tuple(
        PairBar(label, bud[k]["a"], bud[k]["b"])
        for k, label in DIFF_FIELDS
        if bud.get(k) and (bud[k]["a"] is not None or bud[k]["b"] is not None)
    )
    at = doc.get("attribution") or {}
    if at.get("supported") and at.get("a_tokens") is not None and at.get("b_tokens") is not None:
        tokens_title, tokens = "why the KV tokens changed (one input at a time)", attribution_steps(at)
    else:
        ta, tb = at.get("a_tokens"), at.get("b_tokens")
        tokens_title = "KV tokens (" + (at.get("reason") or "no attribution") + ")"
        tokens = tuple(
            TokenStep(lab, int(t), 0.0, float(t), role)
            for lab, t, role in (("A", ta, "a"), ("B", tb, "b"))
            if t is not None
        )
    hc = doc.get("hicache") or {}
    return DiffChart(
        a_title="A: " + who(doc.get("a") or {}),
        b_title="B: " + who(doc.get("b") or {}),
        budget=budget,
        budget_unit="GiB (binding rank)",
        tokens_title=tokens_title,
        tokens=tokens,
        hicache=PairBar(
            "HiCache host pool per rank (decimal GB)",
            (hc.get("a") or {}).get("host_gb"),
            (hc.get("b") or {}).get("host_gb"),
        ),
    )


def attribution_steps(at: dict[str, Any]) -> tuple[TokenStep, ...]:
    """A's logged KV tokens, the change each input brings through the formula (and what the formula
    does not explain), B's logged tokens: each change hangs from the level the one before left."""
    level = int(at["a_tokens"])
    out = [TokenStep("A (logged)", level, 0.0, float(level), "a")]
    changes = [(s["input"], int(s["delta_tokens"] or 0)) for s in at.get("steps") or []]
    if at.get("unexplained_tokens") is not None:
        changes.append(("not explained by the formula", int(at["unexplained_tokens"])))
    for label, d in changes:
        role = "up" if d > 0 else "down" if d < 0 else "zero"
        out.append(TokenStep(label, d, float(min(level, level + d)), float(max(level, level + d)), role))
        level += d
    b = int(at["b_tokens"])
    out.append(TokenStep("B (logged)", b, 0.0, float(b), "b"))
    return tuple(out)


def who(side: dict[str, Any]) -> str:
    """A launch as a title names it: its id, start time and pid (two launches of one file differ there), its source."""
    bits = [str(side.get("launch_id") or "")[:12]]
    if side.get("started_at"):
        bits.append(str(side["started_at"]).replace("T", " "))
    if side.get("pid"):
        bits.append(f"pid {side['pid']}")
    return "  ".join(b for b in [*bits, str(side.get("source") or "")] if b)


# ------------------------------------------------------------------------------ history

#: How many deployments ``history --plot`` draws (those with the most launches); the title says so.
MAX_PANELS = 24


@dataclass(frozen=True)
class HistoryPoint:
    launch_no: int
    started_at: datetime | None
    value: float | None
    outcome: str | None
    change: float | None = None  #: the change against the previous launch (the store's ``*_change``)
    integer: bool = False  #: the figure is a count (tokens), not GiB

    @property
    def tip(self) -> str:
        when = self.started_at.isoformat(sep=" ") if self.started_at else "?"
        return f"launch {self.launch_no} · {when} · {self.outcome or '?'}"


@dataclass(frozen=True)
class HistoryMark:
    """A restart that changed something: it took effect at point ``index``."""

    index: int
    kind: str  #: version | args | kv_definition
    label: str  #: short, written beside the line
    detail: str  #: whole, the line's tooltip


@dataclass(frozen=True)
class HistorySeries:
    title: str
    metric: str
    unit: str
    axis: str  #: time (dated, when every launch has a start time) | launch (launch order)
    points: tuple[HistoryPoint, ...]
    marks: tuple[HistoryMark, ...]
    note: str = ""  #: why the axis is not the one asked for

    @property
    def known(self) -> list[float]:
        return [p.value for p in self.points if p.value is not None]


@dataclass(frozen=True)
class HistoryChart:
    title: str
    series: tuple[HistorySeries, ...]
    deployments: int  #: how many deployments matched (``series`` may show fewer)
    launches: int


def metric_unit(metric: str) -> str:
    """The unit of a history metric, from its name (``*_gb`` GiB, HiCache's host pool decimal GB)."""
    if metric.startswith("hicache") and metric.endswith("_gb"):
        return "GB"
    if metric.endswith("_gb"):
        return "GiB"
    if "tokens" in metric:
        return "tokens"
    return "s" if metric.endswith("_s") else ""


def as_datetime(v: Any) -> datetime | None:
    if v is None or isinstance(v, datetime):
        return v
    try:
        return datetime.fromisoformat(str(v))
    except ValueError:
        return None


def history_series(
    rows: list[dict[str, Any]], metric: str, *, title: str, unit: str | None = None, axis: str = "auto"
) -> HistorySeries:
    """One deployment's launches (launch order, the store's ``history`` rows or the report's points):
    the metric per launch, and each restart's changes.  ``axis``: ``time`` dates the launches (every
    one needs a start time, else launch order and a note), ``launch`` orders them, ``auto`` dates
    them when it can."""
    points = tuple(_point(r, metric) for r in rows)
    marks = tuple(m for i, r in enumerate(rows) if i > 0 for m in change_marks(i, r))
    dated = bool(points) and all(p.started_at is not None for p in points)
    note = ""
    if axis == "time" and not dated:
        missing = sum(1 for p in points if p.started_at is None)
        note = f"in launch order: {missing} launch(es) without a start time"
    return HistorySeries(
        title=title,
        metric=metric,
        unit=metric_unit(metric) if unit is None else unit,
        axis="time" if axis != "launch" and dated else "launch",
        points=points,
        marks=marks,
        note=note,
    )


def _point(r: dict[str, Any], metric: str) -> HistoryPoint:
    v, ch = r.get(metric), r.get(f"{metric}_change")
    return HistoryPoint(
        launch_no=int(r.get("launch_no") or 0),
        started_at=as_datetime(r.get("started_at")),
        value=None if v is None else float(v),
        outcome=r.get("outcome"),
        change=None if ch is None else float(ch),
        integer=isinstance(v, int) and not isinstance(v, bool),
    )


def change_marks(i: int, r: dict[str, Any]) -> list[HistoryMark]:
    """What the restart to launch ``i`` changed: the engine version, the meaning of kv_tokens, the arguments."""
    out = []
    if r.get("version_changed"):
        change = str(r.get("version_change") or "version")
        prefix = engines.label(r["engine"]) + " " if r.get("engine") else ""
        out.append(HistoryMark(i, "version", prefix + change, f"version {prefix}{change}"))
    if r.get("kv_tokens_definition_change"):
        text = str(r["kv_tokens_definition_change"])
        out.append(HistoryMark(i, "kv_definition", "kv_tokens redefined", text))
    names = changed_arg_names(r)
    if names:
        detail = "arguments changed: " + (str(r["arg_changes"]) if r.get("arg_changes") else ", ".join(names))
        out.append(HistoryMark(i, "args", arg_note(names, r.get("arg_changes")), detail))
    return out


def numbered_changes(series: HistorySeries) -> list[tuple[int, str, HistoryMark]]:
    """What each change line of a compact history panel (numbered 1, 2, … in the order of
    ``series.marks``) changed: (number, when the launch started, or its number, the mark)."""
    out = []
    for n, m in enumerate(series.marks, start=1):
        p = series.points[m.index]
        when = p.started_at.strftime("%Y-%m-%d %H:%M") if p.started_at else f"launch {p.launch_no}"
        out.append((n, when, m))
    return out


def changed_arg_names(r: dict[str, Any]) -> list[str]:
    if r.get("args_changed") is False:
        return []
    names = r.get("changed_arg_names") or str(r.get("changed_args") or "").split(", ")
    return [str(n) for n in names if n]


def arg_note(names: list[str], arg_changes: str | None) -> str:
    """One short line: the argument that changed with its values, or how many changed and which."""
    if len(names) == 1:
        change = str(arg_changes or "").split("; ")[0].split(": ", 1)[-1]
        old, sep, new = change.partition(" -> ")
        return f"{names[0]}: {clip(old, 14)} -> {clip(new, 14)}" if sep else names[0]
    return f"{len(names)} args: " + ", ".join(names[:3]) + (" …" if len(names) > 3 else "")


def clip(text: str, n: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def history_chart(rows: list[dict[str, Any]], metric: str, axis: str = "auto", limit: int = MAX_PANELS) -> HistoryChart:
    """Every deployment's history of ``metric`` (the store's ``history`` rows), those with the most
    launches first, at most ``limit`` of them."""
    by_dep: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_dep.setdefault(str(row.get("deployment")), []).append(row)
    groups = sorted(by_dep.items(), key=lambda g: -len(g[1]))
    series = tuple(
        history_series(sorted(part, key=lambda r: r.get("launch_no") or 0), metric, title=short_label(dep), axis=axis)
        for dep, part in groups[:limit]
    )
    return HistoryChart(f"{metric} over launches{left_out(len(series), len(groups))}", series, len(groups), len(rows))


def left_out(shown: int, matched: int) -> str:
    """What a chart of ``shown`` of ``matched`` deployments says of the others, and how to see them."""
    if shown >= matched:
        return ""
    return (
        f" ({shown} of {matched} deployments: those with the most launches; --deployment or --model to plot the others)"
    )


__all__ = [
    "DIFF_FIELDS",
    "MAX_PANELS",
    "DiffChart",
    "HistoryChart",
    "HistoryMark",
    "HistoryPoint",
    "HistorySeries",
    "PairBar",
    "TokenStep",
    "WaterfallBar",
    "WaterfallChart",
    "WaterfallPanel",
    "diff_chart",
    "explain_chart",
    "history_chart",
    "history_series",
    "left_out",
    "metric_unit",
    "numbered_changes",
    "waterfall_bars",
]
