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
* **KV tokens** (actual) are the token count of the pool SGLang allocated, read from the rank
  with the largest printed pool of the first pool group (every rank of a group holds the same
  pool; plain data parallelism gives each replica its own), else the scheduler's
  ``max_total_num_tokens`` (releases before 0.4.1.post6 print no KV pool line).
* **Predicted KV** replays SGLang's sizing formula of the launch's era
  (:mod:`logparse.engines.sglang.formula`).

A figure that cannot be known is ``None`` and ``unknown`` maps its name to the reason, so every
surface says the same thing about it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from logparse import engines
from logparse.engines.sglang import formula as fm
from logparse.engines.sglang import versions
from logparse.launches.figures import printed_out_of_range
from logparse.launches.model import INTERNAL, Launch, RankMemory, declared

#: Budget figures are rounded to what SGLang prints (two decimals of GiB).
GB_DIGITS = 2


def _gb(v: float | None) -> float | None:
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


def _pool_gb(rank: RankMemory | None, page: int = 1) -> float | None:
    if rank is None:
        return None
    total, _, tokens, _ = fm.pool_figures(rank)
    if fm.resized_after_capture(rank):
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
    request table of a release that prints no KV pool size, :func:`formula.kv_pool_from_pool_end`)."""
    t, d = target, draft
    shown = t or d
    label = shown.label() if shown is not None else "?"
    after_load = t.avail_after_load_gb if t else None
    kv = _pool_gb(t, page_size)
    other_pools = None
    if kv is None and pools_split is not None:
        kv, other_pools = pools_split
    elif after_load is not None and t is not None and t.avail_after_pool_gb is not None:
        other_pools = max(after_load - (kv or 0.0) - t.avail_after_pool_gb, 0.0)
    graph = t.graph_gb if t else None
    dweights, dkv, dgraph = (d.weights_gb, _pool_gb(d), d.graph_gb) if d else (None, None, None)
    lowest = _lowest_free(t, d)
    other = None
    if after_load is not None and lowest is not None:
        spent = sum(x for x in (kv, other_pools, graph, dweights, dkv, dgraph) if x)
        other = after_load - lowest - spent
        if abs(other) < 0.005:
            other = 0.0
    bpt = fm.bytes_per_token(t, page_size) if t is not None else None
    anchor = t or d
    return RankBudget(
        rank=label,
        dp_rank=anchor.dp_rank if anchor else None,
        pp_rank=anchor.pp_rank if anchor else None,
        tp_rank=anchor.tp_rank if anchor else None,
        ep_rank=anchor.ep_rank if anchor else None,
        free_before_weights_gb=_gb(t.avail_before_load_gb if t else None),
        weights_gb=_gb(_weights(t)),
        free_after_weights_gb=_gb(after_load),
        kv_tokens=t.kv_tokens if t else None,
        kv_pool_gb=_gb(kv),
        other_pools_gb=_gb(other_pools),
        graph_gb=_gb(graph),
        draft_weights_gb=_gb(dweights),
        draft_kv_gb=_gb(dkv),
        draft_graph_gb=_gb(dgraph),
        other_gb=_gb(other),
        lowest_free_gb=_gb(lowest),
        headroom_gb=_gb(lowest) if setup_complete else None,
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
    inputs: fm.LaunchInputs | None = field(default=None, repr=False, compare=False, metadata=INTERNAL)
    prediction: fm.Prediction | None = field(default=None, repr=False, compare=False, metadata=INTERNAL)

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


def sglang_budget(launch: Launch) -> Budget:
    """An SGLang launch's budget (see the module documentation)."""
    done = setup_complete(launch)
    page = _page_size(launch)
    ranks = [
        rank_budget(t, d, setup_complete=done, page_size=page, pools_split=fm.kv_pool_from_pool_end(launch, t))
        for t, d in physical_ranks(launch)
    ]
    b = Budget(launch.launch_id, launch.outcome, memory_kind(launch), done, ranks)
    _binding(b)
    _timings(b, launch)
    _actual_kv(b, launch)
    _formula(b, launch)
    _pool_from_pool_end(b, launch)
    _unknowns(b, launch)
    return b


