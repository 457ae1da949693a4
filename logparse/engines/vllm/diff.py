"""``diff`` of two vLLM launches: the KV pool compared in GiB and what moved between their releases
(:func:`logparse.engines.vllm.formula.upgrade_notes`), not a replay of the formula token by token; and vLLM's
side of a diff with another engine's launch (:func:`fraction_side`)."""

from __future__ import annotations

from typing import Any

from logparse.budget.model import Budget
from logparse.engines.vllm import versions as vv
from logparse.engines.vllm.formula import pool_rank, upgrade_notes
from logparse.launches.model import Launch


def attribution(a: Launch, b: Launch, ba: Budget, bb: Budget) -> dict[str, Any]:
    """No token replay: the KV pool GiB change and what moved between the releases (catalogue §4)."""
    ta, tb = ba.kv_tokens, bb.kv_tokens
    same = a.kv_tokens_definition == b.kv_tokens_definition
    out: dict[str, Any] = {
        "a_tokens": ta,
        "b_tokens": tb,
        "delta_tokens": (tb - ta) if ta is not None and tb is not None and same else None,
        "steps": [],
        "notes": upgrade_notes(a, b),
        "supported": False,
        "reason": "vLLM launches are compared by their KV pool (GiB) and by what moved between their releases",
    }
    if ba.kv_pool_gb is not None and bb.kv_pool_gb is not None:
        out["delta_pool_gb"] = round(bb.kv_pool_gb - ba.kv_pool_gb, 2)
    if not same:
        out["notes"].append(
            f"kv_tokens counts {a.kv_tokens_definition or '?'} in A and {b.kv_tokens_definition or '?'} in B: not comparable"
        )
    return out


def likely_cause(att: dict[str, Any]) -> str | None:
    """What moved between the two releases (the attribution's notes), when there is no replay."""
    if not att.get("supported") and att.get("notes"):
        return "; ".join(att["notes"][:4])
    return None


def fraction_side(launch: Launch, budget: Budget, share_of: str) -> dict[str, Any]:
    """``gpu_memory_utilization`` of the launch: its value, source and the release's default, a share of
    the total GPU memory (``share_of``, in words) that the log prints."""
    release = budget.assumed_version or launch.engine_version
    default = vv.default_utilization(release) if release and vv.is_release(release) else None
    rank = pool_rank(launch)
    total = (rank.extra or {}).get("total_gb") if rank is not None else None
    return {
        "name": "gpu_memory_utilization",
        "value": launch.gpu_memory_utilization,
        "source": launch.gpu_memory_utilization_source,
        "default": default,
        "default_text": f"{default:g}" if default is not None else "unknown",
        "share_of": share_of,
        "share_of_gb": total,
    }
