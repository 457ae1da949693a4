"""vLLM's statistics lines feed the launch's runtime aggregate (:mod:`logparse.launches.runtime`):
peak KV usage as a share, running and waiting peaks, the generation throughput's distribution;
they are counted as parsed lines and kept as no event."""

from __future__ import annotations

import html
import json
import random

from helpers import SAMPLES, cli, write

from logparse.launches.runtime import Histogram, RuntimeAgg
from logparse.pipeline import parse_text

VLLM = SAMPLES / "vllm"
HEAD = (VLLM / "v1-defaults-0.20.2.log").read_text(encoding="utf-8")


def _stats(minute: int, second: int, gen: float, running: int, waiting: int, usage: float) -> str:
    """A V1 statistics line (0.11.1+: ``Engine 000:`` and its parts), with our own figures."""
    return (
        f"(APIServer pid=900) INFO 05-12 08:{minute:02d}:{second:02d} [loggers.py:257] Engine 000: "
        f"Avg prompt throughput: {gen * 3:.1f} tokens/s, Avg generation throughput: {gen:.1f} tokens/s, "
        f"Running: {running} reqs, Waiting: {waiting} reqs, GPU KV cache usage: {usage:.1f}%, "
        "Prefix cache hit rate: 20.0%\n"
    )


STATS = [(10.0, 1, 0, 0.4), (250.5, 7, 0, 12.5), (301.2, 14, 3, 42.0), (288.0, 12, 1, 38.3), (0.0, 0, 0, 0.0)]
V1_TEXT = HEAD + "".join(_stats(1, 10 * i, *row) for i, row in enumerate(STATS))

#: V0 (0.4.3-0.6.4.post1): ``Swapped`` and ``Pending`` (the waiting queue), a final full stop; a
#: preemption warning is a retraction.
V0_TEXT = (VLLM / "v0-llama-tp2-0.6.6.post1.log").read_text(encoding="utf-8") + (
    "INFO 01-15 12:31:02 metrics.py:467] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: "
    "140.3 tokens/s, Running: 31 reqs, Swapped: 2 reqs, Pending: 9 reqs, GPU KV cache usage: 97.6%, "
    "CPU KV cache usage: 1.5%.\n"
    "WARNING 01-15 12:31:04 scheduler.py:1560] Sequence group cmpl-4f2 is preempted by PreemptionMode.RECOMPUTE "
    "mode because there is not enough KV cache space. This can affect the end-to-end performance. Increase "
    "gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. "
    "total_num_cumulative_preemption=1\n"
)


def test_stats_lines_become_the_runtime_aggregate():
    result = parse_text(V1_TEXT)
    (launch,) = result.launches
    rt = launch.runtime
    assert rt["batch_lines"] == len(STATS)
    assert rt["peak_token_usage"] == 0.42 and rt["peak_running_req"] == 14 and rt["peak_queue_req"] == 3
    assert rt["peak_tokens"] is None and rt["retractions"] == 0
    assert rt["first_runtime_at"].endswith("05-12T08:01:00") and rt["last_runtime_at"].endswith("05-12T08:01:40")
    assert rt["gen_throughput_max"] == 301.2 and rt["gen_throughput_min"] == 0.0
    assert abs(rt["gen_throughput_p50"] - 250.5) <= 0.045 * 250.5
    assert abs(rt["gen_throughput_p90"] - 301.2) <= 0.045 * 301.2
    assert not [e for e in launch.events if e.kind == "vllm_stats"]
    # counted as parsed lines, as every line of the input is accounted for
    assert result.lines.parsed == parse_text(HEAD).lines.parsed + len(STATS)
    assert result.lines.unrecognized == 0


def test_v0_pending_is_the_queue_and_preemptions_are_retractions():
    (launch,) = parse_text(V0_TEXT).launches
    rt = launch.runtime
    assert rt["batch_lines"] == 2 and rt["peak_queue_req"] == 9 and rt["peak_running_req"] == 31
    assert rt["peak_token_usage"] == 0.976
    assert rt["retractions"] == 1


