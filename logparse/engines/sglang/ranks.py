"""Per-rank memory: the events of one launch folded into one :class:`RankMemory` per (rank, worker).

Each event kind that carries a memory figure has a small handler (``_HANDLERS``); the
handlers run in log order, so a rank's figures follow its startup: free memory before the
weights, the weights, the KV pools, free memory after the pools, the CUDA graphs.  The
worker (``target``/``draft``) of each event is assigned before, by the launch assembler.
"""

from __future__ import annotations

from collections.abc import Callable

from logparse.grammar.bounds import OUT_OF_RANGE
from logparse.grammar.events import Event
from logparse.launches.figures import mark_rank, settle_marks
from logparse.launches.model import RankMemory

#: The forms of the 0.1.x scheduler summary (``Rank N: max_total_num_token=...``): the release
#: wording, and the capitalised one of pastes (``Max_total_num_token=``).
V01_SUMMARY_FORMS = frozenset({"v01", "v01_paste"})


class _RankTable:
    """The ranks seen so far, and the free memory before each graph capture.

    Older releases print no memory usage at the end of a capture: it is then the free
    memory at its begin line minus the free memory at its end line."""

    def __init__(self) -> None:
        self.ranks: dict[tuple, RankMemory] = {}
        self.graph_begin_avail: dict[tuple, float] = {}

    def of(self, ev: Event) -> RankMemory:
        """The rank (and worker) of an event, created on first sight."""
        worker = ev.worker or "target"
        key = (ev.dp_rank, ev.pp_rank, ev.tp_rank, ev.ep_rank, worker)
        if key not in self.ranks:
            self.ranks[key] = RankMemory(
                dp_rank=ev.dp_rank, pp_rank=ev.pp_rank, tp_rank=ev.tp_rank, ep_rank=ev.ep_rank, worker=worker
            )
        return self.ranks[key]


def _load_begin(table: _RankTable, ev: Event) -> None:
    rank = table.of(ev)
    if rank.avail_before_load_gb is None:
        rank.avail_before_load_gb = ev.fields.get("avail_gb")  # 0.1.x prints none


def _load_end(table: _RankTable, ev: Event) -> None:
    rank, f = table.of(ev), ev.fields
    if ev.form == "overlap":
        rank.extra["overlap_commit_s"] = f.get("commit_s")
        return
    rank.avail_after_load_gb = f.get("avail_gb")
    usage = f.get("mem_usage_gb")
    if usage is None and rank.avail_before_load_gb is not None and rank.avail_after_load_gb is not None:
        usage = round(rank.avail_before_load_gb - rank.avail_after_load_gb, 2)
    if usage is not None:  # summed: some releases load in several parts
        rank.weights_gb = (rank.weights_gb or 0.0) + usage
    if f.get("elapsed_s") is not None:
        rank.load_s = (rank.load_s or 0.0) + f["elapsed_s"]
    for field_name, extra_key in (("model_type", "model_type"), ("dtype", "model_dtype"), ("quant", "quant")):
        if f.get(field_name):
            rank.extra[extra_key] = f[field_name]


def _kv_alloc(table: _RankTable, ev: Event) -> None:
    rank = table.of(ev)
    if ev.form in ("post_capture", "post_capture_draft"):
        _kv_post_capture(rank, ev.fields)
    elif ev.form == "noop":
        rank.extra["noop_pool_tokens"] = ev.fields.get("tokens")
    else:
        _kv_pool(rank, ev.fields, ev.form)


def _kv_post_capture(rank: RankMemory, f: dict) -> None:
    """Releases that size the pool after the graph capture print it once, with its free memory."""
    rank.extra["post_capture"] = {k: f.get(k) for k in ("tokens", "kv_gb", "avail_gb", "dtype")}
    rank.kv_tokens = f.get("tokens", rank.kv_tokens)
    rank.kv_size_gb = f.get("kv_gb", rank.kv_size_gb)
    rank.kv_dtype = f.get("dtype") or rank.kv_dtype


