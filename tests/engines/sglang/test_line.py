"""SGLang's oldest pasted wording and its newest lines (issue 21, SGLang side).

* 0.1.x as users paste it: ``Rank N: Load weight begins.`` / ``ends.``, ``Rank N: Max_total_num_token=…``,
  ``Quant_config: …`` beside rpyc's ``Accepted (…)`` / ``Welcome (…)`` lines: a launch with its figures
  and era, the rpyc lines known noise;
* the lines of 0.5.12-0.5.23 the catalogue predates (DeepSeek-V4's pool sizes and SWA sizing, the
  multimodal reservation, the mamba cap of max_running_requests, the KV-bound reduction) and the
  post-capture KV sizing (the last token count is the pool), and what the budget makes of them.

Every sample is written by us in the formats of SGLang's own source (the release wheels), with our
own numbers.  Each input goes through the record path and the bulk path, which must agree, and every
line is accounted for.
"""

from __future__ import annotations

import pytest

from logparse.budget.model import launch_budget
from logparse.pipeline import parse_sources
from logparse.reports.explain import explain_launch
from logparse.sources import open_inputs


def parsed(tmp_path, text: str, sglang_version: str | None = None):
    path = tmp_path / "pasted.log"
    path.write_text(text)
    records = parse_sources(open_inputs([str(path)]), sglang_version, bulk=False)
    vectorized = parse_sources(open_inputs([str(path)]), sglang_version, bulk="force")
    assert records.lines.to_dict() == vectorized.lines.to_dict()
    assert [(u.line_no, u.reason) for u in records.unrecognized] == [
        (u.line_no, u.reason) for u in vectorized.unrecognized
    ]
    assert [launch.to_dict() for launch in records.launches] == [launch.to_dict() for launch in vectorized.launches]
    lc = records.lines
    assert lc.total == text.count("\n")
    assert lc.parsed + lc.noise + lc.unrecognized + lc.other_units == lc.total
    return records


def near_misses(result) -> list[int]:
    return [u.line_no for u in result.unrecognized if u.reason.startswith("near miss")]


# --------------------------------------------------------------------------- 0.1.x as pasted
V01_PASTE = """\
Server started on [0.0.0.0]:31006
Server started on [0.0.0.0]:31007
Accepted ('127.0.0.1', 52110) with file descriptor 6
Accepted ('127.0.0.1', 52118) with file descriptor 6
Welcome ('127.0.0.1', 52118)
Welcome ('127.0.0.1', 52110)
Rank 0: Load weight begins.
Quant_config: GPTQConfig(weight_bits=4, group_size=128, desc_act=False)
Rank 1: Load weight begins.
Quant_config: GPTQConfig(weight_bits=4, group_size=128, desc_act=False)
Rank 1: Load weight ends.
Rank 0: Load weight ends.
Rank 0: Max_total_num_token=118204, max_prefill_num_token=16384, context_len=16384, model_mode=[]
Rank 1: Max_total_num_token=118204, max_prefill_num_token=16384, context_len=16384, model_mode=[]
INFO:     Started server process [7311]
INFO:     Waiting for application startup.
INFO:     Application startup complete.
INFO:     Uvicorn running on http://0.0.0.0:31000 (Press CTRL+C to quit)
"""


def test_v01_paste_wording_is_a_launch_with_its_figures_and_era(tmp_path):
    res = parsed(tmp_path, V01_PASTE)
    assert res.lines.unrecognized == 0
    assert res.lines.noise == 7  # six rpyc lines and uvicorn's waiting line
    (launch,) = res.launches
    assert launch.outcome == "ready"  # 0.1.x prints no ready line: uvicorn stands for it
    assert launch.tp_size == 2 and [r.tp_rank for r in launch.ranks] == [0, 1]
    assert launch.max_total_num_tokens == 118204 and launch.context_len == 16384
    assert launch.sglang_version_range == "0.1.3–0.1.16"
    assert launch_budget(launch).kv_tokens == 118204


