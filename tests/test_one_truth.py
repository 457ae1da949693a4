"""One truth per fact: every surface reports the same headroom, KV tokens and KV GiB for a launch.

For every launch of the bundled samples and of the genuine corpus, ``launches``, ``show``,
``history``, ``explain``, ``diff`` (against itself), ``check`` (against itself), ``parse --json``,
SQL over the views and the Parquet export give the same figures, to the last printed digit, or
all give the same "not known" (with the same reason) for a figure a launch cannot know.
"""

from __future__ import annotations

import json

import duckdb
import pytest
from helpers import CORPUS, SAMPLES, cli

from logparse.budget.model import launch_budget
from logparse.store import Store

FIGURES = ("headroom_gb", "kv_tokens", "kv_pool_gb")


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    path = tmp_path_factory.mktemp("truth") / "h.duckdb"
    store = Store(path)
    inputs = [SAMPLES] + ([CORPUS] if CORPUS.is_dir() else [])
    store.ingest_paths(inputs, progress=False)
    rows = store.launches(as_rows=True)
    return str(path), [dict(zip(rows.columns, r)) for r in rows.rows]


def _json(*args, db):
    code, out, err = cli(*args, db=db)
    assert code in (0, 1), (args, err)
    return json.loads(out)


def test_every_surface_agrees(filled):
    db, rows = filled
    assert len(rows) >= 15
    history = {
        name: {r["launch_id"]: r[name] for r in _json("history", "--metric", name, "--format", "json", db=db)}
        for name in FIGURES
    }
    for row in rows:
        lid = row["launch_id"]
        explain = _json("explain", lid, "--json", db=db)
        show = _json("show", lid, "--json", "--events", "none", db=db)["budget"]
        diff = _json("diff", lid, lid, "--json", db=db)["budget"]
        check = {r["metric"]: r for r in _json("check", lid, "--baseline", lid, "--json", db=db)["results"]}
        for name in FIGURES:
            want = row[name]
            assert explain[name] == want, (lid, name, "explain")
            assert show[name] == want, (lid, name, "show")
            assert history[name][lid] == want, (lid, name, "history")
            assert diff[name]["a"] == want and diff[name]["b"] == want, (lid, name, "diff")
        assert check["kv_tokens"]["value"] == row["kv_tokens"]
        assert check["kv_pool_gb"]["value"] == row["kv_pool_gb"]
        assert check["headroom_gb"]["value"] == row["headroom_gb"]
        if row["headroom_gb"] is None:
            # every surface says the same "not known", with the budget's reason
            why = explain["unknown"]["headroom_gb"]
            assert row["headroom_unknown"] == why and show["unknown"]["headroom_gb"] == why
            assert why in check["headroom_gb"]["note"]


def test_failed_starts_have_no_headroom_anywhere(filled):
    db, rows = filled
    failed = [r for r in rows if r["outcome"] == "failed"]
    assert failed, "the samples hold failed starts"
    for r in failed:
        assert r["headroom_gb"] is None and "failed" in r["headroom_unknown"]
        text = cli("explain", r["launch_id"], db=db).out
        assert "headroom left" not in text.split("Why")[0] or "not known" in text


def test_sql_views_and_parse_agree_with_the_model(filled):
    db, rows = filled
    store = Store(db)
    for lid in [r["launch_id"] for r in rows]:
        launch = store.load_launch(lid)
        b = launch_budget(launch)
        stored = store.query(f"SELECT * FROM launch_budget WHERE launch_id = '{lid}'").to_dicts()[0]
        summary = store.query(f"SELECT * FROM launch_summary WHERE launch_id = '{lid}'").to_dicts()[0]
        for name in FIGURES:
            assert stored[name] == getattr(b, name) == summary[name], (lid, name)
        assert summary["binding_rank"] == b.binding_rank


def test_parse_json_carries_the_same_budget(filled):
    db, rows = filled
    by_source: dict[str, list] = {}
    for r in rows:
        src = Store(db).load_launch(r["launch_id"]).source
        by_source.setdefault(src, []).append(r)
    sample = next(s for s in by_source if s.endswith("launch-1-baseline.log"))
    doc = _json("parse", sample, "--json", db=db)
    (launch,) = doc["launches"]
    want = by_source[sample][0]
    for name in FIGURES:
        assert launch["budget"][name] == want[name]
    assert launch["kv_tokens"] == launch["budget"]["kv_tokens"] == want["kv_tokens"] is not None


def test_export_carries_the_same_figures(filled, tmp_path):
    db, rows = filled
    assert cli("export", tmp_path / "exp", db=db).code == 0
    got = duckdb.sql(
        f"SELECT launch_id, headroom_gb, kv_tokens, kv_pool_gb FROM read_parquet('{tmp_path}/exp/launch_budget/**/*.parquet', "
        "hive_partitioning = true)"
    ).fetchall()
    by_id = {g[0]: g[1:] for g in got}
    for r in rows:
        assert by_id[r["launch_id"]] == (r["headroom_gb"], r["kv_tokens"], r["kv_pool_gb"])
