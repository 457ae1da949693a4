"""The declarative tables of ``grammars/`` load as the Python records they replace.

``tests/engines/sglang/test_variants.py`` and ``tests/engines/vllm/test_variants.py`` walk each table entry by entry; these
tests catch a loader that drops, reorders or retypes entries (an integer read as a float, a missing
``unset`` field, ``"last"`` left unresolved) and a cache that goes stale.
"""

from __future__ import annotations

import hashlib
import pickle
import tomllib
from pathlib import Path

import pytest

from logparse import figures
from logparse.budget import gpus
from logparse.data import tables
from logparse.engines.sglang import classify as sglang_classify
from logparse.engines.sglang import eras, variants
from logparse.engines.vllm import classify as vllm_classify
from logparse.engines.vllm import formula as vllm_budget
from logparse.engines.vllm import variants as vllm_variants
from logparse.engines.vllm import versions as vv
from logparse.grammar import classify, noise
from logparse.grammar.variant_table import Variant, load_variants
from logparse.sources.formats import wrappers

ROOT = Path(__file__).resolve().parent.parent


def _strict(value):
    """A value with the type of every part spelled out (``1 == 1.0 == True`` in Python)."""
    if isinstance(value, dict):
        return ("dict", [(k, _strict(v)) for k, v in value.items()])
    if isinstance(value, list | tuple):
        return (type(value).__name__, [_strict(v) for v in value])
    return (type(value).__name__, value)


def _fields(v: Variant) -> tuple:
    return _strict([v.name, v.since, v.until, v.sample, v.expect, v.kind, v.dates])


def test_the_tables_have_every_entry_once():
    assert len(variants.VARIANTS) == 185
    assert len(vllm_variants.VARIANTS) == 143
    for table in (variants.VARIANTS, vllm_variants.VARIANTS):
        assert len({v.name for v in table}) == len(table)
        assert all(type(v) is Variant for v in table)


def test_sglang_entries_field_by_field():
    by_name = {v.name: v for v in variants.VARIANTS}
    assert variants.VARIANTS[0].name == "prefix_none_gpu_id"
    assert variants.VARIANTS[-1].name == "server_args_dict"
    want = Variant("prefix_none_gpu_id", "0.1.17", "0.2.6", "[gpu_id=1] Init nccl begin.", {"tp_rank": 1}, "init_begin")
    assert _fields(by_name["prefix_none_gpu_id"]) == _fields(want)
    want = Variant("killed", "0.1.3", variants.LAST, "Killed", {}, "killed", False)
    assert _fields(by_name["killed"]) == _fields(want)
    load_end = by_name["load_end_quant"]
    assert _fields(load_end)[1][4] == _strict({"quant": {"quant": "fp8", "fmt": "e4m3"}, "avail_gb": 21.7})
    assert _strict(by_name["summary_v01_model_mode"].expect) == _strict(
        {"tp_rank": 0, "max_total_num_tokens": 52418, "max_prefill_tokens": 8736, "context_len": 4096, "model_mode": []}
    )
    assert by_name["graph_bs"].expect == {"bs": [1, 2, 4, 8, 16]}


def test_vllm_entries_field_by_field():
    by_name = {v.name: v for v in vllm_variants.VARIANTS}
    want = Variant(
        "prefix_tag_vllm_worker_process",
        "0.4.2",
        "0.10.2",
        "(VllmWorkerProcess pid=4120) INFO 06-11 10:04:31 model_runner.py:1099] Loading model weights took 7.4807 GB",
        {"weights_gb": 7.4807, "tp_rank": None},
        "vllm_weights",
    )
    assert _fields(by_name["prefix_tag_vllm_worker_process"]) == _fields(want)
    want = Variant(
        "uvicorn_startup_complete_tagged",
        "0.10.1",
        "0.30.0",
        "(APIServer pid=7) INFO:     Application startup complete.",
        {},
        "uvicorn",
        False,
    )
    assert _fields(vllm_variants.VARIANTS[-1]) == _fields(want)
    graph = by_name["graph_profiling"].expect["modes"]
    assert _strict(graph) == _strict(
        {"PIECEWISE": {"graphs": 35, "largest": 512}, "FULL": {"graphs": 19, "largest": 256}}
    )
    assert by_name["graph_advice_disabled"].until == vv.LAST


