"""A model's own bytes per token (``logparse/budget/model_config.py``, ``model_kv.py``) and
``explain --model-config``: against every sample and corpus launch whose config exists."""

from __future__ import annotations

import copy
import json
import sys

import pytest
from helpers import ROOT, SAMPLES, cli, without_corpus

from logparse.budget import model_kv as mk
from logparse.budget.config_check import check_launch
from logparse.budget.model import launch_budget
from logparse.budget.model_config import ModelConfigError, load_model_config
from logparse.engines.sglang import kv as sgkv
from logparse.engines.vllm import kv as vkv
from logparse.pipeline import parse_paths

sys.path.insert(0, str(ROOT / "tools"))
import plan_accuracy

MODELS = SAMPLES / "models"


def cfg(name: str):
    return load_model_config(MODELS / name)


def write_cfg(tmp_path, name: str, doc: dict) -> str:
    d = tmp_path / name
    d.mkdir()
    (d / "config.json").write_text(json.dumps(doc))
    return str(d)


LLAMA = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
    "torch_dtype": "bfloat16",
}  # fmt: skip


# --------------------------------------------------------------------------- bytes per token
@pytest.mark.parametrize(
    ("model", "tp", "want"),
    [
        ("Kimi-K2.5-INT4", 8, 576 * 61 * 2),  # MLA: one latent per layer, every rank
        ("Kimi-K2.5-INT4", 1, 576 * 61 * 2),  # ... whatever the TP
        ("DeepSeek-V3-0324", 8, 70_272),
        ("DeepSeek-V2-Lite-Chat", 4, 576 * 27 * 2),
        ("Meta-Llama-3.1-8B-Instruct", 1, 8 * 256 * 32 * 2),
        ("Qwen2-72B-Instruct", 4, 2 * 256 * 80 * 2),  # 8 KV heads over 4 ranks
        ("Llama-2-13b-chat-hf", 2, 20 * 256 * 40 * 2),
        ("Qwen3-32B", 2, 4 * 256 * 64 * 2),
        ("Mixtral-8x7B-Instruct-v0.1", 2, 4 * 256 * 32 * 2),
        ("Kimi-K2.5-Eagle3", 8, 1 * 256 * 1 * 2),  # 8 KV heads on 8 ranks: one each
    ],
)
def test_sglang_cell_of_the_sample_models(model, tp, want):
    assert sgkv.sglang_cell(cfg(model), sgkv.SglangShape(tp=tp)).value == want


def test_kv_heads_are_replicated_when_fewer_than_ranks():
    c = cfg("Meta-Llama-3.1-8B-Instruct")
    cell = sgkv.sglang_cell(c, sgkv.SglangShape(tp=16))
    assert cell.value == 1 * 256 * 32 * 2  # 8 heads on 16 ranks: one copy on each, not half a head
    assert any("copy" in n for n in cell.notes)
    assert vkv.vllm_cell(c, vkv.VllmShape(tp=16)).value == 2 * 1 * 128 * 32 * 2


def test_dp_attention_splits_kv_heads_over_attention_tp_only():
    c = cfg("Qwen3-32B")
    plain = sgkv.sglang_cell(c, sgkv.SglangShape(tp=8)).value
    dpa = sgkv.sglang_cell(c, sgkv.SglangShape(tp=8, dp=4, dp_attention=True)).value  # attn_tp 2
    assert dpa == plain * 4


@pytest.mark.parametrize(
    ("dtype", "factor"), [("fp8_e4m3", 0.5), ("fp8_e5m2", 0.5), ("bf16", 1.0), ("auto", 1.0), ("float32", 2.0)]
)
def test_kv_dtypes(dtype, factor):
    c = cfg("Meta-Llama-3.1-8B-Instruct")
    base = sgkv.sglang_cell(c, sgkv.SglangShape()).value
    assert sgkv.sglang_cell(c, sgkv.SglangShape(kv_dtype=dtype)).value == base * factor


def test_fp4_is_half_plus_scales_and_unknown_dtypes_are_refused():
    c = cfg("Meta-Llama-3.1-8B-Instruct")
    base = sgkv.sglang_cell(c, sgkv.SglangShape(kv_dtype="fp8_e4m3")).value
    fp4 = sgkv.sglang_cell(c, sgkv.SglangShape(kv_dtype="fp4_e2m1")).value
    assert base // 2 < fp4 < base
    with pytest.raises(mk.KvDtypeError):
        sgkv.sglang_cell(c, sgkv.SglangShape(kv_dtype="int3"))


def test_nested_text_config_and_vision_tower():
    k = cfg("Kimi-K2.5-INT4")
    assert k.multimodal and k.mla is not None and k.layers == 61 and k.vision_params > 0
    assert k.architecture == "KimiK25ForConditionalGeneration" and k.moe is not None and k.moe.experts == 384


def test_thinker_config_is_read(tmp_path):
    doc = {"architectures": ["Qwen2_5OmniModel"], "thinker_config": {"text_config": dict(LLAMA, num_hidden_layers=28)}}
    c = load_model_config(write_cfg(tmp_path, "omni", doc))
    assert c.layers == 28 and c.multimodal


