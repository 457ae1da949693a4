"""A launch's identity: host, boot, pid and the time of its first line, then its content.

* a journal holding the same startup text three times (same pid, different journal times) holds
  three launches, with three ids, in every rendering and in the store;
* a rendering that lacks parts (``-o cat``: no host, pid or record time) and a richer one
  (``-o export``), in either order: the store holds the ids the richer one's lines mint, with host,
  unit and pid, and the poorer one's ids resolve to the same launches (aliases); ``launch_id``
  stays a unique key;
* a log with no time at all: the ordinal completes the identity.
"""

from __future__ import annotations

import duckdb
import pytest
from helpers import cli
from journal_fixture import Entry, build_journal, render, require_tools

from logparse.launches.identity import identity
from logparse.pipeline import parse_text
from logparse.store import Store

BOOT = "c" * 31 + "3"
HOST, UNIT, PID = "gpu-node-9", "sglang.service", 4321

STARTUP = """\
[2026-06-01 10:00:00] server_args=ServerArgs(model_path='/models/Qwen2.5-7B-Instruct', tp_size=1, mem_fraction_static=0.85, random_seed=1)
[2026-06-01 10:00:03] Load weight begin. avail mem=78.50 GB
[2026-06-01 10:00:09] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=64.20 GB, mem usage=14.30 GB.
[2026-06-01 10:00:09] KV Cache is allocated. #tokens: 944112, K size: 25.21 GB, V size: 25.21 GB
[2026-06-01 10:00:09] Memory pool end. avail mem=13.70 GB
[2026-06-01 10:00:12] Capture cuda graph end. Time elapsed: 3.10 s. mem usage=0.61 GB. avail mem=13.09 GB.
[2026-06-01 10:00:13] max_total_num_tokens=944112, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=4096, context_len=32768, available_gpu_mem=13.09 GB
[2026-06-01 10:00:14] INFO:     Application startup complete.
"""


@pytest.fixture(scope="module")
def three_copies(tmp_path_factory):
    """A real journal in which the same startup text (with the same SGLang stamps) arrives three times
    from one process, a minute apart (a forwarder replaying it, a log shipped twice)."""
    require_tools()
    entries = []
    t0 = 1_780_308_000_000_000
    for copy in range(3):
        for n, line in enumerate(STARTUP.splitlines()):
            entries.append(Entry(t0 + copy * 60_000_000 + n * 1000, BOOT, HOST, UNIT, "python3", PID, line.encode()))
    d = tmp_path_factory.mktemp("ident")
    journal = build_journal(entries, d)
    out = {}
    for mode in ("export", "cat", "json", "short-iso"):
        path = d / f"{mode}.txt"
        path.write_bytes(render(journal, "-o", mode, *(("--all",) if mode == "json" else ())))
        out[mode] = path
    return out


@pytest.mark.parametrize("mode", ["export", "cat", "json", "short-iso"])
def test_three_copies_are_three_launches_with_three_ids(three_copies, mode):
    result = parse_text(three_copies[mode].read_bytes(), name=f"{mode}.txt")
    ids = [launch.launch_id for launch in result.launches]
    assert len(ids) == 3 and len(set(ids)) == 3, ids


def test_three_copies_in_the_store(three_copies, tmp_path):
    db = tmp_path / "h.duckdb"
    store = Store(db)
    store.ingest_paths([str(three_copies["export"])], progress=False)
    assert len(store.launch_ids()) == 3
    code, out, _ = cli("launches", "--format", "json", db=db)
    assert code == 0 and out.count('"launch_id"') == 3  # no join fan-out
    # another rendering of the same journal adds nothing: each copy finds its own launch
    store.ingest_paths([str(three_copies["json"])], progress=False)
    store.ingest_paths([str(three_copies["short-iso"])], progress=False)
    assert len(store.launch_ids()) == 3
    assert store.doctor().healthy


