"""Advice: the ranked, bounded recommendations of ``explain``.

The recommendations are checked on the Kimi samples (the answer first, fp8 KV / HiCache / the fraction
ranked with figures, no fraction below the engine's reserve), for ``--margin`` from 0 to 200, on vLLM
samples and failed starts, and every recommended flag must exist in the launch's release range.  The
engine's own reserve itself, by hand per release: ``tests/engines/sglang/test_reserve.py``,
``tests/engines/vllm/test_reserve.py``.
"""

from __future__ import annotations

import glob
import json
import re

import pytest
from helpers import SAMPLES, cli, corpus_files

from logparse.budget.model import launch_budget
from logparse.engines.sglang import versions
from logparse.engines.vllm.flags import VLLM_FLAGS, vllm_has
from logparse.pipeline import parse_paths
from logparse.reports.advice import flag_field, runtime_verdict
from logparse.reports.explain import explain_launch

KIMI = SAMPLES / "kimi-k25" / "launch-1-baseline.log"
KIMI_HICACHE = SAMPLES / "kimi-k25" / "launch-2-hicache.log"
VLLM = SAMPLES / "vllm"


def _launch(path):
    launches = parse_paths([str(path)]).launches
    assert launches, path
    return launches[-1]


def _all_logs() -> list:
    return sorted(SAMPLES.glob("*/*.log")) + corpus_files()


# --------------------------------------------------------------------------- explain's advice
def test_kimi_explain_answers_first_and_ranks_fp8_hicache_and_the_fraction():
    code, out, _ = cli("explain", KIMI)
    assert code == 0
    lines = out.splitlines()
    assert lines[3] == "Answer" and "159,277 tokens" in lines[4]
    head = re.sub(r"\s+", " ", " ".join(lines[: lines.index("Recommendations (best first)")]))
    assert len(head) < 1200 and out.index("Recommendations") < out.index("memory budget of")
    assert "the pool never limited it" in head and "69%" in head and "0 retraction" in head
    assert "15.59 GiB" in head and "Best safe action" in head
    doc = json.loads(cli("explain", KIMI, "--json").out)
    assert doc["engine_reserve_gb"] == 15.59 and len(doc["engine_reserve_terms"]) >= 5
    recs = doc["recommendations"]
    for r in recs:
        assert {"action", "flags", "kv_tokens", "kv_gb", "headroom_gb", "cost", "risk", "reason"} <= set(r)
    kinds = [r["kind"] for r in recs]
    assert kinds.index("fp8") < kinds.index("hicache") < kinds.index("fraction")
    fp8, hc, frac = (next(r for r in recs if r["kind"] == k) for k in ("fp8", "hicache", "fraction"))
    assert fp8["flags"] == ["--kv-cache-dtype fp8_e4m3"] and fp8["kv_tokens"] == pytest.approx(2 * 159_277, rel=0.01)
    assert "accuracy" not in fp8["cost"]["accuracy"] or "8 bits" in fp8["cost"]["accuracy"]
    assert fp8["cost"]["gpu_memory_gb"] == 0 and fp8["risk"]["level"] == "medium"
    assert hc["cost"]["host_memory_gb"] == pytest.approx(179.0, abs=0.2) and hc["kv_tokens"] == 159_277
    assert frac["flags"] == ["--mem-fraction-static 0.834"] and frac["kv_tokens"] < 159_277
    assert frac["headroom_gb"] > doc["headroom_gb"]
    assert doc["runtime_verdict"]["pool_limited"] is False


def _held_ok(doc: dict, r: dict) -> bool:
    """A recommended fraction holds back at least the engine's reserve (its own, for a smaller chunk)."""
    if r["kind"] not in ("fraction", "chunked_prefill") or not r["possible"] or r["below_reserve"]:
        return True
    m_pre = doc["pre_load_avail_gb"]
    reserve = doc["engine_reserve"]["reserve_gb_hi"]
    if r["kind"] == "chunked_prefill":
        reserve = float(re.search(r"reserve for it is ([0-9.]+) GiB", r["action"]).group(1))
    return (1 - r["value"]) * m_pre >= reserve - 0.005


@pytest.mark.parametrize("path", [KIMI, KIMI_HICACHE, *sorted((SAMPLES / "sglang-0.5").glob("*.log"))], ids=str)
def test_no_recommended_fraction_leaves_less_than_the_engine_reserve(path):
    doc = explain_launch(_launch(path)).to_dict()
    for r in doc["recommendations"]:
        assert _held_ok(doc, r), r
    fraction = next((w for w in doc["what_if"] if "mem_fraction_static" in w and w.get("supported")), None)
    if fraction is not None and "below_engine_reserve" in fraction:
        assert not fraction["below_engine_reserve"]


