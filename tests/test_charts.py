"""The one chart backend: specs (``logparse.reports.charts``) and their SVG (``logparse.cli.charts``).

Every chart kind is built from real sample launches and checked for what it must say: the figures of
the report it draws (explain's steps, diff's budget and attribution, the store's history), its
tooltips, its axes (dated where launches have start times, steps at restarts), valid SVG with a
``viewBox``; PNG and PDF through the ``plot`` extra, and the one-line message without it.
"""

from __future__ import annotations

import ast
import itertools
import re
import struct
import sys
import xml.etree.ElementTree as ET
from datetime import datetime

import pytest
from helpers import ROOT, SAMPLES, cli, needs_corpus

from logparse.cli.charts import diff_svg, history_svg, raster, svg, waterfall_svg
from logparse.cli.charts import history as history_render
from logparse.pipeline import parse_paths
from logparse.reports import charts as specs
from logparse.reports.diff import diff_launches
from logparse.reports.explain import explain_launch

DEEPSEEK = SAMPLES / "sglang-0.4" / "deepseek-v3-tp8-eagle-0.4.7.log"
RESTARTS = SAMPLES / "sglang-0.5" / "restarts-0.5.12.log"
CRASH_OOM = SAMPLES / "sglang-0.5" / "crash-oom-0.5.6.log"
VLLM = SAMPLES / "vllm" / "v1-defaults-0.20.2.log"
KIMI = (SAMPLES / "kimi-k25" / "launch-1-baseline.log", SAMPLES / "kimi-k25" / "launch-2-hicache.log")
NS = {"s": "http://www.w3.org/2000/svg"}


def _launches(path):
    return parse_paths([str(path)]).launches


def _explain(path) -> dict:
    return explain_launch(_launches(path)[-1]).to_dict()


def _parsed(text: str) -> ET.Element:
    """The SVG as XML (it must parse), with its viewBox, and nothing placed outside it."""
    root = ET.fromstring(text)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert re.fullmatch(r"0 0 \d+ \d+", root.get("viewBox") or "")
    w, h = (float(v) for v in (root.get("viewBox") or "").split()[2:])
    for el in root.iter():
        for name, limit in (("x", w), ("x1", w), ("x2", w), ("cx", w), ("y", h), ("y1", h), ("y2", h), ("cy", h)):
            if el.get(name) is not None:
                assert -1 <= float(el.get(name) or 0) <= limit + 1, (el.tag, el.attrib, "".join(el.itertext()))
    return root


def _titles(root: ET.Element) -> list[str]:
    return [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}title")]


def _texts(root: ET.Element) -> list[str]:
    """Every text, and every line of a text of several lines (its ``tspan``s)."""
    out = []
    for t in root.iter("{http://www.w3.org/2000/svg}text"):
        spans = t.findall("s:tspan", NS)
        out += [s.text or "" for s in spans] if spans else ["".join(t.itertext())]
    return out


# ------------------------------------------------------------------------------ the waterfall


def test_explain_waterfall_of_a_tp8_launch_has_every_step_and_every_rank():
    doc = _explain(DEEPSEEK)
    chart = specs.explain_chart(doc)
    whole, after = chart.panels
    assert [b.label for b in whole.bars] == ["free before weights", "weights", "free after weights"]
    steps = [s for s in doc["waterfall"] if s["gb"] is not None]
    assert [(b.label, b.gb) for b in chart.bars] == [(s["label"], s["gb"]) for s in steps[:3] + steps[2:]]
    kv = next(b for b in after.bars if b.label == "KV pool")
    assert kv.role == "kv" and kv.predicted_gb == pytest.approx(doc["predicted_kv_gb"])
    assert kv.hi == pytest.approx(doc["free_after_weights_gb"]) and kv.lo == pytest.approx(kv.hi - kv.gb)
    held, rest = (b for b in after.bars if b.kind == "note")
    assert (held.lo, held.hi) == (0.0, pytest.approx(doc["reserved_gb"]))  # the notes split the level bottom up
    assert rest.lo == pytest.approx(held.hi) and rest.hi == pytest.approx(held.hi + rest.gb)
    assert after.reserved_gb == pytest.approx(doc["reserved_gb"])
    # every rank's own level after each step, the binding rank's among them
    assert all(len(b.rank_levels) == 8 for b in after.bars if b.kind != "note")
    end = after.bars[-1]
    assert end.label == "headroom left" and min(v for _, v in end.rank_levels) == pytest.approx(end.gb, abs=0.02)
    root = _parsed(waterfall_svg(chart))
    titles = _titles(root)
    assert "KV pool: 31.92 GiB" in titles and "predicted KV pool: 31.92 GiB" in titles
    assert any(t.startswith("held back (1 − f) × M_pre: 26.46") for t in titles)
    assert sum(t.startswith("TP") and " after headroom left: " in t for t in titles) == 8
    assert "/models/DeepSeek-V3-0324 — SGLang 0.4.7" in _texts(root)
    assert any("mem_fraction_static=0.81" in t for t in _texts(root))


