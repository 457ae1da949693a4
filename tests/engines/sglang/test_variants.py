"""Every format variant in the table parses to the right event and fields (lnav-style)."""

from __future__ import annotations

import pytest

from logparse.engines.sglang import versions
from logparse.engines.sglang.assemble import apply_prefix
from logparse.engines.sglang.line import parse_line
from logparse.engines.sglang.prefix import PREFIX_RE
from logparse.engines.sglang.variants import VARIANTS, match
from logparse.grammar.events import Event


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_sample_parses_to_expected_fields(variant):
    prefix, gpu, (kind, fields, form) = parse_line(variant.sample)
    assert kind == variant.kind, f"{variant.name}: parsed as {kind}"
    ev = Event(kind=kind, fields=fields, form=form, text=variant.sample)
    apply_prefix(ev, prefix, gpu)
    for key, want in variant.expect.items():
        got = fields[key] if key in fields else getattr(ev, key, None)
        assert got == want, f"{variant.name}: {key}={got!r}, want {want!r}"


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_release_range_is_valid(variant):
    assert versions.index(variant.since) <= versions.index(variant.until)
    assert variant.since in versions.releases() and variant.until in versions.releases()


@pytest.mark.parametrize(
    "variant", [v for v in VARIANTS if v.dates and not v.name.startswith("prefix_")], ids=lambda v: v.name
)
def test_dating_variants_are_found_by_their_signature(variant):
    _, _, (kind, fields, form) = parse_line(variant.sample)
    assert variant in match(kind, form, fields)


def test_fast_prefix_regexp_agrees_with_grammar():
    """The classifier's prefix regexp and the grammar's prefix rule accept the same prefixes."""
    for v in VARIANTS:
        prefix, _, _ = parse_line(v.sample)
        has_grammar_prefix = bool(prefix.get("stamp"))
        assert bool(PREFIX_RE.match(v.sample)) == has_grammar_prefix, v.name


def test_units_host_memory_is_decimal_gb():
    """HiCache host lines print bytes / 1e9; device lines print GiB. Both are kept as printed."""
    _, _, (_, host, _) = parse_line("Allocating 45.04 GB host memory for hierarchical KV cache.")
    _, _, (_, dev, _) = parse_line("[2025-01-01 00:00:00 TP0] Memory pool end. avail mem=9.27 GB")
    assert host == {"host_gb": 45.04, "label": "kv"}
    assert dev == {"avail_gb": 9.27}


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


def test_release_names_sort_as_pep_440_orders_them():
    from logparse.engines.sglang.versions import release_key

    ordered = [
        "0.5.0rc2",
        "0.5.0",
        "0.5.0.post1",
        "0.5.1",
        "0.10.1",
        "0.10.1.1",
        "0.18.2rc1.dev73+gdb7a17ecc",
        "0.18.2rc1",
        "0.18.2",
    ]
    shuffled = ordered[1::2] + ordered[::2]
    assert sorted(shuffled, key=release_key) == ordered


def test_a_release_name_that_is_not_pep_440_is_placed_by_its_leading_release():
    from logparse.engines.sglang import versions

    assert versions.release_key("0.5.10-custom") == versions.release_key("0.5.10")
    assert versions.releases()[versions.index("0.5.10-custom")] == "0.5.10"  # not among the 0.4 releases
    assert versions.releases()[versions.index("v0.4.7")] == "0.4.7"
    assert versions.index("banana") == 0  # before every release, never an error
