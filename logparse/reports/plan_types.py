"""The data of ``logparse plan``: what the user asked (:class:`PlanFlags`), and what one engine would
do with it (:class:`EnginePlan`, whose ``to_dict`` is one entry of ``plan --json``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from logparse import engines
from logparse.reports.plan_memory import PlanError

#: The flags a plan can change, as the CLI names them (for "what the flags change" lines).
FLAG_NAMES = {
    "release": "--release",
    "gpu": "--gpu",
    "gpu_memory_gb": "--gpu-memory",
    "tp": "--tp",
    "pp": "--pp",
    "dp": "--dp",
    "mem_fraction_static": "--mem-fraction-static",
    "gpu_memory_utilization": "--gpu-memory-utilization",
    "kv_cache_dtype": "--kv-cache-dtype",
    "context_length": "--context-length",
    "page_size": "--page-size",
    "chunked_prefill_size": "--chunked-prefill-size",
    "cuda_graph_max_bs": "--cuda-graph-max-bs",
    "speculative_algorithm": "--speculative-algorithm",
    "max_total_tokens": "--max-total-tokens",
}


@dataclass(frozen=True)
class PlanFlags:
    """What ``plan`` was asked (None: not given)."""

    #: an engine's name or ``both``; None: the --from launch's, else the default engine's (said so)
    engine: str | None = field(default_factory=lambda: engines.default().name)
    release: str | None = None
    gpu: str | None = None
    gpu_memory_gb: float | None = None
    tp: int | None = None
    pp: int | None = None
    dp: int | None = None
    mem_fraction_static: float | None = None
    gpu_memory_utilization: float | None = None
    kv_cache_dtype: str | None = None
    context_length: int | None = None
    page_size: int | None = None
    chunked_prefill_size: int | None = None
    cuda_graph_max_bs: int | None = None
    speculative_algorithm: str | None = None
    max_total_tokens: int | None = None
    #: vLLM's engine, V0 or V1 (None: V1 from 0.8.0, where it is the default); no CLI flag, the log says it
    vllm_generation: str | None = None
    target_tokens: int | None = None
    target_context: int | None = None
    concurrency: int | None = None

    def with_(self, **kw: Any) -> PlanFlags:
        return replace(self, **kw)

    def given(self) -> dict[str, Any]:
        """The flags that change the plan (not the engine choice nor the targets)."""
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name in FLAG_NAMES and getattr(self, f.name) is not None
        }


def check_bounds(flags: PlanFlags) -> None:
    """A :class:`PlanError` for a flag out of its bounds (a fraction outside (0, 1), a size below 1)."""
    for name in ("mem_fraction_static", "gpu_memory_utilization"):
        v = getattr(flags, name)
        if v is not None and not 0 < v < 1:
            raise PlanError(f"--{name.replace('_', '-')} {v:g}: must be inside (0, 1)")
    for name in (
        "tp",
        "pp",
        "dp",
        "page_size",
        "context_length",
        "chunked_prefill_size",
        "cuda_graph_max_bs",
        "target_tokens",
        "target_context",
        "concurrency",
    ):
        v = getattr(flags, name)
        if v is not None and v <= 0:
            raise PlanError(f"--{name.replace('_', '-')} {v}: must be a positive integer")


@dataclass
class EnginePlan:
    """One engine's prediction (GiB per rank; tokens of the KV pool)."""

    engine: str
    release: str
    kv_tokens: int | None
    kv_tokens_range: list[int] | None
    kv_pool_gb: float | None
    headroom_gb: float | None
    bytes_per_token: int | None
    default_fraction: float | None
    fraction: float | None = None
    fraction_name: str = "mem_fraction_static"
    fraction_source: str = ""
    headroom_gb_range: list[float] | None = None
    context_length: int | None = None
    max_concurrency: float | None = None
    tp: int = 1
    pp: int = 1
    kv_cache_dtype: str = "auto"
    gpu: str | None = None
    gpu_total_gb: float | None = None
    free_before_weights_gb: float | None = None
    weights_gb: float | None = None
    kv_budget_gb: float | None = None
    engine_reserve_gb: float | None = None
    fraction_keeping_reserve: float | None = None
    calibrated_from: str | None = None
    logged_kv_tokens: int | None = None
    not_possible: str | None = None
    assumptions: list[str] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    targets: list[dict[str, Any]] = field(default_factory=list)
    differs_because: list[str] = field(default_factory=list)
    #: the terms the comparison of engines reads (GiB), not shown as such
    terms: dict[str, float | None] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def r2(v: float | None) -> float | None:
    return None if v is None else round(float(v), 2)
