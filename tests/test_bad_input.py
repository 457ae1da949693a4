"""Bad input gives results or a clear message, never a traceback."""

from __future__ import annotations

import json
import random

import pytest
from helpers import assert_accounted, cli_process

from logparse.pipeline import parse_text

GOOD = (
    "[2025-07-02 10:00:01] server_args=ServerArgs(model_path='/models/m', tp_size=1, mem_fraction_static=0.8)\n"
    "[2025-07-02 10:00:04] Load weight begin. avail mem=78.42 GB\n"
    "[2025-07-02 10:00:09] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.37 GB, mem usage=15.05 GB.\n"
    "[2025-07-02 10:00:11] KV Cache is allocated. #tokens: 441216, K size: 26.94 GB, V size: 26.94 GB\n"
    "[2025-07-02 10:00:12] Memory pool end. avail mem=9.27 GB\n"
    "[2025-07-02 10:00:30] max_total_num_tokens=441216, chunked_prefill_size=8192, max_prefill_tokens=16384, "
    "max_running_requests=4096, context_len=131072, available_gpu_mem=8.29 GB\n"
    "[2025-07-02 10:00:40] The server is fired up and ready to roll!\n"
)


def test_good_text_baseline():
    r = parse_text(GOOD)
    assert_accounted(r, 7)
    (launch,) = r.launches
    assert launch.outcome == "ready" and launch.max_total_num_tokens == 441216
    rank = launch.ranks[0]
    assert (rank.avail_before_load_gb, rank.weights_gb, rank.avail_after_load_gb) == (78.42, 15.05, 63.37)
    assert rank.kv_size_gb == 53.88


def test_empty():
    r = parse_text("")
    assert r.launches == [] and r.lines.total == 0


def test_crlf_and_ansi_and_nul():
    text = GOOD.replace("\n", "\r\n")
    text = text.replace("Memory pool end", "\x1b[32mMemory\x1b[0m pool end").replace(
        "Load weight begin", "Load\x00 weight begin"
    )
    r = parse_text(text)
    assert_accounted(r, 7)
    assert r.lines.unrecognized == 0
    assert r.launches[0].ranks[0].avail_after_pool_gb == 9.27
    assert r.launches[0].ranks[0].avail_before_load_gb == 78.42


def test_tqdm_glued_in_front_and_carriage_returns():
    lines = GOOD.splitlines()
    lines[3] = (
        "Capturing batches (bs=4 avail_mem=10.61 GB):  50%|█   | 2/4 [00:01<00:01]\r"
        "Capturing batches (bs=1 avail_mem=10.55 GB): 100%|████| 4/4 [00:02<00:00]" + lines[3]
    )
    lines.insert(2, "Loading safetensors checkpoint shards: 100% Completed | 4/4 [00:05<00:00,  1.2s/it]\r")
    r = parse_text("\n".join(lines) + "\n")
    assert_accounted(r, 8)
    assert r.lines.unrecognized == 0
    assert r.launches[0].ranks[0].kv_tokens == 441216


def test_invalid_utf8_and_binary():
    noise = random.Random(66).randbytes(2000)  # the same bytes every run: a failure is not a draw
    data = GOOD.encode() + b"\xff\xfe\x00garbage\x80\x81\n" + noise + b"\n"
    r = parse_text(data)
    assert len(r.launches) == 1
    assert r.lines.total == r.lines.parsed + r.lines.noise + r.lines.unrecognized + r.lines.other_units


def test_truncated_mid_line_and_starting_mid_line():
    truncated = GOOD[: GOOD.index("K size: 26.94") + 5]  # cut inside the KV line
    r = parse_text(truncated)
    assert r.lines.total == 4
    assert r.lines.unrecognized == 1 and r.unrecognized[0].reason.startswith("near miss")
    assert r.launches[0].outcome == "incomplete"
    tail = GOOD[GOOD.index("avail mem=78.42 GB") :]  # starts in the middle of a line
    r = parse_text(tail)
    assert_accounted(r, 6)
    assert r.launches and r.launches[0].max_total_num_tokens == 441216


def test_one_megabyte_line():
    r = parse_text(GOOD + "x" * (1 << 20) + "\n")
    assert_accounted(r, 8)
    assert r.launches[0].outcome == "ready"


