"""vLLM launches next to SGLang's: splitting, engine anchors, mixed inputs, the store's history."""

from __future__ import annotations

from helpers import SAMPLES

from logparse.engines.vllm import versions as vv
from logparse.pipeline import parse_paths, parse_text

VLLM = SAMPLES / "vllm"


def _read(path) -> str:
    return path.read_text(encoding="utf-8")


def test_mixed_input_gives_launches_of_both_engines():
    text = _read(SAMPLES / "sglang-0.5/llama-0.5.9-dataclass.log") + _read(VLLM / "v1-defaults-0.20.2.log")
    result = parse_text(text)
    assert [launch.engine for launch in result.launches] == ["sglang", "vllm"]
    sglang, vllm = result.launches
    assert sglang.engine_version == sglang.sglang_version and sglang.kv_tokens is None
    assert vllm.sglang_version is None and vllm.engine_version == "0.20.2"
    assert result.lines.unrecognized == 0


def test_vllm_library_lines_inside_sglang_02_stay_sglang():
    """SGLang 0.2-0.3 used vLLM's loaders: their vLLM-format lines are not a vLLM launch."""
    result = parse_paths([str(SAMPLES / "sglang-0.2/llama-tp2-0.2.5.log")])
    assert [launch.engine for launch in result.launches] == ["sglang"]


def test_weak_vllm_lines_open_no_launch():
    text = (
        "[2024-08-01 10:00:00 TP0] Load weight begin. avail mem=78.50 GB\n"
        "INFO 08-01 10:00:05 model_runner.py:732] Loading model weights took 14.9888 GB\n"
        "INFO 08-01 10:00:06 weight_utils.py:236] Using model weights format ['*.safetensors']\n"
        "[2024-08-01 10:00:09 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.40 GB\n"
    )
    result = parse_text(text)
    assert [launch.engine for launch in result.launches] == ["sglang"]


def test_a_restart_is_a_new_launch():
    one = _read(VLLM / "v0-llama-tp2-0.6.6.post1.log")
    result = parse_text(one + one.replace("12:30:", "12:50:"))
    assert [launch.outcome for launch in result.launches] == ["ready", "ready"]
    assert result.launches[0].launch_id != result.launches[1].launch_id
    assert all(len(launch.ranks) == 2 for launch in result.launches)


def test_offline_engine_is_ready_on_init_engine():
    text = (
        "INFO 03-02 11:00:00 [core.py:61] Initializing a V1 LLM engine (v0.8.3) with config: model='org/m', "
        "max_seq_len=4096, tensor_parallel_size=1, kv_cache_dtype=auto\n"
        "INFO 03-02 11:00:09 [gpu_model_runner.py:1273] Model loading took 2.1004 GiB and 3.004021 seconds\n"
        "INFO 03-02 11:00:14 [kv_cache_utils.py:578] GPU KV cache size: 1,200,000 tokens\n"
        "INFO 03-02 11:00:14 [kv_cache_utils.py:581] Maximum concurrency for 4,096 tokens per request: 292.97x\n"
        "INFO 03-02 11:00:20 [core.py:162] init engine (profile, create kv cache, warmup model) took 10.01 seconds\n"
    )
    (launch,) = parse_text(text).launches
    assert (launch.outcome, launch.engine_generation, launch.kv_tokens) == ("ready", "V1", 1200000)
    assert launch.ready_at.endswith("11:00:20")


