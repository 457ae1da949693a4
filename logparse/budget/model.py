"""The launch budget: one pure function from a :class:`~logparse.launches.model.Launch` to where
its memory went.  Every surface (``launches``, ``show``, ``history``, ``explain``, ``diff``,
``check``, the store's views, the Parquet export) reads these values; none recomputes them.

Definitions (each figure is GiB, SGLang's "GB", rounded to the two decimals SGLang prints):

* **Per rank** (one physical rank: its target worker and, with speculative decoding, its draft
  worker): free memory before and after the weights, the weights, the KV pool, other pools
  (request-to-token table, Mamba state: what ``Memory pool end`` shows beyond the KV pool),
  CUDA graphs of target and draft, the draft's weights and KV pool, ``other`` (what the printed
  figures do not account for: workspace, allocator, measurement drift), and the lowest free
  figure the rank printed.
* **Headroom** of a rank is that lowest free figure, once the rank's memory setup finished
  (the launch became ready, or reached the scheduler's summary line, which SGLang prints after
  the pools and CUDA graphs).  A start that failed, or a log that ends before the setup
  finished, has no headroom: ``unknown["headroom_gb"]`` says why, and ``lowest_free_gb`` keeps
  what was free when it stopped.
* **The launch's headroom** is the least over its ranks and workers; the rank that has it is
  the *binding rank* (``binding_rank``), whose figures are the launch-level breakdown.  Without
  a headroom, the binding rank is the one with the least free memory at the end.
* **KV tokens** (actual) are the tokens of the pool the engine allocated, and **predicted KV** the
  engine's own sizing formula of the launch's era replayed: each engine's budget
  (:meth:`logparse.engines.base.Engine.budget`: ``logparse.engines.<engine>.budget``) says how.

A figure that cannot be known is ``None`` and ``unknown`` maps its name to the reason, so every
surface says the same thing about it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from logparse import engines
from logparse.budget import pools
from logparse.launches.model import INTERNAL, Launch, RankMemory, declared

#: Budget figures are rounded to what SGLang prints (two decimals of GiB).
GB_DIGITS = 2


def gb(v: float | None) -> float | None:
    return None if v is None else round(float(v), GB_DIGITS)


# --------------------------------------------------------------------------- per rank
@dataclass(frozen=True)
class RankBudget:
    """Where one physical rank's memory went (target worker plus its draft worker)."""

    rank: str
    dp_rank: int | None
    pp_rank: int | None
    tp_rank: int | None
    ep_rank: int | None
    free_before_weights_gb: float | None
    weights_gb: float | None
    free_after_weights_gb: float | None
    kv_tokens: int | None
    kv_pool_gb: float | None
    other_pools_gb: float | None
    graph_gb: float | None
    draft_weights_gb: float | None
    draft_kv_gb: float | None
    draft_graph_gb: float | None
    other_gb: float | None
    lowest_free_gb: float | None
    headroom_gb: float | None
    bytes_per_token: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def key(self) -> tuple:
        return (self.dp_rank, self.pp_rank, self.tp_rank, self.ep_rank)


def pool_gb(rank: RankMemory | None, page: int = 1) -> float | None:
    if rank is None:
        return None
    total, _, tokens, _ = pools.pool_figures(rank)
    if pools.resized_after_capture(rank):
        # 0.5.16 prints the resized pool's tokens only: its size is theirs at the pre-capture line's bytes
        # per token (the same layout), pool rows = tokens + one padding page
        if total is None or not tokens or not rank.kv_tokens:
            return None
        return total * (rank.kv_tokens + max(page, 1)) / (tokens + max(page, 1))
    return total if total is not None else rank.kv_size_gb


def _lowest_free(*ranks: RankMemory | None) -> float | None:
    """The lowest free-memory figure printed by these workers (memory only goes down)."""
    figures: list[float] = []
    for r in ranks:
        if r is None:
            continue
        figures += [
            x
            for x in (r.avail_before_load_gb, r.avail_after_load_gb, r.avail_after_pool_gb, r.avail_after_graph_gb)
            if x is not None
        ]
        figures += [g["avail_gb"] for g in (r.extra or {}).get("graphs", []) or [] if g.get("avail_gb") is not None]
        pc = (r.extra or {}).get("post_capture") or {}
        after_resize = pc.get("avail_gb", pc.get("free_gb"))  # post-capture sizing: free once the pool is resized
        if isinstance(after_resize, (int, float)) and not isinstance(after_resize, bool):
            figures.append(after_resize)
    return min(figures) if figures else None


def _weights(target: RankMemory | None) -> float | None:
    if target is None:
        return None
    if target.weights_gb is not None:
        return target.weights_gb
    if target.avail_before_load_gb is not None and target.avail_after_load_gb is not None:
        return target.avail_before_load_gb - target.avail_after_load_gb
    return None


