"""The vectorized bulk path gives the same result as the record path, whatever the block size."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers import ROOT, SAMPLES

from logparse.pipeline import parse_sources
from logparse.sources import open_inputs


def _summary(result):
    return (
        result.lines.to_dict(),
        [
            (
                l.launch_id,
                l.outcome,
                l.max_total_num_tokens,
                l.sglang_version_range,
                l.error,
                [r.to_dict() for r in l.ranks],
                l.runtime,
            )
            for l in result.launches
        ],
        [(u.line_no, u.reason) for u in result.unrecognized],
    )


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("gen")
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "generate.py"),
            "--lines",
            "30000",
            "--out",
            str(out),
            "--formats",
            "plain,short-iso,json",
        ],
        check=True,
        capture_output=True,
    )
    return out


@pytest.mark.parametrize("fmt", ["plain", "short-iso", "json"])
def test_block_size_does_not_change_the_result(generated, fmt):
    path = str(generated / f"sglang.{fmt}.log")
    one = _summary(parse_sources(open_inputs([path]), bulk="force", block_bytes=1 << 30))
    many = _summary(parse_sources(open_inputs([path]), bulk="force", block_bytes=4096))
    assert one == many
    assert one[0]["unrecognized"] == 0 and len(one[1]) >= 1


@pytest.mark.parametrize("fmt", ["plain", "short-iso", "json"])
def test_bulk_equals_record_path(generated, fmt):
    path = str(generated / f"sglang.{fmt}.log")
    bulk = _summary(parse_sources(open_inputs([path]), bulk="force"))
    records = _summary(parse_sources(open_inputs([path]), bulk=False))
    assert bulk == records


def test_formats_agree_on_launches(generated):
    results = {
        fmt: parse_sources(open_inputs([str(generated / f"sglang.{fmt}.log")]))
        for fmt in ("plain", "short-iso", "json")
    }
    figures = {
        fmt: [
            (l.max_total_num_tokens, l.outcome, l.runtime.get("batch_lines"), l.runtime.get("peak_tokens"))
            for l in r.launches
        ]
        for fmt, r in results.items()
    }
    assert figures["plain"] == figures["short-iso"] == figures["json"]


@pytest.mark.parametrize(
    "name",
    ["sglang-0.5/restarts-0.5.12.log", "kimi-k25/launch-1-baseline.log", "sglang-0.4/deepseek-v3-tp8-eagle-0.4.7.log"],
)
def test_samples_bulk_equals_record_path(name):
    path = str(SAMPLES / name)
    assert _summary(parse_sources(open_inputs([path]), bulk="force", block_bytes=2048)) == _summary(
        parse_sources(open_inputs([path]), bulk=False)
    )


@pytest.mark.parametrize("fmt", ["plain", "short-iso"])
def test_worker_processes_give_the_same_result(generated, fmt):
    from logparse.grammar.bulk import BulkReader
    from logparse.pipeline import StreamParser

    path = str(generated / f"sglang.{fmt}.log")
    results = []
    for workers in (1, 2):
        src = next(open_inputs([path]))
        sp = StreamParser(src.name)
        BulkReader(src, sp, block_bytes=256 << 10).run(workers=workers)
        launches, counts, unrec, _ = sp.finish()
        results.append(
            (
                counts.to_dict(),
                [(l.launch_id, l.max_total_num_tokens, l.runtime) for l in launches],
                [(u.line_no, u.reason) for u in unrec],
            )
        )
    assert results[0] == results[1]
