"""The levers operators pull (issue 27, item 3): each with its cost, risk and evidence.

DP attention for the Kimi sample's MLA latent (replicated on 8 ranks), priced from its config; a
failed start (crash-cuda-oom-0.5.18, 70B TP2 at f = 0.96) gets at least three ranked options that
start it; a TP the engine refuses is never offered; a cost never lists a gain; a run whose pool never
limited it gets no capacity cut unless the cut fixes a named risk; the draft's weights are set
against SGLang's speculative reserve.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from helpers import SAMPLES, cli

from logparse.budget.model import launch_budget
from logparse.budget.model_config import load_model_config
from logparse.pipeline import parse_paths
from logparse.reports.advice import advise
from logparse.reports.explain import explain_launch

KIMI = SAMPLES / "kimi-k25" / "launch-1-baseline.log"
KIMI_CFG = SAMPLES / "models" / "Kimi-K2.5-INT4" / "config.json"
CRASH = SAMPLES / "sglang-0.5" / "crash-cuda-oom-0.5.18.log"
LLAMA70 = SAMPLES / "models" / "Llama-3.3-70B-Instruct" / "config.json"
GAIN_WORDS = re.compile(r"no per-token cost|at once instead|less queueing|more KV|fewer retractions|faster", re.I)


def _launch(path):
    return parse_paths([str(path)]).launches[-1]


def _all_sample_launches():
    for path in sorted(SAMPLES.glob("*/*.log")):
        yield from parse_paths([str(path)]).launches


def test_kimi_gets_dp_attention_with_its_figures():
    doc = explain_launch(_launch(KIMI), cfg=load_model_config(KIMI_CFG)).to_dict()
    dp = next(r for r in doc["recommendations"] if r["kind"] == "dp_attention")
    assert dp["possible"] and any(f.startswith("--enable-dp-attention --dp-size ") for f in dp["flags"])
    d = dp["allows"]["dp_ranks"]
    assert 8 % d == 0 and dp["allows"]["distinct_tokens"] == d * dp["kv_tokens"] > 0
    assert dp["allows"]["distinct_tokens"] > dp["allows"]["tokens_without_dp_attention"]  # at the same reserve
    assert dp["cost"]["gpu_memory_gb"] > 0  # the attention weights each rank then holds
    assert "longest context" in dp["cost"]["throughput"] and dp["risk"]["level"] == "medium"
    held = (1 - dp["value"]) * doc["pre_load_avail_gb"]
    assert held >= float(re.search(r"reserve with DP attention \(([0-9.]+) GiB\)", dp["risk"]["why"]).group(1)) - 0.01
    assert dp["fixes"]  # it cuts the replicated tokens but restores the reserve the launch does not keep


def test_kimi_without_a_config_prices_dp_attention_on_a_named_assumption():
    doc = explain_launch(_launch(KIMI)).to_dict()
    dp = next(r for r in doc["recommendations"] if r["kind"] == "dp_attention")
    assert dp["possible"] and dp["risk"]["level"] == "medium" and "--model-config" in dp["risk"]["why"]
    assert "assumed 3% of the weights" in dp["risk"]["why"]
    exact = explain_launch(_launch(KIMI), cfg=load_model_config(KIMI_CFG)).to_dict()
    dp_exact = next(r for r in exact["recommendations"] if r["kind"] == "dp_attention")
    assert dp["allows"]["distinct_tokens"] <= dp_exact["allows"]["distinct_tokens"]  # the assumption is the safe side
    for args in ([], ["--model-config", KIMI_CFG]):
        code, out, _ = cli("explain", KIMI, *args)
        assert code == 0 and "--enable-dp-attention --dp-size" in out and "distinct tokens over" in out


def test_a_failed_start_gets_three_ranked_options_that_start_it():
    doc = explain_launch(_launch(CRASH)).to_dict()
    recs = doc["recommendations"]
    starting = [r for r in recs if r["possible"] and r["starts"]]
    assert len(starting) >= 3 and recs[: len(starting)] == starting  # ranked first
    assert len({r["kind"] for r in starting}) >= 3
    assert {"tp", "fp8_weights", "chunked_prefill"} <= {r["kind"] for r in starting}
    for r in starting:
        assert r["kv_tokens"] > 0 and r["risk"]["level"] in ("low", "medium") and r["reason"]
    tp = next(r for r in starting if r["kind"] == "tp")
    assert tp["cost"]["more_gpus"] == 2 and "--tp-size 4" in tp["flags"]
    assert "Best safe action: " + " ".join(starting[0]["flags"]) in doc["answer"][-1]


def test_the_config_makes_the_tp_option_exact():
    doc = explain_launch(_launch(CRASH), cfg=load_model_config(LLAMA70)).to_dict()
    tp = next(r for r in doc["recommendations"] if r["kind"] == "tp")
    assert tp["risk"]["level"] in ("low", "medium") and "64 heads, 8 KV heads" in tp["risk"]["why"]
    plain = explain_launch(_launch(CRASH)).to_dict()
    assert tp["kv_tokens"] > next(r for r in plain["recommendations"] if r["kind"] == "tp")["kv_tokens"]


def test_a_tp_the_engine_refuses_is_never_offered():
    odd = replace(load_model_config(LLAMA70), num_attention_heads=6, num_kv_heads=2)  # 6 heads: TP 4 refused
    doc = explain_launch(_launch(CRASH), cfg=odd).to_dict()
    tp = next(r for r in doc["recommendations"] if r["kind"] == "tp")
    assert not tp["possible"] and "divides the heads" in tp["reason"]
    flags = " ".join(f for r in doc["recommendations"] if r["possible"] for f in r["flags"])
    assert "--tp-size" not in flags


@pytest.mark.parametrize("la", list(_all_sample_launches()), ids=lambda la: la.source.split("/")[-1])
def test_costs_never_list_a_gain_and_unneeded_cuts_are_not_offered(la):
    doc = explain_launch(la).to_dict()
    for r in doc["recommendations"]:
        assert not GAIN_WORDS.search(r["cost"].get("throughput") or ""), r
        if doc["runtime_verdict"]["pool_limited"] is False and r["possible"] and (r["gain_tokens"] or 0) < 0:
            assert r["fixes"], r  # a cut for a pool that never limited the run must fix a named risk


def test_the_draft_beyond_sglang_s_speculative_reserve_is_pointed_out():
    la = _launch(KIMI)
    b = launch_budget(la)
    assert not any("draft model's weights" in line for line in advise(la, b).answer)  # 1.90 ≤ 2.00 GiB
    big = replace(b, draft_weights_gb=2.59)
    line = next(x for x in advise(la, big).answer if "draft model's weights" in x)
    assert "2.59 GiB" in line and "2.00 GiB" in line and "0.59 GiB" in line


def test_vllm_without_kv_memory_gets_the_ways_out_ranked():
    path = SAMPLES / "vllm" / "fail-no-kv-memory-journal-0.9.2.log"
    doc = explain_launch(_launch(path), cfg=load_model_config(SAMPLES / "models" / "big-32b" / "config.json")).to_dict()
    starting = [r for r in doc["recommendations"] if r["possible"] and r["starts"]]
    kinds = [r["kind"] for r in starting]
    assert kinds[0] == "utilization" and {"tp", "fp8_weights", "cpu_offload"} <= set(kinds)  # vLLM's own advice first
    assert all(r["kv_gb"] > 0 for r in starting)
    tiers = [(bool(r["cost"]["more_gpus"] or r["cost"]["host_memory_gb"])) for r in starting]
    assert tiers == sorted(tiers)  # memory settings before more GPUs or host memory
