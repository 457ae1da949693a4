"""SGLang's KV-pool sizing formula, per era (catalogue §4), and its inputs from a launch.

Every era starts from the same budget, in GiB as SGLang's ``get_available_gpu_memory``
returns it (free memory, min-reduced over the ranks that size one pool together)::

    rest = M_post - M_pre * (1 - f)          # f = --mem-fraction-static
    T    = floor(rest * 2^30 / cell)         # cell = bytes per token of the KV pool

``M_pre`` is the free memory measured *before* the weights load, ``M_post`` after them.
So ``(1 - f) * M_pre`` is held back (CUDA graphs, activations, the draft model before
0.5.14...) and everything else left after the weights becomes KV cache.  What differs by
era is what happens around that:

* **Era A** (0.1.3 – 0.5.6.post2, ``ModelRunner.profile_max_num_token``):
  EAGLE headroom: from 0.4.3.post3 the pool is inflated to
  ``T' = T + R*steps*topk + R*draft_tokens + 100`` (R = max_num_reqs) and both target and
  draft use T' (0.4.1.post4 – 0.4.3.post2 inflate the draft pool only);
  ``--max-total-tokens`` cap; page rounding from 0.4.4.
* **Era B** (0.5.7 – 0.5.10.post1, ``model_runner_kv_cache_mixin``): same budget,
  ``int(rest * 2^30) // cell``, no EAGLE inflation; the draft's KV and weights are not in the
  formula (they come out of the held-back share); cap; page rounding.
* **Era C** (0.5.11 – 0.5.23, ``pool_configurator`` / ``KVCacheConfigurator``):
  ``available_bytes = int(rest * 2^30)``; from 0.5.14 EAGLE/STANDALONE put the draft KV inside
  the budget (``cell <- cell * (1 + L_draft / L_target)``) and count the draft weights in
  ``M_post``; page rounding, cap, re-rounding.

Pools that are not plain KV: Mamba state is subtracted from ``rest`` first (its size is in the
log); hybrid SWA pools are sized together, so the bytes per token used here are the bytes of
all pools per full-attention token.

The bytes per token come from the logged pool itself,
``kv_size_gb * 2^30 / (kv_tokens + page_size)`` (the pool has one padding page), which needs
no model config.  Printed figures carry two decimals, so every derived number here has an
uncertainty, which is kept (``lo``/``hi``) and used to say whether a difference is real.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from logparse.budget.pools import ROUND_GB as ROUND_GB
from logparse.budget.pools import BytesPerToken as BytesPerToken
from logparse.budget.pools import GiB as GiB
from logparse.budget.pools import bytes_per_token as bytes_per_token
from logparse.budget.pools import pool_figures as pool_figures
from logparse.budget.pools import resized_after_capture as resized_after_capture
from logparse.data import tables
from logparse.engines.sglang import versions

#: Speculative algorithms whose draft KV goes into the budget from 0.5.14.
_SPEC_IN_BUDGET = {"EAGLE", "EAGLE3", "STANDALONE", "NEXTN", "MTP", "DFLASH", "DSPARK"}


# --------------------------------------------------------------------------- eras
@dataclass(frozen=True)
class Era:
    key: str
    first: str
    last: str
    where: str
    formula: str

    @property
    def label(self) -> str:
        return f"Era {self.key} ({self.first}–{self.last})"


#: SGLang's sizing eras, in release order: ``grammars/<engine>/eras.toml``.
ERAS: tuple[Era, ...] = tuple(Era(**entry) for entry in tables.entries("sglang/eras.toml", "era"))


def _idx(v: str) -> int:
    return versions.index(v)


def era_of(version: str) -> Era:
    i = _idx(version)
    for era in ERAS:
        if _idx(era.first) <= i <= _idx(era.last):
            return era
    return ERAS[-1] if i > _idx(ERAS[-1].last) else ERAS[0]


def eras_in(rng: tuple[str, str] | None) -> list[Era]:
    if rng is None or versions.is_empty(rng):
        return list(ERAS)
    lo, hi = _idx(rng[0]), _idx(rng[1])
    return [e for e in ERAS if not (_idx(e.last) < lo or _idx(e.first) > hi)]


@dataclass
class Features:
    """What the formula does in the release assumed for a launch."""

    version: str  # the release whose behaviour is assumed
    era: Era
    eagle_inflation: bool = False  # 0.4.3.post3 – 0.5.6.post2: T' for target and draft
    draft_only_inflation: bool = False  # 0.4.1.post4 – 0.4.3.post2: only the draft pool
    page_rounding: bool = True  # 0.4.4+
    draft_in_budget: bool = False  # 0.5.14+: draft KV inside the budget, draft weights counted
    max_reqs_cap: int | None = 4096  # estimate of max_num_reqs: clamp(T/ctx*512, 2048, cap)
    notes: list[str] = field(default_factory=list)

    def describe(self) -> str:
        bits = [self.era.label]
        if self.eagle_inflation:
            bits.append("EAGLE token inflation")
        if self.draft_in_budget:
            bits.append("draft KV inside the budget")
        if not self.page_rounding:
            bits.append("no page rounding")
        return ", ".join(bits)


def _between(v: str, a: str, b: str) -> bool:
    return _idx(a) <= _idx(v) <= _idx(b)


def features_for(version: str, spec_algorithm: str | None = None) -> Features:
    era = era_of(version)
    spec = (spec_algorithm or "").upper()
    feat = Features(version=version, era=era)
    feat.eagle_inflation = bool(spec) and spec != "NGRAM" and _between(version, "0.4.3.post3", "0.5.6.post2")
    feat.draft_only_inflation = bool(spec) and spec != "NGRAM" and _between(version, "0.4.1.post4", "0.4.3.post2")
    feat.page_rounding = _idx(version) >= _idx("0.4.4")
    feat.draft_in_budget = spec in _SPEC_IN_BUDGET and _idx(version) >= _idx("0.5.14")
    if _idx(version) <= _idx("0.2.6"):
        feat.max_reqs_cap = None
    elif _idx(version) <= _idx("0.3.0"):
        feat.max_reqs_cap = 5120
    else:
        feat.max_reqs_cap = 4096
    return feat


def choose_features(rng: tuple[str, str] | None, spec_algorithm: str | None = None) -> Features:
    """The behaviour to assume for a launch dated to ``rng``: the latest release in it.

    A range spanning eras (or a boundary inside one, e.g. 0.5.14) is said in ``notes``.
    """
    if rng is None or versions.is_empty(rng):
        feat = features_for(versions.last(), spec_algorithm)
        feat.notes.append(f"SGLang version unknown: assuming the newest formula ({feat.era.label})")
        return feat
    feat = features_for(rng[1], spec_algorithm)
    spanned = eras_in(rng)
    if len(spanned) > 1:
        feat.notes.append(
            f"the version range {versions.format_range(rng)} spans "
            + ", ".join(e.label for e in spanned)
            + f"; using the later one ({feat.era.label})"
        )
    else:
        early = features_for(rng[0], spec_algorithm)
        for name, what in (
            ("eagle_inflation", "EAGLE token inflation"),
            ("draft_in_budget", "draft KV in the budget"),
            ("page_rounding", "page rounding"),
        ):
            if getattr(early, name) != getattr(feat, name):
                feat.notes.append(f"{what} changed inside the range {versions.format_range(rng)}; assuming {rng[1]}")
    return feat


# --------------------------------------------------------------------------- the formula
@dataclass
class Inputs:
    """Everything the formula needs, in SGLang's units (GiB, bytes per token)."""

    m_pre_gb: float
    m_post_gb: float
    f: float
    cell: float | None  # bytes per token the formula divides by
    page_size: int = 1
    max_total_tokens: int | None = None
    context_len: int | None = None
    max_running_requests: int | None = None  # the user's --max-running-requests
    dp_size: int = 1
    dp_attention: bool = False
    spec_steps: int | None = None
    spec_topk: int | None = None
    spec_draft_tokens: int | None = None
    mamba_gb: float = 0.0
    #: 0.5.18+: GiB of the KV budget held for multimodal allocations made after sizing (printed when > 0)
    mm_reservation_gb: float = 0.0
    #: post-capture sizing (0.5.16+): GiB the resize after the CUDA-graph capture moved the pool by
    #: (negative: the capture's memory and headrooms came out of it), from the two printed token counts;
    #: a what-if keeps it (the capture costs the same), the prediction checked against the log does not
    capture_delta_gb: float = 0.0
    #: DeepSeek-V4 (0.5.12+): GiB of the pools sized before the full pool (SWA cap, compression states),
    #: from its ``DSV4 memory calculation`` line
    fixed_pools_gb: float = 0.0

    def with_(self, **kw: Any) -> Inputs:
        return replace(self, **kw)


