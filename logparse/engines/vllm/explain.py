"""``explain`` for a vLLM launch: vLLM's budget waterfall for the launch's era, what the log does not
show, sentences for the usual vLLM questions, and what-ifs (the vLLM log catalogue §4).

vLLM gives the instance ``u × T`` (``gpu_memory_utilization`` × *total* GPU memory) and keeps for the
KV cache what its profile leaves of it; the engine uses the smallest rank's pool.  So a what-if in
utilization moves the pool by ``Δu × T`` GiB per rank (T is printed by V0 0.6.4-0.10.2 and by the
V1 budget report), fp8 KV halves the bytes of a 16-bit token, and a shorter ``max_model_len`` raises
the concurrency in proportion (it does not change the pool).
"""

from __future__ import annotations

from typing import Any

from logparse.budget.model import Budget
from logparse.engines.vllm import versions as vv
from logparse.engines.vllm.formula import graph_estimate_in_budget, launch_era, pool_rank
from logparse.launches.model import Launch, RankMemory
from logparse.reports.advice import advise
from logparse.reports.explain import Explanation, advised_what_if, launch_head

_SIXTEEN_BIT = ("auto", "bfloat16", "float16", "half", None)


def _r(v: float | None) -> float | None:
    return None if v is None else round(float(v), 2)


def vllm_waterfall(launch: Launch, rank: RankMemory | None) -> list[dict[str, Any]]:
    """u·T, minus the terms the rank printed, down to its KV pool; a term not printed is a note."""
    if rank is None:
        return []
    x = rank.extra or {}
    steps: list[dict[str, Any]] = []
    budget = x.get("requested_gb")
    if budget is None and launch.gpu_memory_utilization is not None and x.get("total_gb") is not None:
        budget = launch.gpu_memory_utilization * x["total_gb"]
    if x.get("total_gb") is not None:
        steps.append({"kind": "note", "label": "total GPU memory (T)", "gb": _r(x["total_gb"])})
    if budget is not None:
        steps.append({"kind": "start", "label": "the instance's budget u × T", "gb": _r(budget)})
    terms = (
        [("consumed (weights + non-torch)", x.get("consumed_gb")), ("activation (transient)", rank.activation_gb)]
        if x.get("consumed_gb") is not None
        else [
            ("weights", rank.weights_gb),
            ("activation peak", rank.activation_gb),
            ("non-torch memory", rank.non_torch_gb),
        ]
    )
    if graph_estimate_in_budget(launch)[0]:
        terms.append(("CUDA-graph estimate", x.get("graph_estimate_gb")))
    for label, gb in terms:
        if gb is not None:
            steps.append({"kind": "minus", "label": label, "gb": _r(gb)})
    if rank.kv_size_gb is not None:
        steps.append({"kind": "end", "label": "KV pool", "gb": _r(rank.kv_size_gb)})
    if rank.graph_gb is not None:
        steps.append(
            {
                "kind": "note",
                "label": "CUDA graphs captured (outside the budget before 0.20.0)",
                "gb": _r(rank.graph_gb),
            }
        )
    return steps


def not_shown(launch: Launch, rank: RankMemory | None) -> list[str]:
    """The terms of the era's formula that this log does not print."""
    x = (rank.extra if rank is not None else None) or {}
    missing = []
    if x.get("total_gb") is None and x.get("requested_gb") is None:
        derived = total_gb_range(launch, rank)
        missing.append(
            "total GPU memory T (V1 prints it only in 0.10.2's and 0.26.0+'s budget report"
            + (
                f"; the CUDA-graph advice gives T = G / (u − u_eq) ≈ {derived[0]:.1f} GiB, "
                f"{derived[1]:.1f}–{derived[2]:.1f} GiB with the printed rounding)"
                if derived
                else ")"
            )
        )
    if rank is None or (rank.activation_gb is None and x.get("consumed_gb") is None):
        missing.append("the activation peak and non-torch memory (DEBUG level in V1 0.9.1–0.25.1)")
    if rank is None or rank.kv_size_gb is None:
        missing.append("the KV pool in GiB (printed from 0.9.1 in V1, 0.6.4–0.10.2 in V0)")
    return missing


