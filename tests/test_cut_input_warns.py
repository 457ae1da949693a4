"""Every output format of ``parse`` warns of a cut compressed input the same way: the table in its
text, every other format (csv, tsv, json, ndjson, parquet) on stderr.  Before, CSV printed 1 of
3 launches with exit 0 and nothing on stderr."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from helpers import SAMPLES, cli


@pytest.fixture(scope="module")
def cut_gz(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = gzip.compress((SAMPLES / "sglang-0.5" / "restarts-0.5.12.log").read_bytes())
    path = tmp_path_factory.mktemp("cut") / "restarts.log.gz"
    path.write_bytes(data[: len(data) // 2])
    return path


@pytest.mark.parametrize("fmt", ["csv", "tsv", "json", "ndjson", "parquet"])
def test_every_machine_format_warns_on_stderr(cut_gz: Path, tmp_path: Path, fmt: str) -> None:
    res = cli("parse", cut_gz, "--format", fmt, "-o", tmp_path / f"out.{fmt}")
    assert res.code == 0
    assert "the compressed data is corrupt or truncated" in res.err


def test_the_table_says_it_in_its_text(cut_gz: Path) -> None:
    res = cli("parse", cut_gz)
    assert "the compressed data is corrupt or truncated" in res.out


def test_a_cut_input_with_no_launch_says_why_in_its_one_line(tmp_path: Path) -> None:
    data = gzip.compress((SAMPLES / "sglang-0.5" / "restarts-0.5.12.log").read_bytes())
    path = tmp_path / "head.log.gz"
    path.write_bytes(data[:40])  # the gzip header and a few bytes: no line of a launch
    for fmt in ("json", "csv", "table"):
        res = cli("parse", path, "--format", fmt)
        assert res.code == 2
        lines = res.err.strip().splitlines()
        assert len(lines) == 1, res.err  # nothing useful: one clear line, the cut folded into it
        assert lines[0].startswith("logparse: no SGLang or vLLM launch found")
        assert "the compressed data is corrupt or truncated" in lines[0]
