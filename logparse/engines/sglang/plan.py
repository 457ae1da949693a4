"""``logparse plan`` for SGLang: its sizing formula of the release (:mod:`logparse.engines.sglang.formula`) fed
with the model's own bytes per token (:mod:`logparse.budget.model_kv`) and a GPU's memory.

Without ``--from`` the free memory before the weights comes from the GPU table (or the deployment's
history) and the weights from the model's size; every such figure is an assumption, named, and its
uncertainty widens the token range.  With ``--from LAUNCH`` the launch's own figures are the inputs
(free memory before and after the weights, the pool's bytes per token, its fraction, its cap) and only
what the flags change is modelled, as ratios of the config's figures (bytes per token at the new TP
or dtype over the launch's, weights at the new TP over the launch's) or as differences (another GPU:
its total less the launch's).  The formula's residual on the launch (logged − predicted tokens) is
carried over, so with no change the plan is the logged pool.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from logparse.budget import gpus
from logparse.budget import model_kv as mk
from logparse.budget.config_check import launch_kv_dtype
from logparse.budget.model import Budget
from logparse.budget.model_config import ModelConfig
from logparse.engines.sglang import eras, versions
from logparse.engines.sglang import formula as fm
from logparse.engines.sglang import kv as sgkv
from logparse.engines.sglang.formula import ROUND_GB, GiB
from logparse.engines.sglang.reserve import EngineReserve, ReserveInputs, reserve_inputs, sglang_reserve
from logparse.launches.model import Launch
from logparse.reports.plan_memory import GpuMemory, PlanError
from logparse.reports.plan_types import EnginePlan, PlanFlags, r2

#: Speculative algorithms whose draft is the checkpoint's own MTP layers.
_MTP = ("NEXTN", "MTP")
#: CUDA graphs SGLang captures, per rank, before a launch measures them (GiB): typical and range.
GRAPHS_GB = (1.0, 0.4, 1.9)


@dataclass(frozen=True)
class Settings:
    """The SGLang settings a plan is made for (the flags over the launch's over the defaults)."""

    release: str
    tp: int
    pp: int
    dp: int
    dp_attention: bool
    kv_dtype: str
    page: int
    context: int | None
    chunked_prefill_size: int | None
    cuda_graph_max_bs: int | None
    spec: str | None
    max_total_tokens: int | None = None
    max_running_requests: int | None = None
    spec_steps: int | None = None
    spec_topk: int | None = None
    spec_draft_tokens: int | None = None

    @property
    def features(self) -> eras.Features:
        return eras.features_for(self.release, self.spec)

    def shape(self) -> sgkv.SglangShape:
        return sgkv.SglangShape(self.tp, self.dp, self.pp, self.dp_attention, self.kv_dtype, self.release)


def _spec(value: str | None) -> str | None:
    return None if value is None or value.upper() in ("", "NONE", "OFF") else value.upper()


def settings_of(cfg: ModelConfig, flags: PlanFlags, launch: Launch | None, budget: Budget | None) -> Settings:
    """The flags over the launch's own settings (``--from``) over the release's defaults."""
    inp = budget.inputs.inputs if budget is not None and budget.inputs is not None else None
    ri = reserve_inputs(launch) if launch is not None else None
    base_release = (budget.assumed_version if budget is not None else None) or versions.last()
    release = flags.release or base_release
    if release not in versions.releases():
        raise PlanError(
            f"--release {release}: not an SGLang release logparse knows ({versions.first()} – {versions.last()})"
        )
    spec = (
        _spec(flags.speculative_algorithm)
        if flags.speculative_algorithm is not None
        else _spec(launch.speculative_algorithm if launch else None)
    )
    return Settings(
        release=release,
        tp=flags.tp or (launch.tp_size if launch else None) or 1,
        pp=flags.pp or (launch.pp_size if launch else None) or 1,
        dp=flags.dp or (launch.dp_size if launch else None) or 1,
        dp_attention=bool(launch.enable_dp_attention) if launch else False,
        kv_dtype=flags.kv_cache_dtype or (launch_kv_dtype(launch) if launch else "auto"),
        page=flags.page_size or (inp.page_size if inp else None) or (launch.page_size if launch else None) or 1,
        context=flags.context_length or (launch.context_len or launch.context_length if launch else None) or cfg.max_position_embeddings,
        chunked_prefill_size=flags.chunked_prefill_size or (ri.chunked_prefill_size if ri else None),
        cuda_graph_max_bs=flags.cuda_graph_max_bs or (ri.cuda_graph_max_bs if ri else None),
        spec=spec,
        max_total_tokens=flags.max_total_tokens or (launch.max_total_tokens if launch else None),
        max_running_requests=launch.max_running_requests if launch else None,
        spec_steps=inp.spec_steps if inp and spec else None,
        spec_topk=inp.spec_topk if inp and spec else None,
        spec_draft_tokens=inp.spec_draft_tokens if inp and spec else None,
    )  # fmt: skip


def draft_layers(cfg: ModelConfig, s: Settings) -> int:
    """Layers of the draft: the checkpoint's MTP layers, else one (EAGLE heads are one layer)."""
    if s.spec is None or s.spec == "NGRAM":
        return 0
    return max(cfg.nextn_layers, 1) if s.spec in _MTP or cfg.nextn_layers else 1


def cells(cfg: ModelConfig, s: Settings) -> tuple[float, float, float]:
    """(the cell the formula divides by, the target's own, the draft's) in bytes per token."""
    cell = sgkv.sglang_cell(cfg, s.shape())
    target = float(cell.value)
    layers = sum(cell.layers.values()) or 1
    n_draft = draft_layers(cfg, s)
    draft = target / layers * n_draft if n_draft else 0.0
    if s.features.draft_in_budget and n_draft:
        return float(sgkv.sglang_draft_scaled(cell.value, layers, n_draft)), target, draft
    return target, target, draft


@dataclass
class Baseline:
    """The formula's inputs for the planned settings, and what the range and headroom need."""

    inputs: fm.Inputs
    features: eras.Features
    target_cell: float
    draft_cell: float
    weights_gb: float
    residual: int = 0
    free_error_gb: float = 0.0
    weights_error: tuple[float, float] = (0.0, 0.0)
    cell_range: tuple[float, float] | None = None
    calibrated_from: str | None = None
    logged_tokens: int | None = None
    headroom_old: float | None = None
    post_old: float | None = None
    pool_old_gb: float | None = None
    tokens_old: int | None = None
    assumptions: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _mamba_gb(cfg: ModelConfig, m_post: float, m_pre: float, f: float) -> float:
    """Mamba state share of the budget: ``rest × r / (1 + r)`` with SGLang's default ratio r (0.9)."""
    if not cfg.count("linear"):
        return 0.0
    rest = max(m_post - m_pre * (1 - f), 0.0)
    r = sgkv.MAMBA_FULL_MEMORY_RATIO
    return rest * r / (1 + r)


def fresh_baseline(cfg: ModelConfig, s: Settings, mem: GpuMemory, f: float) -> Baseline:
    """Inputs from the GPU table (or history) and the model's size: nothing measured."""
    if mem.free_before_weights_gb is None:
        raise PlanError("the free memory before the weights is not known: give --gpu NAME or --gpu-memory GIB")
    feat = s.features
    cell, target, draft = cells(cfg, s)
    w = mk.weights_per_rank(cfg, s.tp, s.pp)
    if not w.known:
        raise PlanError(mk.weights_unknown(cfg))
    weights, assumptions = w.gb, [mem.source, f"weights per rank ≈ {w.gb:.2f} GiB: {w.source}"]
    n_draft = draft_layers(cfg, s)
    if feat.draft_in_budget and n_draft:
        dw = w.gb / cfg.layers * n_draft
        weights += dw
        assumptions.append(
            f"draft weights (counted from 0.5.14) ≈ {dw:.2f} GiB: {n_draft} layer(s) of the target's size"
        )
    m_pre = mem.free_before_weights_gb
    m_post = m_pre - weights
    inp = fm.Inputs(
        m_pre_gb=m_pre, m_post_gb=m_post, f=f, cell=cell, page_size=s.page, max_total_tokens=s.max_total_tokens,
        context_len=s.context, dp_size=s.dp, dp_attention=s.dp_attention, mamba_gb=_mamba_gb(cfg, m_post, m_pre, f),
    )  # fmt: skip
    lo, hi = (w.lo_gb or w.gb) - w.gb, (w.hi_gb or w.gb) - w.gb
    return Baseline(
        inp, feat, target, draft, w.gb, free_error_gb=mem.free_error_gb, weights_error=(lo, hi), assumptions=assumptions
    )


def _cell_ratio(cfg: ModelConfig, new: Settings, old: Settings) -> float:
    a, b = cells(cfg, new)[0], cells(cfg, old)[0]
    return a / b if b else 1.0


def _weights_ratio(cfg: ModelConfig, new: Settings, old: Settings) -> float:
    if (new.tp, new.pp) == (old.tp, old.pp):
        return 1.0
    return mk.weights_per_rank(cfg, new.tp, new.pp).gb / mk.weights_per_rank(cfg, old.tp, old.pp).gb


def _gpu_shift(m_pre_old: float, old: Settings, new: Settings, mem: GpuMemory | None) -> tuple[float, list[str]]:
    """How much more is free before the weights on the planned GPU and TP than the launch measured."""
    notes: list[str] = []
    shift = gpus.startup_overhead_gb(old.tp) - gpus.startup_overhead_gb(new.tp)
    if shift:
        notes.append(f"tp {old.tp} → {new.tp}: NCCL buffers before the weights change by {-shift:+.2f} GiB (typical)")
    if mem is None or mem.total_gb is None:
        return shift, notes
    seen = gpus.closest_gpu(m_pre_old, old.tp)
    if seen is None:
        notes.append(
            f"the launch's GPU is not logged and its {m_pre_old:.2f} GiB free fits no GPU of the table: the new GPU's typical free memory is used"
        )
        return (mem.free_before_weights_gb or m_pre_old) - m_pre_old + shift, notes
    gpu, _ = seen
    delta = mem.total_gb - gpu.total_gb
    notes.append(
        f"the launch's GPU is not logged; its {m_pre_old:.2f} GiB free before the weights fits {gpu.name} "
        f"({gpu.total_gb:g} GiB): the planned GPU has {delta:+.2f} GiB"
    )
    return shift + delta, notes


def calibrated_baseline(
    cfg: ModelConfig, s: Settings, old: Settings, launch: Launch, b: Budget, mem: GpuMemory | None, f: float
) -> Baseline:
    """The launch's own inputs, changed only where the settings differ from the launch's."""
    li = b.inputs
    inp = li.inputs if li is not None else None
    if li is None or inp is None:
        raise PlanError(
            f"{launch.launch_id}: the log lacks the figures the formula needs (Load weight begin/end and "
            "mem_fraction_static), so it cannot calibrate a plan"
        )
    old_cell = inp.cell or cells(cfg, old)[0]
    ratio = _cell_ratio(cfg, s, old)
    shift, notes = _gpu_shift(inp.m_pre_gb, old, s, mem) if (mem is not None or s.tp != old.tp) else (0.0, [])
    weights_old = inp.m_pre_gb - inp.m_post_gb
    weights = weights_old * _weights_ratio(cfg, s, old)
    m_pre = inp.m_pre_gb + shift
    new_inp = replace(
        inp, m_pre_gb=m_pre, m_post_gb=m_pre - weights, f=f, cell=old_cell * ratio, page_size=s.page, context_len=s.context,
        spec_steps=s.spec_steps, spec_topk=s.spec_topk, spec_draft_tokens=s.spec_draft_tokens, dp_size=s.dp,
        max_total_tokens=s.max_total_tokens,
    )  # fmt: skip
    _, target, draft = cells(cfg, s)
    t_ratio = target / cells(cfg, old)[1] if cells(cfg, old)[1] else 1.0
    target_cell = (li.bpt.value * t_ratio) if li.bpt.value else target
    base = Baseline(new_inp, s.features, target_cell, draft, weights, calibrated_from=launch.launch_id, notes=notes)
    residual, base.logged_tokens = _residual(inp.with_(cell=old_cell), li.features, b.kv_tokens)
    # the residual is memory the formula did not see: the same bytes are fewer or more tokens at another cell
    base.residual = round(residual / ratio) if ratio else residual
    base.headroom_old, base.post_old, base.tokens_old = b.headroom_gb, inp.m_post_gb, b.kv_tokens
    base.pool_old_gb = b.kv_pool_gb
    if base.pool_old_gb is None and b.kv_tokens:  # releases before 0.4.1.post6 print no pool GiB
        base.pool_old_gb = fm.pool_gb(b.kv_tokens, inp.page_size, (li.bpt.value or old_cell))
    if li.bpt.lo is not None and li.bpt.hi is not None and inp.cell:
        extra = old_cell - (li.bpt.value or old_cell)
        base.cell_range = ((li.bpt.lo + extra) * ratio, (li.bpt.hi + extra) * ratio)
    base.free_error_gb = ROUND_GB + (0.25 if shift else 0.0)
    base.weights_error = (-ROUND_GB, ROUND_GB) if weights == weights_old else (-0.02 * weights, 0.02 * weights)
    base.assumptions = _calibration_words(launch, b, inp, s, old)
    return base


def _residual(inp: fm.Inputs, feat: eras.Features, logged: int | None) -> tuple[int, int | None]:
    """Logged − predicted tokens of the launch (0 when capped: the cap, not the formula, sized it)."""
    p = fm.predict(inp, feat)
    if logged is None or p.tokens is None or p.capped or p.tokens <= 0:
        return 0, logged
    return logged - p.tokens, logged


def _calibration_words(launch: Launch, b: Budget, inp: fm.Inputs, s: Settings, old: Settings) -> list[str]:
    out = [
        f"calibrated on launch {launch.launch_id} ({launch.source or 'stored'}): free {inp.m_pre_gb:.2f} GiB before "
        f"and {inp.m_post_gb:.2f} GiB after the weights, {b.kv_tokens:,} KV tokens logged" if b.kv_tokens is not None
        else f"calibrated on launch {launch.launch_id}: free {inp.m_pre_gb:.2f} GiB before and {inp.m_post_gb:.2f} after the weights",
    ]  # fmt: skip
    changed = [
        f"{name} {a} → {c}"
        for name, a, c in (
            ("release", old.release, s.release), ("tp", old.tp, s.tp), ("pp", old.pp, s.pp), ("kv_cache_dtype", old.kv_dtype, s.kv_dtype),
            ("page_size", old.page, s.page), ("context", old.context, s.context), ("speculative", old.spec, s.spec),
        )
        if a != c
    ]  # fmt: skip
    out.append("modelled changes: " + ", ".join(changed) if changed else "no setting changed: the launch's own pool")
    return out + [_release_words(launch, old.release), f"tp {old.tp}: read from the launch"]


def _release_words(launch: Launch, release: str) -> str:
    """Where the launch's release comes from: SGLang prints none, so the range its lines date it to."""
    rng = launch.version_range
    if rng and rng[0] != rng[1]:
        return f"release SGLang {release}: launch {launch.launch_id}'s log dates to {rng[0]}–{rng[1]}; its formula is the one of {release}"
    return f"release SGLang {release}: read from launch {launch.launch_id} (the one release its lines fit)"


# --------------------------------------------------------------------------- the prediction
def _round_cap(t: int, inp: fm.Inputs, feat: eras.Features) -> int:
    if inp.max_total_tokens is not None and t > inp.max_total_tokens:
        t = inp.max_total_tokens
    if feat.page_rounding and inp.page_size > 1:
        t = t // inp.page_size * inp.page_size
    return t


def predict(base: Baseline) -> tuple[fm.Prediction, int | None, list[int] | None]:
    """The formula's prediction, the tokens (residual carried over), and their range."""
    p = fm.predict(base.inputs, base.features)
    if p.tokens is None:
        return p, None, None
    tokens = p.tokens if p.capped or p.tokens <= 0 else _round_cap(p.tokens + base.residual, base.inputs, base.features)
    e, (wlo, whi) = base.free_error_gb, base.weights_error
    clo, chi = base.cell_range or (base.inputs.cell or 0, base.inputs.cell or 0)
    lo_in = base.inputs.with_(m_pre_gb=base.inputs.m_pre_gb - e, m_post_gb=base.inputs.m_post_gb - e - whi, cell=chi)
    hi_in = base.inputs.with_(
        m_pre_gb=base.inputs.m_pre_gb + e, m_post_gb=base.inputs.m_post_gb + e - wlo, cell=max(clo, 1.0)
    )
    # the held-back share is (1 − f) × M_pre: less free memory lowers M_post by all of it, the share by (1 − f)
    ends = []
    for x in (lo_in, hi_in):
        t = fm.predict(x, base.features).tokens
        ends.append(None if t is None else (t if t <= 0 else _round_cap(t + base.residual, x, base.features)))
    if None in ends:
        return p, tokens, None
    lo, hi = sorted(int(max(x or 0, 0)) for x in ends)
    return p, tokens, [min(lo, max(tokens, 0)), max(hi, max(tokens, 0))]


def engine_reserve(
    cfg: ModelConfig,
    s: Settings,
    gpu_total: float | None,
    m_pre: float,
    launch: Launch | None = None,
    b: Budget | None = None,
) -> EngineReserve:
    """SGLang's own reserve for these settings (its default-fraction logic of the release): with ``--from``,
    the launch's own reserve inputs (:func:`~logparse.engines.sglang.reserve.reserve_inputs`) with what the flags change."""
    base = (
        reserve_inputs(launch)
        if launch is not None
        else ReserveInputs(mla=cfg.mla is not None, multimodal=cfg.multimodal)
    )
    inp = base.with_(
        tp_size=s.tp, pp_size=s.pp, dp_size=s.dp, enable_dp_attention=s.dp_attention,
        chunked_prefill_size=s.chunked_prefill_size, cuda_graph_max_bs=s.cuda_graph_max_bs, speculative_algorithm=s.spec,
        mla=base.mla if base.mla is not None else cfg.mla is not None,
    )  # fmt: skip
    same_release = launch is not None and b is not None and s.release == b.assumed_version
    release = launch.version_range if same_release and launch is not None and launch.version_range else s.release
    return sglang_reserve(release, inp, gpu_memory_gb=gpu_total, m_pre_gb=None if gpu_total else m_pre)


def _headroom(base: Baseline, s: Settings, tokens: int, pool_gb: float) -> tuple[float | None, list[float] | None, str]:
    """Free memory left after setup: the launch's, moved by what changed; else the held-back share less
    the request table, CUDA graphs and what the draft takes outside the budget."""
    inp = base.inputs
    outside = 0.0 if base.features.draft_in_budget else base.draft_cell * max(tokens, 0) / GiB
    if base.post_old is not None:  # calibrated on a launch's memory figures
        if base.headroom_old is None or base.post_old is None or base.pool_old_gb is None or base.tokens_old is None:
            return None, None, "the launch has no headroom figure to move"
        old_outside = 0.0 if base.features.draft_in_budget else base.draft_cell * base.tokens_old / GiB
        h = base.headroom_old + (inp.m_post_gb - base.post_old) - (pool_gb - base.pool_old_gb) - (outside - old_outside)
        e = base.free_error_gb + 0.02
        return (
            h,
            [h - e, h + e],
            "the launch's headroom, moved by the change of free memory after the weights and of the pools",
        )
    held = inp.m_pre_gb * (1 - inp.f)
    reqs = fm.max_num_reqs(inp, base.features, max(tokens, 1))
    req_gb = (reqs + 1) * ((s.context or 4096) + 4) * 4 / GiB
    draft_w = 0.0 if base.features.draft_in_budget else base.weights_gb * draft_layers_share(base)
    g, glo, ghi = GRAPHS_GB
    h = held - req_gb - g - outside - draft_w
    lo = held - req_gb - ghi - outside - draft_w - base.free_error_gb
    hi = held - req_gb - glo - outside - draft_w + base.free_error_gb
    why = f"held back {held:.2f} GiB, less the request table {req_gb:.2f}, CUDA graphs ≈ {g:g} ({glo:g}–{ghi:g})"
    if outside or draft_w:
        why += f", the draft's KV {outside:.2f} and weights {draft_w:.2f} (outside the budget before 0.5.14)"
    return h, [lo, hi], why


def draft_layers_share(base: Baseline) -> float:
    """The draft's weights as a share of the target's (its bytes per token over the target's)."""
    return base.draft_cell / base.target_cell if base.target_cell else 0.0


def fraction(
    flags: PlanFlags, s: Settings, launch: Launch | None, b: Budget | None, reserve: EngineReserve
) -> tuple[float, str]:
    """The fraction planned: the flag, else the launch's, else the engine's default for these settings."""
    if flags.mem_fraction_static is not None:
        return flags.mem_fraction_static, "--mem-fraction-static"
    if b is not None and b.inputs is not None and b.inputs.inputs is not None:
        return b.inputs.inputs.f, "the launch's"
    if reserve.default_fraction is not None:
        return (
            reserve.default_fraction,
            f"SGLang {reserve.release}'s default here (its reserve {reserve.reserve_gb:.2f} GiB)",
        )
    f = versions.default_mem_fraction_static((s.release, s.release), s.tp)
    return (f or 0.88), "SGLang's default for this tp size"


def sglang_plan(
    cfg: ModelConfig, flags: PlanFlags, mem: GpuMemory | None, launch: Launch | None = None, b: Budget | None = None
) -> EnginePlan:
    """SGLang's plan (see the module documentation)."""
    s = settings_of(cfg, flags, launch, b)
    old = settings_of(cfg, PlanFlags(), launch, b) if launch is not None else None
    m_pre_guess = (
        mem.free_before_weights_gb
        if mem is not None and mem.free_before_weights_gb
        else (b.pre_load_avail_gb if b else None)
    )
    total = mem.total_gb if mem is not None else None
    reserve = engine_reserve(cfg, s, total, m_pre_guess or 0.0, launch, b)
    f, f_src = fraction(flags, s, launch, b, reserve)
    if launch is not None and b is not None and old is not None and (b.inputs is None or b.inputs.inputs is None):
        return _pool_only(cfg, s, old, launch, b, mem, (f, f_src), reserve)
    if launch is not None and b is not None and old is not None:
        base = calibrated_baseline(cfg, s, old, launch, b, mem if (flags.gpu or flags.gpu_memory_gb) else None, f)
    else:
        if mem is None:
            raise PlanError("give --gpu NAME or --gpu-memory GIB (or --from LAUNCH): the GPU's memory is not known")
        base = fresh_baseline(cfg, s, mem, f)
    return _assemble(cfg, s, base, reserve, f, f_src, mem)


def _pool_only(
    cfg: ModelConfig,
    s: Settings,
    old: Settings,
    launch: Launch,
    b: Budget,
    mem: GpuMemory | None,
    fs: tuple[float, str],
    reserve: EngineReserve,
) -> EnginePlan:
    """A launch that printed its pool's tokens but no memory figures (SGLang 0.1.x): with no change its pool;
    with changes, the GPU table's figures for the old and the new settings, the launch's residual carried."""
    logged = b.kv_tokens
    if logged is None:
        raise PlanError(f"{launch.launch_id}: the log has neither memory figures nor a KV token count to calibrate on")
    words = f"launch {launch.launch_id} printed no memory figures, only its {logged:,} KV tokens"
    if s == old and mem is None:
        out = EnginePlan(
            "sglang", s.release, logged, [logged, logged], None, None, int(cells(cfg, s)[1]), reserve.default_fraction
        )
        out.calibrated_from, out.logged_kv_tokens, out.fraction, out.fraction_source = (
            launch.launch_id,
            logged,
            fs[0],
            fs[1],
        )
        out.tp, out.pp, out.kv_cache_dtype, out.context_length = s.tp, s.pp, s.kv_dtype, s.context
        out.assumptions = [words + ": no setting changed, so its pool is the plan (give --gpu to model changes)"]
        return out
    if mem is None:
        raise PlanError(words + ": give --gpu NAME or --gpu-memory GIB to model a change")
    f_old = launch.mem_fraction_static or versions.default_mem_fraction_static(launch.version_range, old.tp) or fs[0]
    before = fresh_baseline(cfg, old, mem.with_tp(old.tp), f_old)
    base = fresh_baseline(cfg, s, mem.with_tp(s.tp), fs[0])
    base.residual, base.logged_tokens = _residual(before.inputs, before.features, logged)
    base.calibrated_from = launch.launch_id
    base.assumptions.insert(
        0, words + f"; the GPU table's figures for its settings miss it by {-base.residual:+,} tokens, carried over"
    )
    return _assemble(cfg, s, base, reserve, fs[0], fs[1], mem)


def _assemble(
    cfg: ModelConfig, s: Settings, base: Baseline, reserve: EngineReserve, f: float, f_src: str, mem: GpuMemory | None
) -> EnginePlan:
    p, tokens, rng = predict(base)
    inp = base.inputs
    out = EnginePlan(
        "sglang",
        s.release,
        None,
        None,
        None,
        None,
        int(base.target_cell),
        reserve.default_fraction,
        fraction=f,
        fraction_source=f_src,
    )
    out.tp, out.pp, out.kv_cache_dtype, out.context_length = s.tp, s.pp, s.kv_dtype, s.context
    out.gpu, out.gpu_total_gb = (mem.name, mem.total_gb) if mem is not None else (None, None)
    out.free_before_weights_gb, out.weights_gb, out.kv_budget_gb = r2(inp.m_pre_gb), r2(base.weights_gb), r2(p.rest_gb)
    out.engine_reserve_gb = reserve.reserve_gb
    out.fraction_keeping_reserve = reserve.fraction_keeping_reserve(inp.m_pre_gb)
    out.calibrated_from, out.logged_kv_tokens = base.calibrated_from, base.logged_tokens
    out.steps = list(p.steps) + (
        [f"calibration: the launch's residual {base.residual:+,} tokens carried over"] if base.residual else []
    )
    out.assumptions, out.notes = list(base.assumptions), list(base.notes) + list(reserve.notes[:2])
    out.terms = {
        "base_gb": inp.m_pre_gb,
        "fraction": f,
        "weights_gb": base.weights_gb,
        "kv_gb": p.rest_gb,
        "held_back_gb": inp.m_pre_gb * (1 - f),
    }
    if tokens is None or tokens <= 0:
        return _no_kv_budget(out, base, rng, f)
    out.kv_tokens, out.kv_tokens_range = tokens, rng
    out.kv_pool_gb = r2(fm.pool_gb(tokens, inp.page_size, base.target_cell))
    h, hr, why = _headroom(base, s, tokens, out.kv_pool_gb or 0.0)
    out.headroom_gb, out.headroom_gb_range = r2(h), [r2(x) or 0.0 for x in hr] if hr else None
    out.assumptions.append("headroom: " + why)
    if s.context:
        out.max_concurrency = round(tokens / s.context, 2)
    if p.capped:
        out.notes.insert(
            0, f"--max-total-tokens {inp.max_total_tokens:,} caps the pool (memory allows {p.tokens_spec:,})"
        )
    if not f_src.startswith("SGLang"):
        _reserve_note(out, inp, reserve)
    return out


def _no_kv_budget(out: EnginePlan, base: Baseline, rng: list[int] | None, f: float) -> EnginePlan:
    """No KV budget at this fraction: zero tokens, and the smallest fraction that starts (if any)."""
    inp = base.inputs
    out.kv_tokens, out.kv_tokens_range, out.kv_pool_gb = 0, [0, max(rng[1], 0) if rng else 0], 0.0
    need = fm.fraction_for_rest(inp, inp.page_size * (inp.cell or 1) / GiB)
    smallest = (
        f"; the smallest that starts is {math.ceil(need * 1000) / 1000:g}"
        if 0 < need < 1
        else "; the model does not fit this GPU and TP"
    )
    out.not_possible = (
        f"not enough memory: the weights ({base.weights_gb:.2f} GiB) leave no KV budget at mem_fraction_static {f:g}"
        + smallest
    )
    return out


def _reserve_note(out: EnginePlan, inp: fm.Inputs, reserve: EngineReserve) -> None:
    held = inp.m_pre_gb * (1 - inp.f)
    if reserve.reserve_gb is not None and held + 1e-9 < (reserve.reserve_gb_lo or reserve.reserve_gb):
        out.notes.insert(
            0,
            f"mem_fraction_static {inp.f:g} holds back {held:.2f} GiB, less than SGLang's own reserve for these flags "
            f"({reserve.reserve_gb:.2f} GiB): it may run out of memory under load",
        )
