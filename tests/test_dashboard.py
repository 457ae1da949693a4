"""The HTML report as a dashboard: problems first (one definition, :mod:`logparse.reports.problems`),
deployments folded, change lines numbered and listed; the budget of releases that print no KV pool
size; ``history --plot`` says which deployments it left out and how to see them."""

from __future__ import annotations

import re
from html import escape

import pytest
from helpers import SAMPLES, cli, cli_process

from logparse.budget.model import launch_budget
from logparse.pipeline import parse_paths
from logparse.reports import charts as specs
from logparse.reports.problems import deployment_problems

#: Sample logs of releases before 0.4.1.post6 (no KV pool size line) that print 'Memory pool end'.
OLD_RELEASES = (
    SAMPLES / "sglang-0.2" / "llama-tp2-0.2.5.log",
    SAMPLES / "sglang-0.3" / "qwen-tp4-0.3.2.log",
    SAMPLES / "sglang-0.3" / "llama-0.3.6-dp-minus-one.log",
)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    d = tmp_path_factory.mktemp("dash")
    db, html = d / "h.duckdb", d / "r.html"
    assert cli_process("ingest", SAMPLES, "--db", db, "-q").returncode == 0
    res = cli_process("report", "--html", html, "--db", db, "-q")
    assert res.returncode == 0, res.stderr
    return db, html.read_text()


@pytest.mark.parametrize("log", OLD_RELEASES, ids=lambda p: p.name)
def test_an_old_release_s_kv_pool_is_the_pools_less_the_request_table(log):
    (launch,) = parse_paths([log]).launches
    b = launch_budget(launch)
    binding = b.rank(b.binding_rank)
    assert b.kv_pool_gb is not None and binding is not None and binding.kv_pool_gb == b.kv_pool_gb
    assert b.kv_pool_gb == pytest.approx(b.predicted_kv_gb, abs=0.05)  # the formula's pool, measured
    assert 0 < (binding.other_pools_gb or 0) < 1.5  # the request table, not the KV pool
    assert "kv_pool_gb" not in b.unknown
    assert any("prints no KV pool size" in n for n in b.formula_notes)


def test_a_release_that_prints_its_pool_keeps_the_printed_size():
    launches = parse_paths([SAMPLES / "sglang-0.5" / "restarts-0.5.12.log"]).launches
    b = launch_budget(launches[0])
    assert b.kv_pool_gb == 35.38 and not any("prints no KV pool size" in n for n in b.formula_notes)


def test_problems_come_first_and_open_the_rest_fold(page):
    _, html = page
    attention = html.split('<section class="attention">', 1)[1].split("</section>", 1)[0]
    assert attention.count("failed start</span>") == 5
    linked = re.findall(r'<a href="#(d\d+)">', attention)
    cards = re.findall(r'<details class="(dep(?: problem)?)" id="(d\d+)"( open)?>', html)
    kinds = [c[0] for c in cards]
    assert kinds == sorted(kinds, key=lambda k: k != "dep problem")  # every problem before the rest
    opened = {c[1] for c in cards if c[2]}
    assert set(linked) <= opened and opened == {c[1] for c in cards if c[0] == "dep problem"}
    assert len(cards) - len(opened) >= 10  # the others are one line each


def test_change_lines_are_numbered_and_listed(page):
    _, html = page
    card = html.split("<h2>/srv/models/Qwen2.5-14B-Instruct</h2>", 1)[1].split('<details class="dep', 1)[0]
    changes = re.findall(r'<li value="(\d)"><span class="meta">([^<]+)</span> ([^<]+)</li>', card)
    assert changes == [
        ("1", "2026-05-18 09:41", escape("arguments changed: mem_fraction_static: 0.8 -> 0.88")),
        ("2", "2026-05-18 10:05", escape('arguments changed: kv_cache_dtype: "auto" -> "fp8_e4m3"')),
    ]
    assert "→" not in card.split("<h3>Answer")[0]  # one value style: history's


def test_the_0_2_budget_on_the_page_has_its_kv_pool(page):
    _, html = page
    card = html.split("<h2>/data/models/Llama-2-13b-chat-hf tp=2</h2>", 1)[1].split('<details class="dep', 1)[0]
    assert "(? GiB)" not in card and "other pools 56.84" not in card
    assert "the log says 148,253 (56.56 GiB)" in card


def test_problems_of_a_history():
    rows = [
        {"launch_id": "a", "launch_no": 1, "outcome": "ready", "kv_tokens": 100, "kv_tokens_change": None},
        {"launch_id": "b", "launch_no": 2, "outcome": "failed", "error_kind": "oom", "kv_tokens": None},
        {
            "launch_id": "c",
            "launch_no": 3,
            "outcome": "ready",
            "kv_tokens": 90,
            "kv_tokens_change": -10,
            "headroom_gb": 1.5,
        },
    ]
    found = deployment_problems("sglang|h|/m|tp=1|dp=1|pp=1|ep=1", rows)
    assert [(p.kind, p.launch_id, p.latest) for p in found] == [
        ("failed_start", "b", False),
        ("kv_drop", "c", True),
        ("low_headroom", "c", True),
    ]
    assert sorted(found, key=lambda p: p.order())[0].kind == "kv_drop"  # the latest launch's first
    assert found[1].text == "KV tokens fell by 10 at the last restart (to 90)"


def test_history_plot_says_what_it_left_out(page, tmp_path):
    db, _ = page
    chart = specs.history_chart(_history_rows(db), "kv_tokens", limit=3)
    assert len(chart.series) == 3 and chart.deployments > 3
    assert f"(3 of {chart.deployments} deployments: those with the most launches; --deployment or --model" in (
        chart.title
    )
    code, _, err = cli("history", "--plot", tmp_path / "h.svg", db=db)
    assert code == 0 and f"({chart.deployments} deployment(s)" in err  # all of them fit


def _history_rows(db):
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        cur = con.execute("SELECT * FROM history ORDER BY deployment, launch_no")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]
    finally:
        con.close()
