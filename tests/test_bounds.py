"""Figures out of their bounds: issue 18, items 1 and 7, and item 8's Unicode digits and 1e38 tokens.

Each probe is a launch in SGLang's own format with one absurd figure (``K size: 1e308 GB``, a
``#tokens:`` of 310 digits or of 10^38, digits of another script, a ``server_args`` nested 500
and 100,000 levels).  Each is parsed, ingested into a real DuckDB store and read back through
``show``, ``explain``, ``diff``, ``check``, ``report --html``, ``metrics`` (Prometheus' own parser),
``history``, ``launches`` and ``watch``'s block; ``doctor`` is healthy after.  The assertions are
on the figures and the warnings: the absurd figure is absent (never 0, never inf) with a warning
naming the line, the field and the raw text; every other figure of the launch is still there; the
store holds what ``parse`` shows.
"""

from __future__ import annotations

import json
import math
import re

import duckdb
import pytest
from helpers import cli, cli_process
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from logparse.grammar import bounds
from logparse.grammar.pyliteral import MAX_DEPTH, LiteralParseError, json_safe_notes, parse_literal
from logparse.pipeline import parse_sources, parse_text
from logparse.sources import text_source

KV_LINE = "KV Cache is allocated. dtype: torch.bfloat16, #tokens: {tokens}, K size: {k} GB, V size: {v} GB"


def launch_log(kv: str | None = None, args: str = "tp_size=1, page_size=1", tag: str = "") -> str:
    """One SGLang 0.5.13-0.5.18 start (dataclass ``server_args``), its KV line given by ``kv``."""
    kv = kv if kv is not None else KV_LINE.format(tokens=120000, k="4.58", v="4.58")
    lines = [
        f"server_args=ServerArgs(model_path='/models/probe', {args})",
        "Load weight begin. avail mem=78.32 GB",
        "Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=62.10 GB, mem usage=16.22 GB.",
        kv,
        "Memory pool end. avail mem=52.80 GB",
        "The server is fired up and ready to roll!",
    ]
    return "".join(f"[2026-10-20 08:01:{i:02d}{tag if 1 <= i <= 4 else ''}] {m}\n" for i, m in enumerate(lines))


def ingest(tmp_path, text: str, name: str = "probe.log"):
    log = tmp_path / name
    log.write_text(text, encoding="utf-8")
    db = tmp_path / "h.duckdb"
    code, _, err = cli("ingest", log, db=db)
    assert code == 0, err
    return log, db


def read_back_everywhere(tmp_path, log, db) -> dict:
    """The launch through every surface; each must answer (exit 0, or 1 for a failed check), never crash."""
    lid = json.loads(cli("launches", "--json", db=db).out)[-1]["launch_id"]
    got: dict = {"id": lid}
    for name, args in {
        "show": ("show", lid, "--json"),
        "explain": ("explain", lid, "--json"),
        "diff": ("diff", lid, lid, "--json"),
        "check": ("check", lid, "--baseline", lid, "--json"),
        "history": ("history", "--format", "json"),
        "launches": ("launches", "--json"),
    }.items():
        code, out, err = cli(*args, db=db)
        assert code in (0, 1) and "Traceback" not in err, (name, err)
        got[name] = json.loads(out)
    for args in (("show", lid), ("explain", lid), ("diff", lid, lid), ("history",)):
        code, out, err = cli(*args, db=db)  # the text renderings too (the rank table's cells)
        assert code == 0 and "Traceback" not in out + err, (args, err)
        got["text " + args[0]] = out
    html = tmp_path / "r.html"
    code, _, err = cli("report", "--html", html, db=db)
    assert code == 0, err
    got["html"] = html.read_text()
    code, out, err = cli("metrics", db=db)
    assert code == 0, err
    got["metrics"] = {s.name: s.value for f in text_string_to_metric_families(out) for s in f.samples}
    watched = cli_process("watch", log, "--once", "--db", tmp_path / "w.duckdb", "--format", "ndjson", "-q")
    assert watched.returncode == 0, watched.stderr
    got["watch"] = json.loads(watched.stdout.decode().splitlines()[0])
    assert cli("doctor", db=db).code == 0
    assert cli("doctor", db=tmp_path / "w.duckdb").code == 0
    return got


def parsed_launch(text: str):
    result = parse_text(text)
    assert len(result.launches) == 1
    return result, result.launches[0]