def test_explain_waterfall_without_a_start_figure_and_of_a_failed_start():
    vllm = specs.explain_chart(_explain(VLLM))
    (panel,) = vllm.panels
    assert panel.note == specs.NO_START  # vLLM printed no budget line: each step at its size, said so
    assert [(b.label, b.lo) for b in panel.bars][:2] == [("weights", 0.0), ("CUDA-graph estimate", 0.0)]
    assert any(b.label == "KV pool" and b.role == "kv" for b in panel.bars)
    assert specs.NO_START in _texts(_parsed(waterfall_svg(vllm)))
    oom = specs.explain_chart(_explain(CRASH_OOM))
    rest = next(b for b in oom.bars if b.label == "KV budget: the rest")
    assert rest.gb < 0 and rest.lo < rest.hi  # held back more than was free: a deficit, drawn as a span
    text = waterfall_svg(oom)
    assert f"−{abs(rest.gb):,.2f}</text>" in text
    failed = specs.explain_chart(_explain(SAMPLES / "vllm" / "fail-no-kv-memory-journal-0.9.2.log"))
    kv = next(b for b in failed.bars if b.label == "KV pool")
    assert (kv.lo, kv.hi) == (-4.0, 0.0)  # vLLM's negative KV memory of a failed start: left of zero
    assert "−4.00</text>" in waterfall_svg(failed)
    _parsed(waterfall_svg(failed))
    empty = specs.explain_chart({"waterfall": []})
    assert not empty.panels and "no memory figures in this launch" in _texts(_parsed(waterfall_svg(empty)))


def test_the_report_s_budget_chart_is_the_same_renderer_inline():
    doc = _explain(RESTARTS)
    inline = waterfall_svg(specs.explain_chart(doc, "Budget of TP0 (GiB)"), width=420, standalone=False)
    root = _parsed(inline)
    assert root.get("aria-label") == "Budget of TP0 (GiB)" and root.get("width") is None  # scales to its box
    assert 'class="chart"' in inline and "<script" not in inline
    assert set(_titles(_parsed(waterfall_svg(specs.explain_chart(doc))))) >= set(_titles(root))


# ------------------------------------------------------------------------------ diff


def test_diff_chart_of_the_kimi_hicache_restart():
    rep = diff_launches(_launches(KIMI[0])[-1], _launches(KIMI[1])[-1]).to_dict()
    chart = specs.diff_chart(rep)
    bud = rep["budget"]
    assert {p.label: (p.a, p.b) for p in chart.budget}["KV pool"] == (bud["kv_pool_gb"]["a"], bud["kv_pool_gb"]["b"])
    assert next(p.label for p in chart.budget) == "weights" and len(chart.budget) == 9
    assert chart.tokens[0].label == "A (logged)" and chart.tokens[-1].label == "B (logged)"
    assert chart.tokens[0].tokens == rep["attribution"]["a_tokens"] == chart.tokens[-1].tokens
    assert (chart.hicache.a, chart.hicache.b) == (None, pytest.approx(22.39, abs=0.01))
    assert "10:02:14" in chart.a_title and "11:26:43" in chart.b_title
    root = _parsed(diff_svg(chart))
    assert "off" in _texts(root) and "22.39" in _texts(root)
    assert "A: KV pool 10.42 GiB" in _titles(root) and "B: HiCache host pool 22.39 GB per rank" in _titles(root)
    assert any(t.startswith("axis from ") for t in _texts(root))  # the token axis does not start at 0, and says so


def test_diff_attribution_steps_add_up_from_a_to_b():
    launches = _launches(RESTARTS)
    rep = diff_launches(launches[1], launches[2]).to_dict()
    steps = specs.diff_chart(rep).tokens
    level = steps[0].tokens
    for s in steps[1:-1]:
        assert (s.lo, s.hi) == (min(level, level + s.tokens), max(level, level + s.tokens))
        assert s.role == ("up" if s.tokens > 0 else "down" if s.tokens < 0 else "zero")
        level += s.tokens
    assert level == steps[-1].tokens == rep["attribution"]["b_tokens"]
    labels = [s.label for s in steps]
    assert "bytes per token (KV dtype / model / TP)" in labels and "not explained by the formula" in labels
    titles = _titles(_parsed(diff_svg(specs.diff_chart(rep))))
    assert "bytes per token (KV dtype / model / TP): +227,537 tokens" in titles


