"""Every surface over a store, asserting what must hold: the read-back half of the fuzz tests.

Commands run in this process (typer's runner: stdout is strict UTF-8, as on a UTF-8 terminal, so
a lone surrogate that reaches the output fails here as it would there). What must hold for each:
no exception escapes (an escaping exception is what prints a traceback), nothing on stderr says
``Traceback``, the exit code is one the README documents for that command and case, JSON is JSON
(no NaN or Infinity), and table output carries no raw control character (ESC above all: terminal
escape injection).
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any, NamedTuple

from prometheus_client.parser import text_string_to_metric_families
from typer.testing import CliRunner

#: C0 controls other than tab and newline, DEL and the C1 controls: never raw in table output.
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class Ran(NamedTuple):
    args: tuple[str, ...]
    code: int
    out: str
    err: str


def run(*args: Any) -> Ran:
    from logparse.cli import app

    argv = tuple(str(a) for a in args)
    res = CliRunner().invoke(app, list(argv))
    exc = res.exception
    if exc is not None and not isinstance(exc, SystemExit):
        raise AssertionError(f"logparse {' '.join(argv)}: {type(exc).__name__}: {exc}") from exc
    ran = Ran(argv, res.exit_code, res.stdout, res.stderr)
    assert "Traceback" not in ran.err, (ran.args, ran.err[-2000:])
    return ran


def expect(ran: Ran, codes: set[int], table: bool = False) -> Ran:
    assert ran.code in codes, (ran.args, ran.code, ran.err[-1000:])
    if table:
        bad = RAW_CONTROL.search(ran.out)
        assert bad is None, (
            ran.args,
            f"raw {bad.group()!r} in table output",
            ran.out[max(0, bad.start() - 80) :][:160],
        )
    bad = RAW_CONTROL.search(ran.err)
    assert bad is None, (ran.args, f"raw {bad.group()!r} on stderr", ran.err[-500:])
    return ran


def strict_json(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} in JSON output")

    return json.loads(text, parse_constant=refuse)


def parse_every_format(path: Path) -> dict:
    """``parse`` in table, json, ndjson and csv: the same launches in each; the JSON document."""
    doc_run = expect(run("parse", "-q", "--json", path), {0, 2})
    if doc_run.code == 2:  # nothing useful in it: one clear line, nothing on stdout
        assert len(doc_run.err.strip().splitlines()) == 1, doc_run.err
        return {"launches": []}
    doc = strict_json(doc_run.out)
    lc = doc["lines"]
    assert lc["parsed"] + lc["noise"] + lc["unrecognized"] + lc["other_units"] == lc["total"], lc
    ids = [launch["launch_id"] for launch in doc["launches"]]
    assert len(set(ids)) == len(ids), f"launch ids not unique: {ids}"
    rows = expect(run("parse", "-q", "--ndjson", path), {0}).out.rstrip("\n").split("\n")
    assert [strict_json(r)["launch_id"] for r in rows] == ids
    table = expect(run("parse", "-q", path), {0}, table=True)
    assert all(i[:12] in table.out for i in ids), "a launch missing from the table"
    got = list(csv.DictReader(io.StringIO(expect(run("parse", "-q", "-f", "csv", path), {0}).out)))
    assert {r["launch_id"] for r in got} == set(ids)
    return doc


#: Figures a stored launch must show as the parse of its input gave them (one truth).
SAME_STORED = (
    "outcome",
    "started_at",
    "ready_at",
    "first_line",
    "last_line",
    "model_path",
    "tp_size",
    "kv_tokens",
    "max_total_num_tokens",
    "warnings",
)


def stored_launches(db: Path) -> list[dict]:
    launches = strict_json(expect(run("launches", "--db", db, "--json"), {0}).out)
    expect(run("launches", "--db", db), {0}, table=True)
    return launches


def read_back_launch(db: Path, launch_id: str, other: str | None, parsed: dict | None) -> None:
    """``show`` (table and JSON), ``explain``, ``check`` and ``diff`` of one stored launch."""
    expect(run("show", "--db", db, launch_id, "--events", "all"), {0}, table=True)
    shown = strict_json(expect(run("show", "--db", db, launch_id, "--json"), {0}).out)
    assert shown["launch_id"] == launch_id
    if parsed is not None:
        for key in SAME_STORED:
            assert shown[key] == parsed[key], (launch_id, key, shown[key], parsed[key])
    expect(run("explain", "--db", db, launch_id), {0}, table=True)
    strict_json(expect(run("explain", "--db", db, launch_id, "--json"), {0}).out)
    expect(run("check", "--db", db, launch_id), {0, 1}, table=True)
    if other is not None:
        expect(run("diff", "--db", db, other, launch_id), {0}, table=True)
        strict_json(expect(run("diff", "--db", db, launch_id, other, "--json"), {0}).out)


def read_back_store(db: Path, tmp: Path) -> None:
    """The store-wide surfaces: the HTML report, metrics (read by Prometheus' own parser), history, doctor."""
    html = tmp / "report.html"
    expect(run("report", "--db", db, "--html", html, "-q"), {0})
    page = html.read_text(encoding="utf-8")  # valid UTF-8 (a log's own tracebacks may be quoted in it)
    assert page.rstrip().endswith("</html>"), page[-300:]
    metrics = expect(run("metrics", "--db", db), {0}).out
    families = list(text_string_to_metric_families(metrics))
    assert families, "no metric families"
    expect(run("history", "--db", db), {0}, table=True)
    strict_json(expect(run("history", "--db", db, "--json"), {0}).out)
    doctor = expect(run("doctor", "--db", db), {0, 3})
    assert doctor.code == 0, f"doctor: the store is not healthy:\n{doctor.out}{doctor.err}"