def assert_same_figure_everywhere(got: dict, name: str, want) -> None:
    """``name`` (a budget figure) is ``want`` on every surface that reports it."""
    assert got["show"]["budget"][name] == want
    assert got["explain"][name] == want
    assert got["diff"]["budget"][name]["a"] == want
    assert {r["metric"]: r for r in got["check"]["results"]}[name]["value"] == want
    assert got["watch"]["budget"][name] == want
    assert next(r for r in got["launches"] if r["launch_id"] == got["id"])[name] == want


# ------------------------------------------------------------------ item 1: 1e308 GB, 310 digits


def test_a_kv_size_of_1e308_gb_is_out_of_range_and_every_surface_reads_the_launch(tmp_path):
    text = launch_log(KV_LINE.format(tokens=1000, k="1e308", v="1e308"))
    _, launch = parsed_launch(text)
    assert "line 4: K size 1e308 out of range (> 1,048,576 GiB): ignored" in launch.warnings
    assert "line 4: V size 1e308 out of range (> 1,048,576 GiB): ignored" in launch.warnings
    rank = launch.ranks[0]
    assert (rank.kv_tokens, rank.k_size_gb, rank.kv_size_gb) == (1000, None, None)
    assert rank.avail_after_pool_gb == 52.80  # the launch's other figures are all there
    got = read_back_everywhere(tmp_path, *ingest(tmp_path, text))
    assert_same_figure_everywhere(got, "kv_tokens", 1000)
    assert_same_figure_everywhere(got, "kv_pool_gb", None)
    assert_same_figure_everywhere(got, "headroom_gb", 52.8)
    assert "out of range" in got["show"]["budget"]["unknown"]["kv_pool_gb"]
    assert "line 4: K size 1e308 out of range (> 1,048,576 GiB): ignored" in got["show"]["warnings"]
    assert "out of range" in got["text show"]  # the KV GiB cell says so, not "—" nor "inf"
    assert "inf" not in got["text show"].replace("info", "")
    assert "K size 1e308 out of range" in got["html"]
    assert got["metrics"]["logparse_kv_tokens"] == 1000
    assert got["metrics"]["logparse_headroom_bytes"] == pytest.approx(52.8 * 2**30)
    assert "logparse_kv_pool_bytes" not in got["metrics"]


def test_a_token_count_of_310_digits_is_out_of_range_not_an_overflow(tmp_path):
    text = launch_log(KV_LINE.format(tokens="9" * 310, k="4.58", v="4.58"))
    _, launch = parsed_launch(text)
    assert any(
        w.startswith("line 4: #tokens 999999999999…999999 (310 characters) out of range") for w in launch.warnings
    )
    assert launch.ranks[0].kv_tokens is None and launch.ranks[0].kv_size_gb == 9.16
    got = read_back_everywhere(tmp_path, *ingest(tmp_path, text))
    assert_same_figure_everywhere(got, "kv_tokens", None)
    assert_same_figure_everywhere(got, "kv_pool_gb", 9.16)
    assert "out of range" in got["show"]["budget"]["unknown"]["kv_tokens"]
    assert "logparse_kv_tokens" not in got["metrics"]


# ------------------------------------------------------------------ item 8: 1e38 tokens, Unicode digits


def test_a_1e38_token_count_is_absent_in_parse_and_in_the_store_alike(tmp_path):
    text = launch_log(KV_LINE.format(tokens=10**38, k="4.58", v="4.58"))
    result, launch = parsed_launch(text)
    parsed = result.to_dict()["launches"][0]
    assert parsed["ranks"][0]["kv_tokens"] is None and parsed["kv_tokens"] is None
    assert f"line 4: #tokens {10**38} out of range (> 1,000,000,000,000 tokens): ignored" in launch.warnings
    log, db = ingest(tmp_path, text)
    con = duckdb.connect(str(db), read_only=True)
    stored = con.execute("SELECT kv_tokens, extra FROM rank_memory").fetchall()
    con.close()
    assert stored[0][0] is None and json.loads(stored[0][1])["pools"][0]["tokens"] is None
    got = read_back_everywhere(tmp_path, log, db)
    assert got["show"]["ranks"][0]["kv_tokens"] is None
    assert got["show"]["warnings"] == launch.warnings


