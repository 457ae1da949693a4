"""SGLang's own reserve per release (:mod:`logparse.engines.sglang.reserve`), by hand.

The reserve's terms are checked against values computed by hand from the sizing rules of each era
(catalogue §4.5 and each release's ``server_args.py``: SGLang computes in MiB), and against the genuine
corpus: every default ``mem_fraction_static`` the real SGLang printed on one 24 GiB machine must come
out of one and the same machine size.  What advice makes of the reserve: ``tests/test_advice.py``.
"""

from __future__ import annotations

import pytest
from helpers import SAMPLES, corpus_files

from logparse.budget.model import launch_budget
from logparse.engines.sglang.reserve import (
    ReserveInputs,
    launch_reserve,
    piecewise_sizes,
    reserve_inputs,
    rule_of,
    sglang_reserve,
)
from logparse.pipeline import parse_paths

KIMI = SAMPLES / "kimi-k25" / "launch-1-baseline.log"
MIB = 1 / 1024


def _launch(path):
    launches = parse_paths([str(path)]).launches
    assert launches, path
    return launches[-1]


def _terms(r) -> dict[str, float]:
    return {t.name: t.gb for t in r.terms}


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
