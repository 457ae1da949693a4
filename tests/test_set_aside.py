"""One odd line never stops a store: a rank beyond its bound is set aside with its figures (the
launch is kept), and a launch the store still refuses is set aside alone, the rest stored.

Before: a vLLM worker tag ``Worker_TP99999`` on a figure line made a second rank labelled TP0, and
``ingest`` failed on a duplicate key, stopping a directory at that file and a journal's cursor.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import SAMPLES, cli

VLLM_TP2 = SAMPLES / "vllm" / "v1-tags-in-format-0.31.0.log"
SGLANG_TP2 = SAMPLES / "sglang-0.5" / "qwen-tp2-0.5.22-dict.log"
OTHER = SAMPLES / "vllm" / "v1-defaults-0.20.2.log"


def _retag(src: Path, dest: Path, old: str, new: str, line_no: int) -> Path:
    lines = src.read_text().splitlines(keepends=True)
    assert old in lines[line_no - 1], lines[line_no - 1]
    lines[line_no - 1] = lines[line_no - 1].replace(old, new)
    dest.write_text("".join(lines))
    return dest


def _launches(db: Path) -> list[dict]:
    res = cli("launches", "--format", "json", db=db)
    assert res.code == 0, res.err
    return json.loads(res.out)


@pytest.mark.parametrize("tag", ["Worker_TP99999", "Worker_DP70000_TP0"])
def test_vllm_rank_beyond_its_bound_is_set_aside_and_the_launch_stored(tmp_path: Path, tag: str) -> None:
    log = _retag(VLLM_TP2, tmp_path / "odd.log", "Worker_TP0", tag, 11)  # the KV memory line
    db = tmp_path / "h.duckdb"
    res = cli("ingest", log, db=db)
    assert res.code == 0, res.out + res.err
    [row] = _launches(db)
    assert row["kv_tokens"] == 1_399_344
    shown = cli("show", row["launch_id"], "--json", db=db)
    launch = json.loads(shown.out)
    labels = [(r["worker"], r.get("dp_rank"), r.get("tp_rank"), r.get("ep_rank")) for r in launch["ranks"]]
    assert len(labels) == len(set(labels))  # no rank stands in for another
    assert any("no rank to place its figures in: set aside" in w for w in launch["warnings"])


def test_sglang_rank_beyond_its_bound_keeps_the_launch(tmp_path: Path) -> None:
    text = SGLANG_TP2.read_text().replace(" TP1] KV Cache", " TP99999] KV Cache")
    assert "TP99999" in text
    log = tmp_path / "odd.log"
    log.write_text(text)
    db = tmp_path / "h.duckdb"
    assert cli("ingest", log, db=db).code == 0
    assert len(_launches(db)) == 1


@pytest.fixture
def refused(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A launch the store refuses, as it did before rank rows were checked: the phantom rank is kept."""
    import logparse.launches.figures as figures

    monkeypatch.setattr(figures, "_unplaceable", lambda *a, **k: False)
    return _retag(VLLM_TP2, tmp_path_factory.mktemp("refused") / "refused.log", "Worker_TP0", "Worker_TP99999", 11)


def test_a_refused_input_never_stops_a_directory(tmp_path: Path, refused: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a-refused.log").write_text(refused.read_text())
    (folder / "b-good.log").write_text(OTHER.read_text())
    db = tmp_path / "h.duckdb"
    res = cli("ingest", folder, "--json", db=db)
    report = json.loads(res.out)
    status = {Path(s["name"]).name: s for s in report["sources"]}
    assert status["b-good.log"]["status"] == "stored"
    assert status["a-refused.log"]["status"] == "failed"
    assert "set aside, the store refused it" in status["a-refused.log"]["message"]
    assert [r["model_path"] for r in _launches(db)] == ["meta/llama-3.1-8b"]
    assert cli("doctor", db=db).code == 0


def test_a_refused_launch_is_set_aside_and_the_rest_of_its_input_stored(tmp_path: Path, refused: Path) -> None:
    log = tmp_path / "both.log"
    log.write_text(OTHER.read_text() + refused.read_text())
    db = tmp_path / "h.duckdb"
    res = cli("ingest", log, db=db)
    assert res.code == 0, res.out + res.err
    assert "set aside, the store refused it" in res.err + res.out
    assert [r["model_path"] for r in _launches(db)] == ["meta/llama-3.1-8b"]
    sources = cli("query", "SELECT warnings FROM sources", "--format", "json", db=db)
    assert "set aside, the store refused it" in sources.out  # recorded with the input
    again = cli("ingest", log, db=db)  # idempotent
    assert again.code == 0 and len(_launches(db)) == 1