@pytest.mark.parametrize("first", ["cat", "export"])
def test_either_rendering_first_gives_the_richer_ids_and_the_process(three_copies, tmp_path, first):
    """``-o cat`` (no host, pid or record time) and ``-o export`` of one journal, in either order: the
    store ends the same, with the ids the richer rendering's lines mint (what the union of the lines
    says of the launch), host, unit and pid filled in; the ids the poorer rendering minted (and the
    store may have given out) resolve to the same launches."""
    other = "export" if first == "cat" else "cat"
    db = tmp_path / "h.duckdb"
    store = Store(db)
    store.ingest_paths([str(three_copies[first])], progress=False)
    given = store.launch_ids()
    assert len(given) == 3
    store.ingest_paths([str(three_copies[other])], progress=False)
    export_ids = [x.launch_id for x in parse_text(three_copies["export"].read_bytes(), name="export.txt").launches]
    cat_ids = [x.launch_id for x in parse_text(three_copies["cat"].read_bytes(), name="cat.txt").launches]
    assert sorted(store.launch_ids()) == sorted(export_ids)
    rows = store.query("SELECT host, unit, pid FROM launches").rows()
    assert set(rows) == {(HOST, UNIT, PID)}
    for cat_id, export_id in zip(cat_ids, export_ids):
        assert store.load_launch(cat_id).launch_id == export_id
    for lid in given:
        assert cli("show", lid[:10], "--events", "none", db=db).code == 0
    assert store.doctor().healthy


def test_launch_id_is_a_key(tmp_path):
    store = Store(tmp_path / "h.duckdb")
    store.ingest_text(STARTUP, name="a.log")
    (lid,) = store.launch_ids()
    con = duckdb.connect(str(store.path))
    try:
        with pytest.raises(duckdb.ConstraintException):
            con.execute("INSERT INTO launches (launch_id) VALUES (?)", [lid])
    finally:
        con.close()


def test_a_log_without_time_is_completed_by_the_ordinal():
    text = "\n".join(line.split("] ", 1)[1] for line in STARTUP.splitlines()) + "\n"
    launches = parse_text(text * 2, name="notime.log").launches
    assert len(launches) == 2
    a, b = (identity(x) for x in launches)
    assert a.started_at is None and b.started_at is None
    assert (a.ordinal, b.ordinal) == (1, 2) and launches[0].launch_id != launches[1].launch_id
    # the same log read again gives the same ids
    again = parse_text(text * 2, name="notime.log").launches
    assert [x.launch_id for x in again] == [x.launch_id for x in launches]


# ---------------------------------------------------------------------------- the previous launch


def _sequence(store) -> list[tuple]:
    return store.query(
        "SELECT l.started_at_text, q.launch_no, p.started_at_text AS prev FROM launch_sequence q "
        "JOIN launches l USING (launch_id) LEFT JOIN launches p ON p.launch_id = q.prev_launch_id ORDER BY q.launch_no"
    ).rows()


def test_an_older_launch_ingested_later_becomes_the_previous_one(tmp_path):
    from store_fixture import split_launches, three_launches

    first, second, third = split_launches(three_launches())
    one = Store(tmp_path / "one.duckdb")
    one.ingest_text(first + second + third, name="all.log")
    late = Store(tmp_path / "late.duckdb")
    late.ingest_text(third, name="c.log")
    late.ingest_text(first, name="a.log")
    assert [r[1] for r in _sequence(late)] == [1, 2]
    late.ingest_text(second, name="b.log")  # the middle one arrives last
    assert _sequence(late) == _sequence(one)
    # check's baseline and history's previous launch are the same launch
    lid = late.load_launch("@latest").launch_id
    rows = late.history(metric="kv_tokens").to_dicts()
    prev = next(r["prev_launch_id"] for r in rows if r["launch_id"] == lid)
    _code, out, _err = cli("check", lid, "--json", db=late.path)
    import json

    assert json.loads(out)["baseline"]["launch_id"] == prev


def test_a_merged_store_recomputes_the_sequence(tmp_path):
    from store_fixture import split_launches, three_launches

    first, second, third = split_launches(three_launches())
    a, b = Store(tmp_path / "a.duckdb"), Store(tmp_path / "b.duckdb")
    a.ingest_text(first + third, name="ac.log")
    b.ingest_text(second, name="b.log")
    a.ingest_paths([str(b.path)], progress=False)
    assert [r[1] for r in _sequence(a)] == [1, 2, 3]
    assert a.doctor().healthy
