"""``logparse plan`` for vLLM: its budget ``u × T`` less what its profile charges (the vLLM catalogue §4,
:mod:`logparse.engines.vllm.formula`), the pool turned into the tokens vLLM prints (:func:`~logparse.engines.vllm.formula.pool_tokens`).

Before a launch the charged terms are estimates, each named with its range: the weights from the
model's size, the activation peak of the profile run (``max_num_batched_tokens`` tokens through the
widest layer, and the sampler's logits), non-torch memory (CUDA context, NCCL), and from 0.20.0 the
CUDA-graph estimate.  With ``--from`` the launch's own figures replace them: its pool is the anchor and
only what the flags change moves it (``u``, the GPU's total, the weights at another TP, the graph
estimate entering or leaving the budget with the release).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from logparse.budget import model_kv as mk
from logparse.budget.config_check import launch_kv_dtype
from logparse.budget.model import Budget
from logparse.budget.model_config import ModelConfig
from logparse.engines.vllm import formula as vb
from logparse.engines.vllm import kv as vkv
from logparse.engines.vllm import versions as vv
from logparse.engines.vllm.explain import total_gb
from logparse.engines.vllm.figures import release_of
from logparse.engines.vllm.reserve import VllmReserve, VllmReserveInputs, graphs_in_budget, vllm_reserve
from logparse.launches.model import Launch
from logparse.reports.plan_memory import GpuMemory, PlanError
from logparse.reports.plan_types import EnginePlan, PlanFlags, r2

#: V1's defaults for an API server (``EngineArgs`` batch defaults): on a GPU of 70 GiB or more that is not
#: an A100, 8,192 batched tokens and (from 0.9.0) 1,024 sequences; elsewhere 2,048 and 256.
V1_LARGE_GPU = (8192, 1024)
V1_SMALL_GPU = (2048, 256)
#: V0: without chunked prefill the profile runs max(max_model_len, 2,048) tokens; chunked prefill (on by
#: default above 32K of context for an API server) runs 512 of them; 256 sequences.
V0_MIN_TOKENS, V0_CHUNKED_TOKENS, V0_CHUNKED_ABOVE, V0_MAX_SEQS = 2048, 512, 32768, 256
#: The profile's activation peak, fitted on public launches (docs/plan-accuracy.md, "calibration"):
#: the tokens through the widest layer, ``tokens × (2·hidden + 3·intermediate/tp) × dtype bytes``
#: (V0 Llama-3.1-8B at 20,000 and 29,000 tokens: 2.07 and 2.99 GiB logged, 2.15 and 3.01 modelled), and
#: per vocabulary entry of each profiled sequence the sampler's dummy run: V0 its fp32 logits and their
#: softmax (8 B); V1 also sorts them for top-k/top-p (values, int64 indices) and keeps its copies (24 B:
#: Llama-3.1-8B and Qwen3-14B on an A100 40GB, 1.2 and 1.4 GiB of activation and non-torch logged).
ACTIVATION_PER_WIDTH = 1.0
SAMPLER_BYTES = {"V0": 8, "V1": 24}
#: Non-torch memory: the CUDA context's growth and, with TP, NCCL's and the custom all-reduce buffers
#: (0.16–0.35 GiB logged at TP 1, 0.30 at TP 2).
NON_TORCH_GB, NON_TORCH_TP_GB = 0.25, 0.1


@dataclass(frozen=True)
class ProfileShape:
    """What vLLM's profile run pushes through the model: tokens, sequences, and why these."""

    tokens: int
    seqs: int
    generation: str
    source: str