@pytest.mark.parametrize(
    "line, why",
    [
        (KV_LINE.format(tokens="１２００００", k="4.58", v="4.58"), "１２００００ is not a number"),
        (KV_LINE.format(tokens="120000", k="４.58", v="4.58"), "４.58 is not a number"),
        ("Load weight begin. avail mem=٧٨.32 GB", "٧٨.32 is not a number"),
    ],
)
def test_digits_of_another_script_make_a_near_miss_not_a_number(line, why):
    result = parse_text(f"[2026-10-20 08:01:00] {line}\n")
    assert result.lines.unrecognized == 1 and not any(r.kv_tokens for x in result.launches for r in x.ranks)
    assert why + " (digits of another script than ASCII)" in result.unrecognized[0].reason


@pytest.mark.parametrize("tag", [" TP１", " DP٢ TP0"])
def test_a_rank_tag_in_another_scripts_digits_is_no_rank(tag):
    result = parse_text(launch_log(tag=tag))
    assert result.lines.unrecognized == 4 and "another script" in result.unrecognized[0].reason
    assert all(r.tp_rank in (None, 0) and r.dp_rank is None for x in result.launches for r in x.ranks)


def test_a_stamp_in_another_scripts_digits_is_no_stamp():
    result = parse_text("[２０２６-10-20 08:01:03] " + KV_LINE.format(tokens=1000, k="1.00", v="1.00") + "\n")
    assert result.lines.unrecognized == 1 and "digits of another script" in result.unrecognized[0].reason


def test_server_args_in_another_scripts_digits_are_kept_as_text_with_a_warning(tmp_path):
    text = launch_log(args="tp_size=２, page_size=1")
    _, launch = parsed_launch(text)
    assert launch.tp_size == 1  # from the rank tags seen, not from "２"
    assert launch.server_args["tp_size"] == "２" and launch.server_args["page_size"] == 1
    assert (
        "line 1: server_args field tp_size: ２ is not a number (digits of another script than ASCII): kept as text"
        in launch.warnings
    )
    got = read_back_everywhere(tmp_path, *ingest(tmp_path, text))
    assert got["show"]["server_args"]["tp_size"] == "２"
    assert_same_figure_everywhere(got, "kv_tokens", 120000)


# ------------------------------------------------------------------ item 7: deep nesting


@pytest.mark.parametrize("depth", [500, 100_000])
def test_server_args_nested_deeper_than_the_limit_keep_the_rest_of_the_launch(tmp_path, depth):
    deep = "[" * depth + "1" + "]" * depth
    text = launch_log(args=f"tp_size=1, deep={deep}, page_size=16, chunked_prefill_size=8192")
    _, launch = parsed_launch(text)
    args = launch.server_args
    assert args["page_size"] == 16 and args["chunked_prefill_size"] == 8192  # the fields after it are read
    level, n = args["deep"], 0
    while isinstance(level, list):
        level, n = level[0], n + 1
    assert (n, level) == (MAX_DEPTH - 1, f"<nested deeper than {MAX_DEPTH} levels>")
    assert any(
        w.startswith("line 1: server_args field deep[0]") and "nested deeper than 32" in w for w in launch.warnings
    )
    got = read_back_everywhere(tmp_path, *ingest(tmp_path, text))
    assert got["show"]["server_args"] == args
    assert_same_figure_everywhere(got, "kv_tokens", 120000)


def test_nesting_within_the_limit_is_read_whole():
    value = parse_literal("{'a': " + "[" * (MAX_DEPTH - 1) + "7" + "]" * (MAX_DEPTH - 1) + "}")
    safe, notes = json_safe_notes(value)
    assert notes == [] and json.dumps(safe).count("[") == MAX_DEPTH - 1 and "7" in json.dumps(safe)


def test_a_parsed_literal_is_the_caller_s_own():
    """:func:`parse_literal` keeps the values it read by their text (the same payload is parsed once):
    a caller that changes the value it got, at any depth, changes no other caller's."""
    from logparse.grammar.pyliteral import ReprRecord

    text = "ServerArgs(model_path='/m', cfg=Cfg(decode={'bs': [1, 2]}), tags=['a'], n=3)"
    first = parse_literal(text)
    first["n"] = 4
    first["cfg"]["decode"]["bs"].append(3)
    first["cfg"].record_name = "Other"
    first["tags"].clear()
    second = parse_literal(text)
    assert second == {"model_path": "/m", "cfg": {"decode": {"bs": [1, 2]}}, "tags": ["a"], "n": 3}
    assert isinstance(second, ReprRecord) and second.record_name == "ServerArgs"
    assert isinstance(second["cfg"], ReprRecord) and second["cfg"].record_name == "Cfg"
    with pytest.raises(LiteralParseError):
        parse_literal("{'a': ")
    with pytest.raises(LiteralParseError):  # an unreadable text stays unreadable
        parse_literal("{'a': ")


