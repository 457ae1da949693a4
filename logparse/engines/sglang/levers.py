"""SGLang's levers beyond the fraction: more GPUs (larger TP), fp8 weights, DP attention for a
replicated MLA latent, a smaller CUDA-graph batch, CPU offload.  Each is priced by the launch's own era
formula (:func:`logparse.engines.sglang.formula.predict`) with SGLang's own reserve for the changed
arguments (:func:`logparse.engines.sglang.reserve.sglang_reserve`); the vocabulary and what every
engine's levers share are in :mod:`logparse.reports.levers`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from logparse import engines
from logparse.budget.gpus import startup_overhead_gb
from logparse.budget.refusals import weights_refusal
from logparse.engines.sglang import formula as fm
from logparse.engines.sglang import versions
from logparse.engines.sglang.flags import sglang_has
from logparse.engines.sglang.reserve import ReserveInputs, reserve_inputs, sglang_reserve
from logparse.reports.advice_core import Ctx, Recommendation, allows, cost, not_possible, r2, risk
from logparse.reports.levers import (
    FP8_WEIGHT_ACCURACY,
    FP8_WEIGHT_SHARE,
    OFFLOAD_THROUGHPUT,
    failed,
    heads_words,
    next_tp,
    weights_16bit,
)

#: The share of an MLA model's weight bytes in its TP-split attention projections (q_b, kv_b, o): 1.7 % for
#: DeepSeek-V3 (fp8), 2.3 % for Kimi-K2 INT4 (bf16 attention), 2.4 % for DeepSeek-V2-Lite; 3 % bounds them.
MLA_ATTENTION_SHARE = (0.015, 0.03)


@dataclass
class Priced:
    """An SGLang launch replayed with changed arguments: the fraction keeping SGLang's own reserve
    for them, the tokens per rank and the pool (GiB)."""

    f: float
    tokens: int
    kv_gb: float | None
    reserve_gb: float
    exact: bool


def _sglang_priced(ctx: Ctx, args: ReserveInputs, *, weights_gb: float, m_pre_gb: float, cell: float) -> Priced | str:
    """The launch at other arguments, weights per rank and bytes per token, by its own formula."""
    li = ctx.b.inputs
    if li is None or li.inputs is None:
        return "the log lacks the memory figures the formula needs"
    reserve = sglang_reserve(ctx.launch.version_range, args, m_pre_gb=m_pre_gb)
    f = reserve.fraction_keeping_reserve(m_pre_gb)
    if f is None or reserve.reserve_gb is None:
        return "SGLang's reserve for it is not known"
    inp = li.inputs.with_(f=f, m_pre_gb=m_pre_gb, m_post_gb=m_pre_gb - weights_gb, cell=cell)
    p = fm.predict(inp, li.features)
    if p.tokens is None or p.tokens <= 0:
        return f"at {f:g} (SGLang's reserve of {reserve.reserve_gb_hi or reserve.reserve_gb:.2f} GiB kept) the weights leave nothing for the KV pool"
    kv = fm.pool_gb(p.tokens, inp.page_size, cell)
    return Priced(f, p.tokens, r2(kv), float(reserve.reserve_gb_hi or reserve.reserve_gb or 0.0), reserve.exact)


def _weights(ctx: Ctx) -> tuple[float, float, float] | None:
    """(M_pre, weights per rank, bytes per token) of the launch's binding rank."""
    li = ctx.b.inputs
    inp = li.inputs if li is not None else None
    if inp is None or inp.cell is None or inp.cell <= 0:
        return None
    return inp.m_pre_gb, inp.m_pre_gb - inp.m_post_gb, float(inp.cell)


