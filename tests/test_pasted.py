"""The logs users paste into issues: forks' words in the bracket, fragments, cut and wrapped
``server_args`` lines, glog lines of C++ code, a journal holding other units, a directory with
binary files beside the logs.

Every sample here is written by us, in the real formats, with our own numbers.  Each input
goes through the record path and the vectorized bulk path (``bulk="force"``): both must give
the same lines, launches and figures, and every line is accounted for.
"""

from __future__ import annotations

import json

import polars as pl
import pytest

from logparse.engines.sglang import bulk_blocks, bulk_classify
from logparse.engines.sglang import prefix as sglang_prefix
from logparse.engines.sglang.figures import role_of_word
from logparse.engines.sglang.line import parse_line
from logparse.grammar.classify import NOISE, LineClassifier, clean_text
from logparse.grammar.pyliteral import parse_literal_prefix, payload_shape
from logparse.pipeline import parse_sources
from logparse.sources import open_inputs, text_source
from logparse.sources.records import Record


def _summary(result):
    return (
        result.lines.to_dict(),
        [
            (
                launch.launch_id,
                launch.outcome,
                launch.role,
                launch.tp_size,
                launch.server_args,
                launch.max_total_num_tokens,
                launch.hicache_host_gb,
                launch.warnings,
                [r.to_dict() for r in launch.ranks],
                launch.runtime,
            )
            for launch in result.launches
        ],
        [(u.line_no, u.reason, u.text) for u in result.unrecognized],
    )


def both_paths(tmp_path, text: str, name: str = "pasted.log", block_bytes: int = 1 << 20):
    """The result of the record path, after checking that the bulk path gives the same."""
    path = tmp_path / name
    path.write_text(text)
    records = parse_sources(open_inputs([str(path)]), bulk=False)
    vectorized = parse_sources(open_inputs([str(path)]), bulk="force", block_bytes=block_bytes)
    assert _summary(vectorized) == _summary(records)
    lc = records.lines
    assert lc.total == text.count("\n")
    assert lc.parsed + lc.noise + lc.unrecognized + lc.other_units == lc.total
    return records


# ---------------------------------------------------------------------------------------------
# 3. extra words in the bracket

DISAGG_DECODE = """\
[2025-12-02 07:04:40] server_args=ServerArgs(model_path='/models/Qwen3-32B', tp_size=2, mem_fraction_static=0.81, disaggregation_mode='decode')
[2025-12-02 07:04:51 DisaggregationMode.DECODE TP1] Load weight begin. avail mem=77.10 GB
[2025-12-02 07:04:51 DisaggregationMode.DECODE TP0] Load weight begin. avail mem=77.12 GB
[2025-12-02 07:05:20 DisaggregationMode.DECODE TP0] Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=46.40 GB, mem usage=30.72 GB.
[2025-12-02 07:05:20 DisaggregationMode.DECODE TP1] Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=46.38 GB, mem usage=30.72 GB.
[2025-12-02 07:05:21 DisaggregationMode.DECODE TP0] KV Cache is allocated. #tokens: 612004, K size: 18.68 GB, V size: 18.68 GB
[2025-12-02 07:05:21 DisaggregationMode.DECODE TP1] KV Cache is allocated. #tokens: 612004, K size: 18.68 GB, V size: 18.68 GB
[2025-12-02 07:05:21 DisaggregationMode.DECODE TP0] Memory pool end. avail mem=8.61 GB
[2025-12-02 07:05:21 DisaggregationMode.DECODE TP1] Memory pool end. avail mem=8.59 GB
[2025-12-02 07:05:30 DisaggregationMode.DECODE TP0] max_total_num_tokens=612004, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=2048, context_len=40960, available_gpu_mem=8.20 GB
[2025-12-02 07:05:31 DisaggregationMode.DECODE TP0] Decode batch. #running-req: 12, #token: 20480, token usage: 0.03, #queue-req: 0
[2025-12-02 07:05:32 DisaggregationMode.DECODE TP0] some other line of the decode server
[2025-12-02 07:05:33] The server is fired up and ready to roll!
"""


