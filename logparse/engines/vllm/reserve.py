"""vLLM's own reserve: what its sizing keeps out of the KV cache for a launch, per release.

vLLM has no derived default fraction: ``gpu_memory_utilization`` defaults to 0.90, 0.92 from 0.20.0
(the vLLM log catalogue §4.9).  Its profile then keeps, inside the instance's budget ``u × T``, the
activation peak, the memory outside PyTorch and (0.20.0+ by default) the CUDA-graph estimate; the
captured CUDA graphs of earlier releases live outside the budget, in the ``(1 − u) × T`` the instance
leaves.  Its own advice (the budget report of 0.10.2+: ``--kv-cache-memory=N`` "to fully utilize gpu
memory") leaves another 150 MiB because the profile "may slightly underestimate".  So the most KV vLLM
itself would suggest on this GPU is::

    KV_max = F0 − (weights + activation + non-torch + CUDA graphs) − 150 MiB

with ``F0`` the free memory at start.  That is vLLM's figure for "fully utilize", not a margin to run
in production: advice keeps :func:`production_margin_gb` between the instance and the free memory, so
the largest utilization it recommends is ``(F0 − graphs outside the budget − margin) / T``.

The production margin, derived from vLLM's own behaviour and the startup overheads logparse measured
(:mod:`logparse.budget.gpus`):

* its start check (V1, 0.9.1+, ``gpu_worker.init_device``): "Free memory on device … is less than
  desired GPU memory utilization" as soon as ``u × T`` exceeds the memory free at start, so one more
  CUDA context on the GPU (a sidecar, a monitoring agent, a restart racing the previous process:
  :data:`~logparse.budget.gpus.CONTEXT_GB`) must fit outside the instance;
* non-torch memory grows after the profile measured it (NCCL and custom all-reduce buffers with TP:
  :func:`~logparse.budget.gpus.startup_overhead_gb`), and the caching allocator fragments;
* the profile "may slightly underestimate" (vLLM's own 150 MiB buffer, :data:`SAFETY_BUFFER_GB`).

``150 MiB + context + TP buffers`` is 0.6 GiB at TP 1, 0.95 at TP 2 and 1.1 from TP 3; the margin is
that, never less than :data:`MIN_MARGIN_GB` (1 GiB).  When the log does not print the free memory at
start it is assumed to be ``T − 1 GiB`` (nothing else on the GPU): a ceiling on that assumption is
labelled so (``free_assumed``) and advice never calls it low-risk.  Units: GiB throughout.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from logparse.budget.gpus import startup_overhead_gb
from logparse.budget.reserve import EngineReserve, ReserveTerm
from logparse.engines.vllm import versions as vv
from logparse.engines.vllm.formula import graph_profiling_said

#: vLLM's redundancy buffer in its --kv-cache-memory suggestions (0.10.2+), GiB.
SAFETY_BUFFER_GB = 150 / 1024
#: What a GPU has in use before vLLM's own start snapshot (CUDA context, driver) when the log does not say.
ASSUMED_START_USE_GB = 1.0
#: The first release with ``--kv-cache-memory`` (``kv_cache_memory_bytes``).
KV_CACHE_MEMORY_FROM = "0.10.2"
#: The least margin advice keeps between a vLLM instance and the GPU's free memory (GiB).
MIN_MARGIN_GB = 1.0


def production_margin_gb(tp: int | None = 1) -> float:
    """The margin (GiB) a recommended utilization or KV size leaves outside the instance: vLLM's
    150 MiB buffer, one more CUDA context and the TP buffers, at least 1 GiB (module documentation)."""
    return round(max(MIN_MARGIN_GB, SAFETY_BUFFER_GB + startup_overhead_gb(tp or 1)), 2)


@dataclass(frozen=True)
class VllmReserveInputs:
    """What the launch measured (GiB; None when its log does not print it)."""

    total_gb: float | None = None
    free_at_start_gb: float | None = None
    utilization: float | None = None
    weights_gb: float | None = None
    activation_gb: float | None = None
    non_torch_gb: float | None = None
    #: weights + non-torch as one figure (0.27.0+ "consumed memory")
    consumed_gb: float | None = None
    graph_estimate_gb: float | None = None
    graph_gb: float | None = None
    #: Whether the launch itself says the estimate is in the budget (its advice line); None: the release default.
    graphs_in_budget: bool | None = None
    tp_size: int | None = None


@dataclass
class VllmReserve(EngineReserve):
    """:class:`EngineReserve` plus vLLM's own ceilings."""

    #: vLLM's own "fully utilize" KV figure (free at start − profile − 150 MiB)
    max_kv_gb: float | None = None
    #: the KV size that keeps the production margin instead of the 150 MiB
    safe_kv_gb: float | None = None
    #: the largest utilization that keeps the production margin outside the instance
    max_utilization: float | None = None
    graphs_in_budget: bool = False
    margin_gb: float = MIN_MARGIN_GB
    #: the free memory at start is not in the log: the ceiling rests on ``T − 1 GiB``
    free_assumed: bool = False
    #: the free memory at start the ceilings rest on (printed or assumed)
    free_gb: float | None = None


def graphs_in_budget(release: str) -> bool:
    """Is the CUDA-graph estimate subtracted from the KV budget (by default)?  0.20.0+."""
    return vv.graphs_estimated_by_default(release)


