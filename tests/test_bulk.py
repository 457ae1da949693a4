"""The vectorized bulk path gives the same result as the record path, whatever the block size."""

from __future__ import annotations

import pytest
from helpers import SAMPLES, generate_logs

from logparse.pipeline import parse_sources
from logparse.sources import open_inputs


def _summary(result):
    return (
        result.lines.to_dict(),
        [
            (
                launch.launch_id,
                launch.outcome,
                launch.max_total_num_tokens,
                launch.sglang_version_range,
                launch.error,
                [r.to_dict() for r in launch.ranks],
                launch.runtime,
            )
            for launch in result.launches
        ],
        [(u.line_no, u.reason) for u in result.unrecognized],
    )


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    return generate_logs(tmp_path_factory.mktemp("gen"), 30000, "plain,short-iso,json")


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
            (
                launch.max_total_num_tokens,
                launch.outcome,
                launch.runtime.get("batch_lines"),
                launch.runtime.get("peak_tokens"),
            )
            for launch in r.launches
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
                [(launch.launch_id, launch.max_total_num_tokens, launch.runtime) for launch in launches],
                [(u.line_no, u.reason) for u in unrec],
            )
        )
    assert results[0] == results[1]
