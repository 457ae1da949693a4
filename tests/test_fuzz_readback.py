"""Fuzzed inputs ingested into a real DuckDB store, every stored launch read back by every command.

One example is two or three mutated real inputs (plain logs of both engines, journalctl
renderings with damaged headers: ``fuzz_inputs.py``), each parsed in table, JSON, NDJSON and CSV,
then ingested together into a copy of a store that already holds clean launches of both engines;
every launch added is then read back through ``show`` (table and JSON, its figures those of
the parse), ``explain``, ``check`` and ``diff`` (against the launch before it), and the store
through ``launches``, ``history``, ``report --html``, ``metrics`` (read by Prometheus' own parser)
and ``doctor`` (healthy). A second ingest of the same inputs changes nothing. ``readback.py`` says
what must hold of every command's output.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from fuzz_inputs import JOURNAL_DIR, JOURNAL_RENDERINGS, PLAIN_LOGS, apply_plan, journal_plans, plain_plans
from fuzzing import TALLY, fuzz
from helpers import CORPUS, SAMPLES
from hypothesis import strategies as st
from readback import expect, parse_every_format, read_back_launch, read_back_store, run, stored_launches, strict_json

#: Clean launches already in the store, one of each engine: history for ``check``, diff partners.
BASE_INPUTS = [SAMPLES / "sglang-0.5" / "qwen-tp2-0.5.22-dict.log", SAMPLES / "vllm" / "v1-tp2-per-worker-0.10.1.1.log"]
_BASE_DIR = tempfile.TemporaryDirectory(prefix="logparse-fuzz-base-")


@cache
def base_store() -> tuple[Path, frozenset[str]]:
    """The store every example starts from, and the ids of its launches."""
    db = Path(_BASE_DIR.name) / "base.duckdb"
    expect(run("ingest", "--db", db, "-q", *BASE_INPUTS), {0})
    return db, frozenset(launch["launch_id"] for launch in stored_launches(db))


#: A file name that is not UTF-8 (Python sees it with a lone surrogate, as sys.argv and os.listdir give it).
NOT_UTF8 = os.fsdecode(b"caf\xe9-")


def write_inputs(plans, tmp: Path) -> list[Path]:
    """The mutated inputs as files; the first one's name is not UTF-8."""
    paths = []
    for k, plan in enumerate(plans):
        path = tmp / f"{NOT_UTF8 if k == 0 else ''}{k}-{plan.path.name}"
        path.write_bytes(apply_plan(plan).data())
        paths.append(path)
    return paths


_SUMMARY = re.compile(
    r"(\d+) launch\(es\) added, (\d+) updated, (\d+) unchanged(?:, (\d+) stored launch\(es\) united)?"
)


def ingest_twice(db: Path, inputs: list[Path], parsed: list[dict]) -> tuple[int, int, int]:
    """Ingest (exit 0, or 2 when no input has a launch), then again: nothing added or updated.
    Returns how many launches the run added, updated and united (as the store sees them: the
    same launch in two inputs is one; one an input added and a later one united with another, too)."""
    first = expect(run("ingest", "--db", db, "-q", *inputs), {0} if parsed else {2})
    if not parsed:
        return 0, 0, 0
    said = _SUMMARY.search(first.out + first.err)
    assert said is not None, first.out + first.err
    added, updated, unchanged, united = (int(n or 0) for n in said.groups())
    assert 1 <= added + updated + unchanged <= len(parsed), (said.group(), [p["launch_id"] for p in parsed])
    again = expect(run("ingest", "--db", db, *inputs), {0})
    assert " 0 launch(es) added, 0 updated" in again.out + again.err, again.out + again.err
    return added, updated, united


def assert_every_parsed_launch_found(db: Path, parsed: list[dict], ids: set[str]) -> None:
    """Nothing parsed is lost: each parsed launch's id finds a stored launch (its own, or the one
    the store made of it and the same launch in another input, by alias)."""
    for launch_id in sorted({launch["launch_id"] for launch in parsed}):
        shown = strict_json(expect(run("show", "--db", db, launch_id, "--json", "--events", "none"), {0}).out)
        assert shown["launch_id"] in ids, (launch_id, shown["launch_id"])


def single_source(parsed: list[dict]) -> dict[str, dict]:
    """The parsed launches the store holds as they were parsed: those no other input also holds
    (the same id or start; when the ingest updated a launch with another input's, none: the store
    made one launch of both, see
    test_a_launch_in_a_cut_log_and_in_the_journal_is_one_launch_with_lines_of_its_source)."""
    ids = Counter(launch["launch_id"] for launch in parsed)
    starts = Counter(launch["started_at"] for launch in parsed)
    return {
        launch["launch_id"]: launch
        for launch in parsed
        if ids[launch["launch_id"]] == 1 and (launch["started_at"] is None or starts[launch["started_at"]] == 1)
    }