def vllm_sentences(launch: Launch, b: Budget, rank: RankMemory | None) -> list[str]:
    out: list[str] = []
    era = launch_era(launch)
    u, src = launch.gpu_memory_utilization, launch.gpu_memory_utilization_source
    if era is not None:
        out.append(f"{era.label}: {era.formula}; the log prints {era.printed}.")
    if u is not None:
        how = {"default": "the release default", "set": "set by the user", "printed": "read from a memory line"}.get(
            src or "", ""
        )
        out.append(
            f"gpu_memory_utilization = {u:g} ({how}) is a share of the GPU's total memory, not of the free memory "
            "(SGLang's mem_fraction_static is): everything the instance uses must fit in u × T."
        )
    out += _graph_sentences(launch, rank)
    missing = not_shown(launch, rank)
    if missing:
        out.append("The log does not show " + "; ".join(missing) + ".")
    out += _failure_sentences(launch, rank)
    if launch.kv_tokens is not None and launch.kv_tokens_definition:
        out.append(
            f"kv_tokens = {launch.kv_tokens:,} counts {launch.kv_tokens_definition}"
            + (
                " (0.20.1+): for sliding-window or hybrid models it is not the pool's raw token capacity."
                if launch.kv_tokens_definition == vv.CONCURRENCY_DEFINITION
                else " (up to 0.20.0)."
            )
        )
    if launch.engine_version and vv.at_least(launch.engine_version, "0.20.0"):
        out.append(
            "Since 0.20.0 the same flags give a different pool than before: the default utilization rose 0.90 → 0.92 "
            "and the CUDA-graph estimate is subtracted from the budget (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1)."
        )
    return out


def _graph_sentences(launch: Launch, rank: RankMemory | None) -> list[str]:
    """Where the CUDA graphs sit in the budget, on the launch's own evidence (its advice line) or the
    release default; and how far the capture strayed from the estimate the budget held for it."""
    x = (rank.extra if rank is not None else None) or {}
    g = x.get("graph_estimate_gb")
    if g is None:
        return []
    inside, why = graph_estimate_in_budget(launch)
    out = [
        f"The CUDA-graph estimate ({g:.2f} GiB) is "
        + ("subtracted from the KV budget" if inside else "not in the KV budget (the graphs take memory outside u × T)")
        + f": {why}."
    ]
    err = x.get("graph_estimate_error_gb")
    if err is not None and abs(err) >= 0.01:
        out.append(
            f"The captured CUDA graph pool came out {abs(err):.2f} GiB "
            + ("above the estimate: memory beyond what the budget held." if err > 0 else "below the estimate.")
        )
    return out


def _failure_sentences(launch: Launch, rank: RankMemory | None) -> list[str]:
    kind = launch.error_kind
    if kind == "max_len_exceeds_kv" and rank is not None and rank.kv_size_gb is not None and not launch.kv_tokens:
        return [
            f"max_model_len = {launch.max_model_len:,} does not fit: one request of that length needs more KV memory "
            f"than the {rank.kv_size_gb:.2f} GiB the profile left."
        ]
    if kind == "max_len_exceeds_kv":
        return [
            f"max_model_len = {launch.max_model_len:,} does not fit: one request of that length needs more KV than "
            f"the pool holds ({launch.kv_tokens:,} tokens)."
            if launch.max_model_len and launch.kv_tokens
            else "max_model_len does not fit in the KV pool: one request of that length needs more KV than the pool holds."
        ]
    if kind == "no_kv_memory":
        kv = rank.kv_size_gb if rank is not None else None
        return [
            "Nothing was left for the KV cache: weights, activation and non-torch memory took the whole budget u × T"
            + (f" (the pool came out at {kv:.2f} GiB)." if kv is not None else ".")
        ]
    if kind == "free_memory_at_start":
        return ["Another process held GPU memory at start: from 0.9.1 vLLM needs u × T free before it loads anything."]
    return []


def vllm_what_ifs(launch: Launch, b: Budget, rank: RankMemory | None) -> list[dict[str, Any]]:
    """fp8 and a shorter max_model_len (the utilization what-if is the advice's: :mod:`logparse.reports.advice`)."""
    return [_fp8_what_if(launch, b), _shorter_len_what_if(launch)]


def _unsupported(change: str, reason: str) -> dict[str, Any]:
    return {"change": change, "supported": False, "reason": reason}


def total_gb(launch: Launch, rank: RankMemory | None) -> float | None:
    """The GPU's total memory: printed (V0 profile, V1 budget report), else from the CUDA-graph advice of
    0.18.0+ (``equivalent utilization = u − G/T``, so T = G / (u − equivalent); catalogue §4.11)."""
    x = (rank.extra if rank is not None else None) or {}
    if x.get("total_gb") is not None:
        return x["total_gb"]
    g, delta = x.get("graph_estimate_gb"), _advice_delta(launch)
    if not g or delta is None:
        return None
    return round(g / delta, 1)


