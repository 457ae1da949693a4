"""The vectorized bulk path gives the same result as the record path, whatever the block size."""

from __future__ import annotations

import pytest
from helpers import SAMPLES, generate_logs

from logparse.grammar import runtime_decoder
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
    assert any(launch[-1].get("gen_throughput_p50") is not None for launch in one[1])


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
    from logparse.engines.sglang.bulk import BulkReader
    from logparse.pipeline import StreamParser
    from logparse.sources.records import Record

    path = str(generated / f"sglang.{fmt}.log")
    results = []
    for workers in (1, 2):
        src = next(open_inputs([path]))
        sp = StreamParser(src.name)
        for item in BulkReader(src, block_bytes=256 << 10).items(workers=workers):
            sp.feed(item) if isinstance(item, Record) else sp.take(item)
        launches, counts, unrec, _ = sp.finish()
        results.append(
            (
                counts.to_dict(),
                [(launch.launch_id, launch.max_total_num_tokens, launch.runtime) for launch in launches],
                [(u.line_no, u.reason) for u in unrec],
            )
        )
    assert results[0] == results[1]


# ---------------------------------------------------------------- every format, streams, non-ASCII text


def _render(lines: list[str], fmt: str, host: str = "gpu-node-7", ident: str = "python3") -> str:
    """An SGLang log as ``fmt`` would carry it (plain, short-iso, json or export), one entry a line."""
    import json

    out = []
    for i, line in enumerate(lines):
        us = 1_795_939_685_000_000 + i * 1_000_000
        cursor = f"s=5eed;i={i:x};b=0d73;m={i:x};t={us:x};x={i:x}"
        if fmt == "plain":
            out.append(line + "\n")
        elif fmt == "short-iso":
            out.append(f"2026-11-29T08:08:{i % 60:02d}+0000 {host} {ident}[4242]: {line}\n")
        elif fmt == "json":
            entry = {"__CURSOR": cursor, "__REALTIME_TIMESTAMP": str(us), "_BOOT_ID": "0d73", "_HOSTNAME": host}
            entry |= {"_SYSTEMD_UNIT": "sglang.service", "_PID": "4242", "SYSLOG_IDENTIFIER": ident, "MESSAGE": line}
            out.append(json.dumps(entry, ensure_ascii=False) + "\n")
        else:
            out.append(
                f"__CURSOR={cursor}\n__REALTIME_TIMESTAMP={us}\n_BOOT_ID=0d73\n_HOSTNAME={host}\n"
                f"_SYSTEMD_UNIT=sglang.service\nSYSLOG_IDENTIFIER={ident}\nMESSAGE={line}\n_PID=4242\n\n"
            )
    return "".join(out)


def _non_ascii_log() -> list[str]:
    """A sample launch with batch lines whose bracket holds a non-ASCII word, and other
    non-ASCII text before the fields (the byte offsets of the bulk path are not character offsets)."""
    lines = (SAMPLES / "sglang-0.5/restarts-0.5.12.log").read_text().splitlines()
    out = []
    for i, line in enumerate(lines):
        out.append(line)
        if 5 < i < 80:
            word = ("nöde", "ノード", "node")[i % 3]
            out.append(
                f"[2026-11-29 08:09:{i % 60:02d} {word} TP0] Decode batch, #running-req: {i + 10}, #token: {i * 100}, "
                f"token usage: 0.{i % 90 + 10}, cuda graph: True, gen throughput (token/s): 12.00, #queue-req: {i % 7}"
            )
            out.append(f'[2026-11-29 08:09:{i % 60:02d}] INFO:     10.0.0.{i}:5000 - "GET /ünïcode HTTP/1.1" 200 OK')
    return out


FORMAT_NAMES = {"plain": "plain", "short-iso": "journal-short-iso", "json": "journal-json", "export": "journal-export"}