def test_hybrid_swa_pool_as_sglang_sizes_it(tmp_path):
    types = ["sliding_attention", "full_attention"] * 12
    doc = dict(LLAMA, architectures=["GptOssForCausalLM"], model_type="gpt_oss", num_hidden_layers=24, head_dim=64,
               num_key_value_heads=8, sliding_window=128, layer_types=types)  # fmt: skip
    c = load_model_config(write_cfg(tmp_path, "oss", doc))
    assert c.count("swa") == 12 and c.count("full") == 12
    cell = sgkv.sglang_cell(c, sgkv.SglangShape(release="0.5.23"))
    per = 8 * 128 * 2
    assert cell.value == int(per * 12 + 0.8 * per * 12)
    # a release before SGLang's hybrid pool: every layer in the full pool
    assert sgkv.sglang_cell(c, sgkv.SglangShape(release="0.4.9")).value == per * 24


def test_gemma3_pattern_full_pool_in_sglang_groups_in_vllm(tmp_path):
    doc = dict(LLAMA, architectures=["Gemma3ForCausalLM"], model_type="gemma3_text", num_hidden_layers=62,
               num_key_value_heads=16, head_dim=128, sliding_window=1024, sliding_window_pattern=6)  # fmt: skip
    c = load_model_config(write_cfg(tmp_path, "gemma3", doc))
    assert c.count("full") == 10 and c.count("swa") == 52
    assert sgkv.sglang_cell(c, sgkv.SglangShape()).value == 16 * 256 * 62 * 2  # not a hybrid pool in SGLang
    v = vkv.vllm_cell(c, vkv.VllmShape())
    assert (v.group_layers, v.groups, v.swa_groups) == (10, 7, 6)  # 52 windowed layers in 6 groups of 10
    assert v.value == 2 * 16 * 128 * 2 * 10 * 7


def test_mamba_hybrid_only_full_attention_layers_hold_kv(tmp_path):
    doc = dict(LLAMA, architectures=["Qwen3NextForCausalLM"], model_type="qwen3_next", num_hidden_layers=48,
               num_key_value_heads=2, head_dim=256, full_attention_interval=4, linear_num_key_heads=16,
               linear_key_head_dim=128, linear_num_value_heads=32, linear_value_head_dim=128, linear_conv_kernel_dim=4)  # fmt: skip
    c = load_model_config(write_cfg(tmp_path, "next", doc))
    assert c.count("full") == 12 and c.count("linear") == 36
    cell = sgkv.sglang_cell(c, sgkv.SglangShape())
    assert cell.value == 2 * 512 * 12 * 2 and any("no KV" in n for n in cell.notes)
    state = mk.mamba_state_bytes(c, tp=1)
    assert state == 36 * (3 * (2 * 16 * 128 + 32 * 128) * 2 + 32 * 128 * 128 * 4)
    assert mk.mamba_state_bytes(c, tp=2) < state


def test_nemotron_h_pattern(tmp_path):
    pattern = "M-M-M*-M-M*-"
    doc = dict(LLAMA, model_type="nemotron_h", num_hidden_layers=len(pattern), hybrid_override_pattern=pattern,
               mamba_num_heads=64, mamba_head_dim=64, ssm_state_size=128, n_groups=8)  # fmt: skip
    c = load_model_config(write_cfg(tmp_path, "nem", doc))
    assert (c.count("full"), c.count("linear")) == (2, 5)
    assert sgkv.sglang_cell(c, sgkv.SglangShape()).value == 8 * 256 * 2 * 2


def test_draft_inside_the_budget_by_layer_ratio():
    assert sgkv.sglang_draft_scaled(70_272, 61, 1) == int(70_272 * (1 + 1 / 61))
    assert sgkv.sglang_draft_scaled(70_272, 61, 0) == 70_272


# --------------------------------------------------------------------------- weights
@pytest.mark.parametrize(
    ("model", "tp", "logged"),
    [  # the samples' own 'Load weight end' mem usage (GiB per rank)
        ("Meta-Llama-3.1-8B-Instruct", 1, 14.99),
        ("Qwen2.5-14B-Instruct", 1, 27.51),
        ("Qwen3-32B", 2, 30.62),
        ("Mixtral-8x7B-Instruct-v0.1", 2, 43.54),
        ("Llama-3.3-70B-Instruct", 2, 65.76),  # from the safetensors index
        ("DeepSeek-V3-0324", 8, 80.94),  # index, less the MTP layer; fp8
        ("Kimi-K2.5-INT4", 8, 72.33),  # parameters × int4 groups, attention and shared experts in bf16
    ],
)
def test_weights_per_rank_within_their_stated_range(model, tp, logged):
    w = mk.weights_per_rank(cfg(model), tp)
    assert abs(w.gb - logged) / logged < 0.02, (w.gb, w.source)
    assert ("safetensors index" in w.source) == (model in ("Llama-3.3-70B-Instruct", "DeepSeek-V3-0324"))