def _kv_pool(rank: RankMemory, f: dict, form: str | None) -> None:
    """One KV pool line.  A rank may print several (``Full`` and ``SWA`` pools): its KV size is their sum."""
    label = f.get("label")
    size = f.get("kv_gb")
    if size is None and f.get("k_gb") is not None and f.get("v_gb") is not None:
        size = round(f["k_gb"] + f["v_gb"], 2)
    pools = rank.extra.setdefault("pools", [])
    pools.append(
        {
            "label": label,
            "tokens": f.get("tokens"),
            "k_gb": f.get("k_gb"),
            "v_gb": f.get("v_gb"),
            "kv_gb": size,
            "dtype": f.get("dtype"),
            "va_upper_bound": form == "va_upper_bound",
        }
    )
    if form == "va_upper_bound":
        # Post-capture sizing (0.5.18+) reserves address space for the largest pool first and backs
        # it after the CUDA-graph capture: the reservation is not the pool (its size comes later).
        return
    if label in (None, "Full") or rank.kv_tokens is None:  # the token count is the full-attention pool's
        rank.kv_tokens = f.get("tokens", rank.kv_tokens)
        rank.k_size_gb = f.get("k_gb", rank.k_size_gb)
        rank.v_size_gb = f.get("v_gb", rank.v_size_gb)
    sizes = [p["kv_gb"] for p in pools if p["kv_gb"] is not None and not p["va_upper_bound"]]
    rank.kv_size_gb = round(sum(sizes), 2) if sizes else None  # a size out of range is not known, not 0
    if f.get("dtype"):
        rank.kv_dtype = f["dtype"]


def _kv_post_capture_info(table: _RankTable, ev: Event) -> None:
    """The other ``Post-capture KV sizing:`` lines.  0.5.16 prints the resized pool as
    ``max_total_num_tokens=N, free memory=X GB`` (no size): the last token count is the pool."""
    rank, f = table.of(ev), _figures(ev)
    if ev.form == "free":
        tokens = f.get("max_total_num_tokens")
        rank.extra["post_capture"] = {"tokens": tokens, "free_gb": f.get("free_gb")}
        if isinstance(tokens, int):  # a count set aside as out of range leaves the pool line's
            rank.kv_tokens = tokens
    else:
        rank.extra[f"post_capture_{ev.form}"] = f


def _keep_last(extra_key: str, field_name: str) -> Callable[[_RankTable, Event], None]:
    """A handler that keeps one figure of the event under ``extra[extra_key]`` (the last printed)."""

    def handler(table: _RankTable, ev: Event) -> None:
        if ev.fields.get(field_name) is not None:
            table.of(ev).extra[extra_key] = ev.fields[field_name]

    return handler


def _max_running_capped(table: _RankTable, ev: Event) -> None:
    """What bounded max_running_requests (0.5.14+): the mamba state cache, or the KV cache."""
    table.of(ev).extra["max_running_capped"] = {"cause": "mamba" if ev.form == "mamba" else "kv", **_figures(ev)}


def _pool_end(table: _RankTable, ev: Event) -> None:
    table.of(ev).avail_after_pool_gb = ev.fields["avail_gb"]


def _graph_key(rank: RankMemory, f: dict) -> tuple:
    return (rank.key(), f.get("name"), f.get("step"))


def _graph_begin(table: _RankTable, ev: Event) -> None:
    rank = table.of(ev)
    if ev.fields.get("avail_gb") is not None:
        table.graph_begin_avail[_graph_key(rank, ev.fields)] = ev.fields["avail_gb"]


def _graph_end(table: _RankTable, ev: Event) -> None:
    rank, f = table.of(ev), ev.fields
    usage = f.get("mem_usage_gb")
    before = table.graph_begin_avail.get(_graph_key(rank, f))
    if usage is None and before is not None and f.get("avail_gb") is not None:
        usage = round(before - f["avail_gb"], 2)
    if usage is not None:  # summed over captures (target decode, draft decode, draft extend, ...)
        rank.graph_gb = round((rank.graph_gb or 0.0) + usage, 2)
    if f.get("avail_gb") is not None:
        rank.avail_after_graph_gb = f["avail_gb"]
    if f.get("elapsed_s") is not None:
        rank.graph_s = round((rank.graph_s or 0.0) + f["elapsed_s"], 2)
    rank.extra.setdefault("graphs", []).append(
        {k: f.get(k) for k in ("name", "phase", "step", "elapsed_s", "mem_usage_gb", "avail_gb")}
    )


