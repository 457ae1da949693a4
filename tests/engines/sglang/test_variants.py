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
