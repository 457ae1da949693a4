"""``logparse history --plot``: the metric over launches, changes annotated (matplotlib, Agg)."""

from __future__ import annotations

from logparse.launches.deployment import short_label

OUTCOME_COLOR = {"ready": "#2e7d32", "failed": "#c62828", "incomplete": "#ef6c00"}
MAX_PANELS = 8


def _label(row, dense: bool = False) -> str:
    ts = row.get("started_at")
    if dense:
        return f"#{row['launch_no']}" + (f"\n{ts:%m-%d}" if ts is not None else "")
    when = ts.strftime("%Y-%m-%d\n%H:%M") if ts is not None else "?"
    return f"#{row['launch_no']}\n{when}"


def _short(text: str, n: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _arg_note(row) -> str:
    """One short line: the argument that changed with its values, or the names when several did."""
    names = row.get("changed_arg_names") or (row.get("changed_args") or "").split(", ")
    names = [n for n in names if n]
    if len(names) == 1:
        change = (row.get("arg_changes") or "").split(": ", 1)[-1]
        old, _, new = change.partition(" -> ")
        return _short(f"{names[0]}: {_short(old, 14)}→{_short(new, 14)}", 48)
    return _short(f"{len(names)} args: " + ", ".join(names[:3]) + (" …" if len(names) > 3 else ""), 48)


def plot_history(result, metric: str, path: str) -> int:
    """Draw one panel per deployment (``result``: rows with ``columns`` and ``rows``); returns the panel count."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dicts = [dict(zip(result.columns, r)) for r in result.rows]
    if not dicts:
        raise ValueError("nothing to plot: no launches match")
    by_dep: dict[str, list[dict]] = {}
    for row in dicts:
        by_dep.setdefault(row["deployment"], []).append(row)
    groups = sorted(by_dep.items(), key=lambda g: -len(g[1]))[:MAX_PANELS]
    n = len(groups)
    fig, axes = plt.subplots(n, 1, figsize=(11, 3.6 * n + 0.6), squeeze=False)
    for ax, (dep, part) in zip(axes[:, 0], groups):
        _panel(ax, dep, sorted(part, key=lambda r: r["launch_no"]), metric)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], marker="o", ls="", color=c, label=o) for o, c in OUTCOME_COLOR.items()]
    handles += [
        Line2D([], [], ls="--", color="#8e24aa", label="SGLang version changed"),
        Line2D([], [], ls=":", color="#00838f", label="server arguments changed"),
    ]
    fig.legend(handles=handles, loc="upper right", fontsize=8, ncol=5, frameon=False)
    fig.suptitle(f"{metric} over launches", x=0.01, ha="left", fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.35 / (3.6 * n + 0.6)))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return n


def _panel(ax, dep: str, rows: list[dict], metric: str) -> None:
    """One deployment's launches (in order): the metric, coloured by outcome, changes marked."""
    xs = list(range(len(rows)))
    ys = [r[metric] for r in rows]
    _points(ax, xs, rows, metric)
    known = [y for y in ys if y is not None]
    lo, hi = (min(known), max(known)) if known else (0, 1)
    span = (hi - lo) or (abs(hi) or 1.0)
    ax.set_ylim(lo - 0.15 * span, hi + 0.9 * span)
    for x, r in zip(xs, rows):
        _change_notes(ax, x, r, len(rows))
        if r.get(f"{metric}_change") not in (None, 0) and r[metric] is not None:
            ch = r[f"{metric}_change"]
            ax.annotate(
                f"{ch:+,}" if isinstance(ch, int) else f"{ch:+.2f}",
                (x, r[metric]),
                textcoords="offset points",
                xytext=(0, -14),
                ha="center",
                fontsize=7.5,
                color="#2e7d32" if ch > 0 else "#c62828",
            )
    if not known:
        ax.text(
            0.5,
            0.5,
            f"no {metric} in these launches (✕: a launch without it, e.g. a failed start)",
            transform=ax.transAxes,
            ha="center",
            va="center",
            color="#777",
            fontsize=9,
        )
    ax.set_xticks(xs)
    ax.set_xticklabels([_label(r, dense=len(rows) > 10) for r in rows], fontsize=7)
    ax.set_xlim(-0.7, max(len(rows) - 0.3, 0.7))
    if known and all(isinstance(y, int) for y in known) and max(abs(y) for y in known) >= 1000:
        from matplotlib.ticker import StrMethodFormatter

        ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    ax.set_ylabel(metric)
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(short_label(dep), fontsize=9.5, loc="left")


def _points(ax, xs: list[int], rows: list[dict], metric: str) -> None:
    """The line through the known values, and a dot per launch in its outcome's colour."""
    pts = [(x, r[metric]) for x, r in zip(xs, rows) if r[metric] is not None]
    if pts:
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "-", color="#607d8b", lw=1.5, zorder=1)
    for x, r in zip(xs, rows):
        if r[metric] is None:
            _unknown_mark(ax, x, r)
            continue
        ax.scatter(
            [x],
            [r[metric]],
            s=46,
            zorder=3,
            color=OUTCOME_COLOR.get(r["outcome"], "#555"),
            edgecolor="white",
            linewidth=0.8,
        )


def _unknown_mark(ax, x: int, r: dict) -> None:
    """A launch without the figure (a failed start has no headroom): a cross at the foot of the panel,
    in its outcome's colour, with the outcome written under it, so the launch is never silently missing."""
    ax.scatter(
        [x],
        [0.06],
        marker="x",
        s=52,
        zorder=3,
        color=OUTCOME_COLOR.get(r["outcome"], "#555"),
        transform=ax.get_xaxis_transform(),
        clip_on=False,
    )
    ax.text(
        x,
        0.11,
        r["outcome"] or "not known",
        transform=ax.get_xaxis_transform(),
        ha="center",
        va="bottom",
        fontsize=7,
        color=OUTCOME_COLOR.get(r["outcome"], "#555"),
    )


def _change_notes(ax, x: int, r: dict, n_rows: int) -> None:
    """A line before a launch whose SGLang version or server arguments changed, with what changed."""
    notes = []
    if r.get("version_changed"):
        ax.axvline(x - 0.5, color="#8e24aa", ls="--", lw=1.2, zorder=0)
        engine = "vLLM " if r.get("engine") == "vllm" else "SGLang "
        notes.append((_short(engine + (r.get("version_change") or "").replace(" -> ", "→"), 44), "#8e24aa"))
    if r.get("kv_tokens_definition_change"):
        notes.append(("kv_tokens redefined (vLLM 0.20.1)", "#f9a825"))
    if r.get("args_changed"):
        ax.axvline(x - 0.5, color="#00838f", ls=":", lw=1.2, zorder=0)
        notes.append((_arg_note(r), "#00838f"))
    for k, (text, color) in enumerate(notes):
        ax.text(
            x - 0.5 + (0.06 + 0.13 * k) * (1 if n_rows < 12 else 2),
            0.98,
            text,
            transform=ax.get_xaxis_transform(),
            rotation=90,
            va="top",
            ha="left",
            fontsize=7,
            color=color,
            clip_on=True,
        )
