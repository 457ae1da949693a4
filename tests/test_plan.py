"""``logparse plan``: --from reproduces every logged pool, both engines side by side, targets, bounds,
the GPU table and history, bad input; and the README's accuracy table is what the script computes."""

from __future__ import annotations

import json
import sys

import pytest
from helpers import CORPUS, ROOT, SAMPLES, cli, without_corpus

from logparse.budget import gpus
from logparse.budget.model import launch_budget
from logparse.budget.model_config import load_model_config
from logparse.pipeline import parse_paths
from logparse.reports.plan import PlanError, make_plan
from logparse.reports.plan_types import PlanFlags
from logparse.store import Store

sys.path.insert(0, str(ROOT / "tools"))
import plan_accuracy

MODELS = SAMPLES / "models"
KIMI = MODELS / "Kimi-K2.5-INT4"
LLAMA8 = MODELS / "Meta-Llama-3.1-8B-Instruct"
JSON_KEYS = {
    "engine",
    "release",
    "kv_tokens",
    "kv_tokens_range",
    "kv_pool_gb",
    "headroom_gb",
    "bytes_per_token",
    "default_fraction",
    "assumptions",
}


def plan(model, **flags):
    return make_plan(load_model_config(model), PlanFlags(**flags), db="/nonexistent/store.duckdb").plans


def _launch(rel: str, n: int = -1):
    return parse_paths([str(SAMPLES / rel)]).launches[n]


# --------------------------------------------------------------------------- --from reproduces every launch
def _logged_cases():
    return [c for c in plan_accuracy.cases() if launch_budget(c.launch).kv_tokens is not None]


@pytest.mark.parametrize("case", _logged_cases(), ids=lambda c: c.name)
def test_plan_from_reproduces_the_logged_kv_tokens(case):
    logged = launch_budget(case.launch).kv_tokens
    p = make_plan(case.config, PlanFlags(engine=case.launch.engine or "sglang"), case.launch, db="/nonexistent").plans[
        0
    ]
    assert p.kv_tokens == logged
    lo, hi = p.kv_tokens_range
    assert lo <= logged <= hi
    assert p.calibrated_from == case.launch.launch_id and p.logged_kv_tokens == logged


def test_plan_from_a_file_on_the_command_line():
    log = SAMPLES / "kimi-k25/launch-1-baseline.log"
    doc = json.loads(cli("plan", KIMI, "--from", log, "--json").out)
    assert doc["kv_tokens"] == 159_277 and doc["headroom_gb"] == 7.43 and set(doc) >= JSON_KEYS
    assert doc["calibrated_from"] and any("calibrated on launch" in a for a in doc["assumptions"])


def test_plan_from_a_store_reference(tmp_path):
    db = tmp_path / "h.duckdb"
    Store(db).ingest_paths([SAMPLES / "sglang-0.5/restarts-0.5.12.log"], progress=False)
    doc = json.loads(cli("plan", MODELS / "Qwen2.5-14B-Instruct", "--from", "@latest", "--json", db=db).out)
    assert doc["kv_tokens"] == 455_243


def test_from_models_only_what_the_flags_change():
    first = _launch("sglang-0.5/restarts-0.5.12.log", 0)
    cfg = load_model_config(MODELS / "Qwen2.5-14B-Instruct")
    for flags, want in (
        ({"mem_fraction_static": 0.88}, 227_564),
        ({"mem_fraction_static": 0.88, "kv_cache_dtype": "fp8_e4m3"}, 455_243),
    ):
        got = make_plan(cfg, PlanFlags(**flags), first).plans[0]
        assert abs(got.kv_tokens - want) / want < 0.001, (flags, got.kv_tokens)
    more = make_plan(cfg, PlanFlags(gpu="H200"), first).plans[0]
    assert more.kv_tokens > 193_257 * 2 and any("fits A100 80GB" in n or "fits H100 80GB" in n for n in more.notes)