def test_v01_release_and_paste_wording_give_the_same_launch(tmp_path):
    release = (
        V01_PASTE.replace("Load weight begins.", "load weight begin.")
        .replace("Load weight ends.", "load weight end.")
        .replace("Max_total_num_token", "max_total_num_token")
        .replace("Quant_config", "quant_config")
        .replace("Accepted", "accepted")
        .replace("with file descriptor", "with fd")
        .replace("Welcome", "welcome")
        .replace("Server started", "server started")
    )
    a, b = parsed(tmp_path, V01_PASTE).launches[0], parsed(tmp_path, release).launches[0]
    assert (a.outcome, a.max_total_num_tokens, a.tp_size) == (b.outcome, b.max_total_num_tokens, b.tp_size)
    assert b.sglang_version_range == "0.1.6–0.1.12"  # the release wording dates closer than the paste's


@pytest.mark.parametrize(
    "line",
    [
        "Rank 0: Load weight started.",
        "Rank 1: Max_total_num_token=118204, max_prefill_num_token=16384",
        "Rank 0: max_total_num_token=118204, max_prefill_num_token=16384, context_len=",
    ],
)
def test_v01_near_misses_are_reported_not_noise(tmp_path, line):
    res = parsed(tmp_path, line + "\n")
    assert near_misses(res) == [1]


def test_rpyc_look_alikes_stay_unrecognized(tmp_path):
    res = parsed(tmp_path, "Accepted ('127.0.0.1', 52110)\nWelcome to the cluster\n")
    assert res.lines.unrecognized == 2 and not near_misses(res)


# --------------------------------------------------------------------------- post-capture KV sizing
POST_CAPTURE_0516 = """\
[2026-04-20 09:00:00] server_args=ServerArgs(model_path='/models/llama-3.1-8b-instruct', tp_size=1, mem_fraction_static=0.85, page_size=1)
[2026-04-20 09:00:05] Load weight begin. avail mem=78.52 GB
[2026-04-20 09:00:14] Load weight end. elapsed=8.44 s, type=LlamaForCausalLM, avail mem=63.48 GB, mem usage=15.04 GB.
[2026-04-20 09:00:15] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 423542, K size: 25.85 GB, V size: 25.85 GB
[2026-04-20 09:00:15] Memory pool end. avail mem=62.95 GB
[2026-04-20 09:00:16] Capture target decode CUDA graph begin. backend=full, num_tokens_per_req=1, bs=[1, 2, 4, 8, 16, 32], avail mem=62.91 GB
[2026-04-20 09:00:31] Capture target decode CUDA graph end. elapsed=15.02 s, mem usage=1.42 GB, avail mem=61.49 GB.
[2026-04-20 09:00:32] Post-capture KV sizing: max_total_num_tokens=401408, free memory=10.87 GB
[2026-04-20 09:00:34] max_total_num_tokens=401408, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=2048, context_len=131072, available_gpu_mem=10.81 GB
[2026-04-20 09:00:40] The server is fired up and ready to roll!
"""

POST_CAPTURE_VA = """\
[2026-06-20 09:00:00] server_args=ServerArgs(model_path='/models/llama-3.1-8b-instruct', tp_size=1, mem_fraction_static=0.85, page_size=1)
[2026-06-20 09:00:05] Load weight begin. avail mem=78.52 GB
[2026-06-20 09:00:14] Load weight end. elapsed=8.44 s, type=LlamaForCausalLM, avail mem=63.48 GB, mem usage=15.04 GB.
[2026-06-20 09:00:15] KV Cache VA upper bound. dtype: torch.bfloat16, #tokens: 423542, K size: 25.85 GB, V size: 25.85 GB
[2026-06-20 09:00:15] Memory pool end. avail mem=62.95 GB
[2026-06-20 09:00:16] Capture target decode CUDA graph begin. backend=full, num_tokens_per_req=1, bs=[1, 2, 4, 8, 16, 32], avail mem=62.91 GB
[2026-06-20 09:00:31] Capture target decode CUDA graph end. elapsed=15.02 s, mem usage=1.42 GB, avail mem=61.49 GB.
[2026-06-20 09:00:32] Post-capture KV sizing: full_layer_tokens=409600, swa_layer_tokens=0
[2026-06-20 09:00:32] Post-capture KV sizing: KV cache allocated. dtype: torch.bfloat16, #tokens: 409600, KV size: 50.00 GB, avail mem=11.42 GB
[2026-06-20 09:00:34] max_total_num_tokens=409600, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=2048, context_len=131072, available_gpu_mem=11.37 GB
[2026-06-20 09:00:40] The server is fired up and ready to roll!
"""