def test_pasted_fragment_is_dated_from_its_wording():
    """No version line: the wording and the prefix narrow the release range."""
    text = (
        "(EngineCore_DP0 pid=301) INFO 10-01 08:00:01 [gpu_worker.py:298] Available KV cache memory: 30.12 GiB\n"
        "(EngineCore_DP0 pid=301) INFO 10-01 08:00:01 [kv_cache_utils.py:1087] GPU KV cache size: 98,304 tokens\n"
        "(EngineCore_DP0 pid=301) INFO 10-01 08:00:01 [kv_cache_utils.py:1091] Maximum concurrency for 32,768 tokens per request: 3.00x\n"
    )
    (launch,) = parse_text(text).launches
    # the wording and the tag allow 0.10.2-0.27.1; the line numbers (catalogue Appendix A) pin 0.11.0
    assert launch.engine_version == "0.11.0" and launch.engine_version_range == "0.11.0"
    assert any(e.startswith("line number kv_cache_utils.py:1087") for e in launch.version_evidence)
    fresh = parse_text(
        text.replace("[gpu_worker.py:298]", "[gpu_worker.py:9999]").replace("1087]", "9998]").replace("1091]", "9997]")
    )
    assert fresh.launches[0].engine_version_range == "0.10.2–0.27.1"  # a dev build's lines say nothing
    assert launch.kv_tokens == 98304 and launch.max_concurrency == 3.0
    assert any("piece of a log" in w for w in launch.warnings)


def test_engine_failure_in_api_server_without_root_cause():
    text = (
        "INFO 06-01 10:00:00 [core.py:70] Initializing a V1 LLM engine (v0.9.1) with config: model='org/m'\n"
        "ERROR 06-01 10:00:30 [core.py:517] EngineCore failed to start.\n"
        "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}\n"
    )
    (launch,) = parse_text(text).launches
    assert launch.outcome == "failed" and launch.error_kind == "engine_failed"


def test_history_marks_the_kv_tokens_definition_change(store, tmp_path):
    """0.20.0 -> 0.20.2: GPU KV cache size changed meaning at 0.20.1: no capacity change is reported."""
    new = VLLM / "v1-defaults-0.20.2.log"
    old = tmp_path / "old.log"
    old.write_text(_read(new).replace("0.20.2", "0.20.0").replace("07:40:", "06:40:"), encoding="utf-8")
    store.ingest_paths([str(old), str(new)], host="n1")
    rows = store.history("kv_tokens", as_rows=True)
    d = [dict(zip(rows.columns, r)) for r in rows.rows]
    assert [r["version"] for r in d] == ["0.20.0", "0.20.2"]
    assert d[1]["kv_tokens_change"] is None
    assert "definition" in d[1]["kv_tokens_definition_change"]
    assert d[0]["engine"] == "vllm"


def _pair_across_0201(tmp_path):
    new = VLLM / "v1-defaults-0.20.2.log"
    old = tmp_path / "old.log"
    old.write_text(_read(new).replace("0.20.2", "0.20.0").replace("07:40:", "06:40:"), encoding="utf-8")
    return parse_paths([str(old)]).launches[0], parse_paths([str(new)]).launches[0]


def test_check_gates_on_the_pool_where_tokens_are_not_comparable(tmp_path):
    from logparse.reports.check import run_check

    old, new = _pair_across_0201(tmp_path)
    results = {r["metric"]: r for r in run_check(new, old).results}
    assert results["kv_tokens"]["status"] == "skipped" and "0.20.1" in results["kv_tokens"]["note"]
    assert results["kv_pool_gb"]["status"] == "ok"
    sglang = parse_paths([str(SAMPLES / "sglang-0.5/llama-0.5.9-dataclass.log")]).launches[0]
    across = {r["metric"]: r for r in run_check(new, sglang).results}
    assert across["kv_pool_gb"]["status"] == "skipped" and "not comparable" in across["kv_pool_gb"]["note"]


def test_diff_names_what_moved_between_vllm_releases(tmp_path):
    from logparse.reports.diff import diff_launches

    old, new = _pair_across_0201(tmp_path)
    rep = diff_launches(old, new).to_dict()
    notes = rep["attribution"]["notes"]
    assert any("0.20.1" in n for n in notes)
    assert rep["version"]["a"] == "0.20.0" and rep["version"]["b"] == "0.20.2"


def test_explain_replays_the_era_formula():
    from logparse.reports.explain import explain_launch

    rep = explain_launch(parse_paths([str(VLLM / "v0-llama-tp2-0.6.6.post1.log")]).launches[0]).to_dict()
    steps = {s["label"]: s["gb"] for s in rep["waterfall"]}
    start = steps["the instance's budget u × T"]
    kv = start - steps["weights"] - steps["activation peak"] - steps["non-torch memory"]
    assert abs(kv - steps["KV pool"]) <= 0.01
    assert rep["era"] == "vllm-v0-c" and any("era C" in s for s in rep["sentences"])
    util = rep["what_if"][0]
    assert util["supported"] and util["kv_gb"] > steps["KV pool"]