def test_same_keys_as_sglang():
    sglang = parse_text((SAMPLES / "sglang-0.5/llama-0.5.9-dataclass.log").read_text(encoding="utf-8")).launches[0]
    vllm = parse_text(V1_TEXT).launches[0]
    assert sglang.runtime["batch_lines"] and set(RuntimeAgg().to_dict()) == set()
    agg_keys = {k for k in vllm.runtime if not k.startswith("gen_throughput")}
    assert agg_keys <= set(sglang.runtime), agg_keys - set(sglang.runtime)


def test_explain_shows_peak_kv_usage(tmp_path):
    path = write(tmp_path, "vllm-stats.log", V1_TEXT)
    out = cli("explain", str(path)).out
    assert "peak KV cache usage 42%" in out
    assert "peak 14 running request(s)" in out and "queue peak 3" in out
    assert "5 statistics line(s)" in out and "generation throughput median" in out


def _evidence(path) -> str:
    return json.loads(cli("explain", str(path), "--json").out)["runtime_verdict"]["evidence"]


def test_the_reports_word_a_vllm_run_in_vllms_terms(tmp_path):
    """explain, parse and show say a vLLM launch's runtime figures in vLLM's words (its statistics
    lines, KV cache usage, preemptions), from the engine's ``runtime_terms``, not SGLang's."""
    v1, v0 = write(tmp_path, "v1.log", V1_TEXT), write(tmp_path, "v0.log", V0_TEXT)
    evidence = _evidence(v1)
    assert evidence.startswith(
        "the pool never limited it (peak KV cache usage 42%, 0 preemption(s), queue peak 3, peak 14 running "
        "request(s), generation throughput median "
    )
    assert evidence.endswith(", max 301.2 tokens/s; 5 statistics line(s))")
    assert _evidence(v0).startswith("vLLM preempted 1 request(s): the pool ran out (peak KV cache usage 98%, ")
    assert _evidence(v0).endswith("; 2 statistics line(s))")
    parsed = cli("parse", str(v0)).out
    assert "runtime: peak running requests 31, peak KV cache usage 0.98, peak waiting requests 9, preemptions 1" in (
        parsed
    )
    shown = cli("show", f"{v0}#-1", "--wide").out
    assert "requests were preempted" in shown
    header = next(line for line in shown.splitlines() if "peak running requests" in line and "first" in line)
    assert [c.strip() for c in header.split("┃")][:6] == [
        "statistics lines", "peak running requests", "peak KV cache usage", "peak tokens",
        "peak waiting requests", "preemptions",
    ]  # fmt: skip
    for out in (parsed, shown):
        assert "token usage" not in out and "#running-req" not in out and "batch line" not in out


def test_sglangs_words_are_unchanged():
    """SGLang's terms reproduce the reports' wording from before the terms (byte for byte)."""
    path = SAMPLES / "sglang-0.5/llama-0.5.9-dataclass.log"
    assert _evidence(path) == (
        "the pool never limited it (peak token usage 1%, 0 retraction(s), queue peak 0, peak 3 running request(s), "
        "generation throughput median 401.5, p90 401.5, max 401.5 tokens/s; 6 batch line(s))"
    )
    assert "  runtime: peak #running-req 3, peak token usage 0.01, peak #queue-req 0, retractions 0\n" in (
        cli("parse", str(path)).out
    )
    shown = cli("show", f"{path}#-1", "--wide").out
    header = next(line for line in shown.splitlines() if "peak #running-req" in line and "first" in line)
    assert [c.strip() for c in header.split("┃")][:6] == [
        "batch lines", "peak #running-req", "peak token usage", "peak #token", "peak #queue-req", "retractions",
    ]  # fmt: skip


def test_launches_and_metrics_carry_the_peak(tmp_path):
    db = tmp_path / "s.duckdb"
    path = write(tmp_path, "vllm-stats.log", V1_TEXT)
    assert cli("ingest", str(path), db=db).code == 0
    rows = cli("launches", "--json", db=db).out
    assert '"peak_token_usage": 0.42' in rows
    metrics = cli("metrics", db=db).out
    assert any(
        line.startswith("logparse_peak_kv_usage_ratio{") and line.endswith(" 0.42") for line in metrics.splitlines()
    )
    assert any(
        line.startswith("logparse_peak_waiting_requests{") and line.endswith(" 3.0") for line in metrics.splitlines()
    )
    assert "logparse_generation_throughput_max_tokens_per_second{" in metrics