def _pool_from_pool_end(b: Budget, launch: Launch) -> None:
    """A release that prints no KV pool size (before 0.4.1.post6): the pool is what the binding rank's
    pools took less the request table (the rank budgets' split), said in the formula notes."""
    binding = b.rank(b.binding_rank)
    if b.kv_pool_gb is not None or binding is None or binding.kv_pool_gb is None or fm.prints_kv_pool_size(launch):
        return
    b.kv_pool_gb = binding.kv_pool_gb
    b.formula_notes.append(
        f"this release prints no KV pool size: the pool is the memory the pools took on {binding.rank} "
        f"('Load weight end' − 'Memory pool end') less ≈{binding.other_pools_gb or 0.0:.2f} GiB of request "
        f"table = {b.kv_pool_gb:.2f} GiB"
    )


def vllm_launch_budget(launch: Launch) -> Budget:
    """A vLLM launch: the engine's pool is the smallest rank's; vLLM's formula of the launch's era
    (:mod:`logparse.engines.vllm.formula`) is replayed from the terms the binding rank printed."""
    from logparse.engines.vllm import formula as vb

    done = launch.outcome == "ready"
    ranks = [rank_budget(t, d, setup_complete=False) for t, d in physical_ranks(launch)]
    b = Budget(launch.launch_id, launch.outcome, "gpu", done, ranks)
    pool = vb.pool_rank(launch)
    binding = b.rank(pool.label()) if pool is not None else (ranks[0] if ranks else None)
    if binding is not None:
        b.binding_rank = binding.rank
        for name in BINDING_FIGURES:
            setattr(b, name, getattr(binding, name))
    _timings(b, launch)
    b.kv_tokens = launch.kv_tokens
    if launch.kv_tokens is not None:
        b.kv_tokens_source = vb.tokens_source(launch)
    b.kv_pool_gb = _gb(pool.kv_size_gb) if pool is not None else None
    era = vb.launch_era(launch)
    if era is not None:
        b.era, b.era_label, b.formula = "vllm-" + era.key, era.label, era.formula
        b.formula_notes = [f"this era prints {era.printed} at INFO level"]
    b.assumed_version = launch.engine_version
    if pool is not None:
        b.predicted_kv_gb, b.derivation = vb.replay(pool, launch, era)
    u = b.unknown
    u["headroom_gb"] = (
        "the start failed before its memory setup finished"
        if launch.outcome == "failed"
        else "vLLM prints no free memory after its setup: the headroom is not in its log"
    )
    if b.kv_tokens is None:
        u["kv_tokens"] = (
            "the start failed before the KV cache was sized"
            if launch.outcome == "failed"
            else _OUT_OF_RANGE_WHY
            if printed_out_of_range(launch, "kv_tokens", "gpu_blocks", "num_gpu_blocks")
            else "no KV size line"
        )
    if b.kv_pool_gb is None:
        u["kv_pool_gb"] = (
            _OUT_OF_RANGE_WHY
            if printed_out_of_range(launch, "kv_size_gb", "kv_gb")
            else "no KV pool size in GiB (vLLM prints it from 0.9.1, or in V0 0.6.4–0.10.2's profile)"
        )
    u["predicted_kv_tokens"] = "vLLM's pool is replayed in GiB (predicted_kv_gb), not in tokens"
    return b


def _page_size(launch: Launch) -> int:
    sa = launch.server_args or {}
    page = launch.page_size or sa.get("page_size")
    return page if isinstance(page, int) and not isinstance(page, bool) and page > 0 else 1


def _binding(b: Budget) -> None:
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


def _timings(b: Budget, launch: Launch) -> None:
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


def _actual_kv(b: Budget, launch: Launch) -> None:
    groups = fm.groups(launch)
    pool_rank = fm.pool_rank(groups[0].targets) if groups else None
    resize = fm.capture_resize(launch)
    if resize is not None:
        # post-capture sizing: the pool is the last count, the one after the CUDA-graph capture
        resized = pool_rank or next(r for r in groups[0].targets if (r.extra or {}).get("post_capture"))
        b.kv_tokens = resize[1]
        b.kv_tokens_source = (
            f"Post-capture KV sizing line of {resized.label()} (the pool resized after the CUDA-graph capture)"
        )
    elif pool_rank is not None and pool_rank.kv_tokens is not None:
        b.kv_tokens = pool_rank.kv_tokens
        b.kv_tokens_source = f"KV pool line of {pool_rank.label()}"
    elif launch.max_total_num_tokens is not None:
        b.kv_tokens = launch.max_total_num_tokens
        b.kv_tokens_source = "max_total_num_tokens (scheduler summary)"
    elif groups and (counted := [r for r in groups[0].targets if r.kv_tokens is not None]):
        # a pool line whose size is not known (printed out of range): its token count still holds
        least = min(counted, key=lambda r: r.kv_tokens)
        b.kv_tokens = least.kv_tokens
        b.kv_tokens_source = f"KV pool line of {least.label()} (its size is not known)"
    sized = pool_rank or next((r for r in (groups[0].targets if groups else []) if r.kv_size_gb is not None), None)
    b.kv_pool_gb = _gb(_pool_gb(sized, _page_size(launch)))  # a pool whose token count is not known still has its size