def rank_budget(
    target: RankMemory | None,
    draft: RankMemory | None,
    *,
    setup_complete: bool,
    page_size: int = 1,
    pools_split: tuple[float, float] | None = None,
) -> RankBudget:
    """The budget of one physical rank from its own lines (``pools_split``: the KV pool and the
    request table of a release that prints no KV pool size, :func:`formula_inputs.kv_pool_from_pool_end`)."""
    t, d = target, draft
    shown = t or d
    label = shown.label() if shown is not None else "?"
    after_load = t.avail_after_load_gb if t else None
    kv = pool_gb(t, page_size)
    other_pools = None
    if kv is None and pools_split is not None:
        kv, other_pools = pools_split
    elif after_load is not None and t is not None and t.avail_after_pool_gb is not None:
        other_pools = max(after_load - (kv or 0.0) - t.avail_after_pool_gb, 0.0)
    graph = t.graph_gb if t else None
    dweights, dkv, dgraph = (d.weights_gb, pool_gb(d), d.graph_gb) if d else (None, None, None)
    lowest = _lowest_free(t, d)
    other = None
    if after_load is not None and lowest is not None:
        spent = sum(x for x in (kv, other_pools, graph, dweights, dkv, dgraph) if x)
        other = after_load - lowest - spent
        if abs(other) < 0.005:
            other = 0.0
    bpt = pools.bytes_per_token(t, page_size) if t is not None else None
    anchor = t or d
    return RankBudget(
        rank=label,
        dp_rank=anchor.dp_rank if anchor else None,
        pp_rank=anchor.pp_rank if anchor else None,
        tp_rank=anchor.tp_rank if anchor else None,
        ep_rank=anchor.ep_rank if anchor else None,
        free_before_weights_gb=gb(t.avail_before_load_gb if t else None),
        weights_gb=gb(_weights(t)),
        free_after_weights_gb=gb(after_load),
        kv_tokens=t.kv_tokens if t else None,
        kv_pool_gb=gb(kv),
        other_pools_gb=gb(other_pools),
        graph_gb=gb(graph),
        draft_weights_gb=gb(dweights),
        draft_kv_gb=gb(dkv),
        draft_graph_gb=gb(dgraph),
        other_gb=gb(other),
        lowest_free_gb=gb(lowest),
        headroom_gb=gb(lowest) if setup_complete else None,
        bytes_per_token=None if bpt is None or bpt.value is None else round(bpt.value, 1),
    )


def physical_ranks(launch: Launch) -> list[tuple[RankMemory | None, RankMemory | None]]:
    """(target, draft) per physical rank, in rank order."""
    slots: dict[tuple, dict[str, RankMemory | None]] = {}
    for r in launch.ranks:
        slot = slots.setdefault((r.dp_rank, r.pp_rank, r.tp_rank, r.ep_rank), {"target": None, "draft": None})
        if r.worker == "target":
            slot["target"] = r
        elif slot["draft"] is None:
            slot["draft"] = r

    def order(key: tuple) -> tuple:
        return tuple(-1 if x is None else x for x in key)

    return [(slots[k]["target"], slots[k]["draft"]) for k in sorted(slots, key=order)]