def test_last_is_resolved_and_only_last_is():
    for table, last, filename in (
        (variants.VARIANTS, variants.LAST, "sglang/variants.toml"),
        (vllm_variants.VARIANTS, vv.LAST, "vllm/variants.toml"),
    ):
        raw = tomllib.loads((ROOT / "grammars" / filename).read_text())["variant"]
        assert len(raw) == len(table)
        for entry, v in zip(raw, table):
            assert v.name == entry["name"]
            assert v.until == (last if entry["until"] == "last" else entry["until"])
            assert v.since == (last if entry["since"] == "last" else entry["since"])
        assert sum(e["until"] == "last" for e in raw) > 10


def test_an_unknown_key_in_an_entry_is_an_error(monkeypatch):
    monkeypatch.setattr(
        tables, "entries", lambda filename, key: [{"name": "x", "since": "a", "until": "b", "smaple": ""}]
    )
    with pytest.raises(TypeError):
        load_variants("sglang/variants.toml", "0.5.23")


def test_the_disk_cache_is_keyed_by_the_file_and_survives_garbage(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    want = tomllib.loads((ROOT / "grammars" / "vllm/variants.toml").read_text())
    tables.table.cache_clear()
    try:
        assert tables.table("vllm/variants.toml") == want
        (stored,) = (tmp_path / "logparse").glob("table-vllm-variants.toml-*.pickle")
        assert pickle.loads(stored.read_bytes()) == want
        stored.write_bytes(b"not a pickle")
        tables.table.cache_clear()
        assert tables.table("vllm/variants.toml") == want
        assert pickle.loads(stored.read_bytes()) == want  # written again
    finally:
        tables.table.cache_clear()


def test_the_noise_table_field_by_field():
    assert len(classify.NOISE) == 17
    assert len({n["name"] for n in classify.NOISE}) == 17
    assert all(list(n) == ["name", "category", "after_prefix", "re", "sample"] for n in classify.NOISE)
    assert _strict(classify.NOISE[0]) == _strict(
        {
            "name": "uvicorn_access",
            "category": "uvicorn_access",
            "after_prefix": True,
            "re": r"(?:INFO|WARNING|ERROR):\s+\S+:\d+ - \"[A-Z]+ ",
            "sample": '[2025-03-02 10:00:05] INFO:     10.1.2.3:51234 - "POST /generate HTTP/1.1" 200 OK',
        }
    )
    assert classify.NOISE[-1]["name"] == "systemd"
    assert noise.GLOG == r"(?:\[rank\d+\]:)?[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{1,9} +\d+ [^\s\]]+:\d+\] "
    rpyc = next(n for n in classify.NOISE if n["name"] == "rpyc")
    assert len(sglang_classify.ANCHORS) == 73 and type(sglang_classify.ANCHORS) is tuple
    assert (
        sglang_classify.ANCHORS[:2] == ("avail mem", "KV Cache") and sglang_classify.ANCHORS[-1] == "new fill batch. "
    )
    assert len(vllm_classify.VLLM_ANCHORS) == 66 and "█  version " in vllm_classify.VLLM_ANCHORS
    assert rpyc["sample"] == "Accepted ('127.0.0.1', 51234) with file descriptor 7"


def test_the_wrapper_table_field_by_field():
    names = [w.name for w in wrappers.WRAPPERS]
    assert names == [
        "tui-box",
        "tui-ascii",
        "buildkite",
        "buildkite-apc",
        "pipe-gutter",
        "markdown-quote",
        "fastchat",
        "loguru",
        "gitlab",
    ]
    box, ascii_box, apc, gitlab = (wrappers.WRAPPERS[i] for i in (0, 1, 3, 8))
    assert box.pattern.pattern == "[ \\t]*(?P<border>│|┃|║)(?: |$)".encode()
    assert (box.first, box.clock, box.ambiguous, box.phase, box.closed) == (b" \t\xe2", "", True, "outer", False)
    assert type(box.samples) is tuple and len(box.samples) == 3
    assert ascii_box.closed is True and ascii_box.first == b" \t|"
    assert (
        apc.first == b"\x1b"
        and apc.clock == "epoch-ms"
        and apc.samples[0].startswith("\x1b_bk;t=1763647360123\x07INFO")
    )
    assert gitlab.first == b"0123456789abcdef" and gitlab.phase == "inner"
    assert sorted(wrappers.OUTER_FIRST_BYTES) == sorted(b" \t\xe2|[\x1b>")


def test_the_figure_table_field_by_field():
    assert len(figures.FIGURES) == 64
    first = figures.FIGURES[0]
    assert first == figures.Figure(
        "launch_id", "", None, "launch", "ref", frozenset({"launches", "launches_table", "parse_csv"}), importance=1
    )
    kv = figures.BY_NAME["kv_tokens"]
    assert (kv.unit, kv.higher_is_better, kv.label, kv.of, kv.importance) == ("tokens", True, "KV tokens", "budget", 1)
    assert kv.surfaces == frozenset(figures.SURFACES)
    peak = figures.BY_NAME["peak_token_usage"]
    assert (peak.higher_is_better, peak.fmt, peak.of) == (False, "percent", "store")
    assert figures.BY_NAME["source"].label == "source"  # a row without a label is labelled by its name
    assert set(figures.HISTORY_ORDER) <= set(figures.BY_NAME)


def test_the_gpu_and_era_tables_field_by_field():
    assert [g.name for g in gpus.GPUS][:3] == ["H100 80GB", "H100 NVL", "H200"] and len(gpus.GPUS) == 14
    h20 = gpus.find_gpu("H20 96GB")
    assert _strict([h20.name, h20.total_gb, h20.memory, h20.vendor, h20.aliases]) == _strict(
        ["H20", 95.0, "96 GB HBM3", "NVIDIA", ("H20 96GB",)]
    )
    assert gpus.find_gpu("L4").aliases == () and gpus.find_gpu("MI250").vendor == "AMD"
    assert [e.key for e in eras.ERAS] == ["A", "B", "C"]
    assert (eras.ERAS[2].first, eras.ERAS[2].last) == ("0.5.11", "0.5.23")
    assert [e.key for e in vllm_budget.VLLM_ERAS] == ["v0-a", "v0-b", "v0-c", "v1-a", "v1-b", "v1-c", "v1-d"]
    assert vllm_budget.VLLM_ERAS[-1].last == vv.LAST and vllm_budget.VLLM_ERAS[-2].last == "0.26.0"


#: A released migration's statements, byte for byte (sha256): a migration is never edited, a new one is appended.
FROZEN_SQL = {
    "tables_v1": "5fbfe1f057142edae7d063db4b30e601298759ec10eb257682c3301ab895e48e",
    "tables_v2": "aff2811e0dec3e58c113dc667441c760cb3e08e15a14088377f20cea36edb139",
    "launch_summary_v3": "6aeede0b497a3893c8226227c2f6def8c78d2a0bcbd51c0ecc95836839ea9baa",
    "history_v3": "e9e094238f0a2a596df77dd76575393f7e5d20d3a8358d957a78e3923d775883",
    "launch_change_v9": "11b1e67b9ab99f7e8ba8bfa809b7e66b6f23623ed77d8950b3371b980d82f655",
    "pending_pieces_v10": "6c597c4b366988a7c10faa50e00ab75e95ddd7bd68c3adcd15d13087f9ce4e58",
}


@pytest.mark.parametrize("name", sorted(FROZEN_SQL))
def test_a_released_migration_s_sql_is_frozen(name):
    assert hashlib.sha256(tables.sql(name).encode()).hexdigest() == FROZEN_SQL[name]
    assert tables.sql(name).encode() == (ROOT / "grammars" / "sql" / f"{name}.sql").read_bytes()


def test_the_current_views_are_read_from_their_files():
    import duckdb

    from logparse.store import schema
    from logparse.store.changes import HISTORY_METRICS

    history = tables.sql("history")
    assert history.startswith("\nCREATE OR REPLACE VIEW history AS\n") and "{metric_cols}" in history
    con = duckdb.connect()
    schema.create_current(con)
    cols = [r[0] for r in con.execute("DESCRIBE history").fetchall()]
    assert [c for c in cols if c.endswith("_change") and c[: -len("_change")] in HISTORY_METRICS] == [
        f"{m}_change" for m in HISTORY_METRICS
    ]
    assert "kv_tokens" in [r[0] for r in con.execute("DESCRIBE launch_summary").fetchall()]