def test_quantized_weights_are_smaller_and_ignored_modules_stay_16_bit():
    k = cfg("Kimi-K2.5-INT4")
    q = k.quantization
    assert q is not None and q.bytes_per_weight == pytest.approx(0.5 + 2 / 32)
    full = mk.weights_per_rank(k.__class__(**{**k.__dict__, "quantization": None}), 8).gb
    assert mk.weights_per_rank(k, 8).gb < full / 3


# --------------------------------------------------------------------------- bad files
@pytest.mark.parametrize(
    ("content", "want"),
    [
        ("{not json", "not valid JSON (line 1"),
        ("[1, 2]", "not a model config"),
        ('{"model_type": "llama"}', "no num_hidden_layers"),
        ('{"num_hidden_layers": 2, "hidden_size": 64}', "no num_attention_heads"),
    ],
)
def test_bad_config_files_give_one_clear_line(tmp_path, content, want):
    p = tmp_path / "config.json"
    p.write_text(content)
    with pytest.raises(ModelConfigError, match=r"config\.json: ") as exc:
        load_model_config(p)
    assert want in str(exc.value) and "\n" not in str(exc.value)
    res = cli("explain", SAMPLES / "sglang-0.5/llama-0.5.9-dataclass.log", "--model-config", p)
    assert res.code == 2 and res.err.count("\n") == 1 and want in res.err


def test_missing_paths_and_bad_index(tmp_path):
    with pytest.raises(ModelConfigError, match="no such file"):
        load_model_config(tmp_path / "nope.json")
    with pytest.raises(ModelConfigError, match=r"without config\.json"):
        load_model_config(tmp_path)
    d = write_cfg(tmp_path, "m", LLAMA)
    (tmp_path / "m" / "model.safetensors.index.json").write_text('{"weight_map": {}}')
    with pytest.raises(ModelConfigError, match="total_size"):
        load_model_config(d)
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ModelConfigError):
        load_model_config(tmp_path / "bin.json")


# --------------------------------------------------------------------------- against the logged pools
@pytest.fixture(scope="module")
def all_cases():
    return plan_accuracy.cases()


def test_every_sample_and_corpus_launch_agrees_with_its_config(all_cases):
    """Bytes per token from the config lie within the rounding of the logged pool, for every launch
    whose log prints one (failed starts before the pool have nothing to compare)."""
    compared = {"samples": 0, "corpus": 0}
    for case in all_cases:
        b = launch_budget(case.launch)
        check = check_launch(case.config, case.launch, b)
        if check.implied_hi is None:
            assert (check.consistent is None and b.kv_tokens is None) or b.kv_pool_gb is None, case.name
            continue
        compared[case.name.split("/", 1)[0]] += 1
        assert check.consistent, (case.name, check.verdict)
    assert compared["samples"] >= 17
    without_corpus("compare the corpus launches with their configs")
    assert sum(compared.values()) >= 30


def test_explain_says_consistent_in_the_issue_s_words():
    log = SAMPLES / "kimi-k25/launch-1-baseline.log"
    res = cli("explain", log, "--model-config", MODELS / "Kimi-K2.5-INT4")
    assert res.code == 0
    assert "config: 70,272 B/token per rank; the pool implies 70,244: consistent" in res.out
    doc = json.loads(cli("explain", log, "--model-config", MODELS / "Kimi-K2.5-INT4", "--json").out)
    assert doc["config_bytes_per_token"] == 70_272 and doc["config_consistent"] is True
    vllm = json.loads(
        cli(
            "explain",
            SAMPLES / "vllm/v1-tags-in-format-0.31.0.log",
            "--model-config",
            MODELS / "chat-70b-fp8",
            "--json",
        ).out
    )
    assert vllm["config_bytes_per_token"] == 4 * 256 * 64 and vllm["config_consistent"] is True


def _launch(rel: str, n: int = -1):
    return parse_paths([str(SAMPLES / rel)]).launches[n]


def test_a_mismatch_is_flagged_with_its_likely_cause():
    kimi = _launch("kimi-k25/launch-1-baseline.log")
    other = check_launch(cfg("Qwen3-32B"), kimi, launch_budget(kimi))
    assert other.consistent is False and "NOT consistent" in other.verdict
    # an fp8 launch explained as if its KV were 16-bit: half the bytes
    fp8 = copy.deepcopy(_launch("sglang-0.5/restarts-0.5.12.log", 2))
    fp8.kv_cache_dtype = "auto"
    for r in fp8.ranks:
        r.kv_dtype = None
    half = check_launch(cfg("Qwen2.5-14B-Instruct"), fp8, launch_budget(fp8))
    assert half.consistent is False and "KV dtype" in (half.cause or "")
    # another TP split of the KV heads
    qwen = copy.deepcopy(_launch("sglang-0.5/qwen-tp2-0.5.22-dict.log"))
    qwen.tp_size = 8
    assert "TP 2, not 8" in (check_launch(cfg("Qwen3-32B"), qwen, launch_budget(qwen)).cause or "")
    # another layer count: another model
    llama = _launch("sglang-0.5/llama-0.5.9-dataclass.log")
    layers = check_launch(cfg("Qwen2.5-14B-Instruct"), llama, launch_budget(llama))
    assert "32 layers, the config has 48" in (layers.cause or "")
