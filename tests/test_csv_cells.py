"""CSV and TSV cells never run as formulas in a spreadsheet (OWASP "CSV Injection").

A model path is whatever the launch was given: ``=cmd|' /C calc'!A0`` opened in a spreadsheet from
``launches --format csv`` would run.  Every CSV writer neutralises a text cell that begins with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return with a leading ``'``; numbers stay numbers.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from helpers import SAMPLES, cli

from logparse.cli.output import csv_text

SAMPLE = SAMPLES / "sglang-0.5" / "qwen-tp2-0.5.22-dict.log"
HOSTILE = ["=cmd|' /C calc'!A0", "@SUM(1+1)*cmd|' /C calc'!A0", '+HYPERLINK("http://x","y")', "-2+3"]


@pytest.mark.parametrize("model", HOSTILE)
def test_a_hostile_model_path_comes_out_inert_from_every_csv(tmp_path: Path, model: str) -> None:
    log = tmp_path / "m.log"
    log.write_text(SAMPLE.read_text().replace("'/models/Qwen3-32B'", repr(model)))  # as SGLang prints it
    db = tmp_path / "h.duckdb"
    assert cli("ingest", log, db=db).code == 0
    outputs = {
        "launches": cli("launches", "--format", "csv", db=db).out,
        "query": cli("query", "SELECT model_path, tp_size FROM launch_summary", "--format", "csv", db=db).out,
        "parse": cli("parse", log, "--format", "csv").out,
        "tsv": cli("launches", "--format", "tsv", db=db).out,
    }
    for name, text in outputs.items():
        cells = [c for row in csv.reader(io.StringIO(text), delimiter="\t" if name == "tsv" else ",") for c in row]
        assert "'" + model in cells, name
        assert model not in cells, name
        assert not any(c.startswith(("=", "+", "@")) for c in cells), name


def test_numbers_stay_numbers() -> None:
    text = csv_text(
        [{"headroom_gb": -1.25, "delta": -3, "as_text": "-0.5", "ratio": "+2e3", "zone": "+02:00", "name": "=x"}]
    )
    assert text.splitlines()[1] == "-1.25,-3,-0.5,+2e3,+02:00,'=x"


def test_a_hostile_column_name_is_neutralised_too() -> None:
    assert csv_text([{"=HYPERLINK(1)": 1}]).splitlines()[0] == "'=HYPERLINK(1)"