def _bounded(item: dict) -> list[str]:
    bad = []
    for k in ("kv_tokens", "host_tokens"):
        if isinstance(item.get(k), (int, float)) and item[k] <= 0:
            bad.append(f"{k}={item[k]}")
    for k in ("mem_fraction_static", "gpu_memory_utilization"):
        if isinstance(item.get(k), (int, float)) and not 0 < item[k] < 1:
            bad.append(f"{k}={item[k]}")
    value, fraction_like = item.get("value"), item.get("kind") in ("fraction", "utilization", "chunked_prefill")
    if fraction_like and value is not None and not 0 < value < 1:
        bad.append(f"value={value}")
    if isinstance(item.get("headroom_gb"), (int, float)) and item["headroom_gb"] < 0:
        bad.append(f"headroom={item['headroom_gb']}")
    return bad


MARGINS = (0, 0.5, 2, 5, 10, 20, 50, 100, 150, 200)


@pytest.mark.parametrize("path", [KIMI, VLLM / "v0-llama-tp2-0.6.6.post1.log", SAMPLES / "sglang-0.5" / "crash-cuda-oom-0.5.18.log",
                                  SAMPLES / "sglang-0.5" / "crash-oom-0.5.6.log", SAMPLES / "sglang-0.4" / "dp-attention-0.4.9.log"],
                         ids=lambda p: p.name)  # fmt: skip
def test_margin_from_0_to_200_is_bounded(path):
    la = _launch(path)
    for m in MARGINS:
        doc = explain_launch(la, margin_gb=m).to_dict()
        items = doc["what_if"] + doc["recommendations"] + [w for r in doc["ranks"] for w in r.get("what_if", [])]
        problems = [(m, it.get("change") or it.get("action"), _bounded(it)) for it in items if _bounded(it)]
        assert problems == []
        frac = next(r for r in doc["recommendations"] if r["kind"] in ("fraction", "utilization"))
        assert frac["possible"] or frac["reason"]  # "not possible: …" says why


@pytest.mark.parametrize("margin", ["0", "20", "100", "200"])
def test_margin_text_never_prints_negative_tokens_or_fractions(margin):
    code, out, _ = cli("explain", KIMI, "--margin", margin)
    assert code == 0
    assert not re.search(r"(?<![\w.(])-[\d,]+ (KV )?tokens", out), out
    for f in re.findall(r"mem_fraction_static [0-9.]+ → (-?[0-9.]+)", out):
        assert 0 < float(f) < 1
    assert "not possible" in out or margin == "0"


def test_margin_asked_for_goes_below_the_reserve_and_says_so():
    doc = explain_launch(_launch(KIMI), margin_gb=2.0).to_dict()
    frac = next(r for r in doc["recommendations"] if r["kind"] == "fraction")
    assert frac["below_reserve"] and frac["risk"]["level"] == "high" and 0.93 < frac["value"] < 0.94
    assert "--margin" in frac["action"]
    assert cli("explain", KIMI, "--margin", "-1")[0] == 2


def test_every_recommended_flag_exists_in_the_launch_release():
    fields = versions.field_sets()
    seen = 0
    for path in _all_logs():
        for la in parse_paths([str(path)]).launches:
            doc = explain_launch(la).to_dict()
            for r in doc["recommendations"]:
                if not r["possible"]:
                    continue
                for flag in r["flags"]:
                    seen += 1
                    if la.engine == "vllm":
                        assert flag.split()[0] in VLLM_FLAGS and vllm_has(la, flag.split()[0]), (path, flag)
                        continue
                    rng = la.version_range or (versions.last(), versions.last())
                    lo, hi = versions.index(rng[0]), versions.index(rng[1])
                    for v in versions.releases()[lo : hi + 1]:
                        assert flag_field(flag) in fields[v], (path, flag, v)
    assert seen > 50


def test_old_releases_get_only_their_own_flags():
    doc = explain_launch(_launch(SAMPLES / "sglang-0.2" / "llama-tp2-0.2.5.log")).to_dict()
    flags = " ".join(f for r in doc["recommendations"] if r["possible"] for f in r["flags"])
    assert "--kv-cache-dtype" not in flags and "--enable-hierarchical-cache" not in flags  # 0.2.14+, 0.4.2.post1+
    vllm_old = explain_launch(_launch(VLLM / "v1-tp2-per-worker-0.10.1.1.log")).to_dict()
    kvm = next(r for r in vllm_old["recommendations"] if r["kind"] == "kv_cache_memory")
    assert not kvm["possible"] and "0.10.2" in kvm["reason"]