def test_vllm_from_moves_the_pool_by_the_utilization():
    la = _launch("vllm/v1-tags-in-format-0.31.0.log")
    cfg = load_model_config(MODELS / "chat-70b-fp8")
    base = make_plan(cfg, PlanFlags(engine="vllm"), la).plans[0]
    up = make_plan(cfg, PlanFlags(engine="vllm", gpu_memory_utilization=0.92), la).plans[0]
    assert up.kv_pool_gb == pytest.approx(base.kv_pool_gb + 0.02 * 139.8, abs=0.01)
    assert up.kv_tokens > base.kv_tokens


# --------------------------------------------------------------------------- engines side by side
@pytest.mark.parametrize("gpu", ["H20", "H200", "B200"])
def test_both_engines_on_the_kimi_model(gpu):
    res = cli("plan", KIMI, "--gpu", gpu, "--tp", "8", "--engine", "both", "--json")
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    assert [d["engine"] for d in doc] == ["sglang", "vllm"]
    for d in doc:
        assert set(d) >= JSON_KEYS and d["kv_tokens"] > 0 and d["bytes_per_token"] == 70_272
        assert d["differs_because"] and any("vLLM charges" in x for x in d["differs_because"])
    text = cli("plan", KIMI, "--gpu", gpu, "--tp", "8", "--engine", "both").out
    assert "Why they differ" in text and "SGLang" in text and "vLLM" in text


def test_default_fraction_comes_from_the_engine_s_reserve():
    s, v = plan(LLAMA8, gpu="H100", engine="both")
    assert 0.8 < s.default_fraction < 0.9 and s.fraction == s.default_fraction and "reserve" in s.fraction_source
    assert v.default_fraction == 0.92


# --------------------------------------------------------------------------- targets
def test_target_reached_by_a_fraction_within_the_reserve():
    base = plan(LLAMA8, gpu="H100", mem_fraction_static=0.75)[0]
    p = plan(LLAMA8, gpu="H100", mem_fraction_static=0.75, target_tokens=base.kv_tokens + 20_000)[0]
    first = p.targets[0]
    assert first["reaches"] and "mem_fraction_static" in first["flags"]
    assert first["flags"]["mem_fraction_static"] <= p.fraction_keeping_reserve


def test_target_needing_fp8_and_one_that_cannot_be_reached():
    p = plan(LLAMA8, gpu="H100", target_tokens=700_000)[0]
    reaching = [o for o in p.targets if o["reaches"]]
    assert reaching and "fp8" in reaching[0]["action"] and "accuracy" in reaching[0]["risk"]
    doc = make_plan(
        load_model_config(LLAMA8), PlanFlags(gpu="H100", target_tokens=50_000_000), db="/nonexistent"
    ).to_dict()
    assert doc["target"]["reached"] is False and doc["target"]["verdict"].startswith("cannot be reached")


def test_target_context_with_concurrency():
    res = cli("plan", LLAMA8, "--gpu", "H100", "--target-context", "131072", "--concurrency", "8", "--json")
    doc = json.loads(res.out)
    assert doc["target"]["need_kv_tokens"] == 131072 * 8
    assert any(o["reaches"] for o in doc["targets"])
    assert any(o["action"].startswith("--context-length") for o in doc["targets"])


def test_a_fraction_beyond_the_engine_s_reserve_is_never_offered():
    p = plan(KIMI, gpu="H20", tp=8, target_tokens=400_000)[0]
    for o in p.targets:
        f = o["flags"].get("mem_fraction_static")
        assert f is None or f <= p.fraction_keeping_reserve


# --------------------------------------------------------------------------- bounds
@pytest.mark.parametrize("f", [0.05, 0.3, 0.6, 0.83, 0.95, 0.999])
def test_no_negative_tokens_at_any_fraction(f):
    for engine, key in (("sglang", "mem_fraction_static"), ("vllm", "gpu_memory_utilization")):
        p = plan(MODELS / "Llama-3.3-70B-Instruct", gpu="H100", tp=2, engine=engine, **{key: f})[0]
        assert p.kv_tokens >= 0 and p.kv_tokens_range[0] >= 0
        assert p.kv_tokens_range[0] <= p.kv_tokens <= p.kv_tokens_range[1]
        if p.kv_tokens == 0:
            assert p.not_possible