@dataclass
class Prediction:
    reserved_gb: float
    rest_gb: float
    tokens_memory: int | None = None  # from memory alone
    tokens_spec: int | None = None  # after EAGLE inflation (era A)
    tokens: int | None = None  # final pool size
    capped: bool = False  # --max-total-tokens decided the size
    cap_not_binding: bool = False  # the cap was larger than the profiled value
    not_enough: bool = False  # T <= 0: "Not enough memory"
    max_num_reqs: int | None = None
    steps: list[str] = field(default_factory=list)

    def kv_gb(self, cell: float | None, page: int) -> float | None:
        if self.tokens is None or cell is None:
            return None
        return pool_gb(self.tokens, page, cell)


def pool_gb(tokens: int, page: int, cell: float) -> float:
    """Bytes of a pool of ``tokens`` (plus its padding page), in GiB."""
    return (tokens + max(page, 1)) * cell / GiB


def max_num_reqs(inp: Inputs, feat: Features, tokens: int) -> int:
    if inp.max_running_requests:
        user = inp.max_running_requests
        return max(1, user // inp.dp_size) if inp.dp_attention and inp.dp_size > 1 else user
    ctx = inp.context_len or 4096
    est = max(int(tokens / ctx * 512), 2048)
    return min(est, feat.max_reqs_cap) if feat.max_reqs_cap else est


def _budget(inp: Inputs) -> tuple[Prediction, float]:
    """The KV budget (``rest``, GiB) and the step that shows it; the second value is what the pool's
    tokens are sized from (DeepSeek-V4 sizes its fixed pools out of the budget first)."""
    reserved = inp.m_pre_gb * (1.0 - inp.f)
    rest = inp.m_post_gb - reserved - (inp.mamba_gb or 0.0) - (inp.mm_reservation_gb or 0.0)
    p = Prediction(reserved_gb=reserved, rest_gb=rest)
    rest -= inp.fixed_pools_gb or 0.0
    p.steps.append(
        f"rest = M_post {inp.m_post_gb:.2f} − M_pre {inp.m_pre_gb:.2f} × (1 − {inp.f:g}) = "
        f"{inp.m_post_gb:.2f} − {reserved:.2f}"
        + (f" − mamba {inp.mamba_gb:.2f}" if inp.mamba_gb else "")
        + (f" − multimodal reservation {inp.mm_reservation_gb:.2f}" if inp.mm_reservation_gb else "")
        + (f" − fixed DSV4 pools {inp.fixed_pools_gb:.2f}" if inp.fixed_pools_gb else "")
        + f" = {rest:.2f} GiB"
    )
    return p, rest


def predict(inp: Inputs, feat: Features) -> Prediction:
    """Apply one era's formula to ``inp``."""
    p, rest = _budget(inp)
    cap = inp.max_total_tokens
    if inp.cell is None or inp.cell <= 0:
        p.steps.append("bytes per token unknown: no token count can be derived")
        if cap is not None:
            p.tokens = cap
            p.capped = True
        return p
    if inp.capture_delta_gb:
        rest += inp.capture_delta_gb
        p.steps.append(
            f"post-capture sizing: the resize after the CUDA-graph capture moves it by {inp.capture_delta_gb:+.2f} "
            f"GiB (as in this launch) = {rest:.2f} GiB"
        )
    if feat.era.key == "A":
        t = int(rest * GiB // inp.cell) if rest > 0 else math.floor(rest * GiB / inp.cell)
    else:
        t = int(rest * GiB) // max(round(inp.cell), 1) if rest > 0 else math.floor(rest * GiB / inp.cell)
    p.tokens_memory = t
    p.steps.append(f"T = {rest:.4f} GiB × 2^30 / {inp.cell:,.0f} B/token = {t:,}")
    if t <= 0:
        p.not_enough = True
        p.tokens = t
        p.steps.append("T ≤ 0: SGLang stops with 'Not enough memory' (raise --mem-fraction-static)")
        return p
    if feat.eagle_inflation and inp.spec_steps is not None:
        r = max_num_reqs(inp, feat, t)
        p.max_num_reqs = r
        steps, topk, nd = inp.spec_steps or 0, inp.spec_topk or 1, inp.spec_draft_tokens or 0
        t2 = t + r * steps * topk + r * nd + 100
        p.steps.append(f"EAGLE headroom: T' = {t:,} + {r}×{steps}×{topk} + {r}×{nd} + 100 = {t2:,}")
        t = t2
    p.tokens_spec = t
    if cap is not None:
        if cap < t:
            p.steps.append(f"--max-total-tokens {cap:,} caps it (memory allows {t:,})")
            t = cap
            p.capped = True
        else:
            p.cap_not_binding = True
            p.steps.append(
                f"--max-total-tokens {cap:,} is larger than the profiled {t:,}: SGLang uses the profiled value"
            )
    if feat.page_rounding and inp.page_size > 1:
        t2 = t // inp.page_size * inp.page_size
        if t2 != t:
            p.steps.append(f"page rounding ({inp.page_size}): {t:,} → {t2:,}")
        t = t2
    p.tokens = t
    return p


def fraction_for_rest(inp: Inputs, rest_gb: float) -> float:
    """The --mem-fraction-static that gives ``rest_gb`` with the same memory figures."""
    # rest = M_post - M_pre*(1-f) - mamba - mm  =>  f = 1 - (M_post - mamba - mm - rest)/M_pre
    return 1.0 - (inp.m_post_gb - (inp.mamba_gb or 0.0) - (inp.mm_reservation_gb or 0.0) - rest_gb) / inp.m_pre_gb


# --------------------------------------------------------------------------- inputs from a launch
#: The first release that prints the KV pool's size (``KV Cache is allocated``/``K size``).
FIRST_KV_SIZE_RELEASE = "0.4.1.post6"


def prints_kv_pool_size(launch) -> bool:
    """Does the launch's release print its KV pool's size?  (False before 0.4.1.post6; a launch of
    unknown release is taken to.)"""
    rng = launch.version_range
    return not rng or versions.is_empty(rng) or _idx(rng[1]) >= _idx(FIRST_KV_SIZE_RELEASE)


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


def token_interval(inp: Inputs, feat: Features, bpt: BytesPerToken) -> tuple[int | None, int | None]:
    """Range of T consistent with the rounding of the printed figures (±0.005 GiB each)."""
    if bpt.lo is None or bpt.hi is None or bpt.hi <= 0:
        return None, None
    extra_cell = (inp.cell - bpt.value) if (inp.cell is not None and bpt.value is not None) else 0.0
    lo_in = inp.with_(m_post_gb=inp.m_post_gb - ROUND_GB, m_pre_gb=inp.m_pre_gb + ROUND_GB, cell=bpt.hi + extra_cell)
    hi_in = inp.with_(
        m_post_gb=inp.m_post_gb + ROUND_GB, m_pre_gb=inp.m_pre_gb - ROUND_GB, cell=max(bpt.lo + extra_cell, 1e-9)
    )
    return predict(lo_in, feat).tokens, predict(hi_in, feat).tokens


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
        last = rng[1] if _idx(rng[1]) <= _idx(era.last) else era.last
        feat = features_for(last, li.spec)
        alt = launch_inputs(launch, group, feat)
        if alt.inputs is not None and alt.inputs.cell is not None and matches(alt):
            alt.features.notes = list(li.features.notes) + [
                f"but the logged pool matches {era.label}'s formula and not the later one's, so {era.label} is used"
            ]
            return alt
    return li
