"""``logparse plan`` calibrated and honest (issue 27, item 4): vLLM's profile run per release and GPU,
``--from`` reading engine, release, TP and the GPU's memory from the log (and saying so), quantized
checkpoints by their real weight bytes or a clear "weights unknown", missing config fields named; and
the public launches' table in docs/plan-accuracy.md is what tools/plan_accuracy.py computes.

Every log here is written by us, in the real formats, with our own numbers.
"""

from __future__ import annotations

import json
import os
import sys

import pytest
from helpers import ROOT, SAMPLES, cli

from logparse.budget import model_kv as mk
from logparse.budget.model_config import gguf_type, load_model_config
from logparse.engines.vllm.plan import profile_shape, vsettings
from logparse.pipeline import parse_paths
from logparse.reports.plan import PlanError, make_plan
from logparse.reports.plan_memory import table_memory
from logparse.reports.plan_types import PlanFlags

sys.path.insert(0, str(ROOT / "tools"))
import plan_accuracy

MODELS = SAMPLES / "models"
LLAMA8 = MODELS / "Meta-Llama-3.1-8B-Instruct"
V1_SAMPLE = SAMPLES / "vllm" / "v1-defaults-0.20.2.log"
NO_DB = "/nonexistent/store.duckdb"


def _plan(model, launch=None, **flags):
    return make_plan(load_model_config(model), PlanFlags(**flags), launch, db=NO_DB).plans[0]


# --------------------------------------------------------------------------- vLLM's profile run
@pytest.mark.parametrize(
    ("release", "gpu", "ctx", "generation", "shape"),
    [
        ("0.10.1", "A100 40GB", None, None, (2048, 256, "V1")),
        ("0.10.1", "A100 80GB", None, None, (2048, 256, "V1")),  # an A100 keeps the small defaults
        ("0.10.1", "H100", None, None, (8192, 1024, "V1")),
        ("0.8.2", "H100", None, None, (8192, 256, "V1")),  # 1,024 sequences from 0.9.0
        ("0.6.3", "T4", 2048, None, (2048, 256, "V0")),  # V0 without chunked prefill: max_model_len
        ("0.6.3", "A10G", 20000, None, (20000, 256, "V0")),
        ("0.6.3", "A10G", 1024, None, (2048, 256, "V0")),  # at least 2,048
        ("0.6.3", "A10G", 131072, None, (512, 256, "V0")),  # chunked prefill above 32K
        ("0.9.2", "H100", 8192, "V0", (8192, 256, "V0")),  # V0 asked for after 0.8.0
    ],
)
def test_the_profile_run_is_vllms_default_for_the_release_and_gpu(release, gpu, ctx, generation, shape):
    cfg = load_model_config(LLAMA8)
    s = vsettings(cfg, PlanFlags(engine="vllm", release=release, context_length=ctx, vllm_generation=generation), None)
    mem = table_memory(gpu, None, 1) if gpu != "T4" else table_memory(None, 14.58, 1)
    p = profile_shape(s, mem)
    assert (p.tokens, p.seqs, p.generation) == shape and p.source


def test_v1_on_an_a100_40gb_charges_what_vllm_profiled():
    """Llama-3.1-8B on an A100 40GB, V1: 1.2–1.4 GiB of activation and non-torch logged (issue 27)."""
    p = _plan(LLAMA8, engine="vllm", gpu="A100 40GB", release="0.10.1")
    t = p.terms
    assert 1.1 <= t["activation_gb"] + t["non_torch_gb"] <= 1.4
    assert any("2,048 batched tokens" in a for a in p.assumptions)


def test_chunked_prefill_size_is_the_profiled_tokens():
    p = _plan(LLAMA8, engine="vllm", gpu="H100", release="0.10.1", chunked_prefill_size=4096)
    assert any("4,096 batched tokens" in a and "--chunked-prefill-size" in a for a in p.assumptions)