def test_bracket_words_on_every_path():
    """Grammar, fast path and bulk path find the stamp and the rank tag, and keep the word."""
    line = "[2025-12-02 07:04:51 DisaggregationMode.DECODE TP1] Load weight begin. avail mem=77.10 GB"
    prefix, _, (kind, fields, _) = parse_line(line)
    assert prefix == {"stamp": "2025-12-02 07:04:51", "tags": ["TP1"], "words": ["DisaggregationMode.DECODE"]}
    assert kind == "load_begin" and fields == {"avail_gb": 77.1}
    m = sglang_prefix.PREFIX_RE.match(line)
    assert sglang_prefix.prefix_fields(m) == prefix and line[m.end() :].startswith("Load weight begin")
    found = pl.Series([line]).str.extract_groups(bulk_classify.PREFIX_PATTERN).to_list()[0]
    assert sglang_prefix.split_items(found["tags"]) == (["TP1"], ["DisaggregationMode.DECODE"])
    # a word that only starts like a tag is a word; a tag in the words' place is still a tag
    assert parse_line("[2025-12-02 07:04:51 TP1x EP2] Init torch distributed begin.")[0]["words"] == ["TP1x"]
    assert parse_line("[2025-12-02 07:04:51 prefill DP1 TP3] Init torch distributed begin.")[0]["tags"] == [
        "DP1",
        "TP3",
    ]


def test_bracket_word_is_the_launch_role(tmp_path):
    result = both_paths(tmp_path, DISAGG_DECODE)
    assert result.lines.unrecognized == 0
    (launch,) = result.launches
    assert launch.role == "decode" and launch.outcome == "ready" and launch.tp_size == 2
    assert [r.kv_tokens for r in launch.ranks] == [612004, 612004]
    assert launch.runtime["peak_running_req"] == 12
    assert not [w for w in launch.warnings if "word" in w or "role" in w]
    assert launch.to_dict()["role"] == "decode"


def test_prefill_role_and_other_words(tmp_path):
    text = (
        "[2025-12-02 07:04:51 prefill TP0 node-7] Load weight begin. avail mem=77.10 GB\n"
        "[2025-12-02 07:05:20 prefill TP0 node-7] Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, "
        "avail mem=46.40 GB, mem usage=30.72 GB.\n"
        "[2025-12-02 07:05:21 prefill TP0 node-7] Memory pool end. avail mem=8.61 GB\n"
    )
    (launch,) = both_paths(tmp_path, text).launches
    assert launch.role == "prefill"
    assert [w for w in launch.warnings if "'node-7'" in w and "name no rank and no role" in w]
    assert launch.ranks[0].avail_after_pool_gb == 8.61


def test_role_words():
    assert role_of_word("DisaggregationMode.DECODE") == "decode"
    assert role_of_word("DisaggregationMode.PREFILL") == role_of_word("Prefill") == "prefill"
    assert role_of_word("DisaggregationMode.NULL") == ""  # said, and not a role
    assert role_of_word("node-7") is None


def test_role_from_server_args_and_conflicts(tmp_path):
    args_only = DISAGG_DECODE.replace("DisaggregationMode.DECODE ", "")
    assert both_paths(tmp_path, args_only).launches[0].role == "decode"
    mixed = DISAGG_DECODE.replace(
        "[2025-12-02 07:05:20 DisaggregationMode.DECODE TP1]", "[2025-12-02 07:05:20 DisaggregationMode.PREFILL TP1]"
    )
    (launch,) = both_paths(tmp_path, mixed, "mixed.log").launches
    assert launch.role == "decode"  # server_args decides when the prefix says both
    assert [w for w in launch.warnings if "both a prefill and a decode" in w]


def test_role_column_in_the_store(tmp_path, store):
    store.ingest_text(DISAGG_DECODE, name="decode.log")
    assert store.query("SELECT role FROM launches")["role"].to_list() == ["decode"]
    assert store.load_launch("@latest").role == "decode"


