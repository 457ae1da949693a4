"""The budget of a vLLM launch: vLLM's sizing formula per era (the vLLM log catalogue §4).

vLLM gives the instance ``gpu_memory_utilization × total GPU memory`` (not a fraction of the free
memory, as SGLang's ``mem_fraction_static``) and whatever its profile leaves of it is the KV pool::

    KV = u·T − (weights + activation peak + non-torch)            V0 0.6.5–0.10.2, V1 0.9.1–0.17.1
    KV = u·T − (weights + activation + non-torch) − [est]·graphs  V1 0.18.0–0.26.0 (est on from 0.20.0)
    KV = u·T − (consumed + transient activation) − [est]·graphs   V1 0.27.0+

Every rank computes its own pool; the engine uses the smallest (:attr:`Budget.kv_pool_gb`).  The log
prints the terms at INFO in V0 0.6.5–0.10.2 (three-line profile message), in V1 0.10.2 and 0.26.0+
(the budget report); elsewhere only the pool (``Available KV cache memory``, 0.9.1+) and the tokens.
vLLM prints no free memory after its setup, so a vLLM launch has no headroom figure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from logparse.data import tables
from logparse.engines.vllm import versions as vv
from logparse.launches.model import Launch, RankMemory


@dataclass(frozen=True)
class VllmEra:
    key: str
    generation: str
    first: str
    last: str
    formula: str
    #: which terms the log prints at INFO level in this era
    printed: str

    @property
    def label(self) -> str:
        return f"vLLM {self.generation} era {self.key[-1].upper()} ({self.first}–{self.last})"


def _era(entry: dict[str, Any]) -> VllmEra:
    return VllmEra(**{**entry, "last": vv.LAST if entry["last"] == "last" else entry["last"]})


#: vLLM's sizing eras, per generation in release order: ``grammars/<engine>/eras.toml`` (``"last"``: :data:`vv.LAST`).
VLLM_ERAS: tuple[VllmEra, ...] = tuple(_era(entry) for entry in tables.entries("vllm/eras.toml", "era"))


def era_of(generation: str | None, version: str | None) -> VllmEra | None:
    if generation is None or version is None:
        return None
    for era in VLLM_ERAS:
        if era.generation == generation and vv.index(era.first) <= vv.index(version) <= vv.index(era.last):
            return era
    return None


def launch_era(launch: Launch) -> VllmEra | None:
    """The era of the launch's release (or of its whole range, when the range is within one era)."""
    rng = launch.version_range
    if launch.engine_version:
        return era_of(launch.engine_generation, launch.engine_version)
    if not rng or vv.is_empty(rng):
        return None
    lo, hi = era_of(launch.engine_generation, rng[0]), era_of(launch.engine_generation, rng[1])
    return lo if lo == hi else None


def tokens_source(launch: Launch) -> str:
    """Which line gave the launch's KV tokens, and what they count: ``GPU KV cache size`` (V1 0.8.0+;
    ``concurrency×max_model_len`` from 0.20.1, which for a hybrid or sliding-window model is how many
    requests of max_model_len fit, times it, not the pool's slots) or ``# GPU blocks`` × block size."""
    printed = any(e.kind == "vllm_kv_tokens" for e in launch.events) or not launch.num_gpu_blocks
    line = "GPU KV cache size" if printed else "# GPU blocks × block_size"
    return f"vLLM {line} ({launch.kv_tokens_definition or 'definition unknown'})"


def pool_rank(launch: Launch) -> RankMemory | None:
    """The rank whose pool the engine uses: the smallest printed pool."""
    ranks = [r for r in launch.ranks if r.kv_size_gb is not None]
    return min(ranks, key=lambda r: (r.kv_size_gb, r.tp_rank or 0)) if ranks else None