@pytest.mark.parametrize("fmt", ["plain", "short-iso", "json"])
@pytest.mark.parametrize("host", ["gpu-node-7", "gpü-nöde", "ノード"])
def test_non_ascii_text_before_the_message_and_the_fields(fmt, host):
    from logparse.sources import text_source

    text = _render(_non_ascii_log(), fmt, host=host, ident="pythön" if host != "gpu-node-7" else "python3")
    bulk = _summary(parse_sources([text_source("x", text, FORMAT_NAMES[fmt])], bulk="force", block_bytes=4096))
    records = _summary(parse_sources([text_source("x", text, FORMAT_NAMES[fmt])], bulk=False))
    assert bulk == records
    assert max(launch[-1].get("peak_running_req") or 0 for launch in records[1]) >= 20


def _binary_field(name: str, value: bytes) -> bytes:
    return name.encode() + b"\n" + len(value).to_bytes(8, "little") + value + b"\n"


def _export_with_oddities() -> bytes:
    """An export stream with binary fields (a tqdm bar, a traceback in one MESSAGE, a size whose
    bytes hold newlines), a field given twice, systemd's line about the unit, stray text and a
    marker, and entries without MESSAGE or pid."""
    text = _render(_non_ascii_log(), "export").encode()
    entries = text.split(b"\n\n")
    head = (
        b"__CURSOR=s=odd;i=1\n__REALTIME_TIMESTAMP=1795939685000000\n_BOOT_ID=0d73\n_HOSTNAME=gpu-node-7\n_PID=4242\n"
    )
    other = head.replace(b"_PID=4242", b"_PID=777")  # another program's entries: another process
    head += b"_SYSTEMD_UNIT=sglang.service\n"
    odd = [
        head + _binary_field("MESSAGE", b"Loading\r 10%|#  \r 100%|###|\r"),
        head + _binary_field("MESSAGE", b'Traceback (most recent call last):\n  File "x.py", line 1\nValueError: x'),
        head + _binary_field("MESSAGE", b"x" * 10 + b"\n\n" + b"y" * 2558),  # the size's first byte is a newline
        head + b"MESSAGE=[2026-11-29 08:09:19] first\nMESSAGE=[2026-11-29 08:09:19] second",
        head.replace(b"_PID=4242", b"_PID=1") + b"UNIT=sglang.service\n_SYSTEMD_UNIT=init.scope\nMESSAGE=Started x.",
        b"-- Boot 0d7350dbe429f0ee884905998968980f --",
        other + b"SYSLOG_IDENTIFIER=python3",
        b"__CURSOR=s=odd;i=2\n_BOOT_ID=0d73\nMESSAGE=[2026-11-29 08:09:19 TP0] Decode batch, #running-req: 3",
        head + b"stray text in an entry\nMESSAGE=[2026-11-29 08:09:19] hello",
        other + _binary_field("_SYSTEMD_UNIT", b"odd\x01unit") + b"MESSAGE=[2026-11-29 08:09:19] x",
    ]
    out = []
    for i, entry in enumerate(entries):
        out.append(entry)
        if i % 7 == 3:
            out.append(odd[(i // 7) % len(odd)])
    return b"\n\n".join(out)


@pytest.mark.parametrize("block_bytes", [512, 4096, 1 << 20])
def test_export_stream_with_binary_fields_and_stray_text(block_bytes):
    from logparse.sources import text_source

    data = _export_with_oddities()
    bulk = _summary(parse_sources([text_source("x", data, "journal-export")], bulk="force", block_bytes=block_bytes))
    records = _summary(parse_sources([text_source("x", data, "journal-export")], bulk=False))
    assert bulk == records
    assert bulk[0]["parsed"] > 100


@pytest.mark.parametrize("fmt", ["plain", "short-iso", "json", "export"])
@pytest.mark.parametrize("record_rows", [0, 1000])
def test_stream_windows_on_the_bulk_path_store_as_the_record_path(tmp_path, monkeypatch, fmt, record_rows):
    """Streams (stdin, journalctl) take the bulk path, which counts batch lines per stamp in frames
    and reads the stream of a window that starts with batch lines from one of them: overlapping
    windows, cut inside seconds that hold several batch lines, store the same figures as on the
    record path (and as the whole log).  A plain log names no stream: its windows that start
    mid-launch stay unattached, on both paths."""
    from datetime import datetime

    from store_fixture import launch_lines

    from logparse import pipeline
    from logparse.engines.sglang import bulk_blocks
    from logparse.sources import text_source
    from logparse.store import Store

    lines = []
    for line in launch_lines(datetime(2026, 5, 18, 9), runtime=30, pid=4242):
        lines.append(line)
        if "Decode batch" in line:  # two or three lines in the same second
            lines += [line.replace("#running-req: ", "#running-req: 1")] * (1 + len(lines) % 2)
    windows = [lines[:25], lines[20:40], lines[38:], lines[30:45], lines]
    got = {}
    for path in ("records", "bulk"):
        store = Store(tmp_path / f"{path}.duckdb", lock_timeout=5)
        for i, w in enumerate(windows):
            src = text_source(f"journal-window-{i}", _render(w, fmt), FORMAT_NAMES[fmt])
            src.kind = "stdin"
            if path == "bulk":
                monkeypatch.setattr(pipeline, "FAST_MIN_BYTES", 0)
                monkeypatch.setattr(bulk_blocks, "RECORD_PATH_ROWS", record_rows)  # the rows left to polars or not
            report = store.ingest_sources([src])
            monkeypatch.undo()
            row = store.launches(columns=None).row(0, named=True)
            got.setdefault(path, []).append(
                {k: row[k] for k in ("batch_lines", "peak_running_req", "first_runtime_at", "last_runtime_at", "host")}
                | {"status": report.sources[0].status}
            )
    assert got["bulk"] == got["records"]
    assert got["bulk"][-1]["batch_lines"] == sum("Decode batch" in ln for ln in lines)
    if fmt != "plain":
        assert {g["status"] for g in got["bulk"]} == {"stored"}
        assert got["bulk"][0]["batch_lines"] < got["bulk"][1]["batch_lines"] < got["bulk"][2]["batch_lines"]


def test_json_messages_with_escapes_spacing_and_odd_values():
    """``-o json`` MESSAGE cut by literal finds where no backslash comes before the closing quote,
    by the regexp elsewhere: escaped quotes and backslashes, ``\\u`` escapes, compact and spaced
    separators, a MESSAGE that is not a string, and the key's text inside another value."""
    import json

    from logparse.sources import text_source

    out = []
    for i, line in enumerate(_non_ascii_log()):
        entry = {"__CURSOR": f"s=5eed;i={i:x}", "__REALTIME_TIMESTAMP": str(1_795_939_685_000_000 + i * 10**6)}
        entry |= {"_HOSTNAME": "gpu-node-7", "_SYSTEMD_UNIT": "sglang.service", "_PID": "4242"}
        if i % 11 == 3:
            entry["CODE_FUNC"] = 'say "MESSAGE": here'  # the key's text, escaped, before the real one
        if "Decode batch" in line and i % 5 == 0:  # escapes before a field that sets the peak
            line = line.replace("cuda graph", 'cuda "graph" \\').split("#queue-req:")[0] + f"#queue-req: {900 + i}"
        entry["MESSAGE"] = line
        if i % 13 == 7:
            entry["MESSAGE"] = None if i % 2 else [91, 50, 48]
        if i % 17 == 5:
            entry["MESSAGE"] = line + "\\"  # a backslash right before the closing quote
        compact = i % 2 == 0
        text = json.dumps(entry, ensure_ascii=i % 3 == 0, separators=(",", ":") if compact else (", ", ": "))
        out.append(text + "\n")
    text = "".join(out)
    bulk = _summary(parse_sources([text_source("x", text, "journal-json")], bulk="force", block_bytes=4096))
    records = _summary(parse_sources([text_source("x", text, "journal-json")], bulk=False))
    assert bulk == records
    assert bulk[0]["parsed"] > 50 and max(launch[-1].get("peak_queue_req") or 0 for launch in bulk[1]) >= 900


# ---------------------------------------------------------------- lines the numpy templates prove, and near misses


def _decode(i: int, tags: str = " TP0", stamp: str = "") -> str:
    stamp = stamp or f"2026-11-29 08:09:{i % 60:02d}"
    return (
        f"[{stamp}{tags}] Decode batch, #running-req: {i % 50}, #token: {i * 37}, token usage: 0.{i % 90 + 10}, "
        f"cuda graph: {'True' if i % 3 else 'False'}, gen throughput (token/s): {i}.{i % 100:02d}, #queue-req: {i % 9}"
    )


def _prefill(i: int, tags: str = "") -> str:
    return (
        f"[2026-11-29 08:09:{i % 60:02d}{tags}] Prefill batch, #new-seq: {i % 4 + 1}, #new-token: {i * 11}, "
        f"#cached-token: {i * 3}, token usage: 0.{i % 97:02d}, #running-req: {i % 61}, #queue-req: {i % 5}, "
        f"#pending-token: 0, cuda graph: False, input throughput (token/s): {i * 7}.5"
    )


def _access(i: int, path: str = "/v1/chat/completions", reason: str = "200 OK", client: str = "") -> str:
    client = client or f"10.0.{i % 7}.{i % 250}:{40000 + i}"
    return f'[2026-11-29 08:09:{i % 60:02d}] INFO:     {client} - "POST {path} HTTP/1.1" {reason}'


#: Other lines in the templates' shapes: words in the bracket (an anchor among them: a batch line's
#: anchors do not matter), milliseconds, a leading zero.
TEMPLATE_VARIANTS = [
    _decode(14, tags=" TP0 DisaggregationMode.DECODE node-3"),
    _decode(18, stamp="2026-11-29 08:09:18.123"),
    _decode(24, tags=" Capture"),  # an anchor in the bracket
    _prefill(30).replace("token usage: 0.30", "token usage: 00.30"),
    _decode(25).replace("Decode batch,", "Decode batch."),  # 0.4.6.post4-0.5.1.post3's wording
] + [
    # a line of every wording of the runtime-line spec (grammars/sglang/runtime.toml)
    f"[2026-11-29 08:10:{k:02d} TP{k % 2}] {shape.sample}"
    for k, shape in enumerate(runtime_decoder.shapes("sglang"))
]

#: Lines one step away from a template: each must leave the template path and give what polars or
#: the record path gives.
NEAR_MISSES = [
    _decode(8) + " ",  # trailing space
    _decode(9).replace("cuda graph: True", "cuda graph: Maybe").replace("cuda graph: False", "cuda graph: Maybe"),
    _decode(11).replace("token usage: 0.21", "token usage: 1"),
    _decode(12).replace("token usage: 0.22", "token usage: 0.12345678901234567"),
    _decode(13).replace("#token: ", "#full token: "),
    _decode(15, tags=" TP0  EP0"),
    _decode(16, tags=" encode_dp_worker[2]"),
    _decode(17, tags=" nöde"),
    _decode(19, stamp="2026-11-29 08:09:19.1234"),
    _decode(20, stamp="2026-11-29 08:09:20.5"),
    _decode(22).replace("#queue-req: 4", "#queue-req: \x1b[0m4"),
    _decode(26).replace("Decode batch", "Decode batch [12]"),
    _decode(28) + "\r",
    _prefill(29).replace("#pending-token: 0, ", ""),
    _prefill(31, tags=" TP0") + ", #extra: 1",
    _access(32, path="/max_total_num_tokens"),
    _access(33, path="/get?x=server_args="),
    _access(34, path="/Capture something"),
    _access(35, reason="418 I'm a teapot"),
    _access(36, reason="200 OK out of memory"),
    _access(37, client="[::1]:5000"),
    _access(38).replace("] INFO", " TP0] INFO"),
    _access(39).replace("] INFO", " Capture] INFO"),
    _access(40).replace("INFO:     ", "INFO:    "),
    _access(41, path="/v1/KV Cache"),
    _access(42).replace('"POST', '"BREW'),
    _access(43).replace(" HTTP/1.1", " HTTP/2"),
]


#: Near misses where polars' expressions and the record path already disagreed before the templates
#: (a key twice, a number beyond 64 bits, a stamp without a date): the templates must leave them to
#: polars, which gives what it gave (the record path's reading of them is another question).
POLARS_DIVERGENT = [
    _decode(7) + ", #queue-req: 99",
    _decode(23).replace("#queue-req", "#queue-req: 1, #queue-req"),
    _decode(10).replace("#running-req: 10", "#running-req: 123456789012345678901"),
    _decode(21, stamp="08:09:21"),
    _decode(27)[:-1],  # the last number cut off
    _decode(25).replace("Decode batch,", "Decode batch;"),  # no wording of the grammar's
]


def _template_log(near_misses: list[str] | None = None) -> list[str]:
    """A sample launch followed by runtime lines in the templates' shapes, near misses among them."""
    lines = (SAMPLES / "sglang-0.5/restarts-0.5.12.log").read_text().splitlines()
    out = []
    for i, line in enumerate(lines):
        out.append(line)
        if 5 < i < 120:
            out += [_decode(i * 3), _decode(i * 3 + 1, tags=""), _prefill(i), _access(i)]
            out.append(TEMPLATE_VARIANTS[i % len(TEMPLATE_VARIANTS)])
            misses = NEAR_MISSES if near_misses is None else near_misses
            out.append(misses[i % len(misses)])
    return out


@pytest.mark.parametrize("fmt", ["plain", "short-iso", "export"])
@pytest.mark.parametrize("record_rows", [0, 1_000_000])
def test_template_rows_and_near_misses_equal_the_record_path(monkeypatch, fmt, record_rows):
    """Batch and access lines proven by numpy, lines one step from a template (which polars or,
    when few, the record path reads), in blocks of several sizes: the same as the record path."""
    from logparse.engines.sglang import bulk_blocks
    from logparse.sources import text_source

    monkeypatch.setattr(bulk_blocks, "RECORD_PATH_ROWS", record_rows)
    text = _render(_template_log(), fmt)
    records = _summary(parse_sources([text_source("x", text, FORMAT_NAMES[fmt])], bulk=False))
    for block in (4096, 1 << 16, 1 << 24):
        got = _summary(parse_sources([text_source("x", text, FORMAT_NAMES[fmt])], bulk="force", block_bytes=block))
        assert got == records
    assert max(launch[-1].get("peak_running_req") or 0 for launch in records[1]) >= 40
    # the decode lines' gen throughput: its distribution, bucket for bucket, whatever the path
    assert any(launch[-1].get("gen_throughput_hist") for launch in records[1])


@pytest.mark.parametrize("fmt", ["plain", "short-iso", "export"])
def test_templates_leave_polars_divergent_lines_to_polars(monkeypatch, fmt):
    from logparse.engines.sglang import bulk_blocks
    from logparse.sources import text_source

    monkeypatch.setattr(bulk_blocks, "RECORD_PATH_ROWS", 0)
    text = _render(_template_log(POLARS_DIVERGENT), fmt)
    source = FORMAT_NAMES[fmt]
    with_templates = _summary(parse_sources([text_source("x", text, source)], bulk="force", block_bytes=1 << 16))
    monkeypatch.setattr(bulk_blocks, "TEMPLATE_FORMATS", frozenset())
    monkeypatch.setattr(bulk_blocks, "TEMPLATE_EXPORT", False)
    polars_only = _summary(parse_sources([text_source("x", text, source)], bulk="force", block_bytes=1 << 16))
    assert with_templates == polars_only


def test_templates_prove_the_lines_written_in_their_shape_and_no_near_miss():
    import numpy as np

    from logparse.engines.sglang import bulk_template

    good = [_decode(i) for i in range(50)] + [_prefill(i) for i in range(50)] + [_access(i) for i in range(50)]
    good += TEMPLATE_VARIANTS
    data = "\n".join(good + NEAR_MISSES + POLARS_DIVERGENT).encode()
    b = bulk_template.Bytes(data)
    starts, ends = b.lines()
    rows = bulk_template.Rows(np.arange(len(starts)), starts.copy(), ends, {})
    proven = sorted(int(i) for r in bulk_template.batch_rows(b, rows) for i in r.row)
    assert proven == list(range(len(good)))


def test_no_anchor_fits_in_a_proven_access_line():
    """A proven access line is counted as noise unread: no anchor may fit in its free parts (a path
    of PATH_CHARS, a listed reason) or span them."""
    from logparse.engines.sglang import bulk_template
    from logparse.engines.sglang.classify import ANCHORS

    path_chars = set(bulk_template.PATH_CHARS.decode())
    for anchor in ANCHORS:
        assert not set(anchor) <= path_chars, anchor
        for reason in bulk_template.REASONS:
            assert anchor not in f' HTTP/1.1" 200 {reason}', anchor
        for method in bulk_template.METHODS:
            assert anchor not in f'INFO:     1.2.3.4:5 - "{method}', anchor


@pytest.mark.parametrize("millis", ["none", "all", "some"])
def test_stamps_of_proven_rows_are_their_iso_stamps(millis):
    """The stamps a stream keeps of its batch lines: runs of lines of one stamp, copied from the
    block (one width) or written from the stamp numbers (mixed widths), the lines' own stamp in
    ISO form either way, and as many lines as there are."""
    import numpy as np

    from logparse.engines.sglang import bulk_runtime, bulk_template
    from logparse.store.runtime import StampFrame

    stamps = [f"2026-11-29 08:{i // 60:02d}:{i % 60:02d}" for i in range(0, 300, 7)]
    if millis != "none":
        stamps = [s + f".{i * 37 % 1000:03d}" if millis == "all" or i % 2 else s for i, s in enumerate(stamps)]
    lines = [s for i, s in enumerate(stamps) for _ in range(1 + i % 3)]  # runs of 1 to 3 lines a stamp
    lines += stamps[:2]  # a stamp seen again later: a run of its own, counted with the first
    data = "\n".join(_decode(i, stamp=s) for i, s in enumerate(lines)).encode()
    b = bulk_template.Bytes(data)
    starts, ends = b.lines()
    decode, _, _ = bulk_template.batch_rows(b, bulk_template.Rows(np.arange(len(starts)), starts.copy(), ends, {}))
    ts, n = bulk_runtime._stamp_frame(decode.cols["ts"], [decode.cols["ts_at"]], b)
    runs = [t for i, t in enumerate(lines) if not i or t != lines[i - 1]]
    assert [t.decode() for t in ts.tolist()] == [t.replace(" ", "T") for t in runs]
    assert int(n.sum()) == len(lines)
    counted = StampFrame(ts, n)
    assert counted.per_stamp() == {t.replace(" ", "T"): lines.count(t) for t in stamps}
    assert counted.first == min(counted.per_stamp()) and counted.last == max(counted.per_stamp())
    assert counted.outside(stamps[1].replace(" ", "T"), stamps[-2].replace(" ", "T")) == (
        lines.count(stamps[0]) + lines.count(stamps[-1])
    )
    assert counted.get("2026-11-29T09:00:00") is None


@pytest.mark.parametrize("fmt", ["short-iso", "export"])
def test_two_classifying_threads_give_the_same_result(monkeypatch, fmt):
    """LOGPARSE_THREADS=2: blocks classified two at a time, applied in order (raw export entries in
    their place)."""
    from logparse.sources import text_source

    data = _export_with_oddities() if fmt == "export" else _render(_template_log(), fmt)
    records = _summary(parse_sources([text_source("x", data, FORMAT_NAMES[fmt])], bulk=False))
    monkeypatch.setenv("LOGPARSE_THREADS", "2")
    threaded = _summary(parse_sources([text_source("x", data, FORMAT_NAMES[fmt])], bulk="force", block_bytes=4096))
    assert threaded == records
