"""An input stored a batch at a time makes the same store as one merge of it (``store/batched.py``).

Each set of inputs is ingested twice into new stores, in the same order: as it is (each input one
batch) and with :data:`logparse.store.items.BATCH_EVENTS` at 1 (every launch, every piece, a batch
of its own, read back from the temporary file); every table of the two stores must be equal row
for row, the ids the store gave out along the way (``launch_aliases``) included, but for the times
rows were written.  The inputs meet what makes one input's launches interact in the store: the
samples (every engine and era, copies of one start in one input), a genuine journal in every
rendering (the same launches again and again, under two units, across a reboot), and pieces of a
journal's launches ingested before the input with their start (kept, then joined).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pytest
from helpers import CORPUS, SAMPLES, copy_store
from journal_fixture import build_journal, render_all, require_tools, two_units
from store_fixture import journal_short_iso, split_launches, three_launches

from logparse.sources import open_inputs, text_source
from logparse.store import Store, ingest
from logparse.store import items as store_items

#: Columns that say when a row was written.
WHEN = {"ingested_at", "updated_at", "applied_at"}


def tables(db: Path) -> dict[str, list[str]]:
    """Every table of a store, its rows sorted (as JSON, without the WHEN columns)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        names = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()]
        out = {}
        for name in names:
            cur = con.execute(f"SELECT * FROM {name}")
            cols = [d[0] for d in cur.description]
            out[name] = sorted(
                json.dumps({k: v for k, v in zip(cols, row) if k not in WHEN}, default=str, sort_keys=True)
                for row in cur.fetchall()
            )
        return out
    finally:
        con.close()


def _both(tmp_path: Path, empty_store: Path, monkeypatch, inputs) -> tuple[dict, dict, int]:
    """The store of ``inputs()`` (a list of sources, made anew each time) ingested as it is, and with
    a batch per item; and how many batches the second one wrote."""
    whole = copy_store(empty_store, tmp_path / "whole.duckdb")
    Store(whole, lock_timeout=10).ingest_sources(inputs())
    batches = []
    apply_input = ingest.apply_input

    def counted(con, items, **kw):
        batches.append(sum(1 for batch in items.batches() if batch))
        return apply_input(con, items, **kw)

    monkeypatch.setattr(store_items, "BATCH_EVENTS", 1)
    monkeypatch.setattr(ingest, "apply_input", counted)
    apart = copy_store(empty_store, tmp_path / "batches.duckdb")
    Store(apart, lock_timeout=10).ingest_sources(inputs())
    return tables(whole), tables(apart), sum(batches)


def _same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for name in a:
        assert a[name] == b[name], name


def test_the_samples_a_launch_at_a_time_make_the_same_store(tmp_path, empty_store, monkeypatch):
    paths = [str(SAMPLES)] + [str(p) for p in sorted((CORPUS / "journal").glob("*/*.txt"))[:4]]
    a, b, batches = _both(tmp_path, empty_store, monkeypatch, lambda: list(open_inputs(paths)))
    assert len(a["launches"]) > 20
    assert batches >= len(a["launches"])  # every launch was written in a batch of its own
    _same(a, b)


def _journal_pieces() -> list:
    """Three launches of one unit, a pid each, in ``-o short-iso``: the end of the second launch and
    the third first (no start of theirs in the store: kept), then the whole journal (they join
    their launches), then its first half again."""
    day = datetime(2026, 5, 18, 9, 0, 0)
    lines: list[str] = []
    for n, (part, pid) in enumerate(zip(split_launches(three_launches()), (100, 200, 300))):
        lines += journal_short_iso(part.splitlines(), pid=pid, start=day + timedelta(hours=n))
    half = len(lines) // 2
    parts = {"tail": lines[half:], "whole": lines, "head": lines[: half + 8]}
    return [text_source(f"{name}.log", "\n".join(part) + "\n") for name, part in parts.items()]


def test_pieces_kept_before_their_start_join_it_a_launch_at_a_time(tmp_path, empty_store, monkeypatch):
    a, b, batches = _both(tmp_path, empty_store, monkeypatch, _journal_pieces)
    assert len(a["launches"]) == 3 and not a["pending_pieces"]
    assert batches >= 3
    _same(a, b)


@pytest.fixture(scope="module")
def renderings(tmp_path_factory) -> Path:
    """A genuine journal (two units interleaved, a reboot: ``journal_fixture.two_units``) in every
    rendering, a file each."""
    require_tools()
    d = tmp_path_factory.mktemp("renderings")
    (d / "out").mkdir()
    render_all(build_journal(two_units(), d / "journal"), d / "out")
    return d / "out"


def test_every_rendering_of_a_journal_a_launch_at_a_time_makes_the_same_store(
    renderings, tmp_path, empty_store, monkeypatch
):
    paths = sorted(str(p) for p in renderings.glob("*.txt"))
    a, b, batches = _both(tmp_path, empty_store, monkeypatch, lambda: list(open_inputs(paths)))
    assert len(a["launches"]) >= 4
    assert batches > len(paths)
    _same(a, b)
