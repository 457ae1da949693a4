"""The small-input write path (DuckDB's own typed lists, :mod:`logparse.store.rows`) stores exactly
what the polars + Arrow path (:func:`logparse.store.frames.to_frame`) stores: the same inputs
ingested through each path give the same rows in every table and view, but for the times of the
ingest itself."""

from __future__ import annotations

from datetime import datetime, timedelta

import duckdb
import polars as pl
import pytest
from helpers import CORPUS, SAMPLES

from logparse.store import Store, merge, schema
from logparse.store import rows as small

#: The times of the ingest itself (when it ran), not of what was ingested.
VOLATILE = {"ingested_at", "updated_at", "applied_at", "logparse_version"}

CORPUS_INPUTS = [
    CORPUS / "sglang-0.5.10.post1",
    CORPUS / "sglang-0.5.23",
    CORPUS / "failures",
    CORPUS / "journal" / "0.5.23-restart" / "short-iso-precise.txt",
    CORPUS / "journal" / "0.5.23-restart" / "json.txt",
]


def _fail(*_args, **_kwargs):
    raise AssertionError("this ingest was to take the other write path")


def _ingest(db, inputs, monkeypatch, *, small_path: bool) -> None:
    with monkeypatch.context() as m:
        if small_path:
            m.setattr(small, "SMALL_ROWS", 10**9)
            m.setattr(merge, "to_frame", _fail)  # every launch written without polars
        else:
            m.setattr(small, "SMALL_ROWS", -1)
            m.setattr(small, "insert", _fail)
        store = Store(db)
        for path in inputs:  # one by one: later inputs merge into launches stored before
            store.ingest_paths([path])


def _table_rows(db) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        out = {}
        for table in (*schema.TABLES, *schema.VIEWS):
            cols = [r[0] for r in con.execute(f"SELECT * FROM {table} LIMIT 0").description if r[0] not in VOLATILE]
            sql = f"SELECT {', '.join(cols)} FROM {table}"
            out[table] = sorted(con.execute(sql).fetchall(), key=repr)
        return out
    finally:
        con.close()


def _compare(tmp_path, inputs, monkeypatch) -> dict[str, list[tuple]]:
    by_polars, by_duckdb = tmp_path / "polars.duckdb", tmp_path / "duckdb.duckdb"
    _ingest(by_polars, inputs, monkeypatch, small_path=False)
    _ingest(by_duckdb, inputs, monkeypatch, small_path=True)
    want, got = _table_rows(by_polars), _table_rows(by_duckdb)
    for table in want:
        assert len(got[table]) == len(want[table]), table
        for a, b in zip(want[table], got[table]):
            assert a == b, table
    return want


def test_the_samples_are_stored_alike_by_both_paths(tmp_path, monkeypatch):
    inputs = sorted(p for p in SAMPLES.rglob("*") if p.is_file() and not p.name.endswith((".md", ".json")))
    stored = _compare(tmp_path, inputs, monkeypatch)
    assert len(stored["launches"]) >= 20 and len(stored["events"]) > 500  # the comparison saw rows


@pytest.mark.skipif(not CORPUS.is_dir(), reason="genuine corpus not available")
def test_corpus_files_are_stored_alike_by_both_paths(tmp_path, monkeypatch):
    stored = _compare(tmp_path, [p for p in CORPUS_INPUTS if p.exists()], monkeypatch)
    assert len(stored["launches"]) >= 5 and stored["launch_sources"]


def test_a_second_reading_merges_alike(tmp_path, monkeypatch):
    """A launch read again from a longer input (updated, aliases, ranges) through both paths."""
    log = SAMPLES / "kimi-k25" / "launch-1-baseline.log"
    lines = log.read_text().splitlines(keepends=True)
    half = tmp_path / "half.log"
    half.write_text("".join(lines[: len(lines) // 2]))
    _compare(tmp_path, [half, log], monkeypatch)


TEXTS = [
    "2025-01-02T03:04:05",
    "2025-01-02T03:04:05.123",
    "2025-01-02T03:04:05.123456789",
    "2025-01-02T03:04:05.5",
    "2025-01-02T03:04:60",
    "2025-01-02T03:04:60.25",
    "2025-12-31T23:59:60",
    "12:00:00",
    "12:00:00.123",
    None,
]


def test_plain_timestamps_are_read_as_polars_reads_them():
    want = pl.Series(TEXTS, dtype=pl.String).str.to_datetime("%Y-%m-%dT%H:%M:%S%.f", strict=False, time_unit="us")
    assert [small.plain_timestamp(t) for t in TEXTS] == want.to_list()


@pytest.mark.parametrize(
    "text", ["2025-02-29T00:00:00", "2025-01-02T24:00:00", "2025-1-2T3:4:5", "+2025-01-02T03:04:05", "x", ""]
)
def test_other_timestamp_texts_are_left_to_polars(text):
    with pytest.raises(small.NotPlain):
        small.plain_timestamp(text)


def test_startup_is_cut_to_the_millisecond_as_polars_cuts_it():
    at = datetime(2025, 1, 2, 3, 4, 5)
    for us in (0, 999, 1000, 999_999, 61_234_567, -999, -1001):
        b = at + timedelta(microseconds=us)
        df = pl.DataFrame({"a": [at], "b": [b]}, schema={"a": pl.Datetime("us"), "b": pl.Datetime("us")})
        want = df.select((pl.col("b") - pl.col("a")).dt.total_milliseconds() / 1000.0).item()
        assert small.startup_seconds(at, b) == want, us