def test_migration_6_adds_role_and_other_units(tmp_path):
    import duckdb

    from logparse.store import Store, schema
    from logparse.store import db as dbm

    path = tmp_path / "v5.duckdb"
    con = duckdb.connect(str(path))
    dbm.migrate(con, to=5)
    con.execute("ALTER TABLE launches DROP COLUMN role")  # as migration 4 left a store before this release
    cols = {r[0] for r in con.execute("SELECT * FROM launches LIMIT 0").description}
    assert "role" not in cols
    con.close()
    s = Store(path)
    s.ingest_text(DISAGG_DECODE, name="decode.log")
    assert s.query("SELECT role FROM launches")["role"].to_list() == ["decode"]
    assert s.query("SELECT other_units FROM sources")["other_units"].to_list() == [0]
    assert s.query("SELECT max(version) AS v FROM schema_version")["v"][0] == schema.SCHEMA_VERSION


# ---------------------------------------------------------------------------------------------
# 4. fragments

FRAGMENT = """\
another bug [2026-07-18 03:03:06 TP5] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=41.27 GB, mem usage=36.12 GB.
[2026-07-18 03:03:06 TP4] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=41.31 GB, mem usage=36.12 GB.
[2026-07-18 03:03:09 TP5] KV Cache is allocated. #tokens: 402112, KV size: 26.31 GB
[2026-07-18 03:03:09 TP4] KV Cache is allocated. #tokens: 402112, KV size: 26.31 GB
[2026-07-18 03:03:09 TP5] Memory pool end. avail mem=13.80 GB
[2026-07-18 03:03:10 TP4] Memory pool end. avail mem=13.84 GB
[2026-07-18 03:03:11 TP5] Allocating 105.41 GB host memory for hierarchical KV cache.
[2026-07-18 03:03:11 TP4] Allocating 105.41 GB host memory for hierarchical KV cache.
"""


def test_prefix_found_after_leading_junk_on_every_path():
    line = "another bug [2026-07-18 03:03:06 TP5] Memory pool end. avail mem=13.80 GB"
    text, notes = clean_text(line)
    assert text.startswith("[2026-07-18") and notes
    assert parse_line(text)[0]["tags"] == ["TP5"]
    res = LineClassifier().classify(Record(1, line))
    assert res.status == "parsed" and res.reason == "pool_end"
    # the sources layer cuts it too (record path and bulk path alike)
    (rec,) = list(text_source("x", line + "\n").records())
    assert rec.text.startswith("[2026-07-18 03:03:06 TP5] ")


def test_fragment_is_an_incomplete_launch_with_its_figures(tmp_path):
    result = both_paths(tmp_path, FRAGMENT)
    assert result.lines.to_dict() == {"total": 8, "parsed": 8, "noise": 0, "unrecognized": 0, "other_units": 0}
    (launch,) = result.launches
    assert launch.outcome == "incomplete" and launch.server_args is None
    by_rank = {r.tp_rank: r for r in launch.ranks}
    assert set(by_rank) == {4, 5}
    assert by_rank[5].avail_after_load_gb == 41.27 and by_rank[5].weights_gb == 36.12
    assert by_rank[4].kv_tokens == 402112 and by_rank[4].kv_size_gb == 26.31
    assert by_rank[4].avail_after_pool_gb == 13.84
    assert launch.hicache_host_gb == 105.41
    assert any("start of this launch is not in the input" in w for w in launch.warnings)
    assert any("lower bound" in w for w in launch.warnings)  # tp_size=6 from TP4/TP5 only


def test_hicache_lines_alone_are_a_launch(tmp_path):
    text = "".join(line + "\n" for line in FRAGMENT.splitlines()[-2:])
    (launch,) = both_paths(tmp_path, text).launches
    assert launch.hicache_host_gb == 105.41 and launch.outcome == "incomplete"


