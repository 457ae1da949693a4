"""vLLM's levers beyond the utilization: more GPUs (larger TP), fp8 weights, CPU offload, priced by vLLM's
``u × T − profile`` (the vocabulary and what every engine's levers share: :mod:`logparse.reports.levers`).
"""

from __future__ import annotations

from typing import Any

from logparse import engines
from logparse.budget.refusals import weights_refusal
from logparse.engines.vllm.flags import vllm_has
from logparse.reports.advice_core import Ctx, Recommendation, cost, not_possible, r2, risk
from logparse.reports.levers import (
    FP8_WEIGHT_ACCURACY,
    FP8_WEIGHT_SHARE,
    OFFLOAD_THROUGHPUT,
    failed,
    heads_words,
    next_tp,
    weights_16bit,
)


# --------------------------------------------------------------------------- vLLM: more GPUs, fp8 weights
def vllm_tp(ctx: Ctx) -> list[Recommendation]:
    """vLLM at TP × 2: the weights per rank halve and ``u × T − profile`` keeps the difference for KV."""
    launch = ctx.launch
    rank = next((r for r in launch.ranks if r.weights_gb), None)
    tp = launch.tp_size or 1
    if rank is None or ctx.margin is not None or not vllm_has(launch, "--tensor-parallel-size"):
        return []
    if not failed(ctx) and ctx.verdict.get("pool_limited") is not True:
        return []
    t2 = next_tp(ctx, tp, False)
    kv = rank.kv_size_gb if rank.kv_size_gb is not None else _vllm_available(launch)
    if t2 is None or kv is None:
        return []
    weights = float(rank.weights_gb or 0.0)
    freed = weights * (1 - tp / t2)
    new_kv = kv + freed
    if new_kv <= 0:
        return [not_possible("tp", f"tensor_parallel_size {tp} → {t2}", [f"--tensor-parallel-size {t2}"],
                             f"half the weights free {freed:.2f} GiB per rank: still no KV memory")]  # fmt: skip
    _, _, heads = heads_words(ctx)
    return [Recommendation(
        "tp", f"tensor_parallel_size {tp} → {t2} ({t2 - tp} more GPUs)", [f"--tensor-parallel-size {t2}"], None,
        r2(new_kv), None, cost(-freed, 0.0, "none", "more all-reduce traffic per token", gpus=t2 - tp),
        risk("medium", f"the same gpu_memory_utilization on each rank, the profile's peaks at TP {t2} assumed no "
             f"larger; {heads}"),
        reason=f"weights {weights:.2f} → {weights * tp / t2:.2f} GiB per rank: KV {kv:.2f} → "
        f"{new_kv:.2f} GiB per rank (the profile's peaks assumed unchanged)", value=float(t2),
        starts=True if failed(ctx) else None, gain_tokens=None,
    )]  # fmt: skip


def _vllm_available(launch: Any) -> float | None:
    return next(
        (e.fields["kv_gb"] for e in launch.events if e.kind == "vllm_kv_memory" and e.fields.get("kv_gb") is not None),
        None,
    )


def vllm_cpu_offload(ctx: Ctx) -> list[Recommendation]:
    """After a start with no KV memory: ``--cpu-offload-gb`` for a 2 GiB pool at the same utilization."""
    launch = ctx.launch
    kv = _vllm_available(launch)
    rank = next((r for r in launch.ranks if r.weights_gb), None)
    if not failed(ctx) or kv is None or kv >= 0 or rank is None or not vllm_has(launch, "--cpu-offload-gb"):
        return []
    off = float(int((2.0 - kv) * 2 + 1)) / 2
    if off >= float(rank.weights_gb or 0.0):
        return []
    host = off * 2**30 / 1e9 * (launch.tp_size or 1)
    return [Recommendation(
        "cpu_offload", f"offload {off:g} GiB of weights per rank to host memory (--cpu-offload-gb)",
        [f"--cpu-offload-gb {off:g}"], None, r2(kv + off), None, cost(-off, host, "none", OFFLOAD_THROUGHPUT),
        risk("medium", f"pins {host:,.1f} GB (decimal) of host RAM; the profile's peaks assumed unchanged"),
        reason=f"the profile left {kv:.2f} GiB for KV: {off:g} GiB of weights on the host leave about {kv + off:.2f} "
        "GiB at the same gpu_memory_utilization", value=off, starts=True,
    )]  # fmt: skip


def vllm_fp8_weights(ctx: Ctx) -> list[Recommendation]:
    """vLLM's ``--quantization fp8`` of a 16-bit checkpoint (known 16-bit from the config only: vLLM's
    load line does not name the checkpoint's quantization): the weights shrink to 50–60 %."""
    launch = ctx.launch
    rank = next((r for r in launch.ranks if r.weights_gb), None)
    if rank is None or ctx.margin is not None or not vllm_has(launch, "--quantization"):
        return []
    if not failed(ctx) and ctx.verdict.get("pool_limited") is not True:
        return []
    sixteen, why = weights_16bit(ctx)
    kv = rank.kv_size_gb if rank.kv_size_gb is not None else _vllm_available(launch)
    if not sixteen or kv is None:
        return []
    refused = weights_refusal(engines.of(launch).name, "quantization", "fp8", launch.engine_version)
    if refused is not None:
        return [not_possible("fp8_weights", "fp8 weights", ["--quantization fp8"], refused.text())]
    weights = float(rank.weights_gb or 0.0)
    freed = weights * (1 - FP8_WEIGHT_SHARE[1])
    if kv + freed <= 0:
        return []
    return [Recommendation(
        "fp8_weights", "fp8 weights (--quantization fp8)", ["--quantization fp8"], None, r2(kv + freed), None,
        cost(-freed, 0.0, FP8_WEIGHT_ACCURACY, "fp8 GEMMs need compute capability 8.9+ (Ada, Hopper); older GPUs "
             "run weight-only fp8 kernels"),
        risk("medium", f"accuracy is the cost; the weights priced at 60 % of their 16-bit size; {why}"),
        reason=f"weights {weights:.2f} → about {weights - freed:.2f} GiB per rank: KV {kv:.2f} → {kv + freed:.2f} GiB "
        "at the same gpu_memory_utilization", starts=True if failed(ctx) else None,
    )]  # fmt: skip
