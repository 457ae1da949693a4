"""vLLM's own reserve (:mod:`logparse.engines.vllm.reserve`): the terms of a budget report and of an old
release's profile, and the production margin advice keeps.  What advice makes of them:
``tests/test_advice.py``, ``tests/test_advice_margin.py``.
"""

from __future__ import annotations

from helpers import SAMPLES

from logparse.engines.vllm.reserve import VllmReserveInputs, production_margin_gb, vllm_reserve
from logparse.pipeline import parse_paths

VLLM = SAMPLES / "vllm"


def _launch(path):
    launches = parse_paths([str(path)]).launches
    assert launches, path
    return launches[-1]


def _terms(r) -> dict[str, float]:
    return {t.name: t.gb for t in r.terms}


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


def test_the_margin_is_derived_and_at_least_one_gib():
    assert production_margin_gb(1) == production_margin_gb(2) == 1.0
    assert production_margin_gb(8) > 1.0  # the TP buffers of a large group count