# --------------------------------------------------------------------------- --from reads the log
def test_from_a_vllm_log_with_no_flag_plans_that_launch():
    res = cli("plan", LLAMA8, "--from", V1_SAMPLE, "--format", "json")
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    assert doc["engine"] == "vllm" and doc["release"] == "0.20.2" and doc["kv_tokens"] == doc["logged_kv_tokens"]
    said = " | ".join(doc["assumptions"])
    assert "engine vLLM: read from launch" in said and "release vLLM 0.20.2: read from launch" in said
    assert "tp 1: read from the launch" in said


def test_without_engine_or_from_sglang_is_assumed_and_said():
    p = _plan(LLAMA8, engine=None, gpu="H100")
    assert p.engine == "sglang" and any("engine SGLang: assumed" in a for a in p.assumptions)


V1_UNDATED = """\
INFO 05-02 09:15:01 [cli_args.py:325] non-default args: {'model': '/models/llama-8b', 'tensor_parallel_size': 1}
(VllmWorker rank=0 pid=41) INFO 05-02 09:15:40 [gpu_worker.py:227] Available KV cache memory: 52.14 GiB
INFO 05-02 09:15:41 [kv_cache_utils.py:716] GPU KV cache size: 427,136 tokens
"""


def test_an_undated_log_is_planned_at_its_range_not_the_newest_release(tmp_path):
    path = tmp_path / "undated.log"
    path.write_text(V1_UNDATED)
    (launch,) = parse_paths([str(path)]).launches
    rng = launch.version_range
    assert launch.engine_version is None and rng and rng[0] != rng[1]
    p = _plan(LLAMA8, launch, engine=None)
    assert p.release == rng[1] and p.kv_tokens == 427136
    assert any(f"dates to {rng[0]}–{rng[1]}" in a for a in p.assumptions)


# --------------------------------------------------------------------------- quantized checkpoints
def _model_dir(tmp_path, **change):
    raw = json.loads((LLAMA8 / "config.json").read_text())
    for k, v in change.items():
        if v is None:
            raw.pop(k, None)
        else:
            raw[k] = v
    d = tmp_path / "model"
    d.mkdir(exist_ok=True)
    (d / "config.json").write_text(json.dumps(raw))
    return d


@pytest.mark.parametrize(
    ("name", "qt"),
    [
        ("Meta-Llama-3.1-8B-Instruct-Q8_0.gguf", "Q8_0"),
        ("llama-8b.Q4_K_M.gguf", "Q4_K_M"),
        ("x-f16.gguf", "F16"),
        ("x.gguf", None),
    ],
)
def test_gguf_type_from_the_file_name(name, qt):
    assert gguf_type(name) == qt


def test_a_gguf_q8_0_pointer_is_priced_by_its_type(tmp_path):
    d = _model_dir(tmp_path)
    (d / "Meta-Llama-3.1-8B-Instruct-Q8_0.gguf").write_text("version https://git-lfs.github.com/spec/v1\n")
    q8 = mk.weights_per_rank(load_model_config(d))
    bf16 = mk.weights_per_rank(load_model_config(LLAMA8))
    assert q8.known and 0.5 < q8.gb / bf16.gb < 0.56  # 8.5 bits of 16, norms aside
    p = _plan(d, engine="vllm", gpu="L4", release="0.6.3", context_length=8192)
    assert p.kv_tokens and not p.not_possible  # a bf16 pricing leaves no KV on an L4


def test_a_real_gguf_file_gives_its_bytes(tmp_path):
    d = _model_dir(tmp_path)
    f = d / "model-Q8_0.gguf"
    with open(f, "wb") as fh:
        fh.truncate(8_540_000_000)  # sparse: the size is what counts
    cfg = load_model_config(f)  # the .gguf file itself, beside its model's config.json
    w = mk.weights_per_rank(cfg)
    assert cfg.weights_total_bytes == 8_540_000_000 and "GGUF file" in w.source
    os.remove(f)


def test_unknown_quantization_is_weights_unknown(tmp_path):
    d = _model_dir(tmp_path, quantization_config={"quant_method": "hqq"})
    with pytest.raises(PlanError, match="weights unknown: hqq"):
        _plan(d, engine="vllm", gpu="H100")
    res = cli("plan", d, "--engine", "sglang", "--gpu", "H100")
    assert res.code == 2 and "weights unknown" in res.err


