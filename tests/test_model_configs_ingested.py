"""A model's ``config.json`` among ingested inputs is the model's config, not junk: kept in the
store (``model_configs``), matched to the launches of its model by name, and checked against their
pools by ``explain`` and ``show`` without ``--model-config``; a log read from a file finds the
config beside it the same way."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import SAMPLES, cli

KIMI_LOG = SAMPLES / "kimi-k25" / "launch-2-hicache.log"
KIMI_CONFIG = SAMPLES / "models" / "Kimi-K2.5-INT4" / "config.json"


@pytest.fixture(scope="module")
def kimi_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder as an operator keeps it: the logs, and beside them the model's config."""
    root = tmp_path_factory.mktemp("tree")
    shutil.copy(KIMI_LOG, root / "launch-2.log")
    (root / "Kimi-K2.5-INT4").mkdir()
    shutil.copy(KIMI_CONFIG, root / "Kimi-K2.5-INT4" / "config.json")
    (root / "notes.json").write_text('{"owner": "team-a"}')  # JSON, but no model config
    return root


@pytest.fixture(scope="module")
def kimi_store(kimi_tree: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    db = str(tmp_path_factory.mktemp("db") / "h.duckdb")
    res = cli("ingest", kimi_tree, "--json", db=db)
    assert res.code == 0, res.err
    return db


def test_a_config_is_counted_as_the_models_not_as_an_input_without_engine_lines(kimi_tree, tmp_path):
    res = cli("ingest", kimi_tree, "--json", db=tmp_path / "h.duckdb")
    doc = json.loads(res.out)
    status = {Path(s["name"]).name: s["status"] for s in doc["sources"]}
    assert status == {"launch-2.log": "stored", "config.json": "model_config", "notes.json": "empty"}
    assert "1 model file(s)" in doc["summary"] and "1 input(s) without engine lines" in doc["summary"]
    again = json.loads(cli("ingest", kimi_tree, "--json", db=tmp_path / "h.duckdb").out)
    rows = cli("query", "select model_name, model_type from model_configs", "--json", db=tmp_path / "h.duckdb")
    assert json.loads(rows.out) == [{"model_name": "Kimi-K2.5-INT4", "model_type": "kimi_k25"}]  # once
    assert again["added"] == 0


def test_the_samples_configs_are_none_of_the_inputs_without_engine_lines(tmp_path):
    doc = json.loads(cli("ingest", SAMPLES, "--json", db=tmp_path / "h.duckdb").out)
    empty = [s["name"] for s in doc["sources"] if s["status"] == "empty"]
    assert not [n for n in empty if n.endswith(".json")], empty
    assert sum(s["status"] == "model_config" for s in doc["sources"]) >= 15


@pytest.mark.parametrize("command", ["explain", "show"])
def test_explain_and_show_check_the_stored_config_without_model_config(kimi_store, command):
    doc = json.loads(cli(command, "@latest", "--json", db=kimi_store).out)
    cc = doc["config_check"]
    assert cc["consistent"] is True and cc["bytes_per_token"] == 70_272
    assert cc["config"].endswith("Kimi-K2.5-INT4/config.json")
    text = cli(command, "@latest", db=kimi_store).out
    assert "Model config" in text and "70,272 B/token per rank" in text and "consistent" in text


def test_a_log_read_from_its_file_finds_the_config_beside_it(kimi_tree):
    doc = json.loads(cli("explain", kimi_tree / "launch-2.log", "--json").out)
    assert doc["config_check"]["consistent"] is True
    assert doc["config_check"]["config"] == str((kimi_tree / "Kimi-K2.5-INT4" / "config.json").resolve())


def test_the_samples_kimi_launch_finds_its_config_under_models(tmp_path):
    doc = json.loads(cli("explain", KIMI_LOG, "--json").out)  # samples/models/Kimi-K2.5-INT4/config.json
    assert doc["config_check"]["consistent"] is True


def test_no_config_of_another_model_is_used(tmp_path):
    shutil.copy(KIMI_LOG, tmp_path / "launch.log")
    (tmp_path / "Qwen3-32B").mkdir()
    shutil.copy(SAMPLES / "models" / "Qwen3-32B" / "config.json", tmp_path / "Qwen3-32B" / "config.json")
    doc = json.loads(cli("explain", tmp_path / "launch.log", "--json").out)
    assert "config_check" not in doc


def test_model_config_given_wins_over_the_one_found(tmp_path):
    db = tmp_path / "h.duckdb"
    assert cli("ingest", KIMI_LOG, db=db).code == 0
    doc = json.loads(cli("explain", "@latest", "--json", "--model-config", KIMI_CONFIG, db=db).out)
    assert doc["config_check"]["config"] == str(KIMI_CONFIG)