def test_a_fragment_after_a_finished_launch_is_another_launch(tmp_path):
    """The same ranks print their memory lines again, with no load line before them: a piece of
    another start (a draft model's lines come after its own load line)."""
    first = DISAGG_DECODE.replace("DisaggregationMode.DECODE ", "")
    again = "".join(line.replace("TP5]", "TP1]").replace("TP4]", "TP0]") + "\n" for line in FRAGMENT.splitlines()[1:4])
    text = first + "and the second try:\n" + again
    result = both_paths(tmp_path, text)
    assert [launch.outcome for launch in result.launches] == ["ready", "incomplete"]
    assert {r.tp_rank: r.kv_tokens for r in result.launches[0].ranks} == {0: 612004, 1: 612004}
    second = result.launches[1]
    assert {r.tp_rank: r.kv_tokens for r in second.ranks} == {0: 402112, 1: 402112}
    assert {r.tp_rank: r.avail_after_load_gb for r in second.ranks} == {0: 41.31, 1: None}
    assert [u.text for u in result.unrecognized] == ["and the second try:"]


def test_fragment_in_the_store(store):
    report = store.ingest_text(FRAGMENT, name="fragment.log")
    assert report.added == 1
    row = store.query("SELECT outcome, hicache_host_gb FROM launches").row(0)
    assert row == ("incomplete", 105.41)


# ---------------------------------------------------------------------------------------------
# 5. a cut or wrapped server_args line

ARGS = (
    "ServerArgs(model_path='/models/Llama-3.1-8B-Instruct', tokenizer_path='/models/Llama-3.1-8B-Instruct', "
    "tokenizer_mode='auto', skip_tokenizer_init=False, load_format='auto', trust_remote_code=False, "
    "context_length=None, mem_fraction_static=0.83, max_running_requests=None, max_total_tokens=None, "
    "chunked_prefill_size=8192, max_prefill_tokens=16384, schedule_policy='fcfs', page_size=1, device='cuda', "
    "tp_size=2, pp_size=1, cuda_graph_bs=[1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, "
    "128, 136, 144, 152, 160], kv_cache_dtype='auto', dp_size=1, enable_dp_attention=False, "
    "speculative_algorithm=None, enable_hierarchical_cache=False, hicache_ratio=2.0)"
)
DICT_ARGS = (
    "{'model_path': '/models/Llama-3.1-8B-Instruct', 'tokenizer_path': '/models/Llama-3.1-8B-Instruct', "
    "'mem_fraction_static': 0.83, 'tp_size': 2, 'page_size': 1, 'cuda_graph_config': {'decode': {'backend': "
    "'full', 'max_bs': 160, 'bs': [1, 2, 4, 8]}, 'prefill': {'backend': 'eager'}}, 'kv_cache_dtype': 'auto', "
    "'dp_size': 1, 'forward_hooks': None}"
)
REST = """\
[2026-07-20 09:00:12 TP0] Load weight begin. avail mem=78.50 GB
[2026-07-20 09:00:12 TP1] Load weight begin. avail mem=78.50 GB
"""


def test_payload_shape():
    assert payload_shape(ARGS).closed and payload_shape(DICT_ARGS).closed
    cut = payload_shape(ARGS[:300])
    assert not cut.closed and not cut.broken and cut.opener == "("
    assert payload_shape("ServerArgs(a='x)', b=[1, 2)").broken
    assert not payload_shape("ServerArgs(a='unterminated, b=1").closed  # the cut is inside a string


@pytest.mark.parametrize("payload", [ARGS, DICT_ARGS], ids=["dataclass", "dict"])
@pytest.mark.parametrize("fraction", [0.3, 0.6, 0.97])
def test_cut_payload_keeps_the_fields_before_the_cut(payload, fraction):
    part = parse_literal_prefix(payload[: int(len(payload) * fraction)])
    whole = parse_literal_prefix(payload[:-1] + ", broken=@@" + payload[-1])  # an unreadable value at the end
    assert part is not None and part.why == "cut"
    assert whole is not None and whole.why == "unreadable" and "broken" not in whole.value
    from logparse.grammar.pyliteral import parse_literal

    full = parse_literal(payload)
    assert list(part.value) == list(full)[: len(part.value)]  # a prefix of the fields, each whole
    assert all(part.value[k] == full[k] for k in part.value)
    assert len(part.value) >= 1