# --------------------------------------------------------------------------- missing config fields
def test_missing_fields_that_change_the_answer_are_named(tmp_path):
    d = _model_dir(tmp_path, vocab_size=None, max_position_embeddings=None)
    p = _plan(d, engine="vllm", gpu="H100", context_length=8192)
    notes = " | ".join(p.notes)
    assert "warning: vocab_size: not in the config" in notes and "max_position_embeddings" in notes
    res = cli("plan", d, "--engine", "vllm", "--gpu", "H100", "--context-length", "8192")
    assert res.code == 0 and "  warning: vocab_size" in res.out


def test_head_dim_is_named_only_for_families_whose_head_dim_is_their_own(tmp_path):
    llama = load_model_config(LLAMA8)  # no head_dim, as most Llama configs: hidden / heads is right
    assert not any("head_dim" in m for m in llama.missing)
    d = _model_dir(tmp_path, model_type="qwen3", head_dim=None)
    assert any(m.startswith("head_dim: not in the config of a qwen3 model") for m in load_model_config(d).missing)


# --------------------------------------------------------------------------- public launches
def test_the_public_launches_table_is_what_the_script_computes():
    text = (ROOT / "docs" / "plan-accuracy.md").read_text(encoding="utf-8")
    i = text.index(plan_accuracy.PUBLIC_BEGIN) + len(plan_accuracy.PUBLIC_BEGIN)
    j = text.index(plan_accuracy.PUBLIC_END)
    assert text[i:j].strip() == plan_accuracy.public_markdown().strip(), "run: python tools/plan_accuracy.py --write"


def test_public_launches_hold_figures_not_log_text():
    for e in plan_accuracy.public_launches():
        assert e["role"] in ("calibration", "held-out") and e["source"].startswith("https://")
        assert isinstance(e["logged_kv_tokens"], int) and all(
            not isinstance(v, str) for v in e.get("logged", {}).values()
        )


def test_every_public_launch_is_read_back_by_plan_from():
    rows = plan_accuracy.public_rows()
    assert all(r["from"] == r["logged"] for r in rows)
    assert all(abs(r["plan"] - r["logged"]) / r["logged"] <= 0.05 for r in rows if r["role"] == "calibration")


GGUF_LAUNCH = """\
INFO 03-02 11:20:01 api_server.py:585] vLLM API server version 0.6.3
INFO 03-02 11:20:01 api_server.py:586] args: Namespace(model='/models/llama-8b/Meta-Llama-3.1-8B-Instruct-Q8_0.gguf', max_model_len=8192, tensor_parallel_size=1, gpu_memory_utilization=0.9, block_size=16)
INFO 03-02 11:20:40 gpu_executor.py:122] # GPU blocks: 4810, # CPU blocks: 2048
"""


def test_a_launch_that_served_a_gguf_file_prices_its_config_as_that_type(tmp_path):
    path = tmp_path / "gguf.log"
    path.write_text(GGUF_LAUNCH)
    (launch,) = parse_paths([str(path)]).launches
    p = make_plan(load_model_config(LLAMA8), PlanFlags(engine=None, tp=2), launch, db=NO_DB).plans[0]
    assert p.engine == "vllm" and p.kv_tokens and p.kv_tokens > 0
    bf16 = mk.weights_per_rank(load_model_config(LLAMA8)).gb
    assert p.weights_gb is not None and 0.5 < p.weights_gb / bf16 < 0.56  # Q8_0, not bf16
    assert any("weights per rank 7.95 → 3.97 GiB" in a for a in p.assumptions)


def test_both_engines_from_a_vllm_log_use_the_gpu_total_it_prints():
    res = cli("plan", LLAMA8, "--from", V1_SAMPLE, "--engine", "both", "--format", "json")
    assert res.code == 0, res.err
    sglang, vllm = json.loads(res.out)
    assert vllm["kv_tokens"] == vllm["logged_kv_tokens"] and sglang["kv_tokens"] > 0
    assert any("by its log" in a for a in sglang["assumptions"])
