"""The event kinds vLLM's grammar emits (``grammars/vllm/line.lark``, :mod:`logparse.engines.vllm.line`).

vLLM's own kinds are prefixed ``vllm_``; every comparison of an event's kind in vLLM's modules and
every kind the engine tells others about names one of these.
"""

from __future__ import annotations

from enum import StrEnum

from logparse.grammar.kinds import EXCEPTION, EXCEPTION_START, KILLED, UVICORN


class Kind(StrEnum):
    """A kind of vLLM event (a ``str``: an event's ``kind`` compares equal to its member)."""

    VLLM_ARGS = "vllm_args"
    VLLM_AUTOFIT = "vllm_autofit"
    VLLM_BLANK = "vllm_blank"
    VLLM_BLOCKS = "vllm_blocks"
    VLLM_BLOCKS_OVERRIDE = "vllm_blocks_override"
    VLLM_BUDGET_REPORT = "vllm_budget_report"
    VLLM_CHUNKED_PREFILL = "vllm_chunked_prefill"
    VLLM_COMPILE_TIME = "vllm_compile_time"
    VLLM_CONCURRENCY = "vllm_concurrency"
    VLLM_ENGINE_FAILED = "vllm_engine_failed"
    VLLM_ENGINE_INIT = "vllm_engine_init"
    VLLM_ENGINE_PROCESS = "vllm_engine_process"
    VLLM_EXTERNAL_WEIGHTS = "vllm_external_weights"
    VLLM_FAILURE = "vllm_failure"
    VLLM_GRAPH = "vllm_graph"
    VLLM_GRAPH_ADVICE = "vllm_graph_advice"
    VLLM_GRAPH_ESTIMATE = "vllm_graph_estimate"
    VLLM_GRAPH_NOTE = "vllm_graph_note"
    VLLM_GRAPH_POOL = "vllm_graph_pool"
    VLLM_INIT_ENGINE = "vllm_init_engine"
    VLLM_KV_MEMORY = "vllm_kv_memory"
    VLLM_KV_NOTE = "vllm_kv_note"
    VLLM_KV_TOKENS = "vllm_kv_tokens"
    VLLM_LOAD_START = "vllm_load_start"
    VLLM_LOAD_TIME = "vllm_load_time"
    VLLM_LOGO_MODEL = "vllm_logo_model"
    VLLM_MAX_MODEL_LEN = "vllm_max_model_len"
    VLLM_MM_RESERVE = "vllm_mm_reserve"
    VLLM_PATCH_NOTE = "vllm_patch_note"
    VLLM_PREEMPTED = "vllm_preempted"
    VLLM_PROFILE = "vllm_profile"
    VLLM_RANK_ASSIGN = "vllm_rank_assign"
    VLLM_ROUTES = "vllm_routes"
    VLLM_RUNNER = "vllm_runner"
    VLLM_SERVER_START = "vllm_server_start"
    VLLM_STARTUP_PLAN = "vllm_startup_plan"
    VLLM_STATS = "vllm_stats"
    VLLM_TORCH_COMPILE = "vllm_torch_compile"
    VLLM_VERSION = "vllm_version"
    VLLM_WEIGHTS = "vllm_weights"
    VLLM_WORKER_EXCEPTION = "vllm_worker_exception"
    # what any Python program prints, which the grammar reads too (logparse.grammar.kinds)
    EXCEPTION = EXCEPTION
    EXCEPTION_START = EXCEPTION_START
    UVICORN = UVICORN
    KILLED = KILLED