def graph_profiling_said(launch: Launch) -> tuple[bool, str] | None:
    """What the launch's advice line (0.18.0+) says of vLLM's CUDA-graph memory profiling: on (the
    estimate is subtracted from the KV budget) or off, and the line; None when the log has no such line."""
    advice = next((e for e in launch.events if e.kind == "vllm_graph_advice"), None)
    if advice is None:
        return None
    on = bool(advice.fields.get("estimate_applied"))
    return on, f"line {advice.line_no}: vLLM says its CUDA graph memory profiling is {'on' if on else 'off'}"


def graph_estimate_in_budget(launch: Launch, era: VllmEra | None = None) -> tuple[bool, str]:
    """Is the CUDA-graph estimate subtracted from the KV budget, and on what evidence: the launch's own
    advice line (0.18.0+: vLLM says whether its CUDA-graph memory profiling is on), else the release's
    default (on from 0.20.0; before 0.18.0 vLLM estimates no graph memory)."""
    said = graph_profiling_said(launch)
    if said is not None:
        return said
    era = era if era is not None else launch_era(launch)
    if era is None or era.key not in ("v1-c", "v1-d"):
        return False, "no CUDA-graph estimate before 0.18.0: the graphs are captured outside the budget"
    release = launch.engine_version or era.first
    on = vv.graphs_estimated_by_default(release)
    return on, f"the default of {release} ({'on from 0.20.0' if on else 'off before 0.20.0'})"


def replay(rank: RankMemory, launch: Launch, era: VllmEra | None) -> tuple[float | None, list[str]]:
    """The KV pool the era's formula gives from the terms this rank printed, and the steps."""
    x = rank.extra or {}
    budget = x.get("requested_gb")
    u = launch.gpu_memory_utilization
    steps: list[str] = []
    if budget is None and u is not None and x.get("total_gb") is not None:
        budget = u * x["total_gb"]
    if budget is None:
        return None, steps
    if x.get("total_gb") is not None and u is not None:
        steps.append(f"u·T = {u:g} × {x['total_gb']:.2f} GiB = {budget:.2f} GiB")
    else:
        steps.append(f"u·T = {budget:.2f} GiB (printed)")
    if x.get("consumed_gb") is not None:
        terms = [("consumed", x["consumed_gb"]), ("activation", rank.activation_gb)]
    else:
        terms = [
            ("weights", rank.weights_gb),
            ("activation peak", rank.activation_gb),
            ("non-torch", rank.non_torch_gb),
        ]
    inside, why = graph_estimate_in_budget(launch, era)
    if inside:
        terms.append(("CUDA-graph estimate", x.get("graph_estimate_gb")))
        steps.append(f"the CUDA-graph estimate is inside the budget: {why}")
    if any(v is None for _, v in terms):
        missing = ", ".join(n for n, v in terms if v is None)
        steps.append(f"the log does not print: {missing}")
        return None, steps
    kv = budget - sum(v for _, v in terms if v is not None)
    steps.append(" − ".join([f"{budget:.2f}"] + [f"{v:.2f} ({n})" for n, v in terms]) + f" = {kv:.2f} GiB")
    return round(kv, 2), steps


#: Releases where a moved default or the accounting changes the KV pool for the same flags (§4.6-4.9).
MOVES: tuple[tuple[str, str], ...] = (
    ("0.6.5", "V0 charges only this instance's memory (u is a per-instance budget from 0.6.5)"),
    ("0.8.0", "V1 became the default engine (0.8.0): another profile, no INFO profile lines"),
    ("0.9.1", "V1 charges per instance again, and the whole u·T must be free at start (0.9.1)"),
    (
        "0.18.0",
        "CUDA-graph memory is estimated (0.18.0; in the KV budget only with VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1)",
    ),
    ("0.20.0", "0.20.0 subtracts the CUDA-graph estimate from the KV budget by default"),
    ("0.20.1", "'GPU KV cache size' counts concurrency × max_model_len from 0.20.1: compare the KV pool GiB"),
    (
        "0.27.0",
        "0.27.0 charges consumed memory (mem_get_info) plus transient activation instead of weights + non-torch",
    ),
)


def _release(launch: Launch) -> str | None:
    rng = launch.version_range
    if launch.engine_version and vv.is_release(launch.engine_version):
        return launch.engine_version
    return rng[1] if rng and not vv.is_empty(rng) else None