def profile_shape(s: VSettings, mem: GpuMemory) -> ProfileShape:
    """The batched tokens and sequences of vLLM's profile run for the release and the GPU (its defaults)."""
    v1 = s.generation == "V1" if s.generation in ("V0", "V1") else vv.index(s.release) >= vv.index("0.8.0")
    gen = "V1" if v1 else "V0"
    if s.batched_tokens is not None:
        seqs = (V1_LARGE_GPU if _large(mem) and vv.index(s.release) >= vv.index("0.9.0") else V1_SMALL_GPU)[1]
        return ProfileShape(s.batched_tokens, seqs if v1 else V0_MAX_SEQS, gen, s.batched_source)
    if v1:
        large = _large(mem)
        tokens, seqs = V1_LARGE_GPU if large else V1_SMALL_GPU
        if vv.index(s.release) < vv.index("0.9.0"):
            seqs = V1_SMALL_GPU[1]
        where = "≥ 70 GiB and not an A100" if large else "below 70 GiB or an A100"
        return ProfileShape(tokens, seqs, gen, f"V1's default for an API server on a GPU {where}")
    if s.max_model_len and s.max_model_len > V0_CHUNKED_ABOVE:
        return ProfileShape(V0_CHUNKED_TOKENS, V0_MAX_SEQS, gen, "V0's chunked prefill (on above 32K of context)")
    tokens = max(s.max_model_len or V0_MIN_TOKENS, V0_MIN_TOKENS)
    return ProfileShape(tokens, V0_MAX_SEQS, gen, "V0 without chunked prefill: max(max_model_len, 2,048)")


def _large(mem: GpuMemory) -> bool:
    return (mem.total_gb or 0) >= 70 and "A100" not in (mem.name or "").upper()


@dataclass(frozen=True)
class VSettings:
    release: str
    release_source: str
    tp: int
    tp_source: str
    pp: int
    kv_dtype: str
    block_size: int
    max_model_len: int | None
    utilization: float
    utilization_source: str
    generation: str | None
    batched_tokens: int | None
    batched_source: str
    spec: str | None


def release_for(flags: PlanFlags, launch: Launch | None) -> tuple[str, str]:
    """The release to plan and where it comes from: ``--release``; the launch's printed release; the newest
    release of the range ``parse`` dates the launch's log to; else the newest release logparse knows."""
    if flags.release:
        return flags.release, "--release"
    if launch is not None and release_of(launch):
        return str(release_of(launch)), f"read from launch {launch.launch_id}"
    rng = launch.version_range if launch is not None else None
    if launch is not None and rng and not vv.is_empty(rng):
        lo, hi = rng
        return hi, f"launch {launch.launch_id}'s log dates to {lo}–{hi}: planned as the newest of that range"
    return vv.LAST, "assumed: the newest release logparse knows (no --release)"


def vsettings(cfg: ModelConfig, flags: PlanFlags, launch: Launch | None) -> VSettings:
    rel, rel_source = release_for(flags, launch)
    if not vv.is_release(rel):
        raise PlanError(f"--release {rel}: not a vLLM release logparse knows ({vv.FIRST} – {vv.LAST})")
    if flags.gpu_memory_utilization is not None:
        u, src = flags.gpu_memory_utilization, "--gpu-memory-utilization"
    elif launch is not None and launch.gpu_memory_utilization is not None:
        u, src = launch.gpu_memory_utilization, f"the launch's ({launch.gpu_memory_utilization_source or 'arguments'})"
    else:
        u, src = vv.default_utilization(rel), f"vLLM {rel}'s default"
    spec = flags.speculative_algorithm or None
    return VSettings(
        release=rel,
        release_source=rel_source,
        tp=flags.tp or (launch.tp_size if launch else None) or 1,
        tp_source="--tp" if flags.tp else "read from the launch" if launch and launch.tp_size else "assumed (no --tp)",
        pp=flags.pp or (launch.pp_size if launch else None) or 1,
        kv_dtype=flags.kv_cache_dtype or (launch_kv_dtype(launch) if launch else "auto"),
        block_size=flags.page_size or (launch.block_size if launch else None) or 16,
        max_model_len=flags.context_length or (launch.max_model_len if launch else None) or cfg.max_position_embeddings,
        utilization=u,
        utilization_source=src,
        generation=flags.vllm_generation or (launch.engine_generation if launch else None),
        batched_tokens=flags.chunked_prefill_size,
        batched_source="--chunked-prefill-size",
        spec=None if spec is None or spec.upper() in ("NONE", "OFF") else spec.upper(),
    )


def vcell(cfg: ModelConfig, s: VSettings) -> mk.Cell:
    try:
        return vkv.vllm_cell(cfg, vkv.VllmShape(s.tp, s.pp, s.kv_dtype, s.block_size))
    except mk.KvDtypeError as exc:
        raise PlanError(f"--kv-cache-dtype: {exc}") from None