def test_explain_a_max_len_failure():
    from logparse.reports.explain import explain_launch

    launch = parse_paths([str(VLLM / "fail-max-len-docker-0.6.3.log")]).launches[0]
    rep = explain_launch(launch).to_dict()
    assert any("does not fit" in s for s in rep["sentences"])
    shorter = next(w for w in rep["what_if"] if w["change"].startswith("--max-model-len"))
    assert int(shorter["change"].split()[-1]) <= launch.kv_tokens < launch.max_model_len
    assert rep["unknown"]["headroom_gb"].startswith("the start failed")


def test_ray_workers_are_ranks_and_dedup_counts_are_dropped():
    text = (
        "INFO 07-02 10:00:05 llm_engine.py:249] Initializing an LLM engine (v0.6.4.post1) with config: "
        "model='org/m', max_seq_len=4096, tensor_parallel_size=2, kv_cache_dtype=auto, pooler_config=None)\n"
        "INFO 07-02 10:00:20 model_runner.py:1077] Loading model weights took 7.4807 GB\n"
        "(RayWorkerWrapper pid=771, ip=10.0.0.7) INFO 07-02 10:00:21 model_runner.py:1077] Loading model weights took 7.4807 GB\n"
        "(RayWorkerWrapper pid=772, ip=10.0.0.7) INFO 07-02 10:00:21 model_runner.py:1077] Loading model weights took 7.4807 GB"
        " [repeated 2x across cluster]\n"
    )
    result = parse_text(text)
    assert result.lines.unrecognized == 0
    (launch,) = result.launches
    assert [r.tp_rank for r in launch.ranks] == [0, 1, 2]


def test_torch_rank_prefix_alone_stays_with_the_streams_engine():
    """``[rank0]:`` is torch's, printed by SGLang's ranks too: its exception joins the launch of the stream."""
    text = (
        "[2025-04-02 09:12:44 TP0] Load weight begin. avail mem=77.31 GB\n"
        "[rank0]: Traceback (most recent call last):\n"
        '[rank0]:   File "/x/sglang/srt/model_executor/model_runner.py", line 80, in load_model\n'
        "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
    )
    result = parse_text(text)
    assert result.lines.unrecognized == 0
    (launch,) = result.launches
    assert launch.engine == "sglang" and launch.outcome == "failed" and "OutOfMemoryError" in launch.error


def test_v1_max_len_failure_names_vllms_estimate():
    from logparse.reports.explain import explain_launch

    text = (
        "(EngineCore_DP0 pid=210) INFO 10-05 11:00:10 [core.py:77] Initializing a V1 LLM engine (v0.11.0) with config: "
        "model='org/m', max_seq_len=131072, tensor_parallel_size=1\n"
        "(EngineCore_DP0 pid=210) INFO 10-05 11:01:30 [gpu_worker.py:298] Available KV cache memory: 6.07 GiB\n"
        "(EngineCore_DP0 pid=210) ERROR 10-05 11:01:31 [core.py:708] ValueError: To serve at least one request with the "
        "models's max seq len (131072), (10.00 GiB KV cache is needed, which is larger than the available KV cache memory "
        "(6.07 GiB). Based on the available memory, the estimated maximum model length is 79520. Try increasing "
        "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.\n"
    )
    (launch,) = parse_text(text).launches
    assert (launch.outcome, launch.error_kind, launch.max_model_len) == ("failed", "max_len_exceeds_kv", 131072)
    rep = explain_launch(launch).to_dict()
    assert any(w["change"] == "--max-model-len 79520" for w in rep["what_if"])
    assert any("6.07 GiB" in s for s in rep["sentences"])


