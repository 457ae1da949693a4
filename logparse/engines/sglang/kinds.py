"""The event kinds SGLang's grammar emits (``grammars/sglang/line.lark``, :mod:`logparse.engines.sglang.line`).

Every comparison of an event's kind in SGLang's modules and every kind the engine tells others about
(:attr:`logparse.engines.base.Engine.runtime_kinds`, ...) names one of these.
"""

from __future__ import annotations

from enum import StrEnum

from logparse.grammar.kinds import EXCEPTION, EXCEPTION_START, KILLED, UVICORN


class Kind(StrEnum):
    """A kind of SGLang event (a ``str``: an event's ``kind`` compares equal to its member)."""

    CHILD_FAILED = "child_failed"
    COMM_WARMUP = "comm_warmup"
    DECODE_BATCH = "decode_batch"
    DRAFT_LOAD_FORMAT = "draft_load_format"
    DSV4_MEMORY = "dsv4_memory"
    DSV4_POOLS = "dsv4_pools"
    DSV4_SWA_SIZING = "dsv4_swa_sizing"
    FAILURE = "failure"
    GRAPH_BEGIN = "graph_begin"
    GRAPH_BS = "graph_bs"
    GRAPH_END = "graph_end"
    HICACHE_ALLOC = "hicache_alloc"
    HICACHE_NOT_ENOUGH = "hicache_not_enough"
    INIT_BEGIN = "init_begin"
    INIT_END = "init_end"
    KV_ALLOC = "kv_alloc"
    KV_DTYPE = "kv_dtype"
    KV_POST_CAPTURE_INFO = "kv_post_capture_info"
    KV_SCALES = "kv_scales"
    LAUNCH_DP = "launch_dp"
    LOAD_BEGIN = "load_begin"
    LOAD_END = "load_end"
    MAMBA_ALLOC = "mamba_alloc"
    MAX_RUNNING_CAPPED = "max_running_capped"
    MAX_TOTAL_TOKENS_CAPPED = "max_total_tokens_capped"
    MEMORY_BASELINE = "memory_baseline"
    MEMORY_UNBALANCED = "memory_unbalanced"
    MM_RESERVATION = "mm_reservation"
    POOL_END = "pool_end"
    PREFILL_BATCH = "prefill_batch"
    QUANT = "quant"
    READY = "ready"
    RETRACT = "retract"
    SERVER_ARGS = "server_args"
    STARTUP_INFO = "startup_info"
    STARTUP_TIMINGS = "startup_timings"
    SUMMARY = "summary"
    SWA_TOKENS = "swa_tokens"
    SWAKV_POOL = "swakv_pool"
    # what any Python program prints, which the grammar reads too (logparse.grammar.kinds)
    EXCEPTION = EXCEPTION
    EXCEPTION_START = EXCEPTION_START
    UVICORN = UVICORN
    KILLED = KILLED