def test_deep_startup_timings_stay_shallow(tmp_path):
    nested = "{x=" * 5000 + "1" + "}" * 5000
    text = launch_log() + f"[2026-10-20 08:01:07] Engine startup timings (s): load_weight=0.08, cuda_graph={nested}\n"
    _, launch = parsed_launch(text)
    timings = launch.runtime["startup_timings"]
    assert timings["load_weight"] == 0.08
    ingest(tmp_path, text)  # JSON for the store, no RecursionError


# ------------------------------------------------------------------ a store an older logparse wrote


def test_a_store_with_text_and_huge_figures_where_numbers_belong_is_read_defensively(tmp_path):
    """What main wrote for ``K size: 1e308 GB`` before the bounds: "inf" (text) in the pool's JSON,
    1e308 in the DOUBLE columns, "inf" in the runtime's JSON.  Every surface still reads it."""
    text = launch_log() + (
        "[2026-10-20 08:01:07] Decode batch, #running-req: 1, #token: 900, token usage: 0.01, cuda graph: True, "
        "gen throughput (token/s): 1.00, #queue-req: 0\n"
    )
    log, db = ingest(tmp_path, text)
    con = duckdb.connect(str(db))
    (extra,) = con.execute("SELECT extra FROM rank_memory").fetchone()
    extra = json.loads(extra)
    extra["pools"][0]["kv_gb"] = "inf"
    extra["pools"][0]["tokens"] = 10**38
    con.execute("UPDATE rank_memory SET extra = ?, k_size_gb = 1e308, avail_after_pool_gb = 1e308", [json.dumps(extra)])
    (runtime,) = con.execute("SELECT runtime FROM runtime_stats").fetchone()
    runtime = json.loads(runtime) | {"peak_token_usage": "inf", "peak_tokens": 10**23}
    con.execute("UPDATE runtime_stats SET runtime = ?", [json.dumps(runtime)])
    con.execute("""UPDATE events SET fields = '{"avail_gb": "nan"}' WHERE kind = 'pool_end'""")
    con.close()
    got = read_back_everywhere(tmp_path, log, db)
    warnings = got["show"]["warnings"]
    assert "stored figure target rank TP0: extra.pools[0].kv_gb inf not a number: ignored" in warnings
    assert any(w.startswith("stored figure target rank TP0: avail_after_pool_gb=1e+308 out of range") for w in warnings)
    assert "stored figure runtime.peak_token_usage inf not a number: ignored" in warnings
    assert "stored figure line 5: avail mem nan not a number: ignored" in warnings
    assert got["show"]["budget"]["headroom_gb"] == 62.1  # the lowest free figure still trusted, not 1e308
    assert got["show"]["runtime"]["peak_token_usage"] is None


# ------------------------------------------------------------------ numbers near the bounds, both paths

#: Texts a figure may be printed as near each bound: in range, just out, far out, not finite.
_NEAR_COUNTS = st.sampled_from([0, 1, 7, 10**12 - 1, 10**12, 10**12 + 1, 2**63 - 1, 2**63, 10**30, -1]).map(str)
_ANY_COUNT = st.one_of(
    _NEAR_COUNTS,
    st.integers(0, 10**12).map(str),
    st.sampled_from(["9" * 310, "1e30", "5.0", "nan", "inf", "１２", "0012"]),
)
_USAGE = st.one_of(
    st.sampled_from(["0.00", "1.00", "1.01", "0.99", "-0.00", "-0.01", "1e308", "1e400", "nan", "inf", "0.5e1", "1"]),
    st.floats(0, 1.2, allow_nan=False).map(lambda f: f"{f:.2f}"),
)


def _decode(i: int, running: str, tokens: str, usage: str, queue: str) -> str:
    return (
        f"[2026-10-20 08:{2 + i // 60:02d}:{i % 60:02d} TP0] Decode batch, #running-req: {running}, #token: {tokens}, "
        f"token usage: {usage}, cuda graph: True, gen throughput (token/s): 12.00, #queue-req: {queue}"
    )