def test_a_model_that_does_not_fit_says_why():
    s, v = plan(MODELS / "Llama-3.3-70B-Instruct", gpu_memory_gb=40, engine="both")
    assert s.kv_tokens == 0 and "not enough memory" in s.not_possible
    assert v.kv_tokens == 0 and v.not_possible


@pytest.mark.parametrize(
    ("args", "want"),
    [
        (["--gpu", "H100", "--mem-fraction-static", "1.2"], "inside (0, 1)"),
        (["--gpu", "H100", "--gpu-memory-utilization", "0"], "inside (0, 1)"),
        (["--gpu", "TPU9000"], "unknown GPU"),
        (["--tp", "2"], "give --gpu NAME or --gpu-memory GIB"),
        (["--gpu", "H100", "--release", "9.9.9"], "newer than every SGLang release"),
        (["--gpu", "H100", "--release", "0.5.1rc1"], "not an SGLang release"),
        (["--gpu", "H100", "--engine", "vllm", "--release", "9.9.9"], "newer than every vLLM release"),
        (["--gpu", "H100", "--engine", "vllm", "--release", "0.5.23"], "not a vLLM release"),
        (["--gpu", "H100", "--engine", "trt"], "sglang, vllm or both"),
        (["--gpu", "H100", "--target-tokens", "5", "--target-context", "5"], "not both"),
        (["--gpu", "H100", "--tp", "0"], "positive"),
        (["--gpu", "H100", "--kv-cache-dtype", "int3"], "invalid choice: 'int3'"),
        (["--gpu", "H100", "--gpu-memory", "80"], "not both"),
        (["--gpu", "H100", "--concurrency", "4"], "goes with --target-context"),
    ],
)
def test_bad_flags_give_one_line(args, want):
    res = cli("plan", LLAMA8, *args)
    assert res.code == 2 and want in res.err and res.err.count("\n") == 1, res.err


def test_bad_config_file_gives_one_line(tmp_path):
    p = tmp_path / "config.json"
    p.write_text('{"hidden_size": 1')
    res = cli("plan", p, "--gpu", "H100")
    assert res.code == 2 and "not valid JSON" in res.err and res.err.count("\n") == 1


# --------------------------------------------------------------------------- GPU table and history
def test_gpu_table_names_and_free_memory():
    assert gpus.find_gpu("h100").name == "H100 80GB" and gpus.find_gpu("NVIDIA H200").name == "H200"
    assert gpus.free_before_weights(79.19, 1) < 79.19
    assert gpus.free_before_weights(79.19, 8) < gpus.free_before_weights(79.19, 1)
    p = plan(LLAMA8, gpu="B200")[0]
    assert p.gpu == "B200" and any("as the driver reports it" in a for a in p.assumptions)


def test_history_replaces_the_table_s_free_memory(tmp_path):
    db = tmp_path / "h.duckdb"
    Store(db).ingest_paths([SAMPLES / "kimi-k25"], progress=False)
    doc = json.loads(cli("plan", KIMI, "--tp", "8", "--mem-fraction-static", "0.88", "--json", db=db).out)
    assert doc["free_before_weights_gb"] == 94.04
    assert any("stored launch" in a for a in doc["assumptions"])


# --------------------------------------------------------------------------- the documented figures
def test_readme_accuracy_table_is_what_the_script_computes():
    text = (ROOT / "docs" / "plan-accuracy.md").read_text(encoding="utf-8")
    i = text.index(plan_accuracy.BEGIN) + len(plan_accuracy.BEGIN)
    j = text.index(plan_accuracy.END)
    documented = text[i:j].strip()
    if not CORPUS.is_dir():  # the rows of the samples, which the script computes without the corpus
        documented = "\n".join(ln for ln in documented.splitlines() if "`corpus/" not in ln)
    assert documented == plan_accuracy.markdown().strip(), "run: python tools/plan_accuracy.py --write"
    without_corpus("compare the corpus rows of docs/plan-accuracy.md with what the script computes")


def test_plan_error_is_a_value_error():
    with pytest.raises(PlanError):
        plan(LLAMA8)
