"""The README's first command ends with a short summary and three commands to try, whose references
are this store's (each is run here); deployments without a model name are labelled as such."""

from __future__ import annotations

import re
import shlex

import pytest
from helpers import ROOT, SAMPLES, cli

from logparse.launches.deployment import short_label


@pytest.fixture(scope="module")
def quick_start(tmp_path_factory):
    db = tmp_path_factory.mktemp("qs") / "history.duckdb"
    code, out, err = cli("ingest", SAMPLES, "--summary", db=db)
    assert code == 0, (out, err)
    return db, out


def _next_commands(out: str) -> list[list[str]]:
    lines = out.splitlines()
    start = lines.index("Try next:")
    return [shlex.split(line)[1:] for line in lines[start + 1 :] if not line.lstrip().startswith("#")]


def test_the_quick_start_ends_with_a_short_summary(quick_start):
    _, out = quick_start
    lines = out.splitlines()
    assert len(lines) <= 25 and max(map(len, lines)) <= 90, out
    assert "┃" not in out and "—" not in out  # no table of every deployment
    head = re.match(r"The store holds (\d+) launches of (\d+) deployments \((\d+) SGLang, (\d+) vLLM\)\.", lines[0])
    assert head, lines[0]
    assert int(head[1]) == int(head[3]) + int(head[4])
    # problems first: every failed start of the samples, each named by its deployment
    attention = out.split("Needs attention")[1].split("Restarted")[0]
    assert attention.count("failed to start") == 5
    assert "/srv/models/Qwen2.5-14B-Instruct: 3 launches, KV tokens 193,257 -> 455,243" in out


def test_the_three_next_commands_run_on_the_store_just_built(quick_start, tmp_path):
    db, out = quick_start
    cmds = _next_commands(out)
    assert [c[0] for c in cmds] == ["explain", "diff", "report"]
    explain, diff, report = cmds
    # the story: the largest deployment that restarted (Kimi-K2.5 on 8 GPUs), its latest launch
    code, text, err = cli(*explain, db=db)
    assert code == 0, err
    assert "159,277" in text
    code, text, err = cli(*diff, db=db)
    assert code == 0, err
    assert "enable_hierarchical_cache: false -> true" in text
    code, text, err = cli("report", "--html", tmp_path / "r.html", db=db)
    assert code == 0, err
    assert report[:2] == ["report", "--html"]
    assert "Kimi-K2.5-INT4" in out.split("Try next:")[1]


def test_a_launch_without_a_model_name_is_labelled_so():
    assert short_label("sglang|?|?|tp=2|dp=1|pp=1|ep=1") == "SGLang (model not in the log) tp=2"
    assert short_label("vllm|node-1|?|tp=1|dp=1|pp=1|ep=1") == "node-1: vLLM (model not in the log)"
    assert short_label("vllm|node-1|org/m|tp=1|dp=1|pp=1|ep=1") == "vllm node-1: org/m"


def test_history_labels_the_0_1_launch_by_its_engine(quick_start):
    db, _ = quick_start
    code, out, _ = cli("history", db=db)
    assert code == 0
    assert "? tp=2" not in out and "SGLang (model not in the log) tp=2" in out


def test_the_readme_s_quick_start_is_two_commands_ending_with_the_summary():
    text = (ROOT / "README.md").read_text()
    block = text.split("## Quick start")[1].split("```sh")[1].split("```")[0].strip().splitlines()
    assert len(block) == 2
    assert block[0].endswith("logparse ingest samples/ --summary")


def test_an_empty_store_s_summary_says_what_to_do():
    from logparse.cli.render_tour import tour_lines

    empty = {"launches": 0, "deployments": 0, "per_engine": {}, "problems": [], "restarted": [], "next": []}
    assert tour_lines(empty) == [
        "The store holds no launch yet: logparse ingest a startup log of SGLang or vLLM (or --journal)."
    ]
