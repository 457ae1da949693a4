"""SGLang's releases (:mod:`logparse.engines.sglang.versions`): the ServerArgs defaults per release
(grammars/sglang/server_args_defaults.json) and their accessor, and the order of release names."""

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
