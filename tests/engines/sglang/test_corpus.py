"""The genuine SGLang logs: every line accounted for, and the right figures."""

from __future__ import annotations

import pytest
from helpers import CORPUS, needs_corpus

from logparse.engines.sglang import versions
from logparse.pipeline import parse_paths

pytestmark = needs_corpus

# file -> (release that printed it, outcome, max_total_num_tokens, target rank-0 figures, error fragment)
EXPECTED = {
    "sglang-0.5.10.post1/fail-weights-vs-memfrac.log": (
        "0.5.10.post1",
        "failed",
        None,
        {"avail_before_load_gb": 20.84, "weights_gb": 0.40, "avail_after_load_gb": 20.44, "load_s": 0.60},
        "Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.01",
    ),
    "sglang-0.5.10.post1/killed-after-load-weight.log": (
        "0.5.10.post1",
        "incomplete",
        None,
        {"avail_before_load_gb": 19.43, "avail_after_load_gb": 19.43, "kv_tokens": None},
        None,
    ),
    "sglang-0.5.10.post1/kv-fp8_e4m3.log": (
        "0.5.10.post1",
        "ready",
        20000,
        {"kv_dtype": "torch.float8_e4m3fn", "kv_tokens": 20000, "avail_after_pool_gb": 19.04},
        None,
    ),
    "sglang-0.5.10.post1/memfrac-0.2.log": (
        "0.5.10.post1",
        "ready",
        15461305,
        {
            "kv_tokens": 15461305,
            "k_size_gb": 1.84,
            "v_size_gb": 1.84,
            "kv_size_gb": 3.68,
            "avail_before_load_gb": 18.67,
        },
        None,
    ),
    "sglang-0.5.10.post1/restart-1.log": (
        "0.5.10.post1",
        "ready",
        20000,
        {"avail_before_load_gb": 20.68, "avail_after_pool_gb": 20.63, "kv_dtype": "torch.bfloat16"},
        None,
    ),
    "sglang-0.5.10.post1/server-max-total-tokens.log": ("0.5.10.post1", "ready", 20000, {"kv_tokens": 20000}, None),
    "sglang-0.5.10.post1/tp-size-2.log": (
        "0.5.10.post1",
        "failed",
        None,
        None,
        "AssertionError: SGLANG_CPU_OMP_THREADS_BIND is not set",
    ),
    "sglang-0.5.14/restart-1.log": (
        "0.5.14",
        "ready",
        20000,
        {"avail_before_load_gb": 20.51, "weights_gb": 0.13, "avail_after_load_gb": 20.38, "avail_after_pool_gb": 20.42},
        None,
    ),
    "sglang-0.5.19/restart-1.log": (
        "0.5.19",
        "ready",
        20000,
        {"avail_before_load_gb": 19.13, "weights_gb": -0.01},
        None,
    ),
    "sglang-0.5.23/bench_one_batch.log": (
        "0.5.23",
        "incomplete",
        20000,
        {"avail_before_load_gb": 22.38, "kv_tokens": 20000},
        None,
    ),
    "sglang-0.5.23/dp-size-2-omp-bind.log": ("0.5.23", "ready", 20000, {"avail_before_load_gb": 18.15}, None),
    "sglang-0.5.23/dp-size-2.log": ("0.5.23", "failed", None, None, "AssertionError: SGLANG_CPU_OMP_THREADS_BIND"),
    "sglang-0.5.23/fail-weights-vs-memfrac.log": (
        "0.5.23",
        "failed",
        None,
        {"avail_before_load_gb": 20.62, "weights_gb": 0.41, "avail_after_load_gb": 20.22},
        "Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.01",
    ),
    "sglang-0.5.23/kv-fp8_e4m3.log": ("0.5.23", "failed", None, None, "CPU FP8 KV cache requires Intel AMX support"),
    "sglang-0.5.23/log-ms.log": (
        "0.5.23",
        "ready",
        20000,
        {"avail_before_load_gb": 19.75, "avail_after_pool_gb": 19.66},
        None,
    ),
    "sglang-0.5.23/long-run.log": ("0.5.23", "ready", 4096, {"kv_tokens": 4096}, None),
    "sglang-0.5.23/memfrac-0.2.log": (
        "0.5.23",
        "ready",
        13007440,
        {"kv_tokens": 13007440, "kv_size_gb": 3.10, "avail_after_pool_gb": 14.98},
        None,
    ),
    "sglang-0.5.23/page-size-16.log": ("0.5.23", "ready", 20000, {"kv_tokens": 20000}, None),
    "sglang-0.5.23/restart-1.log": ("0.5.23", "ready", 20000, {"avail_before_load_gb": 21.02}, None),
    "sglang-0.5.23/server-default.log": (
        "0.5.23",
        "ready",
        63609874,
        {"kv_tokens": 63609874, "k_size_gb": 7.58, "v_size_gb": 7.58, "avail_after_pool_gb": 5.49},
        None,
    ),
    "sglang-0.5.23/server-memfrac0.3.log": ("0.5.23", "ready", 26508152, {"kv_tokens": 26508152}, None),
    "failures/sglang-0.5.23-without-SGLANG_USE_CPU_ENGINE.log": (
        "0.5.23",
        "failed",
        None,
        {"avail_before_load_gb": 21.27, "avail_after_load_gb": None},
        "ModuleNotFoundError: No module named 'vllm'",
    ),
}