def test_diff_without_attribution_shows_both_token_counts():
    rep = {"a": {}, "b": {}, "budget": {}, "attribution": {"a_tokens": 100, "b_tokens": 90, "reason": "engines differ"}}
    chart = specs.diff_chart(rep)
    assert chart.tokens_title == "KV tokens (engines differ)" and [s.tokens for s in chart.tokens] == [100, 90]
    root = _parsed(diff_svg(chart))
    assert "no budget figures in either launch" in _texts(root) and "off in both launches" in _texts(root)


# ------------------------------------------------------------------------------ history


@pytest.fixture(scope="module")
def sample_history(tmp_path_factory) -> list[dict]:
    """The samples ingested into a store, and its history rows (kv_tokens and headroom)."""
    from logparse.store import Store

    db = tmp_path_factory.mktemp("charts") / "h.duckdb"
    st = Store(db, lock_timeout=5)
    st.ingest_paths([str(p) for p in sorted(SAMPLES.glob("*/*.log"))])
    res = st.history(metric="headroom_gb", as_rows=True)
    return [dict(zip(res.columns, r)) for r in res.rows]


def _deployment(rows: list[dict], needle: str) -> list[dict]:
    return sorted((r for r in rows if needle in r["deployment"]), key=lambda r: r["launch_no"])


def test_history_of_restarts_is_dated_with_steps_and_labelled_changes(sample_history):
    rows = _deployment(sample_history, "Qwen2.5-14B")
    series = specs.history_series(rows, "headroom_gb", title="Qwen")
    assert series.axis == "time" and series.unit == "GiB"
    assert [p.started_at for p in series.points] == [datetime.fromisoformat(str(r["started_at"])) for r in rows]
    assert [(m.index, m.kind) for m in series.marks] == [(1, "args"), (2, "args")]
    assert series.marks[0].label == "mem_fraction_static: 0.8 -> 0.88"  # history's words
    assert series.marks[0].detail == "arguments changed: mem_fraction_static: 0.8 -> 0.88"
    box = history_render.Box(series, 0, 0, 960, 230, compact=False)
    xs = box.xs
    assert xs[0] < xs[1] < xs[2] and (xs[2] - xs[1]) < (xs[1] - xs[0])  # 24 min after 29 min: spaced by time
    root = _parsed(history_svg(specs.history_chart(rows, "headroom_gb")))
    (line,) = root.iter("{http://www.w3.org/2000/svg}polyline")
    pts = [tuple(map(float, p.split(","))) for p in (line.get("points") or "").split()]
    assert len(pts) == 5  # a step per restart: across at the old figure, then up or down at the restart
    assert pts[1][1] == pts[0][1] and pts[1][0] == pts[2][0] and pts[3][1] == pts[2][1] and pts[3][0] == pts[4][0]
    texts = _texts(root)
    assert "09:30" in texts and "10:00" in texts and "2026-05-18" in texts  # dated ticks
    assert "mem_fraction_static: 0.8 -> 0.88" in texts and "-6.35" in texts  # the change, and its effect
    titles = _titles(root)
    assert "launch 2 · 2026-05-18 09:41:40 · ready: 8.08 GiB" in titles


def test_history_marks_failed_starts_and_falls_back_to_launch_order(sample_history):
    chart = specs.history_chart(sample_history, "headroom_gb")
    assert chart.deployments == len(chart.series) == len({r["deployment"] for r in sample_history})
    failed = [s for s in chart.series if any(p.outcome == "failed" for p in s.points)]
    assert len(failed) >= 3
    root = _parsed(history_svg(chart))
    misses = [t for t in root.iter("{http://www.w3.org/2000/svg}text") if t.get("class") == "miss"]
    assert len(misses) == sum(1 for s in chart.series for p in s.points if p.value is None)
    assert any(t.endswith("· failed: no figure") for t in _titles(root))
    undated = next(r for r in sample_history if r["started_at"] is None)
    alone = specs.history_series([undated], "headroom_gb", title="old", axis="time")
    assert alone.axis == "launch" and alone.note == "in launch order: 1 launch(es) without a start time"
    by_launch = specs.history_series(
        _deployment(sample_history, "Qwen2.5-14B"), "headroom_gb", title="q", axis="launch"
    )
    assert by_launch.axis == "launch"
    assert [t.split()[0] for t in _texts(_parsed(_one_panel(by_launch))) if t.startswith("#")] == ["#1", "#2", "#3"]