def _formula(b: Budget, launch: Launch) -> None:
    """Replay SGLang's sizing formula for the launch's era (group 0: DP0, or every rank)."""
    groups = fm.groups(launch)
    li = fm.best_inputs(launch, groups[0] if groups else None)
    feat, inp = li.features, li.inputs
    b.inputs = li
    b.era, b.era_label, b.assumed_version = feat.era.key, feat.era.label, feat.version
    b.formula, b.formula_features = feat.era.formula, feat.describe()
    b.formula_notes = list(feat.notes) + list(li.notes)
    b.mem_fraction_static = inp.f if inp else launch.mem_fraction_static
    b.mem_fraction_static_source = li.f_source
    b.bytes_per_token = None if li.bpt.value is None else round(li.bpt.value, 1)
    b.bytes_per_token_source = li.bpt.source
    b.draft_bytes_per_token = None if li.draft_bpt.value is None else round(li.draft_bpt.value, 1)
    if inp is None:
        return
    checked = inp.with_(capture_delta_gb=0.0)  # what the log's pre-capture figures are checked against
    pred = fm.predict(checked, feat)
    # the what-ifs' base: after a post-capture resize, the pool as it was resized
    b.prediction = fm.predict(inp, feat) if inp.capture_delta_gb else pred
    b.pre_load_avail_gb, b.pre_load_source = _gb(inp.m_pre_gb), li.m_pre_source
    b.post_load_avail_gb, b.post_load_source = _gb(inp.m_post_gb), li.m_post_source
    b.reserved_gb, b.rest_gb = _gb(pred.reserved_gb), _gb(pred.rest_gb)
    b.derivation = list(pred.steps)
    if inp.cell is not None:
        b.predicted_kv_tokens = pred.tokens
    lo, hi = fm.token_interval(checked, feat, li.bpt)
    b.predicted_kv_tokens_lo, b.predicted_kv_tokens_hi = lo, hi
    if pred.tokens is not None and pred.tokens > 0 and li.bpt.value is not None:
        b.predicted_kv_gb = _gb(fm.pool_gb(pred.tokens, inp.page_size, li.bpt.value))
    compared = _compared_tokens(b, launch)
    if compared is not None and b.predicted_kv_tokens is not None:
        b.kv_tokens_diff = compared - b.predicted_kv_tokens
        if b.predicted_kv_tokens:
            b.kv_tokens_diff_pct = round(b.kv_tokens_diff / b.predicted_kv_tokens * 100.0, 3)
        b.within_rounding = lo is not None and hi is not None and lo <= compared <= hi
    _cap(b, launch, li, pred)


def _compared_tokens(b: Budget, launch: Launch) -> int | None:
    """The token count the formula's prediction is compared with: the pool, except after post-capture
    sizing, where the formula sizes the reservation made before the capture (and only that is compared)."""
    resize = fm.capture_resize(launch)
    if resize is None:
        return b.kv_tokens
    pre, post = resize
    b.formula_notes.append(
        "post-capture KV sizing (SGLANG_ENABLE_POST_CAPTURE_KV_SIZING): this formula sizes the reservation made "
        "before the CUDA-graph capture"
        + (f" ({pre:,} tokens)" if pre else " (not printed)")
        + f"; after the capture SGLang resized the pool to {post:,} tokens from the memory then free, "
        "less M_pre*(1-f) and its headrooms: the prediction is compared with the reservation"
        + (
            " (0.5.16 prints no size for the resized pool: its GiB are its tokens at the pre-capture line's bytes "
            "per token)"
            if any(fm.resized_after_capture(r) for r in launch.ranks)
            else ""
        )
    )
    return pre


