"""Our vLLM sample logs (one per era and failure kind) parse completely, with the figures vLLM's
formula gives them (tools/samplegen/check_vllm_samples.py re-derives those from the text)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers import ROOT, SAMPLES

from logparse.budget.model import launch_budget
from logparse.engines.vllm import versions as vv
from logparse.pipeline import parse_paths

VLLM = SAMPLES / "vllm"
# file -> (release, generation, outcome, error kind, ranks, kv_tokens definition)
EXPECTED = {
    "v0-llama-tp2-0.6.6.post1.log": ("0.6.6.post1", "V0", "ready", None, 2, vv.BLOCKS_DEFINITION),
    "v1-tp2-per-worker-0.10.1.1.log": ("0.10.1.1", "V1", "ready", None, 2, vv.BLOCKS_DEFINITION),
    "v1-defaults-0.20.2.log": ("0.20.2", "V1", "ready", None, 1, vv.CONCURRENCY_DEFINITION),
    "v1-tags-in-format-0.31.0.log": ("0.31.0", "V1", "ready", None, 2, vv.CONCURRENCY_DEFINITION),
    "fail-max-len-docker-0.6.3.log": ("0.6.3", "V0", "failed", "max_len_exceeds_kv", 1, vv.BLOCKS_DEFINITION),
    "fail-no-kv-memory-journal-0.9.2.log": ("0.9.2", "V1", "failed", "no_kv_memory", 1, None),
}


def test_every_vllm_sample_is_listed():
    assert {p.name for p in VLLM.glob("*.log")} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_vllm_sample(name):
    release, generation, outcome, error_kind, nranks, definition = EXPECTED[name]
    result = parse_paths([str(VLLM / name)])
    assert result.lines.unrecognized == 0, [(u.line_no, u.reason, u.text[:80]) for u in result.unrecognized]
    (launch,) = result.launches
    assert launch.engine == "vllm"
    assert (launch.engine_version, launch.engine_generation, launch.outcome) == (release, generation, outcome)
    assert launch.error_kind == error_kind
    assert len(launch.ranks) == nranks
    assert launch.kv_tokens_definition == definition
    assert vv.in_range(release, launch.version_range)
    assert not [w for w in launch.warnings if "disagree" in w or "read like" in w], launch.warnings
    if outcome == "ready":
        assert launch.ready_at is not None and launch.ready_at >= launch.started_at


def test_sample_derivations_hold():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "samplegen" / "check_vllm_samples.py")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "samples consistent" in proc.stdout


def _launch(name: str):
    return parse_paths([str(VLLM / name)]).launches[0]


def test_v0_tp2_figures_and_formula():
    launch = _launch("v0-llama-tp2-0.6.6.post1.log")
    assert (launch.gpu_memory_utilization, launch.gpu_memory_utilization_source) == (0.9, "default")
    assert launch.block_size == 16 and launch.kv_tokens == launch.num_gpu_blocks * 16
    assert launch.max_concurrency == round(launch.kv_tokens / launch.max_model_len, 2)
    r0, r1 = launch.ranks
    assert (r0.tp_rank, r1.tp_rank) == (0, 1)
    assert r0.non_torch_gb != r1.non_torch_gb  # each rank's own profile
    budget = launch_budget(launch)
    assert budget.era == "vllm-v0-c"
    assert budget.kv_pool_gb == min(r0.kv_size_gb, r1.kv_size_gb)
    assert budget.predicted_kv_gb == budget.kv_pool_gb  # u·T − W − A − N, as printed
    assert "headroom_gb" in budget.unknown


def test_v1_per_worker_minimum():
    launch = _launch("v1-tp2-per-worker-0.10.1.1.log")
    per_rank = [r.kv_tokens for r in launch.ranks]
    assert len(set(per_rank)) == 2 and launch.kv_tokens == min(per_rank)
    assert launch.gpu_memory_utilization_source == "set"


def test_release_default_utilization_when_not_set():
    launch = _launch("v1-defaults-0.20.2.log")
    assert (launch.gpu_memory_utilization, launch.gpu_memory_utilization_source) == (0.92, "default")
    assert launch.max_model_len == 65536 and launch.max_concurrency_tokens == 65536


def test_in_format_tags_and_fp8():
    launch = _launch("v1-tags-in-format-0.31.0.log")
    assert launch.kv_cache_dtype == "fp8" and launch.tp_size == 2
    assert {r.tp_rank for r in launch.ranks} == {0, 1}
    assert launch.ranks[0].extra["consumed_gb"] == 36.05


def test_wrappers_date_the_year():
    """docker --timestamps and journalctl -o short-iso give the year vLLM's MM-DD stamps lack."""
    assert _launch("fail-max-len-docker-0.6.3.log").started_at.startswith("2024-10-20T08:11")
    failed = _launch("fail-no-kv-memory-journal-0.9.2.log")
    assert failed.started_at.startswith("2025-07-10T09:02") and failed.host == "gpu-node-2"
    assert failed.ranks[0].kv_size_gb < 0
    assert failed.error.startswith("ValueError: No available memory for the cache blocks")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bulk_and_record_paths_agree(name):
    from logparse.pipeline import parse_sources
    from logparse.sources import open_inputs

    path = str(VLLM / name)
    bulk = parse_sources(open_inputs([path]), bulk="force")
    record = parse_sources(open_inputs([path]), bulk=False)
    assert bulk.lines == record.lines
    assert [x.to_dict() for x in bulk.launches] == [x.to_dict() for x in record.launches]