@pytest.mark.parametrize("payload", [ARGS, DICT_ARGS], ids=["dataclass", "dict"])
def test_cut_server_args_line(tmp_path, payload):
    cut = payload.index(",", payload.index("page_size")) + 5  # a few characters into the field after page_size
    text = f"[2026-07-20 09:00:01] server_args={payload[:cut]}\n" + REST
    result = both_paths(tmp_path, text)
    assert result.lines.unrecognized == 0
    (launch,) = result.launches
    assert launch.server_args["model_path"] == "/models/Llama-3.1-8B-Instruct"
    assert launch.mem_fraction_static == 0.83 and launch.page_size == 1
    assert launch.server_args_form == ("dataclass" if payload.startswith("Server") else "dict")
    (warning,) = [w for w in launch.warnings if "server_args is cut after field 'page_size'" in w]
    assert "truncated or wrapped when pasted" in warning
    assert any("fields before the cut" in e for e in launch.version_evidence)


@pytest.mark.parametrize("payload", [ARGS, DICT_ARGS], ids=["dataclass", "dict"])
@pytest.mark.parametrize("width", [80, 131, 200])
def test_wrapped_server_args_line_is_rejoined(tmp_path, payload, width):
    line = f"[2026-07-20 09:00:01] server_args={payload}"
    wrapped = "\n".join(line[i : i + width] for i in range(0, len(line), width))
    result = both_paths(tmp_path, wrapped + "\n" + REST, block_bytes=512)
    n = wrapped.count("\n") + 1
    assert result.lines.to_dict() == {"total": n + 2, "parsed": n + 2, "noise": 0, "unrecognized": 0, "other_units": 0}
    (launch,) = result.launches
    from logparse.grammar.pyliteral import json_safe, parse_literal

    assert launch.server_args == json_safe(parse_literal(payload))
    assert launch.tp_size == 2 and launch.dp_size == 1
    assert any(f"wrapped over {n} lines" in w for w in launch.warnings)
    assert not any("cut after" in w for w in launch.warnings)


def test_wrapped_server_args_in_a_pasted_journal(tmp_path):
    """A journal rendering wrapped by a terminal: the further lines have no header."""
    head = "2026-07-20T09:00:01+0000 gpu-node-4 python3[5150]: "
    line = head + f"[2026-07-20 09:00:01] server_args={ARGS}"
    wrapped = "\n".join(line[i : i + 160] for i in range(0, len(line), 160))
    rest = "".join(head + x + "\n" for x in REST.splitlines())
    result = both_paths(tmp_path, wrapped + "\n" + rest, "journal.short-iso")
    assert result.lines.unrecognized == 0
    (launch,) = result.launches
    assert launch.pid == 5150 and launch.server_args["hicache_ratio"] == 2.0
    assert len(launch.ranks) == 2


def test_a_line_after_a_cut_payload_is_itself(tmp_path):
    """What follows a cut payload and does not read as its continuation keeps its own class."""
    cut = ARGS[: ARGS.index("page_size") + 3]
    text = (
        f"[2026-07-20 09:00:01] server_args={cut}\n"
        "and then it crashes when I start it again\n"
        "W0720 09:00:02.100000 311 torch/distributed/run.py:792] Setting OMP_NUM_THREADS\n" + REST
    )
    result = both_paths(tmp_path, text)
    assert [(u.line_no, u.reason) for u in result.unrecognized] == [(2, "unknown line")]
    (launch,) = result.launches
    assert launch.server_args["schedule_policy"] == "fcfs"
    assert any("cut after field 'schedule_policy'" in w for w in launch.warnings)


# ---------------------------------------------------------------------------------------------
# 6. glog lines

GLOG_LINES = [
    "I0720 09:00:02.100021 311 torch/distributed/elastic/agent/server/api.py:512] Rendezvous complete",
    "W0720 09:00:02.618000 24008 torch/distributed/run.py:792] Setting OMP_NUM_THREADS environment variable",
    "E0720 09:00:09.000413  4121 ProcessGroupNCCL.cpp:1609] [PG 0 Rank 1] Watchdog caught collective operation timeout",
    "F0720 09:00:09.000999 4121 c10/util/Exception.cpp:88] Check failed: out of memory",
    "[rank1]:W0720 09:00:03.215000 4121 torch/_dynamo/convert_frame.py:844] torch._dynamo hit config.cache_size_limit",
]