def test_history_and_the_report_carry_the_peak(tmp_path):
    """``history`` and the HTML report carry a vLLM launch's peak KV usage as they do SGLang's: the
    history's ``peak_token_usage`` metric, the report's verdict on the run (explain's, in vLLM's words)."""
    db = tmp_path / "s.duckdb"
    sglang = SAMPLES / "sglang-0.5/llama-0.5.9-dataclass.log"
    for path in (write(tmp_path, "vllm-stats.log", V1_TEXT), sglang):
        assert cli("ingest", str(path), db=db).code == 0
    points = json.loads(cli("history", "--metric", "peak_token_usage", "--json", db=db).out)
    assert {p["engine"]: p["peak_token_usage"] for p in points} == {"vllm": 0.42, "sglang": 0.01}
    page = tmp_path / "report.html"
    assert cli("report", "--html", str(page), "-q", db=db).code == 0
    text = html.unescape(page.read_text(encoding="utf-8"))
    assert "This run: the pool never limited it (peak KV cache usage 42%, 0 preemption(s), queue peak 3," in text
    assert "This run: the pool never limited it (peak token usage 1%, 0 retraction(s), queue peak 0," in text


def test_histogram_merge_is_exact_and_bounded():
    rng = random.Random(7)
    values = [rng.choice([0.0, rng.uniform(0.01, 5e5)]) for _ in range(2000)]
    whole, left, right = RuntimeAgg(), RuntimeAgg(), RuntimeAgg()
    for i, v in enumerate(values):
        for agg in (whole, left if i % 3 else right):
            agg.add_line(None, {}, gen_throughput=v, running_req=i)
    merged = RuntimeAgg()
    merged.merge(left.to_dict())
    merged.merge(right.to_dict())
    assert merged.to_dict() == whole.to_dict()
    assert len(whole.to_dict()["gen_throughput_hist"]) <= Histogram.BUCKETS
    ordered = sorted(values)
    for q in (0.5, 0.9):
        true = ordered[max(0, -(-int(q * len(values) * 1000) // 1000) - 1)]
        got = whole.gen_throughput.quantile(q)
        assert got is not None and abs(got - true) <= 0.045 * true + 0.05


def test_an_aggregate_without_a_distribution_merges():
    """The SGLang bulk path's aggregates carry no distribution: they merge as before."""
    agg = RuntimeAgg()
    agg.merge({"batch_lines": 3, "peak_token_usage": 0.5, "first_runtime_at": "2026-01-01T00:00:00"})
    d = agg.to_dict()
    assert d["batch_lines"] == 3 and d["peak_token_usage"] == 0.5 and "gen_throughput_p50" not in d


def test_the_transformer_reads_every_wording_by_the_spec_labels():
    """The fields of a statistics line are read by the labels of ``grammars/vllm/runtime.toml``: the
    first one too (the grammar's head), V0's ``Pending`` as the queue, a field only some wordings
    print (``Preemptions``), and the device 0.30.0+ names in place of ``GPU`` (the field's ``reads``)."""
    from logparse.engines.vllm.line import parse_line

    head = "(APIServer pid=900) INFO 05-12 08:01:00 [loggers.py:257] "
    _, _, (kind, f, form) = parse_line(
        head + "Engine 001: Avg prompt throughput: 12.5 tokens/s, Avg generation throughput: 77.0 tokens/s, "
        "Running: 5 reqs, Waiting: 2 reqs, Preemptions: 4, XPU KV cache usage: 61.2%, Prefix cache hit rate: 3.0%"
    )
    assert (kind, form) == ("vllm_stats", "engine")
    assert f == {
        "prompt_throughput": 12.5,
        "gen_throughput": 77.0,
        "running": 5,
        "waiting": 2,
        "preemptions": 4,
        "kv_usage_pct": 61.2,
        "prefix_hit_pct": 3.0,
    }
    _, _, (_, f, form) = parse_line(V0_TEXT.splitlines()[-2])
    assert form == "v0" and f["waiting"] == 9 and f["kv_usage_pct"] == 97.6 and f["cpu_kv_usage_pct"] == 1.5
