"""Which of vLLM's flags a launch's release has (the first release of each), and the launch's release:
what the advice may offer."""

from __future__ import annotations

from logparse.engines.vllm import versions as vv
from logparse.launches.model import Launch

#: The first vLLM release that has each engine argument the advice may offer.
# --------------------------------------------------------------------------- flags per release
#: vLLM flags and the first release that has them (the vLLM log catalogue §2.1.3, §2.3.4, §4.9).
VLLM_FLAGS = {
    "--gpu-memory-utilization": "0.4.0",
    "--max-model-len": "0.4.0",
    "--kv-cache-dtype": "0.4.0",
    "--max-num-seqs": "0.4.0",
    "--kv-cache-memory": "0.10.2",
    "--tensor-parallel-size": "0.4.0",
    "--quantization": "0.4.0",
    "--cpu-offload-gb": "0.5.4",
}


def vllm_release(launch: Launch) -> str | None:
    if launch.engine_version and vv.is_release(launch.engine_version):
        return launch.engine_version
    rng = launch.version_range
    return rng[0] if rng and not vv.is_empty(rng) else None


def vllm_has(launch: Launch, flag: str) -> bool:
    """Does the launch's (earliest possible) vLLM release have the flag?"""
    rel = vllm_release(launch)
    first = VLLM_FLAGS.get(flag)
    return first is not None and rel is not None and vv.at_least(rel, first)