# --------------------------------------------------------------------------- the launch
@dataclass
class Budget:
    """A launch's memory budget (see the module documentation); ``to_dict`` is what is stored."""

    launch_id: str
    outcome: str
    memory_kind: str
    setup_complete: bool
    ranks: list[RankBudget]
    binding_rank: str | None = None
    headroom_gb: float | None = None
    lowest_free_gb: float | None = None
    free_before_weights_gb: float | None = None
    weights_gb: float | None = None
    free_after_weights_gb: float | None = None
    kv_tokens: int | None = None
    kv_tokens_source: str | None = None
    kv_pool_gb: float | None = None
    other_pools_gb: float | None = None
    graph_gb: float | None = None
    draft_weights_gb: float | None = None
    draft_kv_gb: float | None = None
    draft_graph_gb: float | None = None
    other_gb: float | None = None
    least_free_before_weights_gb: float | None = None
    # timings: the slowest target rank's weight load and CUDA-graph capture, first line to ready
    load_s: float | None = None
    graph_s: float | None = None
    startup_s: float | None = None
    # the sizing formula
    era: str | None = None
    era_label: str | None = None
    assumed_version: str | None = None
    formula: str | None = None
    formula_features: str | None = None
    formula_notes: list[str] = field(default_factory=list)
    mem_fraction_static: float | None = None
    mem_fraction_static_source: str | None = None
    pre_load_avail_gb: float | None = None
    pre_load_source: str | None = None
    post_load_avail_gb: float | None = None
    post_load_source: str | None = None
    reserved_gb: float | None = None
    rest_gb: float | None = None
    bytes_per_token: float | None = None
    bytes_per_token_source: str | None = None
    draft_bytes_per_token: float | None = None
    predicted_kv_tokens: int | None = None
    predicted_kv_tokens_lo: int | None = None
    predicted_kv_tokens_hi: int | None = None
    predicted_kv_gb: float | None = None
    kv_tokens_diff: int | None = None
    kv_tokens_diff_pct: float | None = None
    within_rounding: bool | None = None
    capped_by_max_total_tokens: bool = False
    uncapped_kv_tokens: int | None = None
    uncapped_kv_tokens_at_least: int | None = None
    bytes_per_token_at_most: float | None = None
    derivation: list[str] = field(default_factory=list)
    #: figure name -> why it is not known
    unknown: dict[str, str] = field(default_factory=dict)
    # Computation state for the reports' what-ifs (not stored, not in to_dict).
    #: the engine's own inputs of its formula and their prediction (SGLang: ``LaunchInputs``, ``Prediction``)
    inputs: Any = field(default=None, repr=False, compare=False, metadata=INTERNAL)
    prediction: Any = field(default=None, repr=False, compare=False, metadata=INTERNAL)

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in declared(Budget) if k != "ranks"}
        out = {k: (list(v) if isinstance(v, list) else dict(v) if isinstance(v, dict) else v) for k, v in out.items()}
        out["ranks"] = [r.to_dict() for r in self.ranks]
        return out

    def rank(self, label: str | None) -> RankBudget | None:
        return next((r for r in self.ranks if r.rank == label), None)

    def says(self, name: str) -> str:
        """A figure as every surface words it: its value, or ``not known: <why>``."""
        value = getattr(self, name)
        if value is not None:
            return f"{value:,}" if isinstance(value, int) else f"{value:.2f}"
        return "not known: " + self.unknown.get(name, "not in this launch")


#: Launch-level breakdown figures taken from the binding rank.
BINDING_FIGURES = (
    "free_before_weights_gb",
    "weights_gb",
    "free_after_weights_gb",
    "other_pools_gb",
    "graph_gb",
    "draft_weights_gb",
    "draft_kv_gb",
    "draft_graph_gb",
    "other_gb",
    "lowest_free_gb",
)


def setup_complete(launch: Launch) -> bool:
    """Did memory setup finish?  Ready, or the scheduler summary reached without a failure."""
    if launch.outcome == "ready":
        return True
    return launch.outcome != "failed" and launch.max_total_num_tokens is not None


def memory_kind(launch: Launch) -> str:
    return "cpu" if launch.available_mem_kind == "cpu" or (launch.device or "") == "cpu" else "gpu"


def launch_budget(launch: Launch) -> Budget:
    """The budget of one launch (pure: reads the launch, changes nothing): its engine's own formula."""
    return engines.of(launch).budget(launch)


def bind(b: Budget) -> None:
    """The binding rank: least headroom (else least free at the end, else least free before weights)."""
    if not b.ranks:
        return

    def order(r: RankBudget) -> tuple:
        inf = math.inf
        first = r.headroom_gb if r.headroom_gb is not None else inf
        second = r.lowest_free_gb if r.lowest_free_gb is not None else inf
        third = r.free_before_weights_gb if r.free_before_weights_gb is not None else inf
        return (first, second, third)

    worst = min(b.ranks, key=order)
    b.binding_rank = worst.rank
    b.headroom_gb = worst.headroom_gb
    for name in BINDING_FIGURES:
        setattr(b, name, getattr(worst, name))


def timings(b: Budget, launch: Launch) -> None:
    targets = [r for r in launch.ranks if r.worker == "target"]
    pre = [r.free_before_weights_gb for r in b.ranks if r.free_before_weights_gb is not None]
    b.least_free_before_weights_gb = min(pre) if pre else None
    loads = [r.load_s for r in targets if r.load_s is not None]
    graphs = [r.graph_s for r in targets if r.graph_s is not None]
    b.load_s = round(max(loads), 2) if loads else None
    b.graph_s = round(max(graphs), 2) if graphs else None
    b.startup_s = seconds_between(launch.started_at, launch.ready_at)


def seconds_between(a: str | None, b: str | None) -> float | None:
    """Seconds from ISO time ``a`` to ``b`` (None when either is missing or has no date)."""
    from datetime import datetime

    if not a or not b:
        return None
    try:
        return round((datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds(), 3)
    except ValueError:
        return None


#: Why a figure is not known when the log printed it out of range (logparse.grammar.bounds).
OUT_OF_RANGE_WHY = "the log printed it out of range: see the warnings"