def test_post_capture_0516_the_last_token_count_is_the_pool(tmp_path):
    (launch,) = parsed(tmp_path, POST_CAPTURE_0516).launches
    assert launch.sglang_version_range == "0.5.16"
    b = launch_budget(launch)
    assert b.kv_tokens == 401408 and "Post-capture" in (b.kv_tokens_source or "")
    # 0.5.16 prints no size for the resized pool: its tokens at the pre-capture line's bytes per token
    assert b.kv_pool_gb == pytest.approx(49.0, abs=0.01)
    assert b.headroom_gb == 10.87  # free once the pool is resized, not before
    # the formula sizes the reservation before the capture: checked against that count
    assert b.predicted_kv_tokens is not None and b.within_rounding
    assert abs(b.predicted_kv_tokens - 423542) < 100
    assert any("post-capture" in n for n in b.formula_notes)


def test_post_capture_va_bound_is_a_reservation_not_the_pool(tmp_path):
    (launch,) = parsed(tmp_path, POST_CAPTURE_VA).launches
    b = launch_budget(launch)
    assert (b.kv_tokens, b.kv_pool_gb, b.headroom_gb) == (409600, 50.0, 11.42)
    assert b.bytes_per_token == pytest.approx(131072, abs=40)
    exp = explain_launch(launch)
    text = " ".join(exp.sentences)
    assert "resized the pool to 409,600 tokens" in text and "last count is the pool" in text
    assert "after the CUDA-graph capture" in exp.advice.answer[0]


def test_post_capture_cut_before_the_resize_has_no_pool(tmp_path):
    cut = "".join(POST_CAPTURE_VA.splitlines(keepends=True)[:7])
    (launch,) = parsed(tmp_path, cut).launches
    b = launch_budget(launch)
    assert b.kv_tokens is None and b.kv_pool_gb is None
    assert "VA upper bound" in b.unknown["kv_tokens"]


def test_post_capture_what_ifs_start_from_the_resized_pool(tmp_path):
    (launch,) = parsed(tmp_path, POST_CAPTURE_VA).launches
    fp8 = next(r for r in explain_launch(launch).advice.recommendations if r.kind == "fp8")
    assert fp8.kv_tokens == pytest.approx(2 * 409600, rel=0.002)  # not twice the reservation


# --------------------------------------------------------------------------- multimodal reservation, mamba cap
MM = """\
[2026-06-22 10:00:00] server_args=ServerArgs(model_path='/models/Qwen2.5-VL-7B-Instruct', tp_size=1, mem_fraction_static=0.85, page_size=1)
[2026-06-22 10:00:06] Load weight begin. avail mem=78.00 GB
[2026-06-22 10:00:15] Load weight end. elapsed=8.02 s, type=Qwen2_5_VLForConditionalGeneration, avail mem=62.00 GB, mem usage=16.00 GB.
[2026-06-22 10:00:15] Reserving 0.50 GB of the KV budget for post-sizing multimodal allocations (feature-transport pools + embedding cache).
[2026-06-22 10:00:16] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 407961, K size: 24.90 GB, V size: 24.90 GB
[2026-06-22 10:00:16] Memory pool end. avail mem=11.93 GB
[2026-06-22 10:00:40] max_total_num_tokens=407961, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=2048, context_len=128000, available_gpu_mem=11.40 GB
[2026-06-22 10:00:45] The server is fired up and ready to roll!
"""


def test_multimodal_reservation_is_taken_out_of_the_kv_budget(tmp_path):
    (launch,) = parsed(tmp_path, MM).launches
    b = launch_budget(launch)
    assert b.rest_gb == 49.8 and b.within_rounding and b.predicted_kv_tokens == 407961
    assert any("multimodal reservation 0.50" in step for step in b.derivation)
    assert any("reserved for multimodal" in s for s in explain_launch(launch).sentences)
    # without the line the same figures predict a pool 0.50 GiB larger than the one logged
    (other,) = parsed(
        tmp_path, "".join(line for line in MM.splitlines(keepends=True) if "Reserving" not in line)
    ).launches
    assert not launch_budget(other).within_rounding


