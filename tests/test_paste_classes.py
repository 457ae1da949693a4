"""Pastes of every class issue 21 names, written by us in the real formats (tests/data/pastes/): each
must give its launch with the fields ``expected.json`` lists, and every line accounted for.

Bare vLLM V0 and V1 messages, a ``  | `` gutter, k9s boxes around vLLM and SGLang lines, Buildkite and
GitHub Actions stamps, FastChat's gutter, a V0 start with no memory for the KV cache and its exception
line cut, a worker's exception, a 0.29 API server that listed its routes, SGLang 0.1 with rpyc lines.
"""

from __future__ import annotations

import json

import pytest
from helpers import ROOT

from logparse.budget.model import launch_budget
from logparse.pipeline import parse_paths

PASTES = ROOT / "tests" / "data" / "pastes"
EXPECTED: dict[str, dict] = json.loads((PASTES / "expected.json").read_text())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_paste_gives_its_launch(name):
    result = parse_paths([PASTES / name])
    assert len(result.launches) == 1, name
    launch = result.launches[0]
    # KV tokens as every surface reads them: the budget's (one truth for both engines)
    got = {
        key: launch_budget(launch).kv_tokens if key == "kv_tokens" else getattr(launch, key) for key in EXPECTED[name]
    }
    assert got == EXPECTED[name]
    lines = result.lines
    assert lines.unrecognized == 0 and lines.parsed + lines.noise == lines.total, lines
    assert launch.outcome_evidence


def test_every_paste_is_listed():
    assert {p.name for p in PASTES.glob("*.log")} == set(EXPECTED)
