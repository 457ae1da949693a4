"""Charts for ``explain --plot`` and ``diff --plot`` (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

from typing import Any

from logparse.launches.deployment import engine_name

_COLORS = {
    "start": "#4C72B0",
    "subtotal": "#4C72B0",
    "end": "#2CA02C",
    "KV pool": "#DD8452",
    "weights": "#8C8C8C",
    "draft": "#C44E52",
    "graphs": "#8172B3",
    "other": "#CCB974",
}


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _color(step: dict[str, Any]) -> str:
    lab = step["label"]
    if step["kind"] in ("start", "subtotal", "end"):
        return _COLORS[step["kind"]]
    if lab == "KV pool":
        return _COLORS["KV pool"]
    if lab == "weights":
        return _COLORS["weights"]
    if lab.startswith("draft"):
        return _COLORS["draft"]
    if "graph" in lab.lower():
        return _COLORS["graphs"]
    return _COLORS["other"]


def _levels(wf: list[dict[str, Any]]) -> list[tuple[dict[str, Any], float, float]]:
    """(step, bottom, top) of each bar, notes dropped."""
    out = []
    level = 0.0
    for st in wf:
        if st["kind"] == "note":
            continue
        gb = st["gb"] or 0.0
        if st["kind"] in ("start", "subtotal", "end"):
            level = gb
            out.append((st, 0.0, gb))
        else:
            out.append((st, level - gb, level))
            level -= gb
    return out


def plot_explain(rep: dict[str, Any], path: str) -> str:
    """Waterfall of the budget of the rank with the least headroom, with every rank's levels as markers."""
    plt = _plt()
    wf = rep.get("waterfall") or []
    unit = "GiB" + (" (system memory)" if rep.get("memory_kind") == "cpu" else "")
    bars = _levels(wf)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 5.6), gridspec_kw={"width_ratios": [1, 3]})
    title = (
        f"{rep.get('model_path') or 'launch'} — {engine_name(rep.get('engine'))} "
        f"{rep.get('engine_version') or rep.get('sglang_version_range') or '?'}, "
        f"{rep.get('era_label')}, mem_fraction_static={rep.get('mem_fraction_static')}"
    )
    fig.suptitle(title, fontsize=11)
    if not bars:
        ax1.text(0.5, 0.5, "no memory figures in this launch", ha="center", va="center")
        ax2.axis("off")
    else:
        # left: the whole GPU view up to "free after weights"; right: from there on
        split = next((i for i, (st, _, _) in enumerate(bars) if st["label"] == "free after weights"), 0)
        left, right = bars[: split + 1], bars[split:]
        _whole_device(ax1, left, unit)
        _after_weights(ax2, rep, right)
        ranks = rep.get("ranks") or []
        if len(ranks) > 1:
            _rank_levels(ax2, ranks, right)
        ax2.set_ylabel(unit)
        fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


Bars = list[tuple[dict[str, Any], float, float]]


def _draw_waterfall(ax, items: Bars) -> None:
    """One bar per step, its figure above it, dotted lines joining each level to the next bar."""
    for i, (st, lo, hi) in enumerate(items):
        ax.bar(i, hi - lo, bottom=lo, color=_color(st), edgecolor="black", linewidth=0.5, width=0.7)
        ax.text(i, hi + 0.01 * (ax.get_ylim()[1] or 1), f"{st['gb']:.2f}", ha="center", va="bottom", fontsize=8)
        if i + 1 < len(items):
            y = lo if st["kind"] == "minus" else hi
            ax.plot([i + 0.35, i + 0.65], [y, y], color="black", linewidth=0.6, linestyle=":")
    ax.set_xticks(range(len(items)))
    ax.set_xticklabels([st["label"].replace(" (", "\n(") for st, _, _ in items], rotation=30, ha="right", fontsize=8)


def _whole_device(ax, left: Bars, unit: str) -> None:
    """The left panel: the device's memory down to what is free after the weights."""
    top = max(hi for _, _, hi in left)
    ax.set_ylim(0, top * 1.12)
    _draw_waterfall(ax, left)
    ax.set_ylabel(unit)
    ax.set_title("whole device", fontsize=9)