def _tp_cell(ctx: Ctx, cell: float, tp: int, t2: int, mla: bool) -> tuple[float, float]:
    """Bytes per token per rank at TP ``t2``: (conservative, likely).  MLA replicates its latent; KV
    heads split while TP ≤ KV heads, else each rank keeps one."""
    if mla:
        return cell, cell
    kv = ctx.cfg.num_kv_heads if ctx.cfg is not None else None
    if kv is None:
        return cell, cell * tp / t2
    per_now, per_new = max(1, kv // tp), max(1, kv // t2)
    return cell * per_new / per_now, cell * per_new / per_now


def sglang_tp(ctx: Ctx) -> list[Recommendation]:
    """Twice the GPUs (TP × 2): each rank holds half the weights; the reserve is SGLang's for the new TP."""
    w = _weights(ctx)
    args = reserve_inputs(ctx.launch)
    tp = args.tp_size
    if w is None or ctx.margin is not None or args.enable_dp_attention or not sglang_has(ctx.launch, "tp_size"):
        return []
    if not failed(ctx) and ctx.verdict.get("pool_limited") is not True:
        return []  # more GPUs for a pool that never limited the run is not advice
    mla = bool(args.mla)
    t2 = next_tp(ctx, tp, mla)
    if t2 is None:
        return [not_possible("tp", "more GPUs (larger TP)", [], "no larger TP up to 16 divides the heads")]
    m_pre, weights, cell = w
    m_new = m_pre - (startup_overhead_gb(t2) - startup_overhead_gb(tp))
    lo_cell, hi_cell = _tp_cell(ctx, cell, tp, t2, mla)
    p = _sglang_priced(ctx, args.with_(tp_size=t2), weights_gb=weights * tp / t2, m_pre_gb=m_new, cell=lo_cell)
    if isinstance(p, str):
        return [not_possible("tp", f"tp_size {tp} → {t2}", [f"--tp-size {t2}"], p)]
    hi = int(p.tokens * lo_cell / hi_cell)
    _, _, heads = heads_words(ctx)
    exact = ctx.cfg is not None and p.exact
    return [recommendation(ctx, "tp", f"tp_size {tp} → {t2} ({t2 - tp} more GPUs; SGLang's reserve {p.reserve_gb:.2f} GiB kept at "
                 f"mem_fraction_static {p.f:g})", [f"--tp-size {t2}", f"--mem-fraction-static {p.f:g}"], p,
                 cost(weights * tp / t2 - weights, 0.0, "none", "more all-reduce traffic per token", gpus=(t2 - tp) * (ctx.launch.dp_size or 1)),
                 risk("low" if exact else "medium", f"holds back SGLang's own reserve for TP {t2}; {heads}"
                      + ("" if exact else "; the reserve of this release is not known exactly" if ctx.cfg else "")),
                 f"weights {weights:.2f} → {weights * tp / t2:.2f} GiB per rank; bytes per token {cell:,.0f} → "
                 f"{lo_cell:,.0f}" + (f" (or {hi_cell:,.0f} if the KV heads split: {hi:,} tokens)" if hi != p.tokens else "")
                 + f"; {heads}")]  # fmt: skip


def _first(launch: Any) -> str:
    rng = launch.version_range
    return rng[0] if rng and not versions.is_empty(rng) else versions.last()


def sglang_fp8_weights(ctx: Ctx) -> list[Recommendation]:
    """``--quantization fp8`` (online fp8 of a 16-bit checkpoint): the weights shrink to 50–60 %."""
    w = _weights(ctx)
    if w is None or ctx.margin is not None or not sglang_has(ctx.launch, "quantization"):
        return []
    if not failed(ctx) and ctx.verdict.get("pool_limited") is not True:
        return []
    sixteen, why = weights_16bit(ctx)
    if not sixteen:
        return []
    refused = weights_refusal(engines.of(ctx.launch).name, "quantization", "fp8", _first(ctx.launch))
    if refused is not None:
        return [not_possible("fp8_weights", "fp8 weights", ["--quantization fp8"], refused.text())]
    m_pre, weights, cell = w
    args = reserve_inputs(ctx.launch)
    lo, hi = FP8_WEIGHT_SHARE
    p = _sglang_priced(ctx, args, weights_gb=weights * hi, m_pre_gb=m_pre, cell=cell)
    if isinstance(p, str):
        return [not_possible("fp8_weights", "fp8 weights", ["--quantization fp8"], p)]
    best = _sglang_priced(ctx, args, weights_gb=weights * lo, m_pre_gb=m_pre, cell=cell)
    more = f" (up to {best.tokens:,} if the weights halve exactly)" if isinstance(best, Priced) else ""
    return [recommendation(ctx, "fp8_weights", f"fp8 weights (--quantization fp8) at mem_fraction_static {p.f:g} (SGLang's "
                 f"reserve {p.reserve_gb:.2f} GiB kept)", ["--quantization fp8", f"--mem-fraction-static {p.f:g}"], p,
                 cost(weights * hi - weights, 0.0, FP8_WEIGHT_ACCURACY, "quantizes at load (slower start); fp8 "
                      "GEMMs need compute capability 8.9+ (Ada, Hopper), older GPUs fall back to slower kernels"),
                 risk("medium", "accuracy is the cost; the weights are priced at 60 % of their 16-bit size "
                      f"(embeddings, lm_head and norms stay 16-bit); {why}"),
                 f"weights {weights:.2f} → about {weights * hi:.2f} GiB per rank ({lo:.0%}–{hi:.0%}){more}")]  # fmt: skip


# --------------------------------------------------------------------------- DP attention
def _mla_attention_gb(cfg: Any) -> tuple[float, float] | None:
    """(replicated, TP-split) GiB of a model's MLA attention weights, all layers: the down-projections
    (q_a, kv_a) are replicated on every rank; q_b, kv_b and o are split over the attention TP."""
    m = cfg.mla if cfg is not None else None
    if m is None:
        return None
    h, heads, qk = cfg.hidden_size, cfg.num_attention_heads, m.qk_nope_head_dim + m.qk_rope_head_dim
    rep = h * (m.q_lora_rank or 0) + h * m.latent
    split = (m.q_lora_rank or h) * heads * qk + m.kv_lora_rank * heads * (m.qk_nope_head_dim + m.v_head_dim)
    split += heads * m.v_head_dim * h
    q = cfg.quantization
    attn_quantized = q is not None and not any("attn" in pat for pat in q.ignored)
    per = q.bytes_per_weight if attn_quantized and q is not None else cfg.dtype_bytes
    gib = per * cfg.layers / 2**30
    return rep * gib, split * gib


def sglang_dp_attention(ctx: Ctx) -> list[Recommendation]:
    """``--enable-dp-attention --dp-size D``: the MLA latent, replicated on every TP rank, is kept once
    per DP rank instead, so the deployment holds D times the distinct tokens; each rank holds its
    attention weights for TP/D, and SGLang reserves more (DP padding)."""
    launch = ctx.launch
    args = reserve_inputs(launch)
    tp = args.tp_size
    w = _weights(ctx)
    if not args.mla or tp < 2 or args.enable_dp_attention or w is None or ctx.margin is not None:
        return []
    flags = [f"--enable-dp-attention --dp-size {tp}"]
    if not sglang_has(launch, "enable_dp_attention"):
        return [not_possible("dp_attention", "DP attention", flags, "this release has no --enable-dp-attention")]
    attn = _mla_attention_gb(ctx.cfg)
    assumed = attn is None
    if attn is None:  # not in the log: the upper end of what MLA models spend on split attention weights
        attn = (0.0, MLA_ATTENTION_SHARE[1] * w[1] * tp)
    options = [o for o in (_dp_option(ctx, args, w, attn, d) for d in _divisors(tp)) if isinstance(o, Recommendation)]
    for o in options if assumed else []:
        o.risk["why"] += (f"; the attention weights are not in the log: assumed {MLA_ATTENTION_SHARE[1]:.0%} of the "
                          f"weights (MLA models: {MLA_ATTENTION_SHARE[0]:.1%}–{MLA_ATTENTION_SHARE[1]:.0%}); "
                          "explain --model-config prices them exactly")  # fmt: skip
        o.reason = o.reason.replace("(config: split part", "(assumed: split part")
    if not options:
        return [not_possible("dp_attention", "DP attention", flags, "at SGLang's reserve for DP attention the "
                             "attention weights each rank holds leave no KV pool at any DP size")]  # fmt: skip
    return [max(options, key=lambda r: r.allows.get("distinct_tokens", 0))]


def _divisors(tp: int) -> list[int]:
    return [d for d in range(2, tp + 1) if tp % d == 0]


def _dp_option(
    ctx: Ctx, args: ReserveInputs, w: tuple[float, float, float], attn: tuple[float, float], d: int
) -> Recommendation | str:
    m_pre, weights, cell = w
    tp, (_, split) = args.tp_size, attn
    more = split * (d / tp - 1 / tp)  # the split part now over tp / d ranks instead of tp
    chunk = args.chunked_prefill_size
    dp_args = args.with_(enable_dp_attention=True, dp_size=d, chunked_prefill_size=chunk // d if chunk else chunk)
    p = _sglang_priced(ctx, dp_args, weights_gb=weights + more, m_pre_gb=m_pre, cell=cell)
    if isinstance(p, str):
        return p
    distinct, now = p.tokens * d, ctx.b.kv_tokens or 0
    plain = _sglang_priced(ctx, args, weights_gb=weights, m_pre_gb=m_pre, cell=cell)
    same = f"; without DP attention at SGLang's reserve: {plain.tokens:,} tokens" if isinstance(plain, Priced) else ""
    rec = recommendation(ctx, "dp_attention", f"DP attention with dp_size {d} at mem_fraction_static {p.f:g}: the MLA latent kept "
               f"once per DP rank instead of on all {tp} ranks", [f"--enable-dp-attention --dp-size {d}",
               f"--mem-fraction-static {p.f:g}"], p,
               cost(more, 0.0, "none", f"a request lives on one DP rank: its longest context is that rank's pool "
                    f"({p.tokens:,} tokens)"),
               risk("medium", f"holds back SGLang's own reserve with DP attention ({p.reserve_gb:.2f} GiB); DP "
                    "attention changes scheduling (requests balanced over DP ranks) and needs a backend that supports it"),
               f"{d} DP ranks × {p.tokens:,} tokens = {distinct:,} distinct tokens (now {now:,}, replicated on {tp} "
               f"ranks); attention weights +{more:.2f} GiB per rank (config: split part {split:.2f} GiB over {tp // d} "
               "ranks instead of " + f"{tp}); SGLang's DP-attention padding in its reserve" + same)  # fmt: skip
    rec.kv_tokens = p.tokens  # per DP rank, as SGLang prints it
    rec.gain_tokens = distinct - now if now else None
    rec.allows = {"distinct_tokens": distinct, "max_request_tokens": p.tokens - 1, "dp_ranks": d}
    if isinstance(plain, Priced):
        rec.allows["tokens_without_dp_attention"] = plain.tokens
    rec.fixes = "the launch holds back less than SGLang's own reserve" if below_reserve(ctx) else None
    return rec


# --------------------------------------------------------------------------- CUDA-graph batch size
def sglang_graph_bs(ctx: Ctx) -> list[Recommendation]:
    """``--cuda-graph-max-bs`` down to the request cap: SGLang reserves memory per captured batch size,
    and no decode batch exceeds ``--max-running-requests``, so the graphs above it are never replayed."""
    launch, reserve, b = ctx.launch, ctx.reserve, ctx.b
    inp = b.inputs.inputs if b.inputs is not None else None
    args = reserve_inputs(launch)
    cap, bs = launch.max_running_requests, args.cuda_graph_max_bs
    if (reserve is None or reserve.rule not in ("formula", "arg-groups") or inp is None or ctx.margin is not None
            or not cap or not bs or cap >= bs or not sglang_has(launch, "cuda_graph_max_bs")):  # fmt: skip
        return []
    smaller = sglang_reserve(launch.version_range, args.with_(cuda_graph_max_bs=cap), m_pre_gb=inp.m_pre_gb)
    old, new = reserve.fraction_keeping_reserve(inp.m_pre_gb), smaller.fraction_keeping_reserve(inp.m_pre_gb)
    if new is None or old is None or new <= old or (new <= inp.f and not failed(ctx)):
        return []  # the floor of SGLang's reserve, or a fraction already above it
    p = fm.predict(inp.with_(f=new), b.inputs.features) if b.inputs is not None else None
    if p is None or p.tokens is None or p.tokens <= 0:
        return []
    priced = Priced(new, p.tokens, r2(fm.pool_gb(p.tokens, inp.page_size, inp.cell or 0.0)),
                    float(smaller.reserve_gb_hi or smaller.reserve_gb or 0.0), smaller.exact)  # fmt: skip
    saved = (reserve.reserve_gb or 0.0) - (smaller.reserve_gb or 0.0)
    return [recommendation(ctx, "graph_bs", f"cuda_graph_max_bs {bs} → {cap} (the request cap) and mem_fraction_static "
                 f"{inp.f:g} → {new:g} (SGLang's reserve for it is {priced.reserve_gb:.2f} GiB)",
                 [f"--cuda-graph-max-bs {cap}", f"--mem-fraction-static {new:g}"], priced,
                 cost((new - inp.f) * inp.m_pre_gb, 0.0, "none", "none: no decode batch exceeds --max-running-requests"),
                 risk("low" if smaller.exact else "medium", f"keeps SGLang's own reserve for {cap} captured batch "
                      "sizes; raise both together if --max-running-requests grows"),
                 f"SGLang reserves per captured batch size: {bs} → {cap} frees {saved:.2f} GiB of its reserve")]  # fmt: skip


def sglang_cpu_offload(ctx: Ctx) -> list[Recommendation]:
    """After a failed start: ``--cpu-offload-gb`` moves enough weights to the host for the pool the
    launch had, at SGLang's own reserve."""
    w, b = _weights(ctx), ctx.b
    if not failed(ctx) or w is None or ctx.margin is not None or not sglang_has(ctx.launch, "cpu_offload_gb"):
        return []
    m_pre, weights, cell = w
    args = reserve_inputs(ctx.launch)
    reserve = sglang_reserve(ctx.launch.version_range, args, m_pre_gb=m_pre)
    f = reserve.fraction_keeping_reserve(m_pre)
    want = b.kv_pool_gb or 2.0
    if f is None:
        return []
    off = max(0.5, weights - (f * m_pre - want))
    off = float(int(off * 2 + 1)) / 2  # whole half GiB, rounded up
    if off >= weights:
        return []
    p = _sglang_priced(ctx, args, weights_gb=weights - off, m_pre_gb=m_pre, cell=cell)
    if isinstance(p, str):
        return []
    host = off * 2**30 / 1e9 * (ctx.launch.tp_size or 1)
    return [recommendation(ctx, "cpu_offload", f"offload {off:g} GiB of weights per rank to host memory (--cpu-offload-gb) at "
                 f"mem_fraction_static {p.f:g} (SGLang's reserve {p.reserve_gb:.2f} GiB kept)",
                 [f"--cpu-offload-gb {off:g}", f"--mem-fraction-static {p.f:g}"], p,
                 cost(-off, host, "none", OFFLOAD_THROUGHPUT),
                 risk("medium", f"pins {host:,.1f} GB (decimal) of host RAM; throughput falls with every GiB offloaded"),
                 f"weights {weights:.2f} → {weights - off:.2f} GiB on the GPU per rank: the pool the launch had "
                 f"({want:.2f} GiB) at SGLang's own reserve")]  # fmt: skip


def recommendation(
    ctx: Ctx, kind: str, action: str, flags: list[str], p: Priced, c: dict, rk: dict, reason: str
) -> Recommendation:
    b = ctx.b
    base = b.kv_tokens if b.kv_tokens is not None else None
    rec = Recommendation(kind, action, flags, p.tokens, p.kv_gb, None, c, rk, reason=reason, value=p.f,
                         left_gb=r2((1 - p.f) * (b.pre_load_avail_gb or 0.0)) if b.pre_load_avail_gb else None)  # fmt: skip
    rec.gain_tokens = p.tokens - base if base is not None else None
    rec.starts = True if failed(ctx) else None
    rec.allows = allows(ctx.launch, p.tokens, ctx.verdict)
    return rec


def below_reserve(ctx: Ctx) -> bool:
    r, inp = ctx.reserve, (ctx.b.inputs.inputs if ctx.b.inputs else None)
    hi = (r.reserve_gb_hi or r.reserve_gb) if r is not None else None
    return hi is not None and inp is not None and (1 - inp.f) * inp.m_pre_gb < hi - 0.005
