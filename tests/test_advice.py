"""Advice: the engine's own reserve per release, and the ranked, bounded recommendations of ``explain``.

The reserve's terms are checked against values computed by hand from the sizing rules of each era
(catalogue §4.5 and each release's ``server_args.py``: SGLang computes in MiB), and against the genuine
corpus: every default ``mem_fraction_static`` the real SGLang printed on one 24 GiB machine must come
out of one and the same machine size.  The recommendations are checked on the Kimi samples (the
answer first, fp8 KV / HiCache / the fraction ranked with figures, no fraction below the engine's
reserve), for ``--margin`` from 0 to 200, on vLLM samples and failed starts, and every recommended
flag must exist in the launch's release range.
"""

from __future__ import annotations

import glob
import json
import re

import pytest
from helpers import SAMPLES, cli, corpus_files

from logparse.budget.model import launch_budget
from logparse.engines.sglang import versions
from logparse.engines.sglang.reserve import (
    ReserveInputs,
    launch_reserve,
    piecewise_sizes,
    reserve_inputs,
    rule_of,
    sglang_reserve,
)
from logparse.engines.vllm.flags import VLLM_FLAGS, vllm_has
from logparse.engines.vllm.reserve import VllmReserveInputs, vllm_reserve
from logparse.pipeline import parse_paths
from logparse.reports.advice import flag_field, runtime_verdict
from logparse.reports.explain import explain_launch

KIMI = SAMPLES / "kimi-k25" / "launch-1-baseline.log"
KIMI_HICACHE = SAMPLES / "kimi-k25" / "launch-2-hicache.log"
VLLM = SAMPLES / "vllm"
MIB = 1 / 1024


def _launch(path):
    launches = parse_paths([str(path)]).launches
    assert launches, path
    return launches[-1]


def _terms(r) -> dict[str, float]:
    return {t.name: t.gb for t in r.terms}


def _all_logs() -> list:
    return sorted(SAMPLES.glob("*/*.log")) + corpus_files()


# --------------------------------------------------------------------------- the reserve, by hand
def test_formula_era_terms_of_the_kimi_launch():
    """0.5.10: 512 + 1.5 × 8192 + 2 × 48 + 8/8 × 1024 MiB, over the 10 GiB floor, + 2048 for EAGLE."""
    args = ReserveInputs(tp_size=8, chunked_prefill_size=8192, cuda_graph_max_bs=48, speculative_algorithm="EAGLE3",
                         piecewise_cuda_graph=False)  # fmt: skip
    r = sglang_reserve("0.5.10.post1", args, gpu_memory_gb=96.0)
    assert r.rule == "formula" and r.exact
    hand = (512 + 1.5 * 8192 + 2 * 48 + 8 / 8 * 1024 + 2048) * MIB
    assert r.reserve_gb == round(hand, 2) == 15.59
    t = _terms(r)
    assert t["constant (backend metadata)"] == 0.5 and t["prefill activations"] == 12.0
    assert t["CUDA graphs"] == 0.09 and t["tp·pp share"] == 1.0 and t["speculative (EAGLE-type draft)"] == 2.0
    assert "10 GiB floor (GPU over 60 GiB)" not in t  # 13.59 GiB before the draft term: over the floor
    assert r.default_fraction == round((96 * 1024 - hand * 1024) / (96 * 1024), 3)


def test_formula_defaults_floor_and_speculative_kinds():
    # an 80 GiB GPU at tp 1 takes its tier's defaults: chunk 8192, cuda_graph_max_bs 256
    r = sglang_reserve("0.5.9", ReserveInputs(tp_size=1), gpu_memory_gb=80.0)
    hand = 512 + 1.5 * 8192 + 2 * 256 + 1 / 8 * 1024
    assert r.reserve_gb == round(hand / 1024, 2) and r.default_fraction == round((81920 - hand) / 81920, 3)
    assert "release default" in next(t.source for t in r.terms if t.name == "prefill activations")
    # a small chunk on a 64 GiB GPU is lifted to the 10 GiB floor; the draft is added after the floor
    small = ReserveInputs(tp_size=1, chunked_prefill_size=2048, cuda_graph_max_bs=8, speculative_algorithm="EAGLE")
    r = sglang_reserve("0.5.9", small, gpu_memory_gb=64.0)
    terms = 512 + 1.5 * 2048 + 2 * 8 + 128
    assert _terms(r)["10 GiB floor (GPU over 60 GiB)"] == round((10240 - terms) / 1024, 2)
    assert r.reserve_gb == 12.0
    standalone = sglang_reserve("0.5.9", small.with_(speculative_algorithm="STANDALONE"), gpu_memory_gb=64.0)
    ngram = sglang_reserve("0.5.9", small.with_(speculative_algorithm="NGRAM"), gpu_memory_gb=64.0)
    assert standalone.reserve_gb == 16.0 and ngram.reserve_gb == 10.0
    # under 60 GiB there is no floor
    assert sglang_reserve("0.5.9", small.with_(speculative_algorithm=None), gpu_memory_gb=40.0).reserve_gb == round(
        terms / 1024, 2
    )


