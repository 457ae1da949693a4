"""JSON-lines logs that journalctl did not write: docker's json-file driver and Python's JSON logging
(vLLM 0.32+ ``--logging-config.formatter json``).  The same launches come out as from the text the
objects carry; nothing is dropped as an "entry without MESSAGE"."""

from __future__ import annotations

import json
import re

import pytest
from helpers import SAMPLES

from logparse.budget.model import launch_budget
from logparse.pipeline import parse_paths
from logparse.sources import sniff_format

SGLANG_SAMPLES = ["kimi-k25/launch-1-baseline.log", "sglang-0.5/crash-cuda-oom-0.5.18.log"]
VLLM_031 = SAMPLES / "vllm" / "v1-tags-in-format-0.31.0.log"
_TAGGED = re.compile(
    r"\((?P<proc>[^ ]+) pid=(?P<pid>\d+)\) (?P<level>[A-Z]+) (?P<md>\d\d-\d\d) (?P<hms>[\d:]+) \[(?P<file>[\w.]+):\d+\] (?P<msg>.*)"
)


def detect_format(path: str) -> str:
    with open(path, "rb") as f:
        return sniff_format(f.read(1 << 16))[0]


def _figures(result) -> list[tuple]:
    out = []
    for launch in result.launches:
        b = launch_budget(launch)
        ranks = sorted((r.label(), r.weights_gb, r.kv_size_gb) for r in launch.ranks)
        out.append((launch.engine, launch.outcome, launch.error, b.kv_tokens, b.kv_pool_gb, b.headroom_gb, ranks))
    return out


def _docker_json(lines: list[str], split_at: int | None = None) -> str:
    """Lines as docker's json-file driver writes them (``split_at``: a piece size, as docker splits long lines)."""
    out = []
    for i, line in enumerate(lines):
        text = line + "\n"
        step = split_at or len(text)
        pieces = [text[k : k + step] for k in range(0, len(text), step)]
        for piece in pieces:
            stamp = f"2026-04-08T10:{i // 60 % 60:02d}:{i % 60:02d}.{i:09d}Z"
            out.append(json.dumps({"log": piece, "stream": "stderr", "time": stamp}))
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("name", SGLANG_SAMPLES)
def test_docker_json_file_gives_the_launches_of_its_text(tmp_path, name):
    src = SAMPLES / name
    lines = src.read_text().splitlines()
    path = tmp_path / "container-json.log"
    path.write_text(_docker_json(lines))
    assert detect_format(str(path)) == "docker-json"
    plain, wrapped = parse_paths([str(src)]), parse_paths([str(path)])
    assert wrapped.lines.total == len(lines)
    assert wrapped.lines.unrecognized == plain.lines.unrecognized
    assert _figures(wrapped) == _figures(plain)


def test_docker_json_long_lines_split_into_pieces_are_joined(tmp_path):
    src = SAMPLES / SGLANG_SAMPLES[0]
    lines = src.read_text().splitlines()
    assert max(len(ln) for ln in lines) > 4096, "the sample needs a line of several pieces (server_args)"
    path = tmp_path / "split-json.log"
    path.write_text(_docker_json(lines, split_at=4096))
    wrapped, plain = parse_paths([str(path)]), parse_paths([str(src)])
    assert _figures(wrapped) == _figures(plain)
    assert wrapped.launches[0].server_args == plain.launches[0].server_args


def test_docker_json_time_is_the_outer_time(tmp_path):
    path = tmp_path / "c.log"
    line = "[2026-04-08 10:02:14 TP0] Load weight begin. avail mem=78.62 GB"
    path.write_text(json.dumps({"log": line + "\n", "stream": "stdout", "time": "2026-04-08T08:02:14.5+00:00"}) + "\n")
    (launch,) = parse_paths([str(path)]).launches
    assert launch.ranks[0].avail_before_load_gb == 78.62


def _json_log(lines: list[str]) -> str:
    """vLLM's tagged text lines as its JSON formatter writes them; other lines (uvicorn, tqdm) stay text."""
    out = []
    for line in lines:
        m = _TAGGED.match(line)
        if m is None:
            out.append(line)
            continue
        obj = {
            "asctime": f"2026-{m['md']} {m['hms']},250",
            "levelname": m["level"],
            "name": "vllm." + m["file"].removesuffix(".py"),
            "processName": m["proc"],
            "process": int(m["pid"]),
            "message": m["msg"],
        }
        out.append(json.dumps(obj))
    return "\n".join(out) + "\n"


def test_vllm_json_formatter_gives_the_launch_of_the_text_format(tmp_path):
    lines = VLLM_031.read_text().splitlines()
    path = tmp_path / "vllm-json.log"
    path.write_text(_json_log(lines))
    assert detect_format(str(path)) == "json-log"
    text, wrapped = parse_paths([str(VLLM_031)]), parse_paths([str(path)])
    assert wrapped.lines.unrecognized == 0, [(u.line_no, u.reason, u.text[:80]) for u in wrapped.unrecognized]
    assert _figures(wrapped) == _figures(text)
    (launch,) = wrapped.launches
    assert launch.engine == "vllm" and launch.outcome == "ready"
    assert str(launch.started_at).startswith("2026-10-09")


def test_json_log_of_another_program_reads_the_sglang_line_in_its_message(tmp_path):
    path = tmp_path / "wrapper.json"
    msg = "[2026-04-08 10:02:14 TP0] Load weight begin. avail mem=78.62 GB"
    obj = {"asctime": "2026-04-08 10:02:14,001", "levelname": "INFO", "name": "launcher", "message": msg}
    path.write_text(json.dumps(obj) + "\n")
    result = parse_paths([str(path)])
    assert result.lines.parsed == 1
    assert result.launches[0].ranks[0].avail_before_load_gb == 78.62


def test_journal_json_entries_are_not_taken_for_json_logs(tmp_path):
    entry = {"__CURSOR": "s=1;i=1", "MESSAGE": "[2026-04-08 10:02:14 TP0] Load weight begin. avail mem=78.62 GB"}
    entry["log"], entry["time"] = "not docker", "2026-04-08T10:02:14Z"
    path = tmp_path / "j.json"
    path.write_text(json.dumps(entry) + "\n")
    assert detect_format(str(path)) == "journal-json"
    assert parse_paths([str(path)]).launches[0].ranks[0].avail_before_load_gb == 78.62
