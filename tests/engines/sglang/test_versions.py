"""ServerArgs defaults per SGLang release (grammars/sglang/server_args_defaults.json) and their accessor."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from logparse.engines.sglang import versions
from logparse.engines.sglang.versions import DERIVED, MISSING, REQUIRED, default_of, defaults_of


def _data() -> dict:
    with resources.files("logparse.grammars").joinpath("sglang", "server_args_defaults.json").open() as fh:
        return json.load(fh)


def test_every_release_was_read():
    data = _data()
    assert tuple(data["releases"]) == versions.releases()
    assert data["unreadable"] == {}


@pytest.mark.parametrize("release", versions.releases())
def test_field_set_agrees_with_the_dating_data(release):
    """Two independent readings (catalogue Appendix A / our ast pass over the wheel) give one field set."""
    assert set(defaults_of(release)) == versions.field_sets()[release]


def test_mem_fraction_static_is_derived():
    # declared None, filled in from the GPU (0.4.7.post1+) or the tp size (older) at runtime
    for release in ("0.1.3", "0.2.0", "0.4.7", "0.5.10.post1", "0.5.19", "0.5.23"):
        assert default_of("mem_fraction_static", release) is DERIVED


def test_page_size_literal_then_derived_and_absent_before_it_existed():
    assert default_of("page_size", "0.4.3.post4") is MISSING
    assert default_of("page_size", "0.4.4") == 1
    assert default_of("page_size", "0.4.9.post3") == 1
    assert default_of("page_size", "0.4.9.post4") is DERIVED
    assert default_of("page_size", "0.5.23") is DERIVED


def test_field_added_in_a_release():
    assert default_of("kv_cache_dtype", "0.2.13") is MISSING
    assert default_of("kv_cache_dtype", "0.2.14") == "auto"


def test_field_removed_in_a_release():
    assert default_of("schedule_heuristic", "0.2.6") == "lpm"
    assert default_of("schedule_heuristic", "0.2.7") is MISSING


def test_literal_values_and_required():
    assert default_of("model_path", "0.5.23") is REQUIRED
    assert default_of("tp_size", "0.1.3") == 1 and default_of("tp_size", "0.5.23") == 1
    assert default_of("host", "0.1.3") == "127.0.0.1"
    assert default_of("model_mode", "0.1.12") == []  # declared as the tuple ()
    assert default_of("chunked_prefill_size", "0.2.12") == -1
    assert default_of("chunked_prefill_size", "0.3.0") == 8192
    assert default_of("chunked_prefill_size", "0.4.0") is DERIVED
    assert default_of("schedule_policy", "0.4.3.post3") == "fcfs"


def test_namespace_era_reads_the_field_classes():
    """0.5.20+: ServerArgs is assembled from arg_groups/fields/*; defaults come from there."""
    assert default_of("radix_eviction_policy", "0.5.23") == "lru"
    assert default_of("disable_radix_cache", "0.5.23") is False
    assert len(defaults_of("0.5.23")) == 546


def test_unknown_release_is_an_error():
    with pytest.raises(ValueError):
        default_of("tp_size", "9.9.9")


def test_markers_survive_pickling():
    import pickle

    assert pickle.loads(pickle.dumps(DERIVED)) is DERIVED
    assert repr(MISSING) == "MISSING"


def test_default_fraction_tables_of_0_1():
    from logparse.engines.sglang.versions import default_mem_fraction_static as f

    assert f(("0.1.12", "0.1.12"), 2) == 0.85 and f(("0.1.3", "0.1.4"), 2) == 0.80
    assert f(("0.1.21", "0.1.22"), 16) == 0.74 and f(("0.1.24", "0.1.26"), 1) == 0.89
