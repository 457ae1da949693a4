"""Where a plan's GPU memory comes from: the GPU table (:mod:`logparse.budget.gpus`), ``--gpu-memory``,
or the deployment's history in the store (what earlier launches of the same model and TP measured)."""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass

from logparse.budget import gpus
from logparse.budget.model_config import ModelConfig


class PlanError(ValueError):
    """A plan that cannot be made (one line for the user)."""


@dataclass(frozen=True)
class GpuMemory:
    """The GPU a plan runs on (GiB per rank)."""

    name: str | None
    total_gb: float | None
    free_before_weights_gb: float | None
    free_error_gb: float
    source: str  # the assumption, in words

    def with_tp(self, tp: int) -> GpuMemory:
        """The same GPU under another TP size (other NCCL buffers before the weights)."""
        if self.total_gb is None or self.free_before_weights_gb is None:
            return self
        return GpuMemory(
            self.name, self.total_gb, gpus.free_before_weights(self.total_gb, tp), self.free_error_gb, self.source
        )


def table_memory(gpu: str | None, gpu_memory_gb: float | None, tp: int) -> GpuMemory | None:
    """The GPU named (``--gpu``) or sized (``--gpu-memory``), with its typical free memory before weights."""
    if gpu_memory_gb is not None:
        if gpu_memory_gb <= 0:
            raise PlanError(f"--gpu-memory {gpu_memory_gb:g}: must be a positive number of GiB")
        free = gpus.free_before_weights(gpu_memory_gb, tp)
        return GpuMemory(
            None,
            gpu_memory_gb,
            free,
            gpus.FREE_UNCERTAINTY_GB,
            _typical(f"a {gpu_memory_gb:g} GiB GPU (--gpu-memory)", tp, free),
        )
    if gpu is None:
        return None
    try:
        g = gpus.find_gpu(gpu)
    except gpus.UnknownGpu as exc:
        raise PlanError(str(exc)) from None
    free = gpus.free_before_weights(g.total_gb, tp)
    what = f"{g.name} ({g.memory}): {g.total_gb:g} GiB as the driver reports it"
    return GpuMemory(g.name, g.total_gb, free, gpus.FREE_UNCERTAINTY_GB, _typical(what, tp, free))


def _typical(what: str, tp: int, free: float) -> str:
    over = gpus.startup_overhead_gb(tp)
    return (
        f"{what}; free before the weights ≈ {free:.2f} GiB (the CUDA context and, at tp {tp}, the NCCL buffers "
        f"take about {over:.2f} GiB; ±{gpus.FREE_UNCERTAINTY_GB:g} GiB by driver and backend)"
    )


def history_free(cfg: ModelConfig, tp: int, db: str | os.PathLike | None) -> list[tuple[str, float]]:
    """(launch id, free memory before the weights) of stored launches of this model at this TP (for an
    engine whose plan is sized from that memory: :attr:`~logparse.engines.base.Engine.plan_sized_from_free_memory`).

    Only an existing store is read (a plan never creates one); a store that cannot be read is no history."""
    from logparse.store import Store
    from logparse.store import db as dbm

    path = dbm.resolve_db_path(db)
    if not path.exists():
        return []
    try:
        rows = Store(path).launches(
            model=cfg.name,
            columns=["launch_id", "model_path", "tp_size", "avail_before_load_gb", "outcome"],
            as_rows=True,
        )
    except Exception:
        return []
    out = []
    for lid, model, tp_size, free, outcome in rows.rows:
        base = os.path.basename(str(model or "").rstrip("/"))
        if base == cfg.name and (tp_size or 1) == tp and free is not None and outcome != "failed":
            out.append((str(lid), float(free)))
    return out


def with_history(mem: GpuMemory | None, history: list[tuple[str, float]]) -> GpuMemory | None:
    """The deployment's measured free memory replaces the table's typical one."""
    if not history:
        return mem
    frees = [f for _, f in history]
    med = statistics.median(frees)
    spread = max(max(frees) - min(frees), 0.02)
    src = (
        f"free before the weights {med:.2f} GiB: the median of {len(frees)} stored launch(es) of this model at "
        f"this TP ({', '.join(lid[:8] for lid, _ in history[:4])}{'…' if len(history) > 4 else ''})"
    )
    total = mem.total_gb if mem is not None else None
    name = mem.name if mem is not None else None
    if mem is not None:
        src += f"; {mem.source.split(';')[0]}"
    return GpuMemory(name, total, med, spread, src)
