"""The vocabulary of the advice (:mod:`logparse.reports.advice`): a recommendation, the advice, the
context every lever reads, cost and risk records, which flags a launch's release has, and the run's
verdict (was the KV pool ever the limit).  Every lever module builds on these; none computes a figure
another module computes."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from logparse import engines
from logparse.budget.model import Budget
from logparse.budget.reserve import EngineReserve
from logparse.launches.model import Launch

RISK_ORDER = {"low": 0, "medium": 1, "high": 2}
FAILURE_WORDS = {
    "too_small": "the weights left no memory for the KV pool at this fraction",
    "oom": "out of memory after the KV pool was allocated (CUDA graphs, activations or the draft did not fit)",
    "no_kv_memory": "weights and the profile took the whole budget: no memory for the KV cache",
    "max_len_exceeds_kv": "one request of max_model_len needs more KV than the pool holds",
    "free_memory_at_start": "less than u × T was free at start (another process holds memory)",
}
#: Peak token usage from which the pool counts as full (SGLang's ``token usage``, 0–1).
FULL_USAGE = 0.95
#: Below this the pool had room to spare (a queue then comes from the request cap, not from KV).
ROOMY_USAGE = 0.90
FP8_ACCURACY = "keys and values rounded to 8 bits: usually a small quality loss, more on long contexts; check your eval"
FP8_FORMATS = {
    "fp8_e4m3": "e4m3 keeps 3 mantissa bits; scale 1.0 unless --quantization-param-path gives scales",
    "fp8_e5m2": "e5m2 keeps only 2 mantissa bits (coarser than e4m3)",
}


# --------------------------------------------------------------------------- data
@dataclass
class Recommendation:
    """One action (see the module documentation); ``to_dict`` is its JSON object."""

    kind: str
    action: str
    flags: list[str]
    kv_tokens: int | None
    kv_gb: float | None
    headroom_gb: float | None
    cost: dict[str, Any]
    risk: dict[str, str]
    reason: str
    possible: bool = True
    allows: dict[str, Any] = field(default_factory=dict)
    gain_tokens: int | None = None
    value: float | None = None
    #: the fraction leaves less than the engine's reserve, or the utilization less than the production
    #: margin (only with ``--margin``)
    below_reserve: bool = False
    #: GiB the action leaves outside the instance (vLLM) or held back (SGLang), None when not a memory move
    left_gb: float | None = None
    #: the named risk a capacity cut fixes (a cut is offered with a pool that never limited the run only then)
    fixes: str | None = None
    #: after a failed start: does this action start it (by the engine's own sizing)?
    starts: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Advice:
    """The short answer, the run's verdict, the engine's reserve and the ranked recommendations."""

    answer: list[str]
    verdict: dict[str, Any]
    reserve: EngineReserve | None
    recommendations: list[Recommendation]

    def to_dict(self) -> dict[str, Any]:
        r = self.reserve
        return {
            "answer": list(self.answer),
            "runtime_verdict": dict(self.verdict),
            "engine_reserve_gb": r.reserve_gb if r is not None else None,
            "engine_reserve_terms": [t.to_dict() for t in r.terms] if r is not None else [],
            "engine_reserve": r.to_dict() if r is not None else None,
            "recommendations": [x.to_dict() for x in self.recommendations],
        }


@dataclass
class Ctx:
    launch: Launch
    b: Budget
    margin: float | None
    reserve: EngineReserve | None
    verdict: dict[str, Any]
    hicache: list[dict[str, Any]] = field(default_factory=list)
    #: the model's config (``explain --model-config``, or the launch's model path when readable), else None
    cfg: Any = None


def r2(v: float | None) -> float | None:
    return None if v is None else round(float(v), 2)


def floor3(x: float) -> float:
    return math.floor(x * 1000 + 1e-9) / 1000


def cost(
    gpu_gb: float | None = 0.0, host_gb: float | None = 0.0, accuracy: str = "none", throughput: str = "", gpus: int = 0
) -> dict:
    """What an action costs, never what it gains: GPU memory (GiB per rank; positive = more used), host
    memory (decimal GB, all ranks), accuracy, throughput lost, more GPUs."""
    return {
        "gpu_memory_gb": r2(gpu_gb),
        "host_memory_gb": r2(host_gb),
        "accuracy": accuracy,
        "throughput": throughput,
        "more_gpus": gpus,
    }


def risk(level: str, why: str) -> dict[str, str]:
    return {"level": level, "why": why}


def not_possible(kind: str, action: str, flags: list[str], why: str, reason: str = "") -> Recommendation:
    """An action that cannot be taken, with the reason (no figures)."""
    return Recommendation(
        kind, action, flags, None, None, None, cost(None, None, "", ""), risk("high", "not possible: " + why),
        reason=reason or why, possible=False,
    )  # fmt: skip


def flag_field(flag: str) -> str:
    """The ServerArgs field of a command-line flag (``--kv-cache-dtype`` → ``kv_cache_dtype``)."""
    return flag.split()[0].lstrip("-").replace("-", "_")


# --------------------------------------------------------------------------- the run's verdict
def runtime_verdict(launch: Launch) -> dict[str, Any]:
    """Was the KV pool ever the limit in this launch's runtime?  From its batch and retraction lines."""
    rt = launch.runtime or {}
    usage, retract = rt.get("peak_token_usage"), rt.get("retractions") or 0
    queue, running, tokens = rt.get("peak_queue_req"), rt.get("peak_running_req"), rt.get("peak_tokens")
    out: dict[str, Any] = {
        "peak_token_usage": usage,
        "retractions": retract,
        "peak_queue_req": queue,
        "peak_running_req": running,
        "peak_tokens": tokens,
        "batch_lines": rt.get("batch_lines") or 0,
        "pool_limited": None,
    }
    engine = engines.of(launch)
    words = engine.runtime_terms
    if not rt.get("batch_lines") and not retract:
        out["evidence"] = "no runtime lines with KV usage in the log: whether the pool ever limited it is not known"
        return out
    if retract:
        out["pool_limited"], why = (
            True,
            f"{engine.label} {words.retracted} {retract:,} request(s): the pool ran out",
        )
    elif usage is not None and usage >= FULL_USAGE:
        out["pool_limited"], why = True, f"the pool filled (peak {words.usage} {usage:.0%})"
    elif usage is not None and usage >= ROOMY_USAGE and queue:
        out["pool_limited"], why = True, f"requests queued ({queue:,}) while the pool was {usage:.0%} full"
    else:
        out["pool_limited"], why = False, "the pool never limited it"
    bits = [f"peak {words.usage} {usage:.0%}" if usage is not None else f"{words.usage} not printed"]
    bits += [f"{retract:,} {words.retraction}(s)", f"queue peak {queue if queue is not None else '?'}"]
    if running is not None:
        bits.append(f"peak {running:g} running request(s)")
    if rt.get("gen_throughput_p50") is not None:
        p50, p90, top = (rt.get(f"gen_throughput_{q}") for q in ("p50", "p90", "max"))
        bits.append(f"generation throughput median {p50:,.1f}, p90 {p90 or 0:,.1f}, max {top or 0:,.1f} tokens/s")
    out["evidence"] = f"{why} ({', '.join(bits)}; {out['batch_lines']:,} {words.line}(s))"
    out["tokens_per_request"] = int(tokens / running) if tokens and running else None
    return out