def _one_panel(series: specs.HistorySeries) -> str:
    return svg.document(history_render.panel(series, 0, 0, 960, 230, compact=False), 960, 230, "x", standalone=True)


def test_history_chart_caps_the_panels_and_says_so(sample_history):
    chart = specs.history_chart(sample_history, "headroom_gb", limit=3)
    assert len(chart.series) == 3 and chart.deployments > 3
    assert (
        chart.title
        == f"headroom_gb over launches (3 of {chart.deployments} deployments: those with the most launches; "
        "--deployment or --model to plot the others)"
    )
    assert not chart.series[0].points[0].integer
    assert specs.history_series([{"launch_no": 1, "kv_tokens": 5}], "kv_tokens", title="t").points[0].integer


@needs_corpus
def test_history_of_upgrades_and_downgrades_in_the_corpus(tmp_path):
    from helpers import CORPUS

    db = tmp_path / "c.duckdb"
    assert cli("ingest", CORPUS, "--db", db, "-q").code == 0
    svg_path = tmp_path / "c.svg"
    code, _, err = cli("history", "--db", db, "--plot", svg_path)
    assert code == 0, err
    root = _parsed(svg_path.read_text())
    version_lines = [t for t in _titles(root) if t.startswith("version SGLang ")]
    assert len(version_lines) >= 5 and any(" -> 0.5.23" in t for t in version_lines)


# ------------------------------------------------------------------------------ axes


@pytest.mark.parametrize(
    ("t0", "t1", "first", "step_s"),
    [
        ("2026-05-18 09:12:07", "2026-05-18 10:05:55", ["09:15", "2026-05-18"], 900),
        ("2026-05-18 09:12:00", "2026-05-18 09:16:40", ["09:12", "2026-05-18"], 60),
        ("2026-05-18 22:10:00", "2026-05-20 03:00:00", ["00:00", "2026-05-19"], 6 * 3600),
        ("2026-05-01 10:00:00", "2026-05-20 03:00:00", ["05-04", "2026"], 7 * 86400),  # weeks, from Mondays
        ("2025-06-14 08:20:00", "2026-08-03 22:14:00", ["2025-07"], None),  # quarters
    ],
)
def test_date_ticks_are_round_times_with_the_date_where_it_changes(t0, t1, first, step_s):
    a, b = datetime.fromisoformat(t0), datetime.fromisoformat(t1)
    ticks = svg.date_ticks(a, b, 5)
    assert ticks[0][1] == first
    assert all(a <= t <= b for t, _ in ticks) and 2 <= len(ticks) <= 6
    for (t, _), (u, label) in itertools.pairwise(ticks):  # the date is written where it changes, only there
        assert len(label) == (2 if step_s and step_s < 86400 and u.date() != t.date() else 1)
    if step_s:
        assert {(u - t).total_seconds() for (t, _), (u, _) in itertools.pairwise(ticks)} == {float(step_s)}


def test_number_ticks_are_round():
    assert svg.nice_range(0, 455_243 * 1.08, 4)[2] == [0, 200_000, 400_000, 600_000]
    assert svg.nice_range(0, 1.15, 5)[2] == [0, 0.25, 0.5, 0.75, 1.0, 1.25]
    assert [svg.fmt_tick(v, "GiB", 0.25) for v in (0, 0.25, 0.5)] == ["0", "0.25", "0.50"]
    assert [svg.fmt_tick(v, "tokens", 200_000) for v in (0, 200_000, 2_000_000)] == ["0", "200k", "2M"]
    assert svg.fmt_tick(2.5, "GiB", 2.5) == "2.5"


def test_changes_read_from_report_points_and_history_rows_alike():
    """The report's points carry ``changed_args`` (names); the store's rows ``changed_arg_names``."""
    point = {"launch_no": 2, "changed_args": "a, b", "arg_changes": "a: 1 -> 2; b: x -> y"}
    row = {"launch_no": 2, "args_changed": True, "changed_arg_names": ["a", "b"], "arg_changes": "a: 1 -> 2; b: x -> y"}
    assert specs.change_marks(1, point) == specs.change_marks(1, row)
    assert specs.change_marks(1, {"args_changed": False, "changed_args": "a"}) == []
    (mark,) = specs.change_marks(1, {"version_changed": True, "version_change": "0.20.0 -> 0.20.2", "engine": "vllm"})
    assert (mark.label, mark.detail) == ("vLLM 0.20.0 -> 0.20.2", "version vLLM 0.20.0 -> 0.20.2")