def test_dp_attention_terms_and_the_printed_chunk():
    """DP attention: 3 MiB × bs × dp, 1.5 MiB × bs × dp more above bs 300; the printed chunk is per DP rank."""
    args = ReserveInputs(
        tp_size=8, dp_size=8, enable_dp_attention=True, chunked_prefill_size=1024, cuda_graph_max_bs=512
    )
    r = sglang_reserve("0.5.9", args, gpu_memory_gb=140.0)
    t = _terms(r)
    assert t["prefill activations"] == 12.0  # 1024 × dp 8 = 8192 tokens before SGLang divided it
    assert t["DP-attention padding"] == round(3 * 512 * 8 / 1024, 2)
    assert t["DP attention, large graphs"] == round(1.5 * 512 * 8 / 1024, 2)


def test_piecewise_graph_term_and_its_sizes():
    assert piecewise_sizes(2048) == 42 and piecewise_sizes(4096) == 50  # the lengths the corpus prints
    args = ReserveInputs(tp_size=1, chunked_prefill_size=2048, cuda_graph_max_bs=32, piecewise_cuda_graph=True)
    on = sglang_reserve("0.5.12", args, gpu_memory_gb=40.0)
    assert _terms(on)["piecewise CUDA graphs"] == round(8 * 42 / 1024, 2)
    assert "piecewise CUDA graphs" not in _terms(sglang_reserve("0.5.12", args.with_(piecewise_cuda_graph=False),
                                                                gpu_memory_gb=40.0))  # fmt: skip
    assert "piecewise CUDA graphs" not in _terms(sglang_reserve("0.5.4.post3", args, gpu_memory_gb=40.0))


def test_capacity_table_era():
    """0.4.7.post1 – 0.5.2: (9.5 + tp·pp/2) GiB on 35–90 GiB, 12 + tp·pp/2 on 90–160, 32 above; +2 / +4."""
    r = sglang_reserve("0.4.9", ReserveInputs(tp_size=8), gpu_memory_gb=80.0)
    assert r.rule == "capacity-table" and r.reserve_gb == 13.5
    assert r.default_fraction == round((80 - 13.5) / 80, 3)
    r = sglang_reserve("0.4.9", ReserveInputs(tp_size=8, speculative_algorithm="EAGLE", enable_dp_attention=True,
                                              dp_size=8), gpu_memory_gb=140.0)  # fmt: skip
    assert r.reserve_gb == 12 + 4 + 2 + 4
    assert sglang_reserve("0.5.2", ReserveInputs(tp_size=8), gpu_memory_gb=180.0).reserve_gb == 32.0
    assert sglang_reserve("0.4.9", ReserveInputs(tp_size=2), gpu_memory_gb=24.0).reserve_gb == round(2.8 + 0.2, 2)


def test_fixed_era_and_release_boundaries():
    r = sglang_reserve("0.4.7", ReserveInputs(tp_size=8), gpu_memory_gb=80.0)
    assert r.rule == "fixed" and r.default_fraction == 0.81 and r.reserve_gb == round(0.19 * 80, 2)
    assert sglang_reserve("0.3.0", ReserveInputs(tp_size=1), gpu_memory_gb=24.0).default_fraction == 0.88
    assert [rule_of(v).key for v in ("0.4.7", "0.4.7.post1", "0.5.2", "0.5.3", "0.5.18", "0.5.19")] == [
        "fixed", "capacity-table", "capacity-table", "formula", "formula", "arg-groups",
    ]  # fmt: skip
    # where the switch is not verified, the range holds both rules' values and the result says so
    unsure = sglang_reserve("0.5.3", ReserveInputs(tp_size=8), gpu_memory_gb=80.0)
    assert not unsure.exact and unsure.reserve_gb_lo <= 13.5 <= unsure.reserve_gb_hi
    assert any("not verified" in n for n in unsure.notes)
    assert not sglang_reserve("0.5.22", ReserveInputs(), gpu_memory_gb=80.0).exact
    span = sglang_reserve(("0.4.7", "0.4.9"), ReserveInputs(tp_size=8), gpu_memory_gb=80.0)
    assert span.reserve_gb == 13.5 and span.reserve_gb_hi == round(0.19 * 80, 2)