def allows(launch: Launch, kv_tokens: int | None, verdict: dict[str, Any]) -> dict[str, Any]:
    """The context and concurrency a pool of ``kv_tokens`` allows."""
    if not kv_tokens or kv_tokens <= 0:
        return {}
    ctx = launch.context_len or launch.context_length or launch.max_model_len
    out: dict[str, Any] = {"max_request_tokens": min(kv_tokens - 1, ctx) if ctx else kv_tokens - 1}
    if ctx:
        out["full_context_requests"] = round(kv_tokens / ctx, 2)
    per = verdict.get("tokens_per_request")
    if per:
        out["requests_at_observed_size"] = int(kv_tokens // per)
        out["observed_tokens_per_request"] = per
    return out


def reserve_words(reserve: EngineReserve) -> str:
    counted = [t for t in reserve.terms if t.counted and t.gb]
    terms = " + ".join(f"{t.name} {t.gb:.2f}" for t in counted)
    span = ""
    if reserve.reserve_gb_hi is not None and reserve.reserve_gb_lo != reserve.reserve_gb_hi:
        span = f" (range {reserve.reserve_gb_lo:.2f}–{reserve.reserve_gb_hi:.2f})"
    return f"{reserve.reserve_gb:.2f} GiB{span} = {terms}" if terms else f"{reserve.reserve_gb:.2f} GiB{span}"


def context_value(tokens: int) -> int:
    """The largest power of two (at least 1,024) a request of the pool can hold."""
    return max(1024, 1 << int(math.log2(max(tokens - 1, 2))))