def _advice_delta(launch: Launch) -> float | None:
    """``u − u_eq`` of the CUDA-graph advice (the share of T the estimate takes), when positive."""
    advice = next(
        (e.fields for e in launch.events if e.kind == "vllm_graph_advice" and "equivalent_utilization" in e.fields),
        None,
    )
    if advice is None or advice["utilization"] <= advice["equivalent_utilization"]:
        return None
    return advice["utilization"] - advice["equivalent_utilization"]


def total_gb_range(launch: Launch, rank: RankMemory | None) -> tuple[float, float, float] | None:
    """T from the CUDA-graph advice (:func:`total_gb`) and its range: G is printed with two decimals
    and u, u_eq with four, so G is ±0.005 GiB and u − u_eq ±0.0001 (None when T is printed or not derivable)."""
    x = (rank.extra if rank is not None else None) or {}
    t = total_gb(launch, rank)
    if t is None or x.get("total_gb") is not None:
        return None
    g, delta = x["graph_estimate_gb"], _advice_delta(launch) or 0.0
    lo = (g - 0.005) / (delta + 0.0001)
    hi = (g + 0.005) / (delta - 0.0001) if delta > 0.0001 else float("inf")
    return t, lo, hi


def _fp8_what_if(launch: Launch, b: Budget) -> dict[str, Any]:
    if launch.kv_cache_dtype not in _SIXTEEN_BIT:
        return _unsupported("--kv-cache-dtype fp8", f"the KV cache is already {launch.kv_cache_dtype}")
    if b.kv_tokens is None:
        return _unsupported("--kv-cache-dtype fp8", "no KV token count in the log")
    return {
        "change": "--kv-cache-dtype fp8",
        "kv_tokens": b.kv_tokens * 2,
        "kv_gb": b.kv_pool_gb,
        "supported": True,
        "note": "the same pool holds twice the tokens at one byte per element",
    }


def _shorter_len_what_if(launch: Launch) -> dict[str, Any]:
    length, conc = launch.max_concurrency_tokens or launch.max_model_len, launch.max_concurrency
    estimate = next(
        (e.fields["estimated_max_model_len"] for e in launch.events if e.fields.get("estimated_max_model_len")), None
    )
    if launch.error_kind == "max_len_exceeds_kv" and estimate:
        return {
            "change": f"--max-model-len {estimate}",
            "supported": True,
            "note": "vLLM's own estimate of the longest request the available KV memory holds",
        }
    if launch.error_kind == "max_len_exceeds_kv" and launch.kv_tokens:
        fit = launch.kv_tokens // 16 * 16
        return {
            "change": f"--max-model-len {fit}",
            "kv_tokens": launch.kv_tokens,
            "supported": True,
            "note": "the longest request the pool holds; the pool itself does not change",
        }
    if not length or conc is None:
        return _unsupported("a shorter --max-model-len", "no 'Maximum concurrency' line in the log")
    half = length // 2
    return {
        "change": f"--max-model-len {half}",
        "supported": True,
        "note": f"concurrency {conc:.2f}x → {conc * length / half:.2f}x; the pool does not change",
    }


def binding_rank(launch: Launch) -> RankMemory | None:
    return pool_rank(launch) or (launch.ranks[0] if launch.ranks else None)


def explain(launch: Launch, b: Budget, margin_gb: float | None, cfg: Any = None) -> Explanation:
    """vLLM's explanation of a launch (an :class:`~logparse.reports.explain.Explanation`): its own
    formula and questions."""
    rank = binding_rank(launch)
    adv = advise(launch, b, margin_gb=margin_gb, cfg=cfg)
    head = {
        **launch_head(launch),
        "engine": "vllm",
        "engine_version": launch.engine_version or launch.engine_version_range,
        "engine_generation": launch.engine_generation,
        "sglang_version_range": None,
        "model_path": launch.model_path,
        "tp_size": launch.tp_size,
        "dp_size": launch.dp_size,
        "gpu_memory_utilization": launch.gpu_memory_utilization,
        "max_model_len": launch.max_model_len,
        "max_concurrency": launch.max_concurrency,
        "kv_tokens_definition": launch.kv_tokens_definition,
    }
    return Explanation(
        launch=head,
        budget=b,
        waterfall=vllm_waterfall(launch, rank),
        ranks=[
            r.to_dict() | {"activation_gb": m.activation_gb, "non_torch_gb": m.non_torch_gb}
            for r, m in zip(b.ranks, launch.ranks, strict=False)
        ],
        hicache={},
        what_if=[advised_what_if(adv, "utilization")] + vllm_what_ifs(launch, b, rank),
        sentences=vllm_sentences(launch, b, rank),
        warnings=list(launch.warnings),
        advice=adv,
    )
