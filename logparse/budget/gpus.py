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


@dataclass(frozen=True)
class Gpu:
    name: str
    total_gb: float  # GiB, as the driver reports it
    memory: str  # the marketed size
    vendor: str = "NVIDIA"
    aliases: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {"name": self.name, "total_gb": self.total_gb, "memory": self.memory, "vendor": self.vendor}


GPUS: tuple[Gpu, ...] = (
    Gpu("H100 80GB", 79.19, "80 GB HBM3", aliases=("H100", "H100-SXM", "H100-PCIE", "H100 SXM", "H800")),
    Gpu("H100 NVL", 93.1, "94 GB HBM3", aliases=("H100-NVL",)),
    Gpu("H200", 139.8, "141 GB HBM3e", aliases=("H200-SXM", "H200 141GB", "H200 NVL")),
    Gpu("H20", 95.0, "96 GB HBM3", aliases=("H20 96GB",)),
    Gpu("B200", 178.4, "180 GB HBM3e", aliases=("B200-SXM", "HGX B200")),
    Gpu("A100 80GB", 79.15, "80 GB HBM2e", aliases=("A100-80G", "A100-SXM4-80GB", "A100-PCIE-80GB", "A800")),
    Gpu("A100 40GB", 39.39, "40 GB HBM2", aliases=("A100", "A100-40G", "A100-SXM4-40GB")),
    Gpu("L40S", 44.53, "48 GB GDDR6", aliases=("L40S 48GB",)),
    Gpu("L40", 44.53, "48 GB GDDR6"),
    Gpu("L4", 22.03, "24 GB GDDR6"),
    Gpu("A10G", 22.05, "24 GB GDDR6", aliases=("A10",)),
    Gpu("RTX 4090", 23.64, "24 GB GDDR6X", aliases=("4090", "GeForce RTX 4090")),
    Gpu("MI300X", 191.5, "192 GB HBM3", vendor="AMD", aliases=("MI300", "Instinct MI300X")),
    Gpu("MI250X", 63.98, "64 GB HBM2e per GCD", vendor="AMD", aliases=("MI250",)),
)

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