def _summary(table: _RankTable, ev: Event) -> None:
    """0.1.x: every rank prints its summary line, and in 0.1.3-0.1.5 it is the only line a rank
    prints: it makes the rank known (later releases' ranks come from their memory lines)."""
    if ev.form in V01_SUMMARY_FORMS:
        table.of(ev)


def _figures(ev: Event) -> dict:
    """The event's fields without its notes of figures set aside (those are the launch's warnings)."""
    return {k: v for k, v in ev.fields.items() if k != OUT_OF_RANGE}


def _hicache_alloc(table: _RankTable, ev: Event) -> None:
    table.of(ev).extra.setdefault("hicache", []).append(_figures(ev))


def _init_end(table: _RankTable, ev: Event) -> None:
    # An init line without a memory figure does not create a rank entry.
    if ev.fields.get("mem_usage_gb") is not None:
        table.of(ev).extra["init_mem_usage_gb"] = ev.fields["mem_usage_gb"]


def _memory_baseline(table: _RankTable, ev: Event) -> None:
    table.of(ev).extra["init_mem_usage_gb"] = ev.fields["mem_usage_gb"]


def _copy_to_extra(extra_key: str) -> Callable[[_RankTable, Event], None]:
    """A handler that keeps the event's fields, as they are, under ``extra[extra_key]``."""

    def handler(table: _RankTable, ev: Event) -> None:
        table.of(ev).extra[extra_key] = _figures(ev)

    return handler


_HANDLERS: dict[str, Callable[[_RankTable, Event], None]] = {
    "load_begin": _load_begin,
    "load_end": _load_end,
    "kv_alloc": _kv_alloc,
    "mamba_alloc": _copy_to_extra("mamba"),
    "swa_tokens": _copy_to_extra("swa_tokens"),
    "swakv_pool": _copy_to_extra("swakv_pool"),
    "kv_post_capture_info": _kv_post_capture_info,
    "dsv4_memory": _copy_to_extra("dsv4_memory"),
    "dsv4_pools": _copy_to_extra("dsv4_pools"),
    "dsv4_swa_sizing": _copy_to_extra("dsv4_swa_sizing"),
    "mm_reservation": _keep_last("mm_reservation_gb", "reserved_gb"),
    "max_running_capped": _max_running_capped,
    "pool_end": _pool_end,
    "graph_begin": _graph_begin,
    "graph_end": _graph_end,
    "hicache_alloc": _hicache_alloc,
    "summary": _summary,
    "memory_unbalanced": _copy_to_extra("unbalanced"),
    "init_end": _init_end,
    "memory_baseline": _memory_baseline,
}


def rank_memory(evs: list[Event]) -> list[RankMemory]:
    """One RankMemory per (rank, worker) of the launch: targets first, then by dp, pp, tp, ep rank."""
    table = _RankTable()
    for ev in evs:
        handler = _HANDLERS.get(ev.kind)
        if handler is not None:
            handler(table, ev)
            if OUT_OF_RANGE in ev.fields:
                mark_rank(table.of(ev), ev)
    # Only rank 0 prints "Using KV cache dtype": it holds for every rank whose pool line names none.
    kv_dtype_line = next((e.fields["dtype"] for e in evs if e.kind == "kv_dtype"), None)
    for rank in table.ranks.values():
        if rank.kv_dtype is None and rank.kv_tokens is not None:
            rank.kv_dtype = kv_dtype_line
        settle_marks(rank)
    return sorted(
        table.ranks.values(),
        key=lambda r: (r.worker != "target", r.dp_rank or 0, r.pp_rank or 0, r.tp_rank or 0, r.ep_rank or 0),
    )
