"""The engines' own refusals (issue 27, item 2): one module, data-driven, asked by plan and advice.

Each case is what the engine itself refuses at start (its reason and the gist of its message):
TP that does not divide the heads, a context above max_position_embeddings unless rope scaling allows
it, a KV dtype the release does not accept, KV below one max-length request (vLLM); and a GPU name
that stands for two sizes is asked, not guessed.  ``plan`` exits 2 with one ``logparse:`` line.
"""

from __future__ import annotations

import json

import pytest
from helpers import SAMPLES, cli

from logparse.budget import refusals as rf
from logparse.budget.model_config import load_model_config

QWEN72 = SAMPLES / "models" / "Qwen2-72B-Instruct" / "config.json"  # 64 heads, 8 KV heads, 32k positions
DEEPSEEK = SAMPLES / "models" / "DeepSeek-V3-0324" / "config.json"  # MLA, 128 heads


def test_tp_must_divide_the_heads_and_split_or_replicate_the_kv_heads():
    r = rf.tp_refusal("vllm", 3, 32, 8)
    assert r is not None and r.rule == "tp_heads" and "(32) must be divisible by tensor parallel size (3)" in r.message
    assert rf.tp_refusal("sglang", 16, 64, 8) is None  # 8 KV heads replicated twice
    assert rf.tp_refusal("sglang", 4, 64, 8) is None
    bad = rf.tp_refusal("vllm", 16, 48, 6)
    assert bad is not None and bad.rule in ("tp_heads", "tp_kv_heads")
    kv = rf.tp_refusal("vllm", 4, 64, 6)
    assert kv is not None and kv.rule == "tp_kv_heads"
    assert rf.tp_refusal("sglang", 8, 128, 128, mla=True) is None
    assert rf.tp_choices("vllm", 64, 8) == [1, 2, 4, 8]


def test_context_above_max_position_unless_rope_scaling_allows_it():
    r = rf.context_refusal("sglang", 1_000_000, 131_072)
    assert r is not None and "(1000000) is greater than the derived context_length (131072)" in r.message
    assert rf.context_refusal("vllm", 131_072, 32_768, {"rope_type": "yarn", "factor": 4.0,
                              "original_max_position_embeddings": 32_768}) is None  # fmt: skip
    assert rf.context_refusal("vllm", 131_073, 32_768, {"type": "yarn", "factor": 4.0}) is not None
    llama3 = {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}
    assert rf.derived_max_len(131_072, llama3) == 131_072  # the factor is already in the positions
    assert "max_model_len" in rf.context_refusal("vllm", 200_000, 131_072, llama3).message


def test_kv_dtypes_per_release():
    assert rf.kv_dtype_refusal("sglang", "int8") is not None and rf.kv_dtype_refusal("vllm", "int8") is not None
    assert rf.kv_dtype_refusal("sglang", "fp8_e4m3", "0.4.0") is not None  # 0.4.1.post6+
    assert rf.kv_dtype_refusal("sglang", "fp8_e4m3", "0.5.10") is None
    assert rf.kv_dtype_refusal("sglang", "fp8", "0.5.10") is not None  # SGLang has no bare 'fp8'
    assert rf.kv_dtype_refusal("vllm", "fp8", "0.6.6") is None and rf.kv_dtype_refusal("vllm", None) is None
    assert "invalid choice: 'int8'" in rf.kv_dtype_refusal("vllm", "int8", "0.9.2").message


def test_kv_below_one_request_is_vllm_s_refusal_only():
    r = rf.kv_fit_refusal("vllm", 2_176, 32_768, 163_840)
    assert r is not None and r.rule == "kv_below_one_request" and "32768" in r.message and "5.00 GiB" in r.message
    assert rf.kv_fit_refusal("vllm", 0, 4096).rule == "no_kv_memory"
    assert rf.kv_fit_refusal("sglang", 2_176, 32_768) is None  # SGLang caps requests at the pool
    assert rf.kv_fit_refusal("vllm", 40_000, 32_768) is None


def test_ambiguous_gpu_names_are_asked():
    r = rf.gpu_refusal("A100")
    assert r is not None and "A100 40GB or A100 80GB" in r.message
    assert rf.gpu_refusal("nvidia a100-sxm4") is not None
    assert rf.gpu_refusal("A100 80GB") is None and rf.gpu_refusal("H100") is None


def test_config_refusals_read_the_config():
    cfg = load_model_config(QWEN72)
    assert [r.rule for r in rf.config_refusals("vllm", cfg, tp=3, context=10**6, kv_dtype="int8")] == [
        "tp_heads", "context_above_max_position", "kv_dtype",
    ]  # fmt: skip
    assert rf.config_refusals("sglang", cfg, tp=8, context=32_768) == []
    assert rf.config_refusals("sglang", load_model_config(DEEPSEEK), tp=8) == []


@pytest.mark.parametrize(
    "args, words",
    [
        (["--tp", "3"], "must be divisible by tensor parallel size (3)"),
        (["--kv-cache-dtype", "int8"], "invalid choice: 'int8'"),
        (["--context-length", "1000000"], "greater than the derived context_length (32768)"),
        (["--engine", "vllm", "--context-length", "1000000"], "greater than the derived max_model_len (32768)"),
    ],
)
def test_plan_refuses_what_the_engine_refuses_with_exit_2(args, words):
    code, _, err = cli("plan", QWEN72, "--gpu", "H100", *args)
    assert code == 2 and words in err and err.startswith("logparse: ") and len(err.strip().splitlines()) == 1


def test_plan_asks_which_a100():
    code, _, err = cli("plan", QWEN72, "--gpu", "A100", "--tp", "4")
    assert code == 2 and "A100 40GB or A100 80GB" in err


def test_plan_says_vllm_refuses_a_pool_below_one_request():
    # (at vLLM's default 0.9 the weights and the profiled activations leave no pool at all)
    code, out, _ = cli("plan", QWEN72, "--gpu", "H100", "--tp", "2", "--engine", "vllm", "--context-length", "32768",
                       "--gpu-memory-utilization", "0.95", "--format", "json")  # fmt: skip
    doc = json.loads(out)
    assert code == 0 and doc["kv_tokens"] < 32_768
    assert "vllm refuses this" in doc["not_possible"] and "max seq len (32768)" in doc["not_possible"]


def test_advice_never_recommends_a_utilization_vllm_would_refuse():
    from logparse.pipeline import parse_paths
    from logparse.reports.explain import explain_launch

    la = parse_paths([str(SAMPLES / "vllm" / "v0-llama-tp2-0.6.6.post1.log")]).launches[-1]
    doc = explain_launch(la, margin_gb=68.1).to_dict()  # a pool below one request of max_model_len 8192
    util = next(r for r in doc["recommendations"] if r["kind"] == "utilization")
    assert not util["possible"] and "vllm refuses this" in util["reason"] and "(8192)" in util["reason"]


def test_weight_dtypes_and_quantization_per_release():
    assert rf.weights_refusal("vllm", "dtype", "int4") is not None and rf.weights_refusal("sglang", "dtype", "bf16x")
    assert rf.weights_refusal("sglang", "dtype", "bfloat16") is None
    assert rf.weights_refusal("sglang", "quantization", "fp8", "0.2.5") is not None  # not before 0.2.7
    assert rf.weights_refusal("sglang", "quantization", "fp8", "0.5.18") is None
    assert rf.weights_refusal("vllm", "quantization", "some-new-method") is None  # not ours to refuse