@pytest.mark.parametrize("line", GLOG_LINES)
def test_glog_line_is_known_noise(line):
    res = LineClassifier().classify(Record(1, line))
    assert (res.status, res.reason) == ("noise", "third_party")


def test_glog_lines_on_both_paths(tmp_path):
    text = "".join(line + "\n" for line in GLOG_LINES) + DISAGG_DECODE
    result = both_paths(tmp_path, text)
    assert result.lines.unrecognized == 0 and result.lines.noise == len(GLOG_LINES) + 1
    # the bulk path counts them itself in a plain input (polars runs the same pattern)
    res = bulk_blocks.classify_block("\n".join(GLOG_LINES).encode(), "plain", False)
    assert res.py_rows == [3] and res.vec_total == 4 and res.vec_parsed == 0  # "out of memory": to the classifier
    assert [n["name"] for n in NOISE].count("glog") == 1


# ---------------------------------------------------------------------------------------------
# 7. other units in a journal; binary files in a directory

UNITS_SHORT_ISO = """\
2026-07-18T02:00:00+0000 gpu-node-4 systemd[1]: Started nginx.service - A high performance web server.
2026-07-18T02:00:00+0000 gpu-node-4 nginx[811]: 10.0.0.7 - - [18/Jul/2026:02:00:00 +0000] "GET /health HTTP/1.1" 502 166 "-" "kube-probe/1.30"
2026-07-18T02:00:01+0000 gpu-node-4 systemd[1]: Started sglang.service - SGLang server.
2026-07-18T02:00:02+0000 gpu-node-4 python3[4242]: [2026-07-18 02:00:02] server_args=ServerArgs(model_path='/m/x', tp_size=1)
2026-07-18T02:00:03+0000 gpu-node-4 nginx[811]: 2026/07/18 02:00:03 [error] 811#811: *1 connect() failed (111: Connection refused)
2026-07-18T02:00:05+0000 gpu-node-4 python3[4242]: [2026-07-18 02:00:05] Load weight begin. avail mem=78.00 GB
2026-07-18T02:00:06+0000 gpu-node-4 python3[4242]: Loading safetensors checkpoint shards: 100% Completed | 4/4 [00:01<00:00,  2.10it/s]
2026-07-18T02:00:07+0000 gpu-node-4 nginx[811]: W0718 02:00:07.000100 811 some/module.cc:12] glog from another program
2026-07-18T02:00:08+0000 gpu-node-4 python3[4242]: [2026-07-18 02:00:08] Decode batch. #running-req: 1, #token: 90, token usage: 0.00, #queue-req: 0
2026-07-18T02:00:09+0000 gpu-node-4 nginx[811]: 10.0.0.7 - - [18/Jul/2026:02:00:09 +0000] "GET /health HTTP/1.1" 200 2 "-" "kube-probe/1.30"
"""


def _json_entry(ts: int, unit: str, ident: str, pid: int, message: str) -> str:
    return json.dumps(
        {
            "__REALTIME_TIMESTAMP": str(ts),
            "_HOSTNAME": "gpu-node-4",
            "_SYSTEMD_UNIT": unit,
            "SYSLOG_IDENTIFIER": ident,
            "_PID": str(pid),
            "_BOOT_ID": "b1",
            "MESSAGE": message,
        }
    )


def test_other_units_are_counted_apart(tmp_path):
    result = both_paths(tmp_path, UNITS_SHORT_ISO, "journal.short-iso")
    lc = result.lines
    assert lc.to_dict() == {"total": 10, "parsed": 3, "noise": 2, "unrecognized": 0, "other_units": 5}
    assert result.unrecognized == []
    (launch,) = result.launches
    assert launch.unit == "sglang.service"
    assert any("5 lines of other units (nginx.service: 5)" in w for w in result.warnings)