def upgrade_notes(a: Launch, b: Launch) -> list[str]:
    """Why two vLLM launches' KV may differ with the same flags: the defaults and the accounting that moved
    between their releases, and the inputs of the formula that differ."""
    if a.engine != b.engine:
        return [f"different engines ({a.engine} -> {b.engine}): their pools are sized differently, not comparable"]
    notes: list[str] = []
    ra, rb = _release(a), _release(b)
    if ra and rb and ra != rb:
        lo, hi = sorted((vv.index(ra), vv.index(rb)))
        notes.append(f"vLLM {ra} -> {rb}")
        notes += [why for release, why in MOVES if lo < vv.index(release) <= hi]
        if lo < vv.index("0.20.0") <= hi and "default" in (
            a.gpu_memory_utilization_source,
            b.gpu_memory_utilization_source,
        ):
            notes.append("the default gpu_memory_utilization moved 0.90 -> 0.92 at 0.20.0 (+0.02 × total GPU memory)")
    for name in ("engine_generation", "gpu_memory_utilization", "max_model_len", "kv_cache_dtype", "block_size"):
        va, vb_ = getattr(a, name), getattr(b, name)
        if va is not None and vb_ is not None and va != vb_:
            notes.append(f"{name} {va} -> {vb_}")
    return notes


def pool_tokens(
    kv_gb: float,
    group_bytes_per_token: float,
    block_size: int,
    *,
    groups: int = 1,
    release: str | None = None,
    max_model_len: int | None = None,
    swa_groups: int = 0,
    window: int | None = None,
) -> int:
    """The token count vLLM prints for a KV pool of ``kv_gb`` (§4.8).

    ``num_blocks = KV // (bytes a token of one group × block size)``; up to 0.20.0 the tokens are
    ``num_blocks // groups × block_size``, from 0.20.1 ``int(concurrency × max_model_len)`` with the
    concurrency ``num_blocks`` over the blocks one request of ``max_model_len`` needs in every group
    (a sliding-window group needs at most its window).
    """
    if kv_gb <= 0 or group_bytes_per_token <= 0:
        return 0
    blocks = int(kv_gb * float(1 << 30)) // int(group_bytes_per_token * block_size)
    if not max_model_len or release is None or vv.tokens_definition(release) == vv.BLOCKS_DEFINITION:
        return blocks // max(groups, 1) * block_size
    need = (groups - swa_groups) * math.ceil(max_model_len / block_size)
    if swa_groups:
        span = min(max_model_len, (window or max_model_len) + block_size)
        need += swa_groups * math.ceil(span / block_size)
    return int(blocks / max(need, 1) * max_model_len)


#: A GiB figure vLLM prints with two decimals is exact to ± this.
PRINTED_GB_ERROR = 0.005


def implied_bytes_per_token(
    launch: Launch, kv_gb: float | None, tokens: int | None
) -> tuple[float | None, float | None, float | None, str]:
    """(best, lo, hi) bytes per token per rank a pool of ``kv_gb`` GiB holding ``tokens`` allows, and how
    they were read: tokens ≤ blocks × B (block rounding), and from 0.20.1 concurrency × max_model_len
    ≤ that again."""
    if kv_gb is None or not tokens or kv_gb <= 0:
        return None, None, None, "no KV pool GiB and token count in the log"
    gib = float(1 << 30)
    block = launch.block_size or 16
    slack = 1.0
    if launch.kv_tokens_definition == vv.CONCURRENCY_DEFINITION and launch.max_model_len:
        length = launch.max_model_len
        slack = -(-length // block) * block / length
    lo = (kv_gb - PRINTED_GB_ERROR) * gib / (tokens * slack + block)
    hi = (kv_gb + PRINTED_GB_ERROR) * gib / tokens
    return kv_gb * gib / tokens, lo, hi, f"{kv_gb:.2f} GiB / {tokens:,} tokens (block rounding: at most)"
