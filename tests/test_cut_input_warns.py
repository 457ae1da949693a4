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