def test_huge_server_args_line():
    fields = ", ".join(f"field_{i}={i * 1.5}" for i in range(3000))
    text = f"[2025-07-02 10:00:01] server_args=ServerArgs(model_path='/m', {fields})\n" + GOOD.split("\n", 1)[1]
    r = parse_text(text)
    assert r.launches[0].server_args["field_2999"] == 2999 * 1.5


def test_nonsense_values_are_flagged_not_trusted():
    text = GOOD.replace("avail mem=63.37 GB, mem usage=15.05 GB", "avail mem=99.00 GB, mem usage=-20.58 GB")
    text = text.replace("#tokens: 441216", "#tokens: 9999999999999")
    launch = parse_text(text).launches[0]
    joined = " ".join(launch.warnings)
    assert "rose while loading weights" in joined
    assert "line 4: #tokens 9999999999999 out of range (> 1,000,000,000,000 tokens): ignored" in joined
    assert launch.ranks[0].kv_tokens is None  # not trusted: absent, never the absurd figure


@pytest.mark.parametrize("payload", [b"", b"\x00\x01\x02" * 1000, b"hello\nworld\n"])
def test_cli_on_useless_input_exits_2_with_one_clear_line(tmp_path, payload):
    f = tmp_path / "x.log"
    f.write_bytes(payload)
    proc = cli_process("parse", str(f))
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert "Traceback" not in err and "no SGLang or vLLM launch found" in err


def test_cli_missing_path_and_directory_without_logs(tmp_path):
    proc = cli_process("parse", str(tmp_path / "nope.log"))
    assert proc.returncode == 2 and b"no such file" in proc.stderr and b"Traceback" not in proc.stderr
    (tmp_path / "empty").mkdir()
    proc = cli_process("parse", str(tmp_path / "empty"))
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr


def test_cli_json_contract_from_stdin():
    proc = cli_process("parse", "--json", "-", input=GOOD.encode())
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert set(doc) >= {"launches", "lines", "warnings"}
    assert doc["lines"] == {"total": 7, "parsed": 7, "noise": 0, "unrecognized": 0, "other_units": 0}
    launch = doc["launches"][0]
    for key in (
        "launch_id",
        "host",
        "unit",
        "pid",
        "started_at",
        "ready_at",
        "outcome",
        "error",
        "sglang_version",
        "sglang_version_range",
        "model_path",
        "tp_size",
        "dp_size",
        "pp_size",
        "ep_size",
        "mem_fraction_static",
        "kv_cache_dtype",
        "page_size",
        "context_length",
        "chunked_prefill_size",
        "max_running_requests",
        "speculative_algorithm",
        "enable_hierarchical_cache",
        "server_args",
        "max_total_num_tokens",
        "max_prefill_tokens",
        "max_running_requests_effective",
        "context_len",
        "available_mem_gb",
        "ranks",
    ):
        assert key in launch, key
    rank = launch["ranks"][0]
    for key in (
        "dp_rank",
        "pp_rank",
        "tp_rank",
        "ep_rank",
        "worker",
        "avail_before_load_gb",
        "weights_gb",
        "avail_after_load_gb",
        "load_s",
        "kv_dtype",
        "kv_tokens",
        "k_size_gb",
        "v_size_gb",
        "kv_size_gb",
        "avail_after_pool_gb",
        "graph_gb",
        "avail_after_graph_gb",
        "graph_s",
    ):
        assert key in rank, key
    assert rank["graph_gb"] is None and rank["load_s"] is None  # absent values are null, never 0
    assert (
        launch["launch_id"]
        == json.loads(cli_process("parse", "--json", "-", input=GOOD.encode()).stdout)["launches"][0]["launch_id"]
    )


def test_cli_ndjson_and_table():
    proc = cli_process("parse", "--ndjson", "-", input=(GOOD + GOOD.replace("10:00", "11:00")).encode())
    rows = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    assert len(rows) == 2 and rows[0]["launch_id"] != rows[1]["launch_id"]
    proc = cli_process("parse", "-", input=GOOD.encode())
    out = proc.stdout.decode()
    assert proc.returncode == 0 and "ready" in out and "441,216" in out


def test_offline_engine_prints_server_args_twice():
    """0.5.7+ sgl.Engine prints the same server_args in __init__ and _launch_subprocesses."""
    first, rest = GOOD.split("\n", 1)
    r = parse_text(first + "\n" + first + "\n" + rest)
    assert len(r.launches) == 1 and r.launches[0].outcome == "ready"
    r = parse_text(GOOD + GOOD.replace("10:00", "11:00"))
    assert len(r.launches) == 2
