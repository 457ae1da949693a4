"""Facts about a launch that several reports read (explain's what-ifs, the advice): how a start failed,
whether its KV cache is already low-precision, its rank count, and its error as a sentence quotes it.
Each is defined here once."""

from __future__ import annotations

import re

from logparse.budget.model import Budget
from logparse.launches.model import Launch

#: Longest piece of an engine's error quoted in a sentence.
MAX_QUOTE = 300

_OOM_RE = re.compile(r"out of memory|OutOfMemory|OOM", re.I)
_TOO_SMALL_RE = re.compile(r"Not enough memory|leave no GPU memory|increase --mem-fraction-static", re.I)


def quote(text: str, limit: int = MAX_QUOTE) -> str:
    """The first line of ``text``, cut at a word boundary (never mid-word) when too long."""
    first = text.splitlines()[0] if text else ""
    if len(first) <= limit:
        return first
    cut = first[:limit].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + " …"


def failure_kind(launch: Launch, b: Budget) -> str | None:
    """``too_small`` (no memory left for the KV pool), ``oom`` (out of memory after it), or None."""
    err = launch.error or ""
    if _TOO_SMALL_RE.search(err) or (
        launch.outcome == "failed" and b.prediction is not None and b.prediction.not_enough
    ):
        return "too_small"
    if launch.outcome == "failed" and _OOM_RE.search(err):
        return "oom"
    return None


def is_low_precision_kv(launch: Launch, b: Budget | None = None) -> bool:
    ranks = [r for r in launch.ranks if r.worker == "target"]
    dtypes = " ".join([launch.kv_cache_dtype or ""] + [r.kv_dtype or "" for r in ranks])
    return any(x in dtypes for x in ("fp8", "float8", "fp4", "float4"))


def target_rank_count(launch: Launch) -> int:
    return len({(r.dp_rank, r.pp_rank, r.tp_rank, r.ep_rank) for r in launch.ranks if r.worker == "target"}) or 1