# ------------------------------------------------------------------------------ files: SVG, PNG, PDF


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@pytest.mark.parametrize(
    "args",
    [
        ("explain", DEEPSEEK),
        ("explain", VLLM),
        ("diff", *KIMI),
        ("diff", f"{RESTARTS}#1", f"{RESTARTS}#3"),
    ],
    ids=["explain-tp8", "explain-vllm", "diff-hicache", "diff-restarts"],
)
def test_every_chart_as_svg_png_and_pdf(tmp_path, args):
    pytest.importorskip("cairosvg", reason="the plot extra (pip install 'logparse[plot]')")
    out = {}
    for ext in ("svg", "png", "pdf"):
        path = tmp_path / f"chart.{ext}"
        code, _, err = cli(*args, "--plot", path)
        assert code == 0 and f"chart written to {path}" in err, err
        out[ext] = path.read_bytes()
    root = _parsed(out["svg"].decode())
    w = int((root.get("viewBox") or "").split()[2])
    assert _png_size(out["png"])[0] == 2 * w and len(out["png"]) > 20_000  # the same chart, twice as sharp
    assert out["pdf"][:5] == b"%PDF-" and b"/Type /Page" in out["pdf"]


def test_history_png_is_the_svg_rasterized(tmp_path, db, three):
    pytest.importorskip("cairosvg", reason="the plot extra (pip install 'logparse[plot]')")
    assert cli("ingest", three, "--db", db).code == 0
    for ext in ("svg", "png", "pdf"):
        assert cli("history", "--db", db, "--axis", "launch", "--plot", tmp_path / f"h.{ext}").code == 0
    w, h = (int(v) for v in (_parsed((tmp_path / "h.svg").read_text()).get("viewBox") or "").split()[2:])
    assert _png_size((tmp_path / "h.png").read_bytes()) == (2 * w, 2 * h)
    assert (tmp_path / "h.pdf").read_bytes()[:5] == b"%PDF-"
    assert cli("history", "--db", db, "--axis", "sideways").code == 2


@pytest.fixture
def no_plot_extra(monkeypatch):
    """As in an install without the ``plot`` extra: ``import cairosvg`` fails."""
    monkeypatch.setitem(sys.modules, "cairosvg", None)


def test_png_and_pdf_without_the_extra_are_one_line_and_exit_2(no_plot_extra, tmp_path, db, three):
    for ext in ("png", "pdf", "PNG"):
        path = tmp_path / f"x.{ext}"
        code, out, err = cli("explain", DEEPSEEK, "--plot", path)
        assert code == 2 and out == "" and not path.exists()
        assert err == f"logparse: --plot {path}: {raster.NEEDS_EXTRA}\n"
    assert raster.NEEDS_EXTRA == "PNG and PDF need `pip install 'logparse[plot]'`; .svg needs nothing"
    assert cli("diff", *KIMI, "--plot", tmp_path / "d.pdf").code == 2
    assert cli("ingest", three, "--db", db).code == 0
    code, _, err = cli("history", "--db", db, "--plot", tmp_path / "h.png")
    assert code == 2 and err.count("\n") == 1 and "logparse[plot]" in err
    # .svg needs nothing, and neither does the HTML report
    assert cli("explain", DEEPSEEK, "--plot", tmp_path / "x.svg").code == 0
    assert cli("history", "--db", db, "--plot", tmp_path / "h.svg").code == 0
    code, _, err = cli("report", "--html", tmp_path / "r.html", "--db", db, "-q")
    assert code == 0, err
    assert (tmp_path / "r.html").read_text().count("<svg") >= 3


def test_png_without_the_cairo_library_is_one_line(monkeypatch, tmp_path):
    """cairosvg installed but the system has no libcairo: cairocffi raises OSError on import."""
    fake = tmp_path / "site" / "cairosvg"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise OSError(\"no library called 'cairo-2' was found\")\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delitem(sys.modules, "cairosvg", raising=False)
    code, _, err = cli("explain", DEEPSEEK, "--plot", tmp_path / "x.png")
    assert code == 2 and err == f"logparse: --plot {tmp_path / 'x.png'}: {raster.NEEDS_CAIRO}\n"
    assert "libcairo2" in raster.NEEDS_CAIRO


def test_matplotlib_is_gone():
    """No module of the package imports matplotlib, and it is no dependency (PNG/PDF: the plot extra)."""
    for path in (ROOT / "logparse").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                assert not any(n.split(".")[0] == "matplotlib" for n in names), path
    pyproject = (ROOT / "pyproject.toml").read_text()
    deps = pyproject.split("dependencies = [", 1)[1].split("]", 1)[0]
    assert "matplotlib" not in deps and 'plot = ["cairosvg' in pyproject