def tokens_of(kv_gb: float, cell: mk.Cell, s: VSettings, cfg: ModelConfig) -> int:
    return vb.pool_tokens(
        kv_gb, cell.value / max(cell.groups, 1), s.block_size, groups=cell.groups, release=s.release,
        max_model_len=s.max_model_len, swa_groups=cell.swa_groups, window=cfg.sliding_window,
    )  # fmt: skip


@dataclass
class Terms:
    """What vLLM's profile charges to ``u × T`` (GiB per rank) and each term's range."""

    total_gb: float | None
    weights_gb: float
    activation_gb: float
    non_torch_gb: float
    graphs_gb: float
    graphs_in_budget: bool
    errors: dict[str, tuple[float, float]] = field(default_factory=dict)
    assumptions: list[str] = field(default_factory=list)

    def charged(self) -> float:
        return (
            self.weights_gb
            + self.activation_gb
            + self.non_torch_gb
            + (self.graphs_gb if self.graphs_in_budget else 0.0)
        )


def estimate_terms(cfg: ModelConfig, s: VSettings, mem: GpuMemory) -> Terms:
    """The profile's terms before a launch (named estimates)."""
    w = mk.weights_per_rank(cfg, s.tp, s.pp)
    if not w.known:
        raise PlanError(mk.weights_unknown(cfg))
    h, b = cfg.hidden_size, cfg.dtype_bytes
    inter = cfg.intermediate_size if cfg.moe is None else cfg.moe.expert_intermediate * cfg.moe.experts_per_token
    shape = profile_shape(s, mem)
    hidden = ACTIVATION_PER_WIDTH * shape.tokens * (2 * h + 3 * inter / s.tp) * b
    act = (hidden + SAMPLER_BYTES[shape.generation] * shape.seqs * cfg.vocab_size) / float(1 << 30)
    non_torch = NON_TORCH_GB + (NON_TORCH_TP_GB if s.tp > 1 else 0.0)
    layers = math.ceil(cfg.layers / s.pp)
    graphs = 0.4 + 0.015 * layers
    inside = graphs_in_budget(s.release)
    t = Terms(mem.total_gb, w.gb, act, non_torch, graphs, inside)
    t.errors = {
        "weights": ((w.lo_gb or w.gb) - w.gb, (w.hi_gb or w.gb) - w.gb),
        "activation": (-0.4 * act, 0.6 * act),
        "non_torch": (-0.2, 0.3),
    }
    if inside:
        t.errors["graphs"] = (-0.5 * graphs, 0.6 * graphs)
    t.assumptions = [
        mem.source.split(";")[0] + " (vLLM's budget is u × this total)",
        f"weights per rank ≈ {w.gb:.2f} GiB: {w.source}",
        f"activation peak ≈ {act:.2f} GiB: the profile run of {shape.tokens:,} batched tokens and {shape.seqs:,} "
        f"sequences' logits ({shape.source}; −40%/+60%)",
        f"non-torch memory ≈ {non_torch:.2f} GiB (CUDA context{', NCCL' if s.tp > 1 else ''}; ±0.3)",
        f"CUDA graphs ≈ {graphs:.2f} GiB "
        + ("(estimated inside the budget from 0.20.0)" if inside else "(captured outside the budget before 0.20.0)"),
    ]
    return t


@dataclass
class Anchor:
    """A launch's pool and terms, the base that ``--from`` moves."""

    kv_gb: float
    tokens: int | None
    total_gb: float | None
    weights_gb: float
    graphs_gb: float
    settings: VSettings
    launch_id: str


def anchor_of(cfg: ModelConfig, launch: Launch, b: Budget) -> Anchor:
    rank = vb.pool_rank(launch) or (launch.ranks[0] if launch.ranks else None)
    s = vsettings(cfg, PlanFlags(), launch)
    kv = rank.kv_size_gb if rank is not None else None
    if kv is None and b.kv_tokens:
        # the pool's GiB is not printed (V0 before 0.6.4, V1 before 0.9.1): its tokens × the config's bytes
        kv = b.kv_tokens * vcell(cfg, s).value / float(1 << 30)
    if kv is None:
        raise PlanError(
            f"{launch.launch_id}: the log prints neither a KV pool in GiB nor its tokens: nothing to calibrate on"
        )
    x = (rank.extra if rank is not None else None) or {}
    graphs = x.get("graph_estimate_gb") if x.get("graph_estimate_gb") is not None else (rank.graph_gb if rank else None)
    weights = (
        rank.weights_gb if rank is not None and rank.weights_gb is not None else mk.weights_per_rank(cfg, s.tp, s.pp).gb
    )
    return Anchor(kv, b.kv_tokens, total_gb(launch, rank), weights, graphs or 0.0, s, launch.launch_id)


