"""check with the history store: the previous launch of the deployment, median/MAD over its history."""

from __future__ import annotations

import json

import pytest
from helpers import cli
from reports_fixture import kimi_log

from logparse.store import Store


@pytest.fixture(scope="module")
def store_with_history(tmp_path_factory):
    d = tmp_path_factory.mktemp("store")
    files = []
    for i in range(6):
        p = d / f"h{i}.log"
        p.write_text(kimi_log(False, minute=2 + 3 * i).replace("elapsed=29", f"elapsed=3{i % 2}"))
        files.append(str(p))
    db = d / "history.duckdb"
    Store(str(db)).ingest_paths(files)
    return d, db


def test_check_against_store(store_with_history):
    d, db = store_with_history
    new = d / "new.log"
    new.write_text(kimi_log(False, minute=40))
    code, out, _ = cli("check", new, "--db", db, "--format", "json")
    rep = json.loads(out)
    assert code == 0, out
    assert rep["baseline"]["ref"] == "previous launch in the store"
    assert any("6 earlier launch(es)" in n for n in rep["notes"])
    kinds = {r["metric"]: r for r in rep["results"]}
    assert kinds["kv_tokens"]["status"] == "ok"
    assert kinds["load_s"]["status"] == "ok" and kinds["load_s"]["median"] is not None
    # one slow start against a steady history is flagged, with a likely cause
    slow = d / "slow.log"
    slow.write_text(kimi_log(False, minute=50).replace("elapsed=29", "elapsed=99"))
    code, out, _ = cli("check", slow, "--format", "json", db=db)  # the store from $LOGPARSE_DB
    rep = json.loads(out)
    assert code == 1
    load = next(r for r in rep["results"] if r["metric"] == "load_s")
    assert load["status"] == "regression" and "weight loading" in load["likely_cause"]
    # store references: @latest against the previous launch of its deployment
    code, out, err = cli("check", "--db", db)
    assert code == 0, (out, err)
    code, out, _ = cli("explain", "@latest", "--db", db, "--json")
    assert code == 0 and json.loads(out)["kv_tokens"] > 0
    code, out, _ = cli("diff", "@-2", "@latest", "--db", db, "--json")
    assert code == 0 and json.loads(out)["budget"]["kv_tokens"]["delta"] == 0


def test_unknown_store_reference(store_with_history):
    _, db = store_with_history
    assert cli("explain", "ffffffffff", "--db", db)[0] == 2