def _valid(text: str, bound: bounds.Bound):
    value = bounds.read_number(text)
    return value if value is not None and bound.holds(value) else None


def _summary(result):
    return (
        result.lines.to_dict(),
        [(x.launch_id, x.runtime, x.warnings, [r.to_dict() for r in x.ranks]) for x in result.launches],
        [(u.line_no, u.reason) for u in result.unrecognized],
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_ANY_COUNT, _ANY_COUNT, _USAGE, _ANY_COUNT), min_size=1, max_size=12))
def test_batch_figures_near_their_bounds_read_the_same_on_both_paths(figures):
    """The record path and the bulk path (numpy templates, polars, blocks of every size) give the
    same peaks, warnings and near misses; the peaks are the largest figures within their bounds."""
    batch = [_decode(i, *f) for i, f in enumerate(figures)] * 3
    text = launch_log() + "\n".join(batch) + "\n"
    records = _summary(parse_sources([text_source("x", text)], bulk=False))
    for block in (4096, 1 << 20):
        assert _summary(parse_sources([text_source("x", text)], bulk="force", block_bytes=block)) == records
    read = [f for f in figures if not any(bounds.has_foreign_digits(x) for x in f)]  # the others are near misses
    runtime = records[1][0][1]
    for i, (name, bound) in enumerate(
        [("peak_running_req", bounds.COUNT), ("peak_tokens", bounds.TOKENS), ("peak_token_usage", bounds.FRACTION)]
    ):
        valid = [v for f in read if (v := _valid(f[i], bound)) is not None]
        assert runtime.get(name) == (max(valid) if valid else None), name
    odd = sum(1 for f in read if any(_valid(x, b) is None for x, b in zip(f, _BATCH_BOUNDS)))
    assert any(w.endswith(": ignored") for w in records[1][0][2]) == (odd > 0)
    assert records[0]["unrecognized"] == 3 * (len(figures) - len(read))


_BATCH_BOUNDS = (bounds.COUNT, bounds.TOKENS, bounds.FRACTION, bounds.COUNT)

_GIB = st.one_of(
    st.sampled_from([2**20, 2**20 + 0.01, 1048575.99, 0.0, -0.01, -(2**20) - 1, 1e308, math.inf, math.nan]),
    st.floats(-(2**21), 2**21, allow_nan=False),
)


def _gib_text(v: float) -> str:
    return "nan" if math.isnan(v) else "inf" if math.isinf(v) else f"{v:.2f}" if abs(v) < 1e15 else repr(v)


@settings(max_examples=60, deadline=None)
@given(_GIB, _GIB, st.sampled_from([0, 1, 10**12, 10**12 + 1, 2**63, 10**38]) | st.integers(0, 10**13))
def test_kv_figures_near_their_bounds_are_kept_or_set_aside_with_a_warning(k, v, tokens):
    text = launch_log(KV_LINE.format(tokens=tokens, k=_gib_text(k), v=_gib_text(v)))
    _, launch = parsed_launch(text)
    rank = launch.ranks[0]
    for printed, got, label in ((_gib_text(k), rank.k_size_gb, "K size"), (_gib_text(v), rank.v_size_gb, "V size")):
        want = _valid(printed, bounds.MEMORY)
        assert got == want
        assert any(w.startswith(f"line 4: {label} {printed} ") for w in launch.warnings) == (want is None)
    assert rank.kv_tokens == (tokens if tokens <= 10**12 else None)
    for x in (rank.k_size_gb, rank.v_size_gb, rank.kv_size_gb):
        assert x is None or (math.isfinite(x) and abs(x) <= 2**21 + 1)
    json.dumps(launch.to_dict(), allow_nan=False)  # what the store's JSON columns can hold


def test_kv_figures_at_their_bounds_round_trip_through_the_store(tmp_path):
    """A launch per figure at, just inside and just outside its bound: the store holds what parse shows."""
    cases = [("1048576.00", "0.00", 10**12), ("1048576.01", "-0.01", 10**12 + 1), ("1e308", "nan", 2**63)]
    for i, (k, v, tokens) in enumerate(cases):
        text = launch_log(KV_LINE.format(tokens=tokens, k=k, v=v)).replace("2026-10-20", f"2026-10-{21 + i}")
        (tmp_path / f"p{i}.log").write_text(text)
    db = tmp_path / "h.duckdb"
    assert cli("ingest", *sorted(tmp_path.glob("p*.log")), db=db).code == 0
    for i, path in enumerate(sorted(tmp_path.glob("p*.log"))):
        parsed = parse_text(path.read_text()).launches[0]
        stored = json.loads(cli("show", parsed.launch_id, "--json", db=db).out)
        assert stored["ranks"] == [r.to_dict() for r in parsed.ranks], cases[i]
        assert stored["warnings"] == parsed.warnings
    assert cli("doctor", db=db).code == 0