# --------------------------------------------------------------------------- vLLM and failed starts
def test_vllm_samples_recommend_within_vllm_s_own_ceiling():
    doc = explain_launch(_launch(VLLM / "v0-llama-tp2-0.6.6.post1.log")).to_dict()
    util = next(r for r in doc["recommendations"] if r["kind"] == "utilization")
    assert 0.9 < util["value"] < 1 and util["kv_gb"] > doc["kv_pool_gb"]
    assert util["risk"]["level"] == "medium" and "assumed" in util["risk"]["why"]  # free memory not in the log
    assert util["kv_tokens"] > doc["kv_tokens"] and util["kv_tokens"] % 16 == 0
    assert doc["what_if"][0]["gpu_memory_utilization"] == util["value"]  # one computation
    new = explain_launch(_launch(VLLM / "v1-tags-in-format-0.31.0.log")).to_dict()
    kvm = next(r for r in new["recommendations"] if r["kind"] == "kv_cache_memory")
    assert kvm["possible"] and kvm["kv_gb"] == new["engine_reserve"]["safe_kv_gb"] < new["engine_reserve"]["max_kv_gb"]
    assert kvm["flags"] == [f"--kv-cache-memory {int(kvm['kv_gb'] * 2**30)}"] or kvm["flags"][0].startswith(
        "--kv-cache-memory "
    )
    failed = explain_launch(_launch(VLLM / "fail-max-len-docker-0.6.3.log")).to_dict()
    assert failed["recommendations"][0]["kind"] == "max_model_len"
    assert "This start failed" in failed["answer"][1]


def test_failed_starts_lead_out_within_the_reserve():
    too_small = explain_launch(_launch(SAMPLES / "sglang-0.5" / "crash-oom-0.5.6.log")).to_dict()
    first = too_small["recommendations"][0]
    assert first["kind"] == "fraction" and first["value"] > too_small["mem_fraction_static"]
    assert _held_ok(too_small, first)
    oom = explain_launch(_launch(SAMPLES / "sglang-0.5" / "crash-cuda-oom-0.5.18.log")).to_dict()
    best = next(r for r in oom["recommendations"] if r["possible"])
    assert best["value"] < oom["mem_fraction_static"] and _held_ok(oom, best)  # lower, not raise
    assert "out of memory" in oom["answer"][1]


def test_runtime_verdict_reads_the_run():
    la = _launch(KIMI)
    v = runtime_verdict(la)
    assert v["pool_limited"] is False and v["peak_token_usage"] == 0.69 and v["tokens_per_request"] == 109484 // 6
    la.runtime = dict(la.runtime, retractions=3)
    assert runtime_verdict(la)["pool_limited"] is True
    la.runtime = {"batch_lines": 4, "peak_token_usage": 0.97, "retractions": 0, "peak_queue_req": 5}
    assert runtime_verdict(la)["pool_limited"] is True
    la.runtime = {}
    assert runtime_verdict(la)["pool_limited"] is None


def test_explain_figures_are_the_budget_s():
    for path in (KIMI, VLLM / "v1-defaults-0.20.2.log"):
        la = _launch(path)
        b, doc = launch_budget(la), explain_launch(la).to_dict()
        assert f"{b.kv_tokens:,} tokens" in doc["answer"][0]
        if b.kv_pool_gb is not None:
            assert f"{b.kv_pool_gb:.2f} GiB" in doc["answer"][0]


def test_watch_block_shows_the_recommendations(tmp_path):
    from logparse.cli.render_watch import block_text
    from logparse.reports.watch_block import launch_block

    db = tmp_path / "h.duckdb"
    assert cli("ingest", KIMI, "--db", db, "-q")[0] == 0
    sql_id = json.loads(cli("show", "@latest", "--db", db, "--json").out)["launch_id"]
    block = launch_block(sql_id, str(db)).to_dict()
    text = block_text(block)
    ex = explain_launch(_launch(KIMI)).to_dict()
    assert block["answer"] == ex["answer"]
    assert [r["action"] for r in block["recommendations"]] == [
        r["action"] for r in ex["recommendations"] if r["possible"]
    ][:3]
    assert "advice 1: --kv-cache-dtype fp8_e4m3" in text and "15.59 GiB" in text


def test_samples_glob_is_not_empty():
    assert glob.glob(str(SAMPLES / "*" / "*.log"))


def test_the_engine_s_own_default_is_kept_and_a_cap_is_named():
    paths = corpus_files("sglang-0.5.23/restart-1.log")
    if not paths:
        pytest.skip("genuine corpus not available")
    doc = explain_launch(_launch(paths[0])).to_dict()  # 0.716: what SGLang itself picked on that machine
    frac = next(r for r in doc["recommendations"] if r["kind"] == "fraction")
    assert not frac["possible"] and "own default" in frac["reason"]
    assert "its own default" in doc["answer"][2]
    cap = doc["recommendations"][0]
    assert cap["kind"] == "cap" and cap["flags"] == [] and cap["kv_tokens"] > 20_000
    assert "--max-total-tokens 20,000" in cap["action"] and cap["risk"]["level"] == "low"