def test_other_units_in_a_json_journal(tmp_path):
    lines = [
        _json_entry(1_784_000_000_000_000, "nginx.service", "nginx", 811, '10.0.0.7 - - "GET / HTTP/1.1" 200'),
        _json_entry(
            1_784_000_001_000_000, "sglang.service", "python3", 4242, "[2026-07-18 02:00:02] server_args={'tp_size': 1}"
        ),
        _json_entry(1_784_000_002_000_000, "nginx.service", "nginx", 811, "upstream timed out"),
        _json_entry(
            1_784_000_003_000_000,
            "sglang.service",
            "python3",
            4242,
            "[2026-07-18 02:00:05] Load weight begin. avail mem=78.00 GB",
        ),
    ]
    result = both_paths(tmp_path, "".join(x + "\n" for x in lines), "journal.json")
    assert result.lines.to_dict() == {"total": 4, "parsed": 2, "noise": 0, "unrecognized": 0, "other_units": 2}


def test_other_units_when_sglang_prints_only_runtime_lines(tmp_path):
    """A window of a unit not named after SGLang whose SGLang lines are all counted by the bulk
    path itself (batch and info lines): its pid tells its unit is SGLang's."""
    entries = [
        _json_entry(1_784_000_000_000_000, "llm.service", "python3", 77, "Loading safetensors: 100% Completed | 4/4"),
        _json_entry(1_784_000_001_000_000, "nginx.service", "nginx", 811, "upstream timed out"),
    ] + [
        _json_entry(
            1_784_000_002_000_000 + i,
            "llm.service",
            "python3",
            77,
            f"[2026-07-18 02:00:0{i}] Decode batch. #running-req: {i}, #token: 90, token usage: 0.00, #queue-req: 0",
        )
        for i in range(3)
    ]
    result = both_paths(tmp_path, "".join(x + "\n" for x in entries), "journal.json")
    assert result.lines.to_dict() == {"total": 5, "parsed": 3, "noise": 1, "unrecognized": 0, "other_units": 1}


def test_a_window_without_any_sglang_line_keeps_its_lines(tmp_path):
    """Nothing tells which unit is SGLang's: nothing is moved (a journal window holding only the
    tail of a traceback stays SGLang's)."""
    text = "".join(line + "\n" for line in UNITS_SHORT_ISO.splitlines() if "nginx" in line and "systemd" not in line)
    result = both_paths(tmp_path, text, "nginx-only.short-iso")
    assert result.lines.other_units == 0 and result.lines.unrecognized == 3


def test_other_units_in_the_store(store, tmp_path):
    path = tmp_path / "journal.short-iso"
    path.write_text(UNITS_SHORT_ISO)
    store.ingest_paths([path])
    row = store.query("SELECT lines, parsed, noise, unrecognized, other_units FROM sources").row(0)
    assert row == (10, 3, 2, 0, 5)
    assert store.query("SELECT count(*) AS n FROM unrecognized")["n"][0] == 0


def test_binary_files_in_a_directory_are_skipped_with_one_note(tmp_path, store):
    import random

    rnd = random.Random(477)  # the same bytes every run: a failure is not a draw
    d = tmp_path / "logs"
    d.mkdir()
    (d / "decode.log").write_text(DISAGG_DECODE)
    (d / "system.journal").write_bytes(b"LPKSHHRH" + rnd.randbytes(30000))
    (d / "core.dump").write_bytes(rnd.randbytes(200_000))
    (d / "notes.txt").write_bytes(b"a log with one NUL \x00 byte and a stray \xff byte is still text\n")
    result = parse_sources(open_inputs([str(d)]))
    assert len(result.launches) == 1
    skipped = [w for w in result.warnings if "skipped, not a log" in w]
    assert len(skipped) == 2
    assert any("system.journal" in w and "--journal --file" in w for w in skipped)
    assert result.lines.total == DISAGG_DECODE.count("\n") + 1
    # a binary file named explicitly is read as asked
    named = parse_sources(open_inputs([str(d / "core.dump")]))
    assert named.lines.total > 0 and not [w for w in named.warnings if "skipped" in w]
    report = store.ingest_paths([d])
    assert sorted(s.status for s in report.sources) == ["binary", "binary", "empty", "stored"]
    assert "2 binary file(s)" in report.summary()
