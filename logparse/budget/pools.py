"""A rank's KV pool from the figures it printed: its size, its token count and the bytes per token.

Every engine's lines fill the same :class:`~logparse.launches.model.RankMemory` (``kv_size_gb``,
``kv_tokens``, and in ``extra`` the pools of a hybrid model or the pool resized after the CUDA-graph
capture); the budget of every engine reads a rank's pool through these.  Figures are printed to two
decimals of GiB, so each carries half a unit of that digit of error (:data:`ROUND_GB`).
"""

from __future__ import annotations

from dataclasses import dataclass

GiB = float(1 << 30)
#: Half a unit of the last printed digit of a ``:.2f`` GiB figure.
ROUND_GB = 0.005


@dataclass
class BytesPerToken:
    value: float | None  # best estimate
    lo: float | None
    hi: float | None
    source: str  # how it was obtained
    reliable: bool

    def to_dict(self) -> dict:
        return {
            "value": rounded(self.value, 1),
            "lo": rounded(self.lo, 1),
            "hi": rounded(self.hi, 1),
            "source": self.source,
            "reliable": self.reliable,
        }


def rounded(v: float | None, nd: int = 2) -> float | None:
    return None if v is None else round(v, nd)


def pool_figures(rank) -> tuple[float | None, int, int | None, str]:
    """(total GiB of the rank's KV pools, number of printed figures in it, tokens, how)."""
    extra = rank.extra or {}
    pc = extra.get("post_capture")
    if pc and pc.get("kv_gb") is not None and pc.get("tokens"):
        return pc["kv_gb"], 1, pc["tokens"], "post-capture KV line"
    pools = [p for p in extra.get("pools", []) if not p.get("va_upper_bound") and p.get("kv_gb") is not None]
    if pools:
        total = sum(p["kv_gb"] for p in pools)
        figs = sum(2 if p.get("k_gb") is not None else 1 for p in pools)
        tokens = rank.kv_tokens
        how = "KV pool line" + (
            "s (" + " + ".join(p.get("label") or "KV" for p in pools) + ")" if len(pools) > 1 else ""
        )
        if resized_after_capture(rank):
            # the pool lines' own count (the full-attention pool's, as ranks.py reads it), not the resized one
            full = [p for p in pools if p.get("label") in (None, "Full") and p.get("tokens")]
            tokens = full[-1]["tokens"] if full else pools[0].get("tokens")
            how = "pre-capture " + how + " (0.5.16 resizes the pool after the CUDA-graph capture)"
        return total, figs, tokens, how
    if rank.kv_size_gb is not None and rank.kv_tokens:
        figs = 2 if rank.k_size_gb is not None else 1
        return rank.kv_size_gb, figs, rank.kv_tokens, "KV pool line"
    return None, 0, rank.kv_tokens, "no KV pool line"


def resized_after_capture(rank) -> bool:
    """0.5.16's post-capture sizing: the pool was resized after the capture to a token count printed
    without a size (``Post-capture KV sizing: max_total_num_tokens=N, free memory=X GB``), so the
    pre-capture pool line gives the bytes per token but not the pool's size."""
    pc = (rank.extra or {}).get("post_capture") if rank is not None else None
    return isinstance(pc, dict) and pc.get("kv_gb") is None and bool(pc.get("tokens"))


def bytes_per_token(rank, page: int, *, max_rel_err: float = 0.10) -> BytesPerToken:
    """Bytes per token of a rank's pool(s): ``kv_gb * 2^30 / (tokens + page)``."""
    if rank is None:
        return BytesPerToken(None, None, None, "no rank", False)
    total, figs, tokens, how = pool_figures(rank)
    if total is None or not tokens or tokens <= 0:
        return BytesPerToken(None, None, None, how if total is None else "pool without a token count", False)
    rows = tokens + max(page, 1)
    err = ROUND_GB * figs
    lo = max(total - err, 0.0) * GiB / rows
    hi = (total + err) * GiB / rows
    val = total * GiB / rows if total > 0 else None
    reliable = val is not None and (hi - lo) / val <= max_rel_err
    src = f"{how}: {total:.2f} GiB / {rows:,} rows"
    if not reliable:
        src += f" (printed to 2 decimals: between {lo:,.0f} and {hi:,.0f} B/token)"
    return BytesPerToken(val if reliable else None, lo, hi, src, reliable)