MAMBA = """\
[2026-07-03 08:00:01] server_args={'model_path': '/models/Qwen3-Next-80B-A3B-Instruct', 'tp_size': 2, 'mem_fraction_static': 0.85, 'max_running_requests': 64}
[2026-07-03 08:00:40 TP0] Load weight begin. avail mem=78.30 GB
[2026-07-03 08:01:10 TP0] Load weight end. elapsed=30.11 s, type=Qwen3NextForCausalLM, avail mem=40.92 GB, mem usage=37.38 GB.
[2026-07-03 08:01:12 TP0] max_running_requests is capped to 12 by the mamba state cache (max_mamba_cache_size=60, 5 state slots per request). To raise it: increase --mamba-full-memory-ratio or --max-mamba-cache-size, or halve the state size with --mamba-ssm-dtype bfloat16.
[2026-07-03 08:01:12 TP0] Mamba Cache is allocated. max_mamba_cache_size: 60, conv_state size: 0.21GB, ssm_state size: 9.38GB
[2026-07-03 08:01:13 TP0] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1283522, K size: 9.79 GB, V size: 9.79 GB
[2026-07-03 08:01:13 TP0] Memory pool end. avail mem=11.35 GB
[2026-07-03 08:01:40 TP0] max_total_num_tokens=1283522, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=12, context_len=262144, available_gpu_mem=10.21 GB
[2026-07-03 08:01:45] The server is fired up and ready to roll!
"""


def test_mamba_cap_of_max_running_requests_is_explained(tmp_path):
    (launch,) = parsed(tmp_path, MAMBA).launches
    assert launch.ranks[0].extra["max_running_capped"] == {
        "cause": "mamba",
        "max_running_requests": 12,
        "max_mamba_cache_size": 60,
        "slots_per_request": 5,
    }
    text = " ".join(explain_launch(launch).sentences)
    assert "capped to 12 by the mamba state cache" in text
    assert "64 requests need at least 320 slots" in text


def test_kv_bound_reduction_is_explained(tmp_path):
    text = (
        "[2026-05-02 10:00:11 TP0] max_running_requests was reduced from the requested 32 to 9 (per dp worker) "
        "due to the available KV cache capacity.\n"
        "[2026-05-02 10:00:12 TP0] max_total_num_tokens=18, chunked_prefill_size=8192, max_prefill_tokens=16384, "
        "max_running_requests=9, context_len=4096, available_gpu_mem=0.41 GB\n"
    )
    (launch,) = parsed(tmp_path, text).launches
    assert launch.ranks[0].extra["max_running_capped"]["cause"] == "kv"
    sentence = " ".join(explain_launch(launch).sentences)
    assert "reduced from the requested 32 to 9" in sentence and "// 2 = 9" in sentence


# --------------------------------------------------------------------------- DeepSeek-V4
DSV4 = """\
[2026-09-02 11:20:01] server_args={'model_path': '/models/DeepSeek-V4-Flash', 'tp_size': 4, 'ep_size': 4, 'mem_fraction_static': 0.86, 'page_size': 256}
[2026-09-02 11:21:02 TP0 EP0] Load weight begin. avail mem=78.41 GB
[2026-09-02 11:21:40 TP0 EP0] Load weight end. elapsed=38.20 s, type=DeepseekV4ForCausalLM, quant=fp8, avail mem=29.41 GB, mem usage=49.00 GB.
[2026-09-02 11:21:41 TP0 EP0] DSV4 SWA sizing: mode=cap, swa_tokens=24576, request_cap+headroom=24576, prefix_tails=32
[2026-09-02 11:21:41 TP0 EP0] DSV4 memory calculation: unified=False, unified_fp8=False, dspark_draft_bf16=False, bytes_per_full_token=1811.25, available_bytes=18.43 GB, c128_state_fixed=0.06 GB, c2_state_fixed=0.00 GB, swa_fixed=0.38 GB, swa_ring_fixed=0.00 GB, c4_state_fixed=0.03 GB, full_token=10648320
[2026-09-02 11:21:41 TP0 EP0] DSV4 pool sizes: full=10648320, swa=24576, c4=2662080, c128=83190, c4_state=768, c128_state=0
[2026-09-02 11:21:44 TP0 EP0] Memory pool end. avail mem=10.92 GB
[2026-09-02 11:22:30 TP0 EP0] max_total_num_tokens=10648320, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=64, context_len=1048576, available_gpu_mem=9.87 GB
[2026-09-02 11:22:41] The server is fired up and ready to roll!
"""