def moved_kv(cfg: ModelConfig, a: Anchor, s: VSettings, mem: GpuMemory | None) -> tuple[float, list[str], float]:
    """The anchor's pool moved by what the settings change, the words, and the added uncertainty."""
    words, err = [], 0.0
    t_old = a.total_gb
    t_new = mem.total_gb if mem is not None and mem.total_gb is not None else t_old
    if t_old is None and (s.utilization != a.settings.utilization or t_new is not None):
        if t_new is None:
            raise PlanError(
                "the launch's log does not print the GPU's total memory: give --gpu or --gpu-memory to model a new utilization"
            )
        t_old = t_new
        words.append(f"the launch's GPU total is not printed: assumed {t_new:g} GiB as for the planned GPU")
    dkv = 0.0
    if t_old is not None and t_new is not None:
        dkv += s.utilization * t_new - a.settings.utilization * t_old
        if t_new != t_old:
            err += 0.05
    if (s.tp, s.pp) != (a.settings.tp, a.settings.pp):
        w_new = (
            a.weights_gb
            * mk.weights_per_rank(cfg, s.tp, s.pp).gb
            / mk.weights_per_rank(cfg, a.settings.tp, a.settings.pp).gb
        )
        dkv -= w_new - a.weights_gb
        words.append(f"weights per rank {a.weights_gb:.2f} → {w_new:.2f} GiB (tp {a.settings.tp} → {s.tp})")
        err += 0.02 * w_new + 0.2
    g_old, g_new = graphs_in_budget(a.settings.release), graphs_in_budget(s.release)
    if g_old != g_new:
        dkv += a.graphs_gb if g_old else -a.graphs_gb
        words.append(
            f"the CUDA-graph estimate ({a.graphs_gb:.2f} GiB) {'leaves' if g_old else 'enters'} the budget ({a.settings.release} → {s.release})"
        )
    return a.kv_gb + dkv, words, err


def vllm_plan(
    cfg: ModelConfig, flags: PlanFlags, mem: GpuMemory | None, launch: Launch | None = None, b: Budget | None = None
) -> EnginePlan:
    """vLLM's plan (see the module documentation)."""
    s = vsettings(cfg, flags, launch)
    cell = vcell(cfg, s)
    if launch is not None and b is not None:
        return _calibrated(cfg, s, cell, mem if (flags.gpu or flags.gpu_memory_gb) else None, launch, b)
    if mem is None or mem.total_gb is None:
        raise PlanError("give --gpu NAME or --gpu-memory GIB (or --from LAUNCH): the GPU's memory is not known")
    t = estimate_terms(cfg, s, mem)
    kv = s.utilization * (t.total_gb or 0.0) - t.charged()
    lo_err = sum(e[1] for e in t.errors.values())
    hi_err = -sum(e[0] for e in t.errors.values())
    out = _result(cfg, s, cell, kv, kv - lo_err, kv + hi_err, t.total_gb, t.weights_gb, t.graphs_gb, 0)
    out.assumptions = t.assumptions + out.assumptions
    out.steps.insert(0, _kv_step(s, t))
    out.terms.update(
        activation_gb=t.activation_gb, non_torch_gb=t.non_torch_gb, graphs_gb=t.graphs_gb if t.graphs_in_budget else 0.0
    )
    _reserve(
        out,
        s,
        VllmReserveInputs(
            t.total_gb,
            None,
            s.utilization,
            t.weights_gb,
            t.activation_gb,
            t.non_torch_gb,
            None,
            t.graphs_gb,
            t.graphs_gb,
        ),
    )
    return out