def _after_weights(ax, rep: dict[str, Any], right: Bars) -> None:
    """The right panel: what became of the memory free after the weights, with the part held back
    and the predicted KV pool marked."""
    top2 = max(hi for _, _, hi in right)
    reserved0 = rep.get("reserved_gb")
    if reserved0 is not None and reserved0 > top2:
        top2 = reserved0  # held back more than was free after the weights: no KV budget at all
    ax.set_ylim(0, top2 * 1.15)
    _draw_waterfall(ax, right)
    ax.set_title(f"after the weights ({rep.get('binding_rank')}, the rank with the least headroom)", fontsize=9)
    reserved = rep.get("reserved_gb")
    if reserved is not None and reserved > 0:
        ax.axhline(reserved, color="#C44E52", linestyle="--", linewidth=1)
        ax.text(
            0.99,
            reserved,
            f"held back (1−f)·M_pre = {reserved:.2f}",
            color="#C44E52",
            ha="right",
            va="bottom",
            fontsize=8,
            transform=ax.get_yaxis_transform(),
        )
    pk = rep.get("predicted_kv_gb")
    for i, (st, lo, hi) in enumerate(right):
        if st["label"] == "KV pool" and pk is not None:
            ax.plot([i - 0.35, i + 0.35], [hi - pk, hi - pk], color="black", linewidth=1.5)
            ax.text(
                i,
                (hi + lo) / 2,
                f"logged\n{st['gb']:.2f}\n\npredicted\n{pk:.2f}",
                fontsize=6.5,
                ha="center",
                va="center",
                color="white",
                fontweight="bold",
            )


def _rank_levels(ax, ranks: list[dict[str, Any]], right: Bars) -> None:
    """Per-rank markers: every rank's own level after each step of the right panel."""
    for r in ranks:
        rb = _levels(r.get("waterfall") or [])
        sp = next((i for i, (st, _, _) in enumerate(rb) if st["label"] == "free after weights"), None)
        if sp is None:
            continue
        own = {st["label"]: (lo if st["kind"] == "minus" else hi) for st, lo, hi in rb[sp:]}
        for i, (st, _, _) in enumerate(right):
            if st["label"] in own:
                ax.plot(i + 0.42, own[st["label"]], marker="_", color="#333333", markersize=7, alpha=0.7)
    ax.plot([], [], marker="_", color="#333333", linestyle="none", label="each rank's level")
    ax.legend(loc="upper right", fontsize=8, frameon=False)


#: The budget figures ``diff --plot`` draws: (field, label).
_DIFF_FIELDS = [
    ("weights_gb", "weights"),
    ("post_load_avail_gb", "free after\nweights"),
    ("reserved_gb", "held back"),
    ("kv_pool_gb", "KV pool"),
    ("graph_gb", "CUDA graphs"),
    ("draft_weights_gb", "draft\nweights"),
    ("draft_kv_gb", "draft KV"),
    ("other_gb", "other"),
    ("headroom_gb", "headroom"),
]


def plot_diff(rep: dict[str, Any], path: str) -> str:
    """Side-by-side bars of the budget of A and B, and the KV-token attribution."""
    plt = _plt()
    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(15, 5.4), gridspec_kw={"width_ratios": [6, 4, 1.3]})
    fig.suptitle(f"A: {_who(rep['a'])}\nB: {_who(rep['b'])}", fontsize=9)
    _budget_bars(ax1, rep["budget"])
    at = rep["attribution"]
    from matplotlib.ticker import FuncFormatter

    ax2.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    if at.get("supported") and at.get("a_tokens") is not None and at.get("b_tokens") is not None:
        _attribution_waterfall(ax2, at)
    else:
        ta, tb = at.get("a_tokens"), at.get("b_tokens")
        ax2.bar([0, 1], [ta or 0, tb or 0], color=["#4C72B0", "#DD8452"])
        ax2.set_xticks([0, 1])
        ax2.set_xticklabels(["A", "B"])
        ax2.set_title("KV tokens (" + (at.get("reason") or "no attribution") + ")", fontsize=8)
    _hicache_bars(ax3, rep.get("hicache") or {})
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def _who(side: dict[str, Any]) -> str:
    """A launch as a title names it: its start time and pid (two launches of one file differ there), its source."""
    bits = [side.get("launch_id", "")[:12]]
    if side.get("started_at"):
        bits.append(str(side["started_at"]).replace("T", " "))
    if side.get("pid"):
        bits.append(f"pid {side['pid']}")
    return "  ".join(bits + [str(side.get("source") or "")])


