"""No recommendation and no what-if leaves less than the engine's margin (issue 27, item 1).

vLLM: a recommended utilization or KV size leaves at least the production margin of
:func:`logparse.engines.vllm.reserve.production_margin_gb` (1 GiB or more) outside the instance, and is
never "low" risk when the free memory at start is assumed.  SGLang: a recommended fraction (or a what-if
that raises it) holds back at least the engine's own reserve.  A risk label is never lower than the
margin earns: what leaves less than the margin is "high".  Checked on every sample and corpus launch.
"""

from __future__ import annotations

import re

import pytest
from helpers import SAMPLES, corpus_files, without_corpus

from logparse.engines.vllm.reserve import MIN_MARGIN_GB
from logparse.pipeline import parse_paths
from logparse.reports.explain import explain_launch

MOVES_MEMORY = ("utilization", "kv_cache_memory")
_KEPT = re.compile(r"reserve (?:for it is |with DP attention \()?([0-9.]+) GiB")
#: SGLang levers that set a fraction, and where they name the reserve they keep (None: the launch's own)
OWN_RESERVE = dict.fromkeys(
    ("chunked_prefill", "dp_attention", "graph_bs", "tp", "fp8_weights", "cpu_offload", "fp8_kv_start"), _KEPT
)
OWN_RESERVE["fraction"] = re.compile(r"\A\b\B")  # never matches: the launch's own reserve


def _launches(paths):
    for path in paths:
        for la in parse_paths([str(path)]).launches:
            yield path, la


def _vllm_problems(doc: dict) -> list[str]:
    bad, reserve = [], doc.get("engine_reserve") or {}
    margin = reserve.get("margin_gb", MIN_MARGIN_GB)
    for r in doc["recommendations"]:
        if not r["possible"] or r["kind"] not in MOVES_MEMORY:
            continue
        if r["left_gb"] is None or r["left_gb"] < margin - 0.005:
            bad.append(f"{r['action']}: leaves {r['left_gb']} GiB < {margin}")
        if reserve.get("free_assumed") and r["risk"]["level"] == "low":
            bad.append(f"{r['action']}: low risk on an assumed free memory")
    for w in doc["what_if"]:
        u = w.get("gpu_memory_utilization")
        if w.get("supported") and u is not None and u > (doc.get("gpu_memory_utilization") or 1):
            rec = next(r for r in doc["recommendations"] if r["kind"] == "utilization")
            assert rec["value"] == u  # the what-if is the recommendation's computation
    return bad


def _held(doc: dict, f: float) -> float:
    return (1 - f) * doc["pre_load_avail_gb"]


def _sglang_problems(doc: dict) -> list[str]:
    bad, reserve = [], doc.get("engine_reserve") or {}
    need = reserve.get("reserve_gb_hi")
    f_now = doc.get("mem_fraction_static")
    if need is None or doc.get("pre_load_avail_gb") is None:
        return bad
    for r in doc["recommendations"]:
        f = r.get("value")
        if not r["possible"] or f is None or not 0 < f < 1 or r["kind"] not in OWN_RESERVE:
            continue
        own = OWN_RESERVE[r["kind"]].search(r["action"] + " " + r["risk"]["why"])
        keep = (
            float(own.group(1)) if own else need
        )  # a lever that changes the arguments keeps SGLang's reserve for them
        slack = 0.2 if r["kind"] == "tp" else 0.005  # TP buffers move the free memory before the weights a little
        if _held(doc, f) < keep - slack and r["risk"]["level"] != "high":
            bad.append(f"{r['action']}: holds back {_held(doc, f):.2f} < {keep} and is not called high risk")
    for w in doc["what_if"]:
        f = w.get("mem_fraction_static")
        if w.get("supported") and f is not None and f_now is not None and f > f_now and _held(doc, f) < need - 0.005:
            bad.append(f"what-if {w['change']}: holds back {_held(doc, f):.2f} < {need}")
    return bad


def _problems(paths) -> tuple[int, list]:
    seen, bad = 0, []
    for path, la in _launches(paths):
        doc = explain_launch(la).to_dict()
        seen += 1
        found = _vllm_problems(doc) if la.engine == "vllm" else _sglang_problems(doc)
        bad += [(path.name, la.launch_id, p) for p in found]
        for r in doc["recommendations"]:
            if r["possible"] and r.get("left_gb") is not None and r["left_gb"] < MIN_MARGIN_GB:
                assert r["risk"]["level"] == "high" or r["kind"] not in MOVES_MEMORY, (path, r)
    return seen, bad


def test_every_sample_launch_keeps_the_margin():
    seen, bad = _problems(sorted(SAMPLES.glob("*/*.log")))
    assert seen >= 20 and bad == []


def test_every_corpus_launch_keeps_the_margin():
    without_corpus("check the margin of every recommendation on the genuine corpus")
    seen, bad = _problems(corpus_files())
    assert seen >= 10 and bad == []


@pytest.mark.parametrize("name", ["v1-defaults-0.20.2.log", "v0-llama-tp2-0.6.6.post1.log"])
def test_assumed_free_memory_is_never_low_risk(name):
    doc = explain_launch(next(la for _, la in _launches([SAMPLES / "vllm" / name]))).to_dict()
    util = next(r for r in doc["recommendations"] if r["kind"] == "utilization")
    assert util["possible"] and util["risk"]["level"] == "medium" and "assumed total − 1 GiB" in util["risk"]["why"]
    assert util["left_gb"] >= 1.0 and util["value"] < 0.98


def test_measured_free_memory_keeps_a_gib_and_is_low_risk():
    doc = explain_launch(next(la for _, la in _launches([SAMPLES / "vllm" / "v1-tags-in-format-0.31.0.log"]))).to_dict()
    util = next(r for r in doc["recommendations"] if r["kind"] == "utilization")
    assert util["risk"]["level"] == "low" and 1.0 <= util["left_gb"] < 1.2 and util["value"] <= 0.987
    kvm = next(r for r in doc["recommendations"] if r["kind"] == "kv_cache_memory")
    assert kvm["kv_gb"] <= doc["engine_reserve"]["max_kv_gb"] - 0.85  # 1 GiB, not vLLM's 150 MiB


def test_a_failed_start_without_kv_memory_gets_vllm_s_own_advice():
    path = SAMPLES / "vllm" / "fail-no-kv-memory-journal-0.9.2.log"
    doc = explain_launch(next(la for _, la in _launches([path]))).to_dict()
    assert "none of the usual actions" not in " ".join(doc["answer"])
    util = doc["recommendations"][0]
    assert util["kind"] == "utilization" and util["possible"] and 0.8 < util["value"] < 0.95
    assert util["risk"]["level"] != "low" and "not in the log" in util["risk"]["why"]