def _kv_step(s: VSettings, t: Terms) -> str:
    g = f" − {t.graphs_gb:.2f} (CUDA graphs)" if t.graphs_in_budget else ""
    kv = s.utilization * (t.total_gb or 0.0) - t.charged()
    return (
        f"KV = u·T − weights − activation − non-torch{' − graphs' if t.graphs_in_budget else ''} = {s.utilization:g} × {t.total_gb:g} − "
        f"{t.weights_gb:.2f} − {t.activation_gb:.2f} − {t.non_torch_gb:.2f}{g} = {kv:.2f} GiB"
    )


def _calibrated(
    cfg: ModelConfig, s: VSettings, cell: mk.Cell, mem: GpuMemory | None, launch: Launch, b: Budget
) -> EnginePlan:
    a = anchor_of(cfg, launch, b)
    kv, words, err = moved_kv(cfg, a, s, mem)
    old_cell = vcell(cfg, a.settings)
    residual = 0
    if a.tokens is not None and a.kv_gb > 0:
        residual = a.tokens - tokens_of(a.kv_gb, old_cell, a.settings, cfg)
    e = 0.005 + err
    total = mem.total_gb if mem is not None and mem.total_gb is not None else a.total_gb
    out = _result(cfg, s, cell, kv, kv - e, kv + e, total, a.weights_gb, a.graphs_gb, residual)
    out.calibrated_from, out.logged_kv_tokens = a.launch_id, a.tokens
    out.assumptions = (
        [
            f"calibrated on launch {a.launch_id} ({launch.source or 'stored'}): its KV pool {a.kv_gb:.2f} GiB"
            + (f", {a.tokens:,} tokens logged" if a.tokens is not None else ""),
            f"GPU total {a.total_gb:g} GiB: read from the launch's log"
            if a.total_gb is not None
            else "GPU total: not in the launch's log (not needed while u and the GPU stay the launch's)",
        ]
        + (words or ["no setting changed: the launch's own pool"])
        + out.assumptions
    )
    if residual:
        out.steps.append(
            f"calibration: the launch's token count differs from the config's by {residual:+,}: carried over"
        )
    out.steps.insert(
        0,
        f"KV = the launch's {a.kv_gb:.2f} GiB {'moved by the changes' if words else ''} = {kv:.2f} GiB".replace(
            "  ", " "
        ),
    )
    pool = vb.pool_rank(launch)
    x = (pool.extra or {}) if pool is not None else {}
    _reserve(
        out,
        s,
        VllmReserveInputs(
            total,
            x.get("free_gb"),
            s.utilization,
            a.weights_gb,
            None,
            None,
            x.get("consumed_gb"),
            a.graphs_gb,
            a.graphs_gb,
        ),
    )
    return out


def _result(
    cfg: ModelConfig,
    s: VSettings,
    cell: mk.Cell,
    kv: float,
    kv_lo: float,
    kv_hi: float,
    total: float | None,
    weights: float,
    graphs: float,
    residual: int,
) -> EnginePlan:
    out = EnginePlan("vllm", s.release, None, None, None, None, cell.value, vv.default_utilization(s.release))
    out.fraction, out.fraction_name, out.fraction_source = s.utilization, "gpu_memory_utilization", s.utilization_source
    out.tp, out.pp, out.kv_cache_dtype, out.context_length = s.tp, s.pp, s.kv_dtype, s.max_model_len
    out.gpu_total_gb, out.weights_gb, out.kv_budget_gb = total, r2(weights), r2(kv)
    out.terms = {"base_gb": total, "fraction": s.utilization, "weights_gb": weights, "kv_gb": kv}
    out.assumptions += [
        f"{what}: {src}"
        for what, src in ((f"release vLLM {s.release}", s.release_source), (f"tp {s.tp}", s.tp_source))
        if not src.startswith("--")
    ]
    out.steps.append(f"bytes per printed token: {cell.describe()}")
    out.notes = list(cell.notes)
    if s.spec:
        out.notes.append(
            f"speculative decoding ({s.spec}): the draft's KV layers are not modelled for vLLM (its pool holds them too)"
        )
    if kv <= 0:
        out.kv_tokens, out.kv_tokens_range, out.kv_pool_gb = (
            0,
            [0, max(tokens_of(kv_hi, cell, s, cfg) + residual, 0)],
            0.0,
        )
        out.not_possible = f"no memory for the KV cache: u × T leaves {kv:.2f} GiB after the weights and the profile (raise --gpu-memory-utilization, more TP, or a larger GPU)"
        return out
    tokens = max(tokens_of(kv, cell, s, cfg) + residual, 0)
    lo = max(tokens_of(kv_lo, cell, s, cfg) + residual, 0)
    hi = max(tokens_of(kv_hi, cell, s, cfg) + residual, 0)
    out.kv_tokens, out.kv_tokens_range, out.kv_pool_gb = tokens, [min(lo, tokens), max(hi, tokens)], r2(kv)
    if s.max_model_len:
        out.max_concurrency = round(tokens / s.max_model_len, 2)
    if total is not None:
        outside = 0.0 if graphs_in_budget(s.release) else graphs
        h = (1 - s.utilization) * total - outside
        out.headroom_gb, out.headroom_gb_range = r2(h), [r2(h - 0.5) or 0.0, r2(h + 0.1) or 0.0]
        out.assumptions.append(
            "headroom: vLLM prints no free memory after its setup; estimated as (1 − u) × T"
            + (f" less the CUDA graphs captured outside the budget ({graphs:.2f} GiB)" if outside else "")
            + " (other processes and allocator slack not counted)"
        )
    return out


