"""The grammar of Python literals (:mod:`logparse.grammar.pyliteral`): the ``server_args`` payloads both
engines print, read to JSON-safe values (records as dicts, tuples and sets as lists, NaN and infinities kept)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    "payload,expected",
    [
        ("ServerArgs(a='x', b=None, c=True, d=False)", {"a": "x", "b": None, "c": True, "d": False}),
        ("ServerArgs(s=\"it's\", t='a\\\\b\\n')", {"s": "it's", "t": "a\\b\n"}),
        (
            "{'f': 1e-05, 'g': inf, 'h': -inf, 'i': 3, 'j': -2.5}",
            {"f": 1e-05, "g": float("inf"), "h": float("-inf"), "i": 3, "j": -2.5},
        ),
        (
            "{'l': [1, 2], 't': (1,), 'u': (), 's': {'q_proj', 'v_proj'}, 'd': {}}",
            {"l": [1, 2], "t": [1], "u": [], "s": ["q_proj", "v_proj"], "d": {}},
        ),
        (
            "ServerArgs(cuda_graph_config=CudaGraphConfig(decode=PhaseConfig(backend='full', bs=[1, 2])))",
            {"cuda_graph_config": {"decode": {"backend": "full", "bs": [1, 2]}}},
        ),
        (
            "{'hook': <function f at 0x7f00>, 'cls': <class 'int'>}",
            {"hook": "<function f at 0x7f00>", "cls": "<class 'int'>"},
        ),
    ],
)
def test_python_literal_subgrammar(payload, expected):
    from logparse.grammar.pyliteral import json_safe, parse_literal

    got = json_safe(parse_literal(payload))
    if "g" in expected:
        assert got["g"] == "inf" and got["h"] == "-inf"
        got = {k: v for k, v in got.items() if k not in ("g", "h")}
        expected = {k: v for k, v in expected.items() if k not in ("g", "h")}
    assert got == expected


def test_nan_in_payload():
    from logparse.grammar.pyliteral import parse_literal

    value = parse_literal("{'x': nan}")
    assert value["x"] != value["x"]