def test_history_lists_a_changed_vllm_argument(store, tmp_path):
    new = VLLM / "v1-tp2-per-worker-0.10.1.1.log"
    old = tmp_path / "old.log"
    old.write_text(
        _read(new).replace("'gpu_memory_utilization': 0.85", "'gpu_memory_utilization': 0.8").replace("14:0", "13:0"),
        encoding="utf-8",
    )
    store.ingest_paths([str(old), str(new)], host="n1")
    rows = store.history("kv_pool_gb", as_rows=True)
    d = [dict(zip(rows.columns, r)) for r in rows.rows]
    assert len(d) == 2 and "gpu_memory_utilization: 0.8 -> 0.85" in d[1]["arg_changes"]


def _dated(tmp_path, text: str):
    path = tmp_path / "v.log"
    path.write_text(text)
    (launch,) = parse_paths([str(path)]).launches
    return launch


def test_line_numbers_of_no_single_release_say_nothing_in_one_note(tmp_path):
    """A nightly build has line numbers between releases: they must not pin a wrong release, nor
    flood the launch with one warning per line."""
    sample = (SAMPLES / "vllm" / "v1-tp2-per-worker-0.10.1.1.log").read_text().splitlines()
    unprinted = [ln for ln in sample if "server version" not in ln and "Initializing a V1 LLM engine" not in ln]
    exact = _dated(tmp_path, "\n".join(unprinted) + "\n")
    assert exact.engine_version_range == "0.10.1–0.10.1.1"
    assert not any("line numbers" in w or "disagrees" in w for w in exact.warnings)
    # the KV-size line as 0.9.2 numbers it, the rest as 0.10.1.1 does
    nightly = [ln.replace("[kv_cache_utils.py:849]", "[kv_cache_utils.py:716]") for ln in unprinted]
    launch = _dated(tmp_path, "\n".join(nightly) + "\n")
    notes = [w for w in launch.warnings if "line numbers" in w or "disagrees" in w]
    assert len(notes) == 1 and "fit no single release" in notes[0]
    wording_only = vv.format_range(launch.version_range)
    assert wording_only == launch.engine_version_range and launch.engine_version is None
    assert launch.version_range == exact.version_range  # the wording (here the worker tags) still dates it


def test_a_printed_version_is_not_contradicted_by_line_numbers(tmp_path):
    sample = (SAMPLES / "vllm" / "v1-tp2-per-worker-0.10.1.1.log").read_text()
    launch = _dated(tmp_path, sample.replace("[kv_cache_utils.py:849]", "[kv_cache_utils.py:716]"))
    assert launch.engine_version == "0.10.1.1"
    assert not any("line numbers" in w or "disagrees" in w for w in launch.warnings)


_V0_FRAGMENT = (
    "INFO 06-11 10:03:02 llm_engine.py:161] Initializing an LLM engine (v0.4.3) with config: model='m/l3-70b', "
    "tokenizer='m/l3-70b', dtype=torch.bfloat16, max_seq_len=8192, tensor_parallel_size=2, kv_cache_dtype=auto, seed=0\n"
    "INFO 06-11 10:03:41 model_runner.py:146] Loading model weights took 32.8892 GB\n"
    "INFO 06-11 10:03:52 distributed_gpu_executor.py:56] # GPU blocks: 11208, # CPU blocks: 3276\n"
)


def test_v0_blocks_without_a_block_size_count_vllms_default_with_a_warning():
    (launch,) = parse_text(_V0_FRAGMENT).launches
    assert (launch.num_gpu_blocks, launch.kv_tokens) == (11208, 11208 * 16)
    assert launch.kv_tokens_definition == vv.BLOCKS_DEFINITION
    assert any("block size is not in the log" in w for w in launch.warnings)


def test_v0_blocks_with_the_block_size_of_the_arguments():
    args = "INFO 06-11 10:03:01 api_server.py:151] args: Namespace(host=None, port=8000, model='m/l3-70b', block_size=32)\n"
    (launch,) = parse_text(args + _V0_FRAGMENT).launches
    assert (launch.block_size, launch.kv_tokens) == (32, 11208 * 32)
    assert not any("block size is not in the log" in w for w in launch.warnings)
