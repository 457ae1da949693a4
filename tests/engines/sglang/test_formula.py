"""SGLang's sizing formula per era (:mod:`logparse.engines.sglang.formula`): the eras and their features
by release and speculative algorithm, and the steps of a prediction, by hand."""

from __future__ import annotations

import pytest

from logparse.engines.sglang import eras
from logparse.engines.sglang import formula as fm


def test_eras_and_features():
    assert eras.era_of("0.4.7").key == "A" and eras.era_of("0.5.6.post2").key == "A"
    assert eras.era_of("0.5.7").key == "B" and eras.era_of("0.5.10.post1").key == "B"
    assert eras.era_of("0.5.11").key == "C" and eras.era_of("0.5.23").key == "C"
    assert eras.features_for("0.4.7", "EAGLE").eagle_inflation
    assert not eras.features_for("0.5.7", "EAGLE").eagle_inflation
    assert not eras.features_for("0.5.13", "EAGLE").draft_in_budget
    assert eras.features_for("0.5.14", "EAGLE3").draft_in_budget
    assert not eras.features_for("0.4.3", None).page_rounding
    feat = eras.choose_features(("0.5.9", "0.5.12"))
    assert feat.era.key == "C" and "spans" in feat.notes[0]


def test_formula_steps():
    inp = fm.Inputs(m_pre_gb=80.0, m_post_gb=60.0, f=0.9, cell=131072.0, page_size=16)
    b = fm.predict(inp, eras.features_for("0.5.10"))
    rest = 60 - 80 * 0.1
    assert b.reserved_gb == pytest.approx(8.0) and b.rest_gb == pytest.approx(rest)
    assert b.tokens == (int(rest * 2**30) // 131072) // 16 * 16
    capped = fm.predict(inp.with_(max_total_tokens=20000), eras.features_for("0.5.10"))
    assert capped.capped and capped.tokens == 20000
    # era A EAGLE: T' = T + R*steps*topk + R*draft_tokens + 100
    e = fm.predict(
        inp.with_(page_size=1, spec_steps=3, spec_topk=1, spec_draft_tokens=4, max_running_requests=64),
        eras.features_for("0.5.5", "EAGLE"),
    )
    assert e.tokens - e.tokens_memory == 64 * 3 + 64 * 4 + 100
    # era C 0.5.14+: the draft KV in the cell shrinks the pool
    c = fm.predict(inp.with_(cell=131072.0 * (1 + 1 / 32)), eras.features_for("0.5.14", "EAGLE"))
    assert c.tokens < b.tokens
    # not enough memory
    assert fm.predict(inp.with_(f=0.2), eras.features_for("0.5.10")).not_enough