def test_multimodal_adjustment_is_named_and_not_counted():
    args = ReserveInputs(tp_size=8, chunked_prefill_size=8192, cuda_graph_max_bs=48, multimodal=True,
                         vision_layers=48, vision_hidden_size=1024)  # fmt: skip
    r = sglang_reserve("0.5.10", args, gpu_memory_gb=96.0)
    (vision,) = [t for t in r.terms if not t.counted]
    factor = 0.95 * max(0.8, min(1.05, 1 - 0.1 * (2 - 1)))  # a tower twice ViT-L/14
    assert vision.gb == round(r.default_fraction * (1 - factor) * 96, 2)
    assert r.reserve_gb == pytest.approx(sum(t.gb for t in r.terms if t.counted), abs=0.02)  # rounded terms


def test_every_default_the_real_sglang_printed_fits_one_machine():
    """The corpus ran on one 24 GiB machine: the formula must reproduce every default fraction it printed
    (0.5.10.post1 at tp 1 and 2, 0.5.14, 0.5.19, 0.5.23) with a single machine size."""
    ranges = []
    for path in corpus_files():
        for la in parse_paths([str(path)]).launches:
            cmd_sets_it = la.mem_fraction_static in (0.01, 0.2, 0.3, 0.95, None)
            if cmd_sets_it or la.engine != "sglang":
                continue
            inp = reserve_inputs(la)
            fits = [m for m in range(23000, 26000, 4)
                    if sglang_reserve(la.version_range, inp, gpu_memory_gb=m / 1024).default_fraction
                    == la.mem_fraction_static]  # fmt: skip
            assert fits, (path, la.mem_fraction_static)
            ranges.append((fits[0], fits[-1]))
    if not ranges:
        pytest.skip("genuine corpus not available")
    assert len(ranges) >= 8
    assert max(lo for lo, _ in ranges) <= min(hi for _, hi in ranges)  # one size fits them all


def test_kimi_reserve_from_the_launch_itself():
    la = _launch(KIMI)
    b = launch_budget(la)
    r = launch_reserve(la, b.pre_load_avail_gb)
    assert 14.0 <= r.reserve_gb <= 16.0 and r.reserve_gb == 15.59  # the 14–16 GiB, from the code
    assert {t.source for t in r.terms if t.name == "CUDA graphs"} == {"server_args cuda_graph_max_bs"}
    assert r.fraction_keeping_reserve(b.pre_load_avail_gb) == 0.834
    assert any("multimodal" in n for n in r.notes)  # KimiK25ForConditionalGeneration: the encoder term is named


def test_vllm_reserve_of_the_budget_report():
    la = _launch(VLLM / "v1-tags-in-format-0.31.0.log")
    from logparse.engines.vllm.formula import pool_rank
    from logparse.engines.vllm.reserve import launch_vllm_reserve

    r = launch_vllm_reserve(la, pool_rank(la))
    assert r.default_fraction == 0.92 and r.graphs_in_budget
    assert _terms(r) == {"transient activation": 2.94, "CUDA graphs": 1.42, "vLLM's safety buffer": 0.15}
    assert r.max_kv_gb == round(139.05 - 36.05 - 2.94 - 1.42 - 150 / 1024, 2)  # vLLM's own "fully utilize"
    # what advice recommends keeps the production margin (1 GiB at TP 2), not the 150 MiB
    assert r.margin_gb == 1.0 and not r.free_assumed
    assert r.safe_kv_gb == round(139.05 - 36.05 - 2.94 - 1.42 - 1.0, 2)
    assert r.max_utilization == int((139.05 - 1.0) / 139.8 * 1000) / 1000
    old = vllm_reserve("0.6.6.post1", VllmReserveInputs(total_gb=79.19, activation_gb=1.38, non_torch_gb=0.62,
                                                        graph_gb=0.31))  # fmt: skip
    assert old.default_fraction == 0.90 and not old.graphs_in_budget and old.reserve_gb == 2.46
    assert old.free_assumed and old.max_utilization == int((79.19 - 1.0 - 0.31 - 1.0) / 79.19 * 1000) / 1000


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