def _cap(b: Budget, launch: Launch, li: fm.LaunchInputs, pred: fm.Prediction) -> None:
    """Is the pool set by --max-total-tokens?  Works with bounds when bytes per token are unmeasurable."""
    cap, inp, feat = launch.max_total_tokens, li.inputs, li.features
    if cap is None or inp is None:
        return
    hi_cell = li.bpt.hi or None
    if feat.draft_in_budget and li.draft_bpt.hi:
        hi_cell = (hi_cell or 0) + li.draft_bpt.hi
    if hi_cell:
        low = inp.with_(
            max_total_tokens=None,
            cell=hi_cell,
            m_post_gb=inp.m_post_gb - fm.ROUND_GB,
            m_pre_gb=inp.m_pre_gb + fm.ROUND_GB,
        )
        p_lo = fm.predict(low, feat)
        t_min = p_lo.tokens_spec if p_lo.tokens_spec is not None else p_lo.tokens
        b.uncapped_kv_tokens_at_least = t_min
        b.bytes_per_token_at_most = round(hi_cell, 1)
        page = inp.page_size or 1
        cap_rounded = cap // page * page if feat.page_rounding else cap
        if t_min is not None and t_min >= cap and b.kv_tokens in (cap, cap_rounded):
            b.capped_by_max_total_tokens = True
    if pred.capped and inp.cell is not None:
        b.capped_by_max_total_tokens = True
        b.uncapped_kv_tokens = pred.tokens_spec


#: Why a figure is not known when the log printed it out of range (logparse.grammar.bounds).
_OUT_OF_RANGE_WHY = "the log printed it out of range: see the warnings"
_FIGURES_OF = ("kv_tokens", "kv_size_gb", "avail_after_pool_gb", "avail_after_graph_gb")


def _reservation_only(launch: Launch) -> str | None:
    """Why a post-capture launch cut before its resize has no pool: it printed only the reservation."""
    va = [p for r in launch.ranks for p in (r.extra or {}).get("pools", []) if p.get("va_upper_bound")]
    if not va:
        return None
    return (
        f"the log ends before the post-capture resize: only the reservation made before the CUDA-graph "
        f"capture (KV Cache VA upper bound, {va[0].get('tokens') or 0:,} tokens) was printed, not the pool"
    )


def _unknowns(b: Budget, launch: Launch) -> None:
    """Why each headline figure is missing, worded once for every surface."""
    u = b.unknown
    aside = {name for name in _FIGURES_OF if printed_out_of_range(launch, name)}
    if b.headroom_gb is None:
        if launch.outcome == "failed":
            u["headroom_gb"] = "the start failed before its memory setup finished"
        elif not b.setup_complete:
            u["headroom_gb"] = "the log ends before the memory setup finished (no summary or ready line)"
        elif aside & {"avail_after_pool_gb", "avail_after_graph_gb"}:
            u["headroom_gb"] = _OUT_OF_RANGE_WHY
        else:
            u["headroom_gb"] = "no free-memory figure was printed"
    if b.kv_tokens is None:
        u["kv_tokens"] = (
            "the start failed before the KV pool was allocated"
            if launch.outcome == "failed"
            else _OUT_OF_RANGE_WHY
            if "kv_tokens" in aside
            else _reservation_only(launch) or "no KV pool line and no max_total_num_tokens line"
        )
    if b.kv_pool_gb is None:
        if "kv_size_gb" in aside:
            u["kv_pool_gb"] = _OUT_OF_RANGE_WHY
        elif b.kv_tokens is None:
            u["kv_pool_gb"] = u["kv_tokens"]
        elif launch.version_range and versions.index(launch.version_range[1]) < versions.index("0.4.1.post6"):
            u["kv_pool_gb"] = "this release prints no KV pool size (before 0.4.1.post6)"
        else:
            u["kv_pool_gb"] = "no KV pool size line in the log"
    if b.predicted_kv_tokens is None:
        if b.inputs is None or b.inputs.inputs is None:
            u["predicted_kv_tokens"] = (
                "the log lacks the figures the formula needs (Load weight begin/end and mem_fraction_static)"
            )
        else:
            u["predicted_kv_tokens"] = "bytes per token unknown (no measurable KV pool line)"