def _reserve(out: EnginePlan, s: VSettings, inp: VllmReserveInputs) -> VllmReserve:
    r = vllm_reserve(s.release, inp)
    out.engine_reserve_gb = r.reserve_gb
    out.fraction_keeping_reserve = r.max_utilization
    if r.max_utilization is not None and s.utilization > r.max_utilization:
        out.notes.insert(
            0,
            f"gpu_memory_utilization {s.utilization:g} is above {r.max_utilization:g}, the most that leaves vLLM's own margins: it may fail at start or under load",
        )
    return r


def compared(v: EnginePlan, s: EnginePlan, other: str) -> list[str]:
    """Why vLLM's plan ``v`` gives another pool than ``s``, the plan of an engine (``other``, its label)
    that sizes the pool from a share of the free memory before the weights, term by term."""
    out = []
    if s.kv_tokens is not None and v.kv_tokens is not None and s.kv_tokens:
        d = v.kv_tokens - s.kv_tokens
        out.append(f"vLLM {'+' if d >= 0 else '−'}{abs(d):,} tokens ({d / s.kv_tokens * 100:+.1f}%) against {other}")
    st, vt = s.terms, v.terms
    if st.get("base_gb") is not None and vt.get("base_gb") is not None:
        out.append(
            f"{other} sizes KV = f × (free before weights) − weights = {st['fraction']:g} × {st['base_gb']:.2f} − "
            f"{st['weights_gb']:.2f} = {st['kv_gb']:.2f} GiB; vLLM KV = u × (total) − weights − profile = "
            f"{vt['fraction']:g} × {vt['base_gb']:.2f} − {vt['weights_gb']:.2f} − {(vt.get('activation_gb') or 0) + (vt.get('non_torch_gb') or 0) + (vt.get('graphs_gb') or 0):.2f} = {vt['kv_gb']:.2f} GiB"
        )
        out.append(
            f"base: vLLM multiplies the total ({vt['base_gb']:.2f} GiB), {other} the memory free after init "
            f"({st['base_gb']:.2f}); fraction: {vt['fraction']:g} (vLLM{' default' if v.fraction == v.default_fraction else ''}) "
            f"against {st['fraction']:g} ({other}{' default, from its reserve' if s.fraction == s.default_fraction else ''})"
        )
    prof = (vt.get("activation_gb") or 0) + (vt.get("non_torch_gb") or 0) + (vt.get("graphs_gb") or 0)
    if prof:
        out.append(
            f"vLLM charges its activation peak, non-torch memory and CUDA graphs ({prof:.2f} GiB) to its budget; {other} pays "
            f"them from the {st.get('held_back_gb') or 0:.2f} GiB it holds back"
        )
    if (
        s.bytes_per_token
        and v.bytes_per_token
        and abs(s.bytes_per_token - v.bytes_per_token) > 0.01 * s.bytes_per_token
    ):
        out.append(
            f"bytes per token: {other} {s.bytes_per_token:,}, vLLM {v.bytes_per_token:,} per printed token (pool layouts differ for this model)"
        )
    out.append(f"rounding: vLLM counts whole blocks of 16 tokens; {other} pages of its --page-size")
    return out
