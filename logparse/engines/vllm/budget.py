"""vLLM's launch budget: the engine's pool is the smallest rank's; vLLM's formula of the launch's era
(:mod:`logparse.engines.vllm.formula`) is replayed from the terms the binding rank printed."""

from __future__ import annotations

from logparse.budget.model import BINDING_FIGURES, OUT_OF_RANGE_WHY, Budget, gb, physical_ranks, rank_budget, timings
from logparse.engines.vllm import formula as vb
from logparse.launches.figures import printed_out_of_range
from logparse.launches.model import Launch


def vllm_launch_budget(launch: Launch) -> Budget:
    """A vLLM launch: the engine's pool is the smallest rank's; vLLM's formula of the launch's era
    (:mod:`logparse.engines.vllm.formula`) is replayed from the terms the binding rank printed."""
    done = launch.outcome == "ready"
    ranks = [rank_budget(t, d, setup_complete=False) for t, d in physical_ranks(launch)]
    b = Budget(launch.launch_id, launch.outcome, "gpu", done, ranks)
    pool = vb.pool_rank(launch)
    binding = b.rank(pool.label()) if pool is not None else (ranks[0] if ranks else None)
    if binding is not None:
        b.binding_rank = binding.rank
        for name in BINDING_FIGURES:
            setattr(b, name, getattr(binding, name))
    timings(b, launch)
    b.kv_tokens = launch.kv_tokens
    if launch.kv_tokens is not None:
        b.kv_tokens_source = vb.tokens_source(launch)
    b.kv_pool_gb = gb(pool.kv_size_gb) if pool is not None else None
    era = vb.launch_era(launch)
    if era is not None:
        b.era, b.era_label, b.formula = "vllm-" + era.key, era.label, era.formula
        b.formula_notes = [f"this era prints {era.printed} at INFO level"]
    b.assumed_version = launch.engine_version
    if pool is not None:
        b.predicted_kv_gb, b.derivation = vb.replay(pool, launch, era)
    u = b.unknown
    u["headroom_gb"] = (
        "the start failed before its memory setup finished"
        if launch.outcome == "failed"
        else "vLLM prints no free memory after its setup: the headroom is not in its log"
    )
    if b.kv_tokens is None:
        u["kv_tokens"] = (
            "the start failed before the KV cache was sized"
            if launch.outcome == "failed"
            else OUT_OF_RANGE_WHY
            if printed_out_of_range(launch, "kv_tokens", "gpu_blocks", "num_gpu_blocks")
            else "no KV size line"
        )
    if b.kv_pool_gb is None:
        u["kv_pool_gb"] = (
            OUT_OF_RANGE_WHY
            if printed_out_of_range(launch, "kv_size_gb", "kv_gb")
            else "no KV pool size in GiB (vLLM prints it from 0.9.1, or in V0 0.6.4–0.10.2's profile)"
        )
    u["predicted_kv_tokens"] = "vLLM's pool is replayed in GiB (predicted_kv_gb), not in tokens"
    return b
