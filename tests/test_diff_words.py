"""``diff`` as an operator reads it: each sentence once, ``history``'s value style, figures equal
within the log's rounding shown as equal, and two engines compared by how each sizes its pool."""

from __future__ import annotations

import re

from helpers import SAMPLES, cli

from logparse.pipeline import parse_paths
from logparse.reports.diff import diff_launches

KIMI = SAMPLES / "kimi-k25"
RESTARTS = SAMPLES / "sglang-0.5" / "restarts-0.5.12.log"
VLLM_020 = SAMPLES / "vllm" / "v1-defaults-0.20.2.log"
VLLM_066 = SAMPLES / "vllm" / "v0-llama-tp2-0.6.6.post1.log"

#: Kimi-K2.5's MLA cache: (kv_lora_rank 512 + qk_rope_head_dim 64) x 61 layers x 2 bytes (bf16).
KIMI_BYTES_PER_TOKEN = (512 + 64) * 61 * 2


def _one(path, n: int = 0):
    return parse_paths([path]).launches[n]


def _kimi():
    return diff_launches(_one(KIMI / "launch-1-baseline.log"), _one(KIMI / "launch-2-hicache.log")).to_dict()


def _text_of_diff(*paths) -> str:
    code, out, err = cli("diff", *paths)
    assert code == 0, (out, err)
    return out


def test_each_sentence_once_and_history_s_value_style():
    out = _text_of_diff(KIMI / "launch-1-baseline.log", KIMI / "launch-2-hicache.log")
    flat = re.sub(r"\s+", " ", out)
    assert flat.count("hicache_write_policy") == 1, out  # the settings HiCache brings: said once
    assert flat.count("HiCache host pool") == 1, out
    assert "enable_hierarchical_cache: false -> true" in flat
    assert "False" not in out and "True" not in out and "→" not in out, out
    assert "'" not in flat.split("server arguments")[0]  # values as JSON (history's), not Python reprs
    summary = _kimi()["summary"]
    assert len(summary) == len(set(summary))


def test_the_same_pool_is_equal_within_the_log_s_rounding():
    rep = _kimi()
    bpt = rep["budget"]["bytes_per_token"]
    assert bpt["a"] != bpt["b"]  # each launch's own estimate differs (the printed GiB are rounded)...
    assert bpt["within_rounding"] and bpt["delta"] is None
    lo, hi = bpt["equal_within"]  # ...but the intervals overlap, and hold the model's true figure
    assert lo <= KIMI_BYTES_PER_TOKEN <= hi and hi - lo < 20
    out = _text_of_diff(KIMI / "launch-1-baseline.log", KIMI / "launch-2-hicache.log")
    row = next(line for line in out.splitlines() if line.startswith("bytes per token"))
    cells = [c.strip() for c in row.split("│")]
    assert cells[1] == cells[2] == f"{lo:,}–{hi:,}" and cells[3] == "equal within the log's rounding"
    assert "70,244" not in out and "70,274" not in out


def test_a_real_change_of_bytes_per_token_is_not_rounding():
    rep = diff_launches(_one(RESTARTS, 1), _one(RESTARTS, 2)).to_dict()  # kv_cache_dtype auto -> fp8_e4m3
    bpt = rep["budget"]["bytes_per_token"]
    assert not bpt.get("within_rounding") and bpt["delta"] < -90_000
    assert 'kv_cache_dtype: "auto" -> "fp8_e4m3"' in " ".join(rep["summary"])


def test_two_engines_are_compared_by_their_sizing_not_their_argument_names():
    rep = diff_launches(_one(VLLM_020), _one(RESTARTS)).to_dict()
    text = " ".join(rep["summary"])
    assert "ServerArgs" not in text and "fields from the" not in text
    assert text.startswith("two engines: A is vLLM 0.20.2, B is SGLang 0.5.12")
    assert "gpu_memory_utilization 0.92 (the default of vLLM 0.20.2) of the total GPU memory" in text
    assert "mem_fraction_static 0.8 (set" in text and "free GPU memory before the weights (78.62 GiB)" in text
    assert "KV pool per GPU: 52.14 GiB (vLLM) and 35.38 GiB (SGLang), -16.76 GiB" in text
    assert "token counts are not comparable" in text  # vLLM 0.20.1+ counts requests x max_model_len
    eng = rep["engines"]
    assert eng["a"]["formula"].startswith("KV = u·T") and "M_pre*(1-f)" in eng["b"]["formula"]
    assert eng["b"]["derivation"][0] == "rest = M_post 51.11 − M_pre 78.62 × (1 − 0.8) = 51.11 − 15.72 = 35.39 GiB"
    assert rep["budget"]["kv_tokens"]["delta"] is None and rep["budget"]["kv_tokens"]["not_comparable"]
    assert rep["attribution"]["notes"] == []
    out = _text_of_diff(VLLM_020, RESTARTS)
    assert "how each engine sizes its KV pool" in out and "server arguments" not in out


def test_two_engines_counting_slots_compare_their_tokens():
    rep = diff_launches(_one(VLLM_066), _one(RESTARTS)).to_dict()  # vLLM 0.6.6: blocks x block size
    assert "not comparable" not in " ".join(rep["summary"])
    assert rep["budget"]["kv_tokens"]["delta"] == 193_257 - 1_012_352
    assert "tensor parallel size 2 and 1" in " ".join(rep["summary"])
    assert "gpu_memory_utilization 0.9 (the default of vLLM 0.6.6.post1) of the total GPU memory (79.19 GiB)" in (
        " ".join(rep["summary"])
    )
