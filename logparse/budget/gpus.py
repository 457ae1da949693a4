"""GPU models for planning before a launch: the memory the driver reports, and what is typically free
when an engine starts loading weights.

``total_gb`` is the device's total as the CUDA (ROCm) driver reports it to the engine
(``torch.cuda.mem_get_info()[1]``, GiB): less than the marketing figure (80 GB is about 79.2 GiB
on an H100, ECC and the driver's reservation take the rest).  vLLM sizes its budget from it
(``u × T``).  SGLang starts from the memory *free* after distributed init (``M_pre``):
:func:`free_before_weights` takes the CUDA context and, with TP, the NCCL and custom all-reduce
buffers off the total.  Those overheads were measured on logged launches; they vary with the
driver, NCCL and the attention backend by about ±0.5 GiB, which is the range a plan without
``--from`` carries (:data:`FREE_UNCERTAINTY_GB`).  A real launch of the same deployment (``--from``,
or the store's history) replaces all of it with what was measured.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from logparse.data import tables


@dataclass(frozen=True)
class Gpu:
    name: str
    total_gb: float  # GiB, as the driver reports it
    memory: str  # the marketed size
    vendor: str = "NVIDIA"
    aliases: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {"name": self.name, "total_gb": self.total_gb, "memory": self.memory, "vendor": self.vendor}


def _gpu(entry: dict[str, Any]) -> Gpu:
    return Gpu(**{**entry, "aliases": tuple(entry.get("aliases", ()))})


#: The table: ``grammars/gpus.toml``, in its order (the order ``find_gpu``'s error lists them).
GPUS: tuple[Gpu, ...] = tuple(_gpu(entry) for entry in tables.entries("gpus.toml", "gpu"))

#: The CUDA context and allocator's first reservation on every rank (GiB).
CONTEXT_GB = 0.45
#: What TP adds on each rank before the weights load: NCCL and custom all-reduce buffers (GiB).
TP_BUFFERS_GB = {1: 0.0, 2: 0.35}
TP_BUFFERS_LARGE_GB = 0.5
#: How far the free memory before the weights typically is from :func:`free_before_weights` (GiB).
FREE_UNCERTAINTY_GB = 0.5


class UnknownGpu(ValueError):
    """A GPU name the table does not have."""


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower().replace("nvidia", ""))


def find_gpu(name: str) -> Gpu:
    """The GPU a name means: its table name or an alias, case and punctuation aside."""
    k = _key(name)
    for g in GPUS:
        if k == _key(g.name) or k in (_key(a) for a in g.aliases):
            return g
    known = ", ".join(g.name for g in GPUS)
    raise UnknownGpu(f"unknown GPU {name!r}: known are {known} (or give --gpu-memory GIB)")


def startup_overhead_gb(tp: int) -> float:
    """What the CUDA context and TP buffers take before the weights load, per rank (GiB)."""
    return CONTEXT_GB + TP_BUFFERS_GB.get(tp, TP_BUFFERS_LARGE_GB if tp > 2 else 0.0)


def free_before_weights(total_gb: float, tp: int) -> float:
    """SGLang's ``M_pre`` on an otherwise empty GPU of ``total_gb``: the total less the startup overhead."""
    return total_gb - startup_overhead_gb(tp)


def closest_gpu(free_gb: float, tp: int) -> tuple[Gpu, float] | None:
    """The table's GPU whose typical free memory before the weights is nearest a measured one, and the
    distance (GiB); None when none is within a few GiB (another tenant, a partitioned GPU, a CPU)."""
    best = min(GPUS, key=lambda g: abs(free_before_weights(g.total_gb, tp) - free_gb))
    gap = abs(free_before_weights(best.total_gb, tp) - free_gb)
    return (best, gap) if gap <= 3.0 else None
