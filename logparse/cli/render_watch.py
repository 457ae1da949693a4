"""The short text block ``watch`` prints per finished launch (from a :class:`LaunchBlock` document)."""

from __future__ import annotations

from typing import Any

from logparse.launches.deployment import engine_name, short_label
from logparse.launches.times import iso_time

#: How an engine is named to the user.


def _gib(v: float | None) -> str:
    return "—" if v is None else f"{v:,.2f} GiB"


def _figure(block: dict[str, Any], name: str, text: str | None) -> str:
    if text is not None:
        return text
    why = block["unknown"].get(name)
    return f"not known ({why})" if why else "—"


def _headline(block: dict[str, Any]) -> list[str]:
    la, b = block["launch"], block["budget"]
    mark = {"ready": "✔ ready", "failed": "✘ FAILED"}.get(la["outcome"], la["outcome"])
    where = " ".join(x for x in (la.get("unit"), f"pid {la['pid']}" if la.get("pid") else None) if x)
    lines = [
        f"{mark}  {short_label(la['deployment'])}  launch {la['launch_id'][:12]}"
        + (f"  started {iso_time(la['started_at'], la.get('time_zone'))}" if la.get("started_at") else "")
        + (f"  [{where}]" if where else ""),
    ]
    kv = b.get("kv_tokens")
    pool = f" (pool {_gib(b['kv_pool_gb'])})" if b.get("kv_pool_gb") is not None else ""
    head = b.get("headroom_gb")
    rank = f" on {b['binding_rank']}" if b.get("binding_rank") and head is not None else ""
    bits = [
        "KV tokens " + _figure(block, "kv_tokens", f"{kv:,}{pool}" if kv is not None else None),
        "headroom " + _figure(block, "headroom_gb", _gib(head) + rank if head is not None else None),
    ]
    if b.get("weights_gb") is not None:
        bits.append(f"weights {_gib(b['weights_gb'])}")
    if b.get("startup_s") is not None:
        bits.append(f"startup {b['startup_s']:.1f} s")
    engine = engine_name(la.get("engine"))
    bits.append(f"{engine} {la.get('engine_version_range') or '?'}")
    lines.append("  " + " · ".join(bits))
    if la.get("error"):
        lines.append(f"  error: {la['error']}")
    return lines


def _change(block: dict[str, Any]) -> list[str]:
    prev = block.get("previous")
    if prev is None:
        return ["  first launch of this deployment in the store"]
    when = f", {iso_time(prev['started_at'], prev.get('time_zone'))}" if prev.get("started_at") else ""
    lines = [f"  vs previous launch {prev['launch_id'][:12]}{when}:"]
    lines += [f"    {s}" for s in block.get("change") or []]
    steps = block.get("attribution") or []
    if steps:
        parts = [f"{s['input']} {s['a']} → {s['b']} ({s['delta_tokens']:+,})" for s in steps[:4]]
        un = block.get("unexplained_tokens")
        if un:
            parts.append(f"not explained by the formula {un:+,}")
        lines.append("    KV tokens by cause: " + "; ".join(parts))
    return lines


def _verdict(block: dict[str, Any]) -> list[str]:
    ck = block.get("check") or {}
    status = ck.get("status", "?")
    if status != "regression":
        word = {"ok": "ok", "nothing_to_compare": "nothing to compare"}.get(status, status)
        return [f"  check: {word}"]
    lines = ["  check: REGRESSION"]
    for r in ck.get("regressions", []):
        pct = f" ({r['change_pct']:+.2f}%)" if isinstance(r.get("change_pct"), (int, float)) else ""
        lines.append(f"    {r['label']}: {r.get('baseline')} → {r.get('value')}{pct}")
        if r.get("likely_cause"):
            lines.append(f"      likely cause: {r['likely_cause']}")
    return lines


def _advice(block: dict[str, Any]) -> list[str]:
    """explain's answer (what bounds KV, the run, the reserve) and its best recommendations, one line each."""
    from logparse.cli.render_reports import recommendation_lines

    answer = block.get("answer") or []
    lines = [f"  {line}" for line in answer[1:]]  # the first is the headline's KV figure again
    for i, r in enumerate(block.get("recommendations") or [], 1):
        lines.append(f"  advice {i}: " + recommendation_lines(r)[0])
    return lines


def block_text(block: dict[str, Any]) -> str:
    return "\n".join(_headline(block) + _change(block) + _verdict(block) + _advice(block))