def test_vllm_figures_out_of_range_are_set_aside_with_the_line(tmp_path):
    from helpers import SAMPLES

    lines = (SAMPLES / "vllm" / "v1-defaults-0.20.2.log").read_text().split("\n")
    kv_memory = next(i for i, x in enumerate(lines) if "Available KV cache memory: " in x)
    kv_size = next(i for i, x in enumerate(lines) if "GPU KV cache size: " in x)
    lines[kv_memory] = re.sub(r"memory: [0-9.]+ GiB", "memory: 1e308 GiB", lines[kv_memory])
    lines[kv_size] = re.sub(r"size: [0-9,]+ tokens", f"size: {10**38} tokens", lines[kv_size])
    text = "\n".join(lines)
    _, launch = parsed_launch(text)
    assert f"line {kv_memory + 1}: KV size 1e308 out of range (> 1,048,576 GiB): ignored" in launch.warnings
    assert any(w.startswith(f"line {kv_size + 1}: kv_tokens {10**38} out of range") for w in launch.warnings)
    assert launch.kv_tokens is None and launch.ranks[0].kv_size_gb is None
    got = read_back_everywhere(tmp_path, *ingest(tmp_path, text))
    assert_same_figure_everywhere(got, "kv_tokens", None)
    assert_same_figure_everywhere(got, "kv_pool_gb", None)
    assert "out of range" in got["show"]["budget"]["unknown"]["kv_tokens"]


def test_a_rank_tag_beyond_any_cluster_is_no_rank_and_builds_no_range():
    text = launch_log(tag=" TP99999999999")  # tp_size from the tags seen would be 10^11 ranks
    _, launch = parsed_launch(text)
    assert [r.tp_rank for r in launch.ranks] == [0] and launch.tp_size == 1
    assert "line 2: rank tag TP99999999999 out of range (> 65,536): ignored" in launch.warnings


@pytest.mark.parametrize(
    ("gpu", "why"), [("nan", "not finite"), ("1e+308", "out of range"), ("9" * 40, "out of range")]
)
def test_a_gpu_id_tag_that_is_no_rank_is_set_aside(gpu, why):
    """0.1-0.2's ``[gpu_id=N]``: the grammar reads any number there; ``nan`` crashed the assembly
    (``range(nan)``) and 10^308 built a range of that many ranks (found by the fuzz tests)."""
    text = (
        f"[gpu_id={gpu}] Load weight begin. avail mem=51.06 GB\n"
        f"[gpu_id={gpu}] Load weight end. type=MixtralForCausalLM, avail mem=41.06 GB\n"
    )
    (launch,) = parse_text(text).launches
    assert [r.tp_rank for r in launch.ranks] == [0] and launch.tp_size == 1
    assert any(w.startswith("line 1: rank tag gpu_id=") and why in w for w in launch.warnings), launch.warnings


@pytest.mark.parametrize("free", ["0.00", "1e-320"])
def test_no_free_memory_before_the_weights_sizes_nothing_and_crashes_nothing(tmp_path, free):
    """``avail mem=0.00 GB`` at 'Load weight begin' is within bounds, but every what-if divides by
    it: explain --margin and diff raised ZeroDivisionError (1e-320: OverflowError) (found by the
    fuzz tests). The formula says why it cannot size the launch; every surface answers."""
    from readback import expect, run

    log = launch_log(args="tp_size=1, page_size=1, mem_fraction_static=0.8")
    good = tmp_path / "good.log"
    good.write_text(log)
    bad = tmp_path / "bad.log"
    bad.write_text(log.replace("Load weight begin. avail mem=78.32 GB", f"Load weight begin. avail mem={free} GB"))
    text = expect(run("explain", "--margin", "3", bad), {0}).out
    assert "the sizing formula cannot use it" in " ".join(text.split())
    expect(run("explain", "--json", bad), {0})
    expect(run("diff", good, bad), {0})
    expect(run("check", "--baseline", good, bad), {0, 1})
