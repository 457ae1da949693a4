"""The inputs of SGLang's sizing formula read from a launch, with where each came from.

The ranks that size one pool together (:func:`groups`: SGLang min-reduces over them), the free
memory before and after the weights (``M_pre``, ``M_post``), the bytes per token of the KV pool
(from the pool line, else from ``Memory pool end`` in the releases that print no pool size, narrowed
by the HiCache host line; DeepSeek-V4's own solve), the fraction (given, else the release's
default), the draft's weights and KV from 0.5.14, Mamba state and the multimodal reservation, and the
post-capture resize (:func:`launch_inputs`); the era the evidence picks when the version range spans
eras (:func:`best_inputs`).  The formula itself is :mod:`logparse.engines.sglang.formula`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from logparse.budget.pools import ROUND_GB, BytesPerToken, GiB, bytes_per_token, pool_figures
from logparse.engines.sglang import versions
from logparse.engines.sglang.eras import Features, choose_features, eras_in, features_for
from logparse.engines.sglang.formula import Inputs, token_interval

#: The first release that prints the KV pool's size (``KV Cache is allocated``/``K size``).
FIRST_KV_SIZE_RELEASE = "0.4.1.post6"


def prints_kv_pool_size(launch) -> bool:
    """Does the launch's release print its KV pool's size?  (False before 0.4.1.post6; a launch of
    unknown release is taken to.)"""
    rng = launch.version_range
    return not rng or versions.is_empty(rng) or versions.index(rng[1]) >= versions.index(FIRST_KV_SIZE_RELEASE)


def request_table_gb(launch) -> float:
    """The request-to-token table beside the KV pool: ``(max_running_requests + 1) × (context_len + 4)
    × 4`` bytes (0 when the summary line does not give both)."""
    mrr, ctx = launch.max_running_requests_effective, launch.context_len
    return (mrr + 1) * (ctx + 4) * 4 / GiB if mrr and ctx else 0.0


def kv_pool_from_pool_end(launch, rank) -> tuple[float, float] | None:
    """(KV pool, request table) GiB of a rank of a release that prints no KV pool size: the memory
    the pools took (``Load weight end`` avail − ``Memory pool end`` avail) split into the KV pool and
    the request-to-token table (:func:`request_table_gb`)."""
    if rank is None or prints_kv_pool_size(launch) or not launch.max_total_num_tokens:
        return None
    if rank.avail_after_load_gb is None or rank.avail_after_pool_gb is None:
        return None
    used, req = rank.avail_after_load_gb - rank.avail_after_pool_gb, request_table_gb(launch)
    return (used - req, req) if used - req > 0 else None


def bytes_per_token_from_pool_end(launch, group: Group, page: int) -> BytesPerToken | None:
    """Before 0.4.1.post6 no KV line is printed: use the memory the pools took.

    ``Load weight end avail − Memory pool end avail`` is the KV pool plus the request-to-token
    table (``(max_running_requests + 1) × (context_len + 4) × 4`` bytes, estimated here).
    """
    tokens = launch.max_total_num_tokens
    if not tokens:
        return None
    best = None
    for r in group.targets:
        if r.avail_after_load_gb is None or r.avail_after_pool_gb is None:
            continue
        used = r.avail_after_load_gb - r.avail_after_pool_gb
        if best is None or used > best[0]:
            best = (used, r)
    if best is None or best[0] <= 0:
        return None
    used, r = best
    req = request_table_gb(launch)
    kv = used - req
    if kv <= 0:
        return None
    rows = tokens + max(page, 1)
    err = 2 * ROUND_GB + req * 0.5 + 0.02  # two printed figures, the request table, small allocations
    lo, hi = max(kv - err, 0.0) * GiB / rows, (kv + err) * GiB / rows
    val = kv * GiB / rows
    reliable = (hi - lo) / val <= 0.10
    src = (
        f"no KV line in this release: pools took {used:.2f} GiB on {_rank_name(r)} ('Load weight end' − "
        f"'Memory pool end'), minus ≈{req:.2f} GiB request table, / {rows:,} rows"
    )
    return BytesPerToken(val if reliable else None, lo, hi, src, reliable)


def _refine_with_hicache(launch, group: Group, page: int, bpt: BytesPerToken) -> BytesPerToken:
    """The HiCache host line prints the same bytes per token on another scale: intersect the two ranges.

    host tokens = (device tokens × ratio // page + 1) × page; host GB = host tokens × bytes / 10^9.
    """
    if bpt.lo is None or not launch.enable_hierarchical_cache or not launch.hicache_host_gb or launch.hicache_size:
        return bpt
    pr = pool_rank(group.targets)
    if pr is None or not pr.kv_tokens:
        return bpt
    ratio = launch.hicache_ratio or 2.0
    ht = launch.hicache_host_tokens or (int(pr.kv_tokens * ratio) // page + 1) * page
    lo = (launch.hicache_host_gb - ROUND_GB) * 1e9 / ht
    hi = (launch.hicache_host_gb + ROUND_GB) * 1e9 / ht
    nlo, nhi = max(lo, bpt.lo), min(hi, bpt.hi)
    if nlo > nhi:
        return bpt  # they disagree (another layout, a dev build): keep the pool's own figure
    val = (nlo + nhi) / 2
    return BytesPerToken(
        val,
        nlo,
        nhi,
        bpt.source + f"; narrowed by the HiCache host line ({launch.hicache_host_gb:.2f} GB"
        f" for {ht:,} tokens) to {nlo:,.0f}–{nhi:,.0f}",
        (nhi - nlo) / val <= 0.10,
    )


def mamba_gb(rank) -> float:
    m = (rank.extra or {}).get("mamba") if rank is not None else None
    if not m:
        return 0.0
    return float(sum(v for k, v in m.items() if k.endswith("_gb") and isinstance(v, (int, float))))


def mm_reservation_gb(rank) -> float:
    """The multimodal reservation a rank printed (``Reserving X GB of the KV budget ...``, 0.5.18+), else 0."""
    v = (rank.extra or {}).get("mm_reservation_gb") if rank is not None else None
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else 0.0


def capture_resize(launch) -> tuple[int | None, int] | None:
    """Post-capture KV sizing (0.5.16+, ``SGLANG_ENABLE_POST_CAPTURE_KV_SIZING``): (the token count
    reserved before the CUDA-graph capture, or None if not printed; the pool's count after it) of
    the first pool group's pool rank, or None for a launch sized once.  The last count is the pool."""
    grp = groups(launch)
    ranks = grp[0].targets if grp else []
    rank = pool_rank(ranks) or next((r for r in ranks if (r.extra or {}).get("post_capture")), None)
    pc = (rank.extra or {}).get("post_capture") if rank is not None else None
    if rank is None or not isinstance(pc, dict) or not pc.get("tokens"):
        return None
    pools = [p for p in (rank.extra or {}).get("pools", []) if p.get("label") in (None, "Full") and p.get("tokens")]
    return (pools[-1]["tokens"] if pools else None), pc["tokens"]


def _sa(launch, *names):
    sa = launch.server_args or {}
    for n in names:
        v = sa.get(n)
        if v is not None:
            return v
    return None


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


@dataclass
class Group:
    """The ranks that size one pool together (SGLang min-reduces over them)."""

    name: str
    targets: list
    drafts: list

    def min_rank(self, attr: str, worker: str = "target"):
        rs = [r for r in (self.targets if worker == "target" else self.drafts) if getattr(r, attr) is not None]
        return min(rs, key=lambda r: getattr(r, attr)) if rs else None


def groups(launch) -> list[Group]:
    """Plain data parallelism gives every DP replica its own pool; otherwise one group."""
    targets = [r for r in launch.ranks if r.worker == "target"]
    drafts = [r for r in launch.ranks if r.worker != "target"]
    dp_keys = sorted({r.dp_rank for r in targets if r.dp_rank is not None})
    if len(dp_keys) > 1 and not launch.enable_dp_attention:
        return [
            Group(f"DP{d}", [r for r in targets if r.dp_rank == d], [r for r in drafts if r.dp_rank == d])
            for d in dp_keys
        ]
    return [Group("all ranks", targets, drafts)]


@dataclass
class LaunchInputs:
    """The formula inputs read from one group of a launch, with where each came from."""

    inputs: Inputs | None
    features: Features
    bpt: BytesPerToken
    draft_bpt: BytesPerToken
    m_pre_rank: Any = None
    m_post_rank: Any = None
    m_post_source: str = ""
    m_pre_source: str = ""
    notes: list[str] = field(default_factory=list)
    spec: str | None = None
    f_source: str = ""


#: Free memory before the weights below this (GiB) leaves the formula nothing to size: the
#: fraction's share of it is 0 and it divides every what-if (a log printing ``avail mem=0.00 GB``).
MIN_M_PRE_GB = 0.01


def launch_inputs(launch, group: Group | None = None, features: Features | None = None) -> LaunchInputs:
    group = group or groups(launch)[0]
    spec = launch.speculative_algorithm or _sa(launch, "speculative_algorithm")
    spec = spec if spec and str(spec).upper() not in ("NONE", "") else None
    feat = features or choose_features(launch.version_range, spec)
    page = launch.page_size or (_sa(launch, "page_size") if _is_int(_sa(launch, "page_size")) else None) or 1
    m_pre_rank = group.min_rank("avail_before_load_gb")
    m_post_t = group.min_rank("avail_after_load_gb")
    tgt = m_post_t or m_pre_rank or (group.targets[0] if group.targets else None)
    bpt, dbpt = _cells(launch, group, page)
    li = LaunchInputs(None, feat, bpt, dbpt, m_pre_rank=m_pre_rank, m_post_rank=m_post_t, spec=spec)
    f = _mem_fraction(launch, li)
    if m_pre_rank is None or m_post_t is None or f is None:
        return li
    m_pre = m_pre_rank.avail_before_load_gb
    if not m_pre > MIN_M_PRE_GB:  # 0.00 GiB free before the weights: every share of it is 0 (and a divisor)
        li.notes.append(f"the free memory before the weights is {m_pre:.2f} GiB: the sizing formula cannot use it")
        return li
    li.m_pre_source = f"'Load weight begin' on {_rank_name(m_pre_rank)} (smallest of {len(group.targets)} rank(s))"
    m_post = m_post_t.avail_after_load_gb
    li.m_post_source = f"'Load weight end' on {_rank_name(m_post_t)}"
    cell = bpt.value
    if feat.draft_in_budget:
        m_post, cell = _count_draft(li, group, m_post, cell)
    steps = _sa(launch, "speculative_num_steps")
    topk = _sa(launch, "speculative_eagle_topk")
    ndraft = _sa(launch, "speculative_num_draft_tokens")
    li.inputs = Inputs(
        m_pre_gb=m_pre,
        m_post_gb=m_post,
        f=float(f),
        cell=cell,
        page_size=int(page),
        max_total_tokens=launch.max_total_tokens,
        context_len=launch.context_len or launch.context_length,
        max_running_requests=launch.max_running_requests,
        dp_size=launch.dp_size or 1,
        dp_attention=bool(launch.enable_dp_attention),
        spec_steps=steps if (spec and _is_int(steps)) else None,
        spec_topk=topk if (spec and _is_int(topk)) else None,
        spec_draft_tokens=ndraft if (spec and _is_int(ndraft)) else None,
        mamba_gb=mamba_gb(tgt),
        mm_reservation_gb=mm_reservation_gb(tgt),
        fixed_pools_gb=(dsv4_solve(tgt) or (0.0, 0.0))[1],
    )
    if li.inputs.mm_reservation_gb:
        li.notes.append(
            f"0.5.18+ takes the multimodal reservation ({li.inputs.mm_reservation_gb:.2f} GiB, printed) out of "
            "the budget before sizing"
        )
    resize = capture_resize(launch)
    if resize is not None and resize[0] and cell:
        li.inputs.capture_delta_gb = (resize[1] - resize[0]) * cell / GiB
    return li


def dsv4_solve(rank) -> tuple[float, float] | None:
    """DeepSeek-V4's own solve (``DSV4 memory calculation``): (bytes per full-attention token of all its
    pools, GiB of the pools it sizes first: the ``*_fixed`` terms), or None."""
    calc = (rank.extra or {}).get("dsv4_memory") if rank is not None else None
    bpt = calc.get("bytes_per_full_token") if isinstance(calc, dict) else None
    if (
        not isinstance(calc, dict)
        or not isinstance(bpt, (int, float))
        or isinstance(bpt, bool)
        or not bpt > 0
        or not math.isfinite(bpt)
    ):
        return None
    fixed = [
        v for k, v in calc.items() if k.endswith("_fixed") and isinstance(v, (int, float)) and not isinstance(v, bool)
    ]
    return float(bpt), float(sum(v for v in fixed if math.isfinite(v)))


def _cells(launch, group: Group, page: int) -> tuple[BytesPerToken, BytesPerToken]:
    """Bytes per token of the target's KV pool (DeepSeek-V4: its own solve's; else from its pool line,
    else ``Memory pool end``, refined with HiCache's host pool) and of the draft's."""
    solve = next((x for x in (dsv4_solve(r) for r in group.targets) if x is not None), None)
    bpt = bytes_per_token(pool_rank(group.targets), page)
    if solve is not None:
        v = solve[0]
        bpt = BytesPerToken(
            v, v - 0.005, v + 0.005, f"DSV4 memory calculation: {v:,.2f} B per full-attention token (all pools)", True
        )
    if bpt.value is None and bpt.lo is None:
        bpt = bytes_per_token_from_pool_end(launch, group, page) or bpt
    bpt = _refine_with_hicache(launch, group, page, bpt)
    dbpt = (
        bytes_per_token(pool_rank(group.drafts), page)
        if group.drafts
        else BytesPerToken(None, None, None, "no draft", False)
    )
    return bpt, dbpt


def _mem_fraction(launch, li: LaunchInputs) -> float | None:
    """``mem_fraction_static``: given, else the release's default (where it came from: ``li.f_source``)."""
    f = launch.mem_fraction_static
    li.f_source = "--mem-fraction-static (server_args)"
    if f is None:
        f = versions.default_mem_fraction_static(launch.version_range, launch.tp_size or 1)
        li.f_source = "default for this release and tp size (§4.5)"
    if f is None:
        li.notes.append("mem_fraction_static unknown (no server_args line)")
    return f


def _count_draft(li: LaunchInputs, group: Group, m_post: float, cell: float | None) -> tuple[float, float | None]:
    """From 0.5.14 the draft's weights and KV count in the budget: M_post after the draft's load, and
    the cell with the draft's bytes per token."""
    m_post_d = group.min_rank("avail_after_load_gb", "draft")
    if m_post_d is not None:
        m_post = m_post_d.avail_after_load_gb
        li.m_post_rank = m_post_d
        li.m_post_source = f"draft 'Load weight end' on {_rank_name(m_post_d)} (draft weights counted, 0.5.14+)"
    else:
        li.notes.append("draft weights are counted from 0.5.14 but no draft load was logged")
    if cell is not None and li.draft_bpt.value is not None:
        cell = cell + li.draft_bpt.value
        li.notes.append(
            f"cell includes the draft KV: {li.bpt.value:,.0f} + {li.draft_bpt.value:,.0f} B/token "
            "(SGLang: cell × (1 + L_draft/L_target))"
        )
    return m_post, cell


def pool_rank(ranks: Iterable):
    """The rank whose pool figures are most precise (largest printed pool)."""
    best, best_total = None, 0.0
    for r in ranks:
        total, _, tokens, _ = pool_figures(r)
        if total is None or not tokens:
            continue
        if best is None or total > best_total:
            best, best_total = r, total
    return best


def _rank_name(r) -> str:
    return "?" if r is None else r.label()


def best_inputs(launch, group: Group | None = None) -> LaunchInputs:
    """:func:`launch_inputs` with the era chosen by the evidence when the version range spans eras.

    The later era is assumed, unless its prediction misses the logged pool while an earlier
    era's prediction matches it within the rounding of the printed figures.
    """
    li = launch_inputs(launch, group)
    rng = launch.version_range
    spanned = eras_in(rng) if rng else []
    if len(spanned) < 2 or li.inputs is None or li.inputs.cell is None:
        return li
    grp = group or groups(launch)[0]
    pr = pool_rank(grp.targets)
    actual = pr.kv_tokens if pr is not None else launch.max_total_num_tokens
    if actual is None:
        return li

    def matches(x: LaunchInputs) -> bool:
        if x.inputs is None:
            return False
        lo, hi = token_interval(x.inputs, x.features, x.bpt)
        return lo is not None and lo <= actual <= hi

    if matches(li):
        li.features.notes.append(f"the logged pool matches this formula ({li.features.era.label})")
        return li
    for era in reversed(spanned[:-1]):
        last = rng[1] if versions.index(rng[1]) <= versions.index(era.last) else era.last
        feat = features_for(last, li.spec)
        alt = launch_inputs(launch, group, feat)
        if alt.inputs is not None and alt.inputs.cell is not None and matches(alt):
            alt.features.notes = list(li.features.notes) + [
                f"but the logged pool matches {era.label}'s formula and not the later one's, so {era.label} is used"
            ]
            return alt
    return li
