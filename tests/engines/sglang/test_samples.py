"""Our sample logs (one per era and setup) parse completely, with the right shape."""

from __future__ import annotations

import pytest
from helpers import SAMPLES

from logparse.engines.sglang import versions
from logparse.pipeline import parse_paths

# file -> (imitated release, outcomes, ranks per launch, workers)
EXPECTED = {
    "sglang-0.1/llama-tp2-0.1.12.log": ("0.1.12", ["ready"], 2, {"target"}),
    "sglang-0.2/llama-tp2-0.2.5.log": ("0.2.5", ["ready"], 2, {"target"}),
    "sglang-0.3/qwen-tp4-0.3.2.log": ("0.3.2", ["ready"], 4, {"target"}),
    "sglang-0.3/llama-0.3.6-dp-minus-one.log": ("0.3.6", ["ready"], 1, {"target"}),
    "sglang-0.4/deepseek-v3-tp8-eagle-0.4.7.log": ("0.4.7", ["ready"], 16, {"target", "draft"}),
    "sglang-0.4/dp-attention-0.4.9.log": ("0.4.9", ["ready"], 4, {"target"}),
    "sglang-0.5/llama-0.5.9-dataclass.log": ("0.5.9", ["ready"], 1, {"target"}),
    "sglang-0.5/qwen-tp2-0.5.22-dict.log": ("0.5.22", ["ready"], 2, {"target"}),
    "sglang-0.5/restarts-0.5.12.log": ("0.5.12", ["ready", "ready", "ready"], 1, {"target"}),
    "sglang-0.5/crash-oom-0.5.6.log": ("0.5.6", ["failed"], 1, {"target"}),
    "sglang-0.5/crash-cuda-oom-0.5.18.log": ("0.5.18", ["failed"], 2, {"target"}),
    "sglang-0.5/fail-weights-leave-no-memory-0.5.16.log": ("0.5.16", ["failed"], 2, {"target"}),
    "kimi-k25/launch-1-baseline.log": ("0.5.10.post1", ["ready"], 16, {"target", "draft"}),
    "kimi-k25/launch-2-hicache.log": ("0.5.10.post1", ["ready"], 16, {"target", "draft"}),
}


def test_every_sample_is_listed():
    # vLLM's samples have their own test (tests/engines/vllm/test_samples.py)
    assert {str(p.relative_to(SAMPLES)) for p in SAMPLES.glob("*/*.log") if p.parent.name != "vllm"} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sample(name):
    release, outcomes, nranks, workers = EXPECTED[name]
    result = parse_paths([str(SAMPLES / name)])
    assert result.lines.unrecognized == 0, [(u.line_no, u.reason, u.text[:80]) for u in result.unrecognized]
    assert [launch.outcome for launch in result.launches] == outcomes
    for launch in result.launches:
        assert versions.in_range(release, launch.version_range), (launch.sglang_version_range, launch.version_evidence)
        assert len(launch.ranks) == nranks
        assert {r.worker for r in launch.ranks} == workers
        assert not [w for w in launch.warnings if "disagrees" in w]


def test_kimi_seed_scenario_figures():
    base, hicache = (
        parse_paths([str(SAMPLES / f"kimi-k25/{n}")]).launches[0]
        for n in ("launch-1-baseline.log", "launch-2-hicache.log")
    )
    assert base.tp_size == 8 and base.mem_fraction_static == 0.88 and base.speculative_algorithm == "EAGLE3"
    assert base.max_total_num_tokens == 159277 and base.max_running_requests_effective == 48
    tp5 = next(r for r in base.ranks if r.tp_rank == 5 and r.worker == "target")
    assert (tp5.avail_before_load_gb, tp5.weights_gb, tp5.avail_after_load_gb) == (94.04, 72.33, 21.71)
    assert tp5.kv_tokens == 159277 and tp5.kv_size_gb == 10.42
    assert min(r.avail_after_graph_gb for r in base.ranks if r.worker == "draft") == 7.43
    draft = next(r for r in base.ranks if r.tp_rank == 0 and r.worker == "draft")
    assert draft.weights_gb == 1.9 and draft.kv_tokens == 159277
    assert base.hicache_host_gb is None
    assert hicache.enable_hierarchical_cache is True and hicache.hicache_ratio == 2.0
    assert hicache.hicache_host_gb == 22.39  # decimal GB, as SGLang prints host memory
    assert hicache.max_total_num_tokens == base.max_total_num_tokens


def test_router_era_0_1_12():
    """0.1.x: "Rank N: " lines, no memory figure, no ready line (uvicorn's running line stands for it)."""
    launch = parse_paths([str(SAMPLES / "sglang-0.1/llama-tp2-0.1.12.log")]).launches[0]
    assert launch.outcome == "ready" and launch.error is None
    assert (launch.max_total_num_tokens, launch.max_prefill_tokens, launch.context_len) == (142113, 23685, 4096)
    assert [r.tp_rank for r in launch.ranks] == [0, 1] and launch.tp_size == 2
    assert launch.sglang_version_range == "0.1.6–0.1.12"
    assert launch.runtime["peak_running_req"] == 3 and launch.runtime["batch_lines"] == 7


def test_tp8_mla_eagle_0_4_7():
    launch = parse_paths([str(SAMPLES / "sglang-0.4/deepseek-v3-tp8-eagle-0.4.7.log")]).launches[0]
    target = [r for r in launch.ranks if r.worker == "target"]
    draft = [r for r in launch.ranks if r.worker == "draft"]
    assert len(target) == len(draft) == 8
    assert all(r.k_size_gb is None and r.kv_size_gb for r in target)  # MLA: one "KV size"
    assert all(r.graph_gb for r in draft)  # draft + draft-extend captures


def test_dp_attention_ranks():
    launch = parse_paths([str(SAMPLES / "sglang-0.4/dp-attention-0.4.9.log")]).launches[0]
    assert [(r.dp_rank, r.tp_rank) for r in launch.ranks] == [(0, 0), (1, 1), (2, 2), (3, 3)]
    assert launch.enable_dp_attention is True


def test_restarts_are_three_launches_with_changing_capacity():
    launches = parse_paths([str(SAMPLES / "sglang-0.5/restarts-0.5.12.log")]).launches
    assert [launch.max_total_num_tokens for launch in launches] == [193257, 227564, 455243]
    assert launches[2].kv_cache_dtype == "fp8_e4m3" and launches[2].ranks[0].kv_dtype == "torch.float8_e4m3fn"
    assert len({launch.launch_id for launch in launches}) == 3


def test_sample_derivations_hold():
    """The samples and their derivation cannot drift: tools/samplegen/check_samples.py re-derives every
    sample's figures from its text (the era's formula, pool sizes, summary lines) and must agree."""
    import subprocess
    import sys

    from helpers import ROOT

    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "samplegen" / "check_samples.py")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "samples consistent" in proc.stdout