def test_dsv4_pools_and_its_own_solve(tmp_path):
    (launch,) = parsed(tmp_path, DSV4).launches
    assert launch.sglang_version_range == "0.5.21–0.5.23"
    extra = launch.ranks[0].extra
    assert extra["dsv4_pools"]["swa"] == 24576 and extra["dsv4_swa_sizing"]["mode"] == "cap"
    b = launch_budget(launch)
    # the engine's own bytes per full token and fixed pools: the prediction lands on the logged pool
    assert b.bytes_per_token == pytest.approx(1811.25, abs=0.1) and "DSV4 memory calculation" in (
        b.bytes_per_token_source or ""
    )
    assert b.within_rounding and b.kv_tokens == 10648320
    assert any("fixed DSV4 pools 0.47" in step for step in b.derivation)
    text = " ".join(explain_launch(launch).sentences)
    assert "DeepSeek-V4 pools: full 10,648,320 tokens" in text and "SWA 24,576" in text


SWA = """\
[2026-01-02 10:00:09 TP0] Load weight end. elapsed=12.00 s, type=Gemma3ForCausalLM, avail mem=60.00 GB, mem usage=18.00 GB.
[2026-01-02 10:00:11 TP0] Use sliding window memory pool. full_layer_tokens=281600, swa_layer_tokens=225280
[2026-01-02 10:00:12 TP0] Memory pool end. avail mem=12.00 GB
"""


def test_sliding_window_pools_are_explained(tmp_path):
    (launch,) = parsed(tmp_path, SWA).launches
    b = launch_budget(launch)
    text = " ".join(explain_launch(launch).sentences)
    assert "full-attention layers hold 281,600 tokens" in text and "sliding-window layers 225,280" in text
    assert b.kv_tokens is None  # no pool line, no summary: the SWA split alone is not the pool


@pytest.mark.parametrize(
    "line",
    [
        "[2026-09-02 11:21:41 TP0 EP0] DSV4 pool sizes: full=10648320, swa=24576",
        "[2026-09-02 11:21:41 TP0 EP0] DSV4 SWA sizing: mode=stretch, swa_tokens=24576",
        "[2026-06-22 10:00:15] Reserving 0.50 GB of the KV budget for post-sizing multimodal",
        "[2026-07-03 08:01:12 TP0] max_running_requests is capped to 12 by the mamba state cache",
        "[2026-07-03 08:01:12 TP0] max_running_requests was reduced from the requested 32 to 9",
    ],
)
def test_newest_near_misses_are_reported(tmp_path, line):
    assert near_misses(parsed(tmp_path, line + "\n")) == [1]


def test_mamba_cap_advice_raises_the_state_slots_within_the_kv_budget(tmp_path):
    (launch,) = parsed(tmp_path, MAMBA).launches
    recs = explain_launch(launch).advice.recommendations
    assert not any(r.kind == "requests" for r in recs)  # --max-running-requests alone changes nothing here
    (slots,) = [r for r in recs if r.kind == "mamba_slots"]
    # 64 requests x 5 slots would take the whole KV budget: the most that leave one full-context request
    assert slots.possible and slots.flags == ["--max-mamba-cache-size 155"]
    assert 262144 <= slots.kv_tokens < launch_budget(launch).kv_tokens


def test_figures_out_of_range_in_the_newest_lines_are_set_aside(tmp_path):
    text = MAMBA.replace("capped to 12", "capped to 1" + "0" * 30).replace("5 state slots", "inf state slots")
    text = text.replace("Reserving", "x") + (
        "[2026-07-03 08:01:12 TP0] Reserving nan GB of the KV budget for post-sizing multimodal allocations "
        "(feature-transport pools + embedding cache).\n"
        "[2026-07-03 08:01:12 TP0] DSV4 pool sizes: full=-1, swa=1e400, c4=0, c128=0, c4_state=0, c128_state=0\n"
        "[2026-07-03 08:01:12 TP0] Post-capture KV sizing: max_total_num_tokens=1e30, free memory=inf GB\n"
    )
    res = parsed(tmp_path, text)
    (launch,) = res.launches
    assert any("out of range" in w or "not finite" in w for w in launch.warnings)
    exp = explain_launch(launch)  # every surface still renders: nothing read as a number that is none
    assert exp.budget.kv_tokens == 1283522
    assert not any(r.kind == "mamba_slots" for r in exp.advice.recommendations)