def test_every_corpus_log_is_listed():
    found = {str(p.relative_to(CORPUS)) for p in CORPUS.glob("*/*.log")}
    assert found == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_log(name):
    release, outcome, tokens, rank0, error = EXPECTED[name]
    result = parse_paths([str(CORPUS / name)])
    lines = result.lines
    assert lines.unrecognized == 0, [(u.line_no, u.reason, u.text[:80]) for u in result.unrecognized]
    assert lines.parsed + lines.noise == lines.total
    with open(CORPUS / name, "rb") as f:
        assert lines.total == sum(1 for _ in f)
    assert len(result.launches) == 1
    launch = result.launches[0]
    assert launch.outcome == outcome
    assert launch.version_range is not None and versions.in_range(release, launch.version_range), (
        launch.sglang_version_range,
        launch.version_evidence,
    )
    assert launch.max_total_num_tokens == tokens
    if tokens is not None and "bench_one_batch" not in name:  # the benchmark prints a bare summary
        assert launch.available_mem_kind == "cpu"
        assert launch.context_len == 2048
    if rank0 is not None:
        r = launch.rank("target", 0)
        assert r is not None
        for key, want in rank0.items():
            assert getattr(r, key) == want, (key, getattr(r, key))
    if error:
        assert launch.error and error in launch.error
    else:
        assert launch.error is None
    if "bench_one_batch" not in name:  # the offline benchmark prints no server_args
        assert launch.model_path and launch.model_path.startswith("/srv/models/")


def test_version_is_pinned_exactly_where_the_field_set_is_unique():
    r = parse_paths([str(CORPUS / "sglang-0.5.23/restart-1.log")]).launches[0]
    assert r.sglang_version == "0.5.23" and r.server_args_form == "dict"
    r = parse_paths([str(CORPUS / "sglang-0.5.10.post1/restart-1.log")]).launches[0]
    assert r.sglang_version_range == "0.5.10–0.5.10.post1" and r.server_args_form == "dataclass"
    assert r.sglang_version is None


def test_dp2_has_two_ranks_and_runtime_pressure():
    launch = parse_paths([str(CORPUS / "sglang-0.5.23/dp-size-2-omp-bind.log")]).launches[0]
    assert launch.dp_size == 2 and launch.tp_size == 1
    assert [(r.dp_rank, r.tp_rank, r.worker) for r in launch.ranks] == [(0, 0, "target"), (1, 0, "target")]
    assert launch.ranks[1].avail_after_pool_gb == 18.04
    assert launch.runtime["peak_running_req"] == 2


def test_long_run_runtime_stats():
    launch = parse_paths([str(CORPUS / "sglang-0.5.23/long-run.log")]).launches[0]
    rt = launch.runtime
    assert rt["batch_lines"] > 300
    assert rt["peak_running_req"] == 4 and rt["peak_token_usage"] == pytest.approx(0.1)
    assert launch.max_running_requests == 8


def test_server_args_values():
    launch = parse_paths([str(CORPUS / "sglang-0.5.23/server-memfrac0.3.log")]).launches[0]
    assert launch.mem_fraction_static == 0.3
    assert launch.max_running_requests == 16 and launch.chunked_prefill_size == 512
    assert launch.server_args["decode_log_interval"] == 20
    assert launch.device == "cpu"


def test_whole_corpus_in_one_call_keeps_launches_apart():
    paths = sorted(str(p) for p in CORPUS.glob("*/*.log"))
    result = parse_paths(paths)
    assert len(result.launches) == len(paths)
    assert result.lines.unrecognized == 0
    assert len({launch.launch_id for launch in result.launches}) == len(paths)