def _budget_bars(ax, bud: dict[str, Any]) -> None:
    """A's and B's budget figures side by side, the ones either launch has."""
    import numpy as np

    fields = [
        (k, lab) for k, lab in _DIFF_FIELDS if bud.get(k) and (bud[k]["a"] is not None or bud[k]["b"] is not None)
    ]
    x = np.arange(len(fields))
    va = [bud[k]["a"] or 0 for k, _ in fields]
    vb = [bud[k]["b"] or 0 for k, _ in fields]
    ba = ax.bar(x - 0.2, va, 0.4, label="A", color="#4C72B0")
    bb = ax.bar(x + 0.2, vb, 0.4, label="B", color="#DD8452")
    for bars in (ba, bb):
        for b_ in bars:
            ax.text(
                b_.get_x() + b_.get_width() / 2,
                b_.get_height(),
                f" {b_.get_height():.2f}",
                ha="center",
                va="bottom",
                fontsize=7,
                rotation=90,
            )
    ax.set_ylim(0, max(va + vb + [1]) * 1.18)
    ax.set_xticks(x)
    ax.set_xticklabels([lab for _, lab in fields], fontsize=8)
    ax.set_ylabel("GiB (binding rank)")
    ax.set_title("memory budget", fontsize=9)
    ax.legend(frameon=False)


def _attribution_waterfall(ax, at: dict[str, Any]) -> None:
    """A's logged KV tokens, the change each input brings through the formula, B's logged tokens."""
    labels = ["A (logged)"] + [s["input"].replace(" (", "\n(") for s in at["steps"]]
    deltas = [s["delta_tokens"] or 0 for s in at["steps"]]
    if at.get("unexplained_tokens") is not None:
        labels.append("not explained\nby the formula")
        deltas.append(at["unexplained_tokens"])
    level = at["a_tokens"]
    levels = [level]
    ax.bar(0, level, color="#4C72B0")
    for i, d in enumerate(deltas, start=1):
        if d:
            ax.bar(i, d, bottom=level, color="#2CA02C" if d > 0 else "#C44E52")
        else:
            ax.plot([i - 0.4, i + 0.4], [level, level], color="#555555", linewidth=2)
        ax.text(i, level + max(d, 0), f"{d:+,}", ha="center", va="bottom", fontsize=7)
        level += d
        levels.append(level)
    ax.bar(len(deltas) + 1, at["b_tokens"], color="#DD8452")
    levels.append(at["b_tokens"])
    labels.append("B (logged)")
    lo, hi = min(levels), max(levels)
    span = max(hi - lo, 0.02 * hi, 1)
    ax.set_ylim(max(0, lo - 1.5 * span), hi + 0.6 * span)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=7)
    ax.set_ylabel("KV tokens")
    ax.set_title("why the KV tokens changed (one input at a time)", fontsize=9)


def _hicache_bars(ax, hc: dict[str, Any]) -> None:
    """Each launch's HiCache host pool per rank, or "off"."""
    ha, hb = (hc.get("a") or {}).get("host_gb"), (hc.get("b") or {}).get("host_gb")
    ax.bar([0, 1], [ha or 0, hb or 0], color=["#4C72B0", "#DD8452"])
    for i, v in enumerate((ha, hb)):
        ax.text(i, v or 0, "off" if v is None else f"{v:.2f}", ha="center", va="bottom", fontsize=8)
    ax.set_xticks([0, 1])
    ax.set_xticklabels(["A", "B"])
    ax.set_ylim(0, max(ha or 0, hb or 0, 1) * 1.2)
    ax.set_title("HiCache host pool\nper rank (decimal GB)", fontsize=8)