def read_back(plans) -> None:
    with tempfile.TemporaryDirectory(prefix="logparse-fuzz-") as name:
        tmp = Path(name)
        base, base_ids = base_store()
        db = tmp / "h.duckdb"
        shutil.copyfile(base, db)
        inputs = write_inputs(plans, tmp)
        docs = [parse_every_format(path) for path in inputs]
        parsed = [launch for doc in docs for launch in doc["launches"]]
        added, updated, united = ingest_twice(db, inputs, parsed)
        ids = [launch["launch_id"] for launch in stored_launches(db)]
        by_id = single_source(parsed) if not updated else {}  # one launch made of two inputs'

        new = [launch_id for launch_id in ids if launch_id not in base_ids]
        # the closing line counts what the store gained (a launch one input added and a later
        # input united with another is one launch added; stored launches united are counted apart)
        assert len(ids) == len(base_ids) + added - united, (added, united, len(base_ids), ids)
        if not updated and not united:  # the base launches as they were: the new ones are those added
            assert len(new) == added and set(base_ids) <= set(ids), (added, new)
        assert_every_parsed_launch_found(db, parsed, set(ids))
        for k, launch_id in enumerate(new):  # the base launches are read back in every example's report
            read_back_launch(db, launch_id, new[k - 1] if k else min(base_ids), by_id.get(launch_id))
        read_back_store(db, tmp)
        TALLY.inputs += len(inputs)
        TALLY.launches += len(new)


@pytest.mark.skipif(not PLAIN_LOGS, reason="no real logs")
@fuzz(st.lists(st.one_of(plain_plans(3), journal_plans(3)), min_size=2, max_size=3), fixed=2, seeded=3, cost=30)
def test_fuzzed_inputs_read_back_through_every_command(plans):
    read_back(plans)


def one_launch_stored(db: Path, inputs: list[Path]) -> dict:
    expect(run("ingest", "--db", db, "-q", *inputs), {0})
    (first, *_) = sorted(stored_launches(db), key=lambda launch: launch["started_at"])
    return strict_json(expect(run("show", "--db", db, first["launch_id"], "--json"), {0}).out)


def cut_and_journal(tmp_path: Path) -> tuple[Path, Path]:
    """The corpus' plain log of a launch cut before its ready line, and the journal of the same run."""
    cut = tmp_path / "cut.log"
    cut.write_bytes(b"".join((CORPUS / "sglang-0.5.23" / "restart-1.log").open("rb").readlines()[:58]))
    return cut, JOURNAL_DIR / "0.5.23-restart" / "json-seq.txt"


@pytest.mark.skipif(not JOURNAL_RENDERINGS, reason="no journalctl renderings in the corpus")
def test_a_launch_in_a_cut_log_and_in_the_journal_is_one_launch_whatever_the_order(tmp_path):
    """Found by the fuzz tests: the store keeps one launch of the two inputs, and its id depended on
    the order of the ingests (issue 18 item 3, fixed in wt-order)."""
    cut, journal = cut_and_journal(tmp_path)
    a = one_launch_stored(tmp_path / "a.duckdb", [cut, journal])
    b = one_launch_stored(tmp_path / "b.duckdb", [journal, cut])
    assert a["launch_id"] == b["launch_id"] and a["outcome"] == b["outcome"] == "ready"


@pytest.mark.skipif(not JOURNAL_RENDERINGS, reason="no journalctl renderings in the corpus")
@pytest.mark.parametrize("order", ["cut first", "journal first"])
def test_a_launch_of_two_inputs_has_a_line_range_of_the_source_it_names(tmp_path, order):
    """Found by the fuzz tests: the launch said "lines 12-64 of cut.log", a file of 58 lines (its
    first line is cut.log's, its last the journal's).  Now every surface agrees: ``show --json``
    (the launch document ``parse --json`` gives too) and ``launch_sources`` give the named source's
    own range, and the ``show`` table names each input's range, the named one first."""
    cut, journal = cut_and_journal(tmp_path)
    db = tmp_path / "a.duckdb"
    shown = one_launch_stored(db, [cut, journal] if order == "cut first" else [journal, cut])
    lines = Path(shown["source"]).read_bytes().count(b"\n")
    assert 1 <= shown["first_line"] <= shown["last_line"] <= lines, (shown["source"], shown["last_line"], lines)
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            "SELECT s.path, ls.first_line, ls.last_line, ls.source_id = l.source_id FROM launch_sources ls "
            "JOIN sources s USING (source_id) JOIN launches l USING (launch_id) WHERE launch_id = ?",
            [shown["launch_id"]],
        ).fetchall()
    finally:
        con.close()
    named = [(path, lo, hi) for path, lo, hi, is_named in rows if is_named]
    assert named == [(shown["source"], shown["first_line"], shown["last_line"])], rows
    table = expect(run("show", "--db", db, shown["launch_id"], "--events", "none"), {0}).out
    where = ", ".join(f"{lo}-{hi} of {path}" for path, lo, hi, is_named in sorted(rows, key=lambda r: (not r[3], r[1])))
    assert f"lines {where}" in " ".join(table.split()), table