def _terms(release: str, inp: VllmReserveInputs) -> tuple[list[ReserveTerm], list[str]]:
    terms, missing = [], []
    inside = graphs_in_budget(release) if inp.graphs_in_budget is None else inp.graphs_in_budget
    if inp.consumed_gb is None:
        pairs = [("activation peak", inp.activation_gb, "the profile run's peak"),
                 ("non-torch memory", inp.non_torch_gb, "CUDA context, NCCL, workspaces")]  # fmt: skip
    else:
        pairs = [("transient activation", inp.activation_gb, "the profile run's transient peak")]
    graph = inp.graph_estimate_gb if inside else (inp.graph_gb if inp.graph_gb is not None else inp.graph_estimate_gb)
    where = (
        ("estimated, inside the budget (0.20.0+)" if inp.graphs_in_budget is None else "estimated, inside the budget")
        if inside
        else "captured after sizing, outside the budget"
    )
    pairs.append(("CUDA graphs", graph, where))
    for name, gb, how in pairs:
        if gb is None:
            missing.append(name)
        else:
            terms.append(ReserveTerm(name, round(gb, 2), how, "the launch's log"))
    terms.append(
        ReserveTerm("vLLM's safety buffer", round(SAFETY_BUFFER_GB, 2), "150 MiB (its --kv-cache-memory advice)")
    )
    return terms, missing


def vllm_reserve(release: str | None, inp: VllmReserveInputs) -> VllmReserve:
    """vLLM's reserve for a launch of ``release`` with what it measured (see the module documentation)."""
    rel = release or vv.LAST
    terms, missing = _terms(rel, inp)
    inside = graphs_in_budget(rel) if inp.graphs_in_budget is None else inp.graphs_in_budget
    total = sum(t.gb for t in terms) if not missing else None
    out = VllmReserve(
        engine="vllm",
        release=rel,
        rule="graphs-in-budget" if inside else "graphs-outside-budget",
        rule_label=f"vLLM {rel}: u × T − (weights + activation + non-torch"
        + (" + CUDA-graph estimate)" if inside else ") ; CUDA graphs outside the budget"),
        exact=not missing and vv.at_least(rel, KV_CACHE_MEMORY_FROM),
        gpu_memory_gb=inp.total_gb,
        gpu_memory_source="the launch's log" if inp.total_gb is not None else "not printed",
        reserve_gb=round(total, 2) if total is not None else None,
        reserve_gb_lo=round(total, 2) if total is not None else None,
        reserve_gb_hi=round(total, 2) if total is not None else None,
        terms=terms,
        default_fraction=vv.default_utilization(rel),
        graphs_in_budget=inside,
    )
    out.default_fraction_lo = out.default_fraction_hi = out.default_fraction
    out.notes = _notes(rel, missing)
    _ceilings(out, inp)
    return out


def _notes(release: str, missing: list[str]) -> list[str]:
    notes = [f"the default gpu_memory_utilization of {release} is {vv.default_utilization(release):g} (a constant)"]
    if missing:
        notes.append("the log does not print " + ", ".join(missing) + ": the reserve cannot be totalled")
    if not vv.at_least(release, KV_CACHE_MEMORY_FROM):
        notes.append("the 150 MiB buffer is vLLM's own from 0.10.2; older releases are given the same margin")
    return notes


def _ceilings(out: VllmReserve, inp: VllmReserveInputs) -> None:
    """vLLM's own most KV, the KV and the utilization that keep the production margin."""
    out.margin_gb = production_margin_gb(inp.tp_size)
    used = inp.consumed_gb if inp.consumed_gb is not None else _sum(inp.weights_gb, inp.non_torch_gb)
    graphs = next((t.gb for t in out.terms if t.name == "CUDA graphs"), None)
    if inp.free_at_start_gb is not None and used is not None and inp.activation_gb is not None and graphs is not None:
        kv = inp.free_at_start_gb - used - inp.activation_gb - graphs
        out.max_kv_gb = round(max(kv - SAFETY_BUFFER_GB, 0.0), 2)
        out.safe_kv_gb = round(max(kv - out.margin_gb, 0.0), 2)
    free = inp.free_at_start_gb
    if inp.total_gb and free is None:
        free, out.free_assumed = inp.total_gb - ASSUMED_START_USE_GB, True
        out.notes.append(
            f"free memory at start not printed: assumed the GPU's total less {ASSUMED_START_USE_GB:g} GiB "
            "(CUDA context and driver; nothing else on the GPU)"
        )
    out.free_gb = round(free, 2) if free is not None else None
    if inp.total_gb and free is not None:
        outside = 0.0 if out.graphs_in_budget else (graphs or 0.0)
        u = (free - outside - out.margin_gb) / inp.total_gb
        out.max_utilization = math.floor(min(max(u, 0.0), 0.999) * 1000 + 1e-9) / 1000


def _sum(*xs: float | None) -> float | None:
    return None if any(x is None for x in xs) else sum(x for x in xs if x is not None)


def launch_vllm_reserve(launch, rank, total_gb: float | None = None) -> VllmReserve:
    """vLLM's reserve for a launch, from the binding rank's printed terms (``rank``: the pool rank)."""
    x = (rank.extra if rank is not None else None) or {}
    inp = VllmReserveInputs(
        total_gb=x.get("total_gb", total_gb),
        free_at_start_gb=x.get("free_gb"),
        utilization=launch.gpu_memory_utilization,
        weights_gb=rank.weights_gb if rank is not None else None,
        activation_gb=rank.activation_gb if rank is not None else None,
        non_torch_gb=rank.non_torch_gb if rank is not None else None,
        consumed_gb=x.get("consumed_gb"),
        graph_estimate_gb=x.get("graph_estimate_gb"),
        graph_gb=rank.graph_gb if rank is not None else None,
        graphs_in_budget=said[0] if (said := graph_profiling_said(launch)) is not None else None,
        tp_size=launch.tp_size,
    )
    rng = launch.version_range
    release = launch.engine_version if launch.engine_version and vv.is_release(launch.engine_version) else None
    if release is None and rng and not vv.is_empty(rng):
        release = rng[1]
    return vllm_reserve(release, inp)
