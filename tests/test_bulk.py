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
def test_stream_windows_on_the_bulk_path_store_as_the_record_path(tmp_path, monkeypatch, fmt):
    """Streams (stdin, journalctl) take the bulk path, which counts batch lines per stamp in frames
    and reads the stream of a window that starts with batch lines from one of them: overlapping
    windows, cut inside seconds that hold several batch lines, store the same figures as on the
    record path (and as the whole log).  A plain log names no stream: its windows that start
    mid-launch stay unattached, on both paths."""
    from datetime import datetime

    from store_fixture import launch_lines

    from logparse.grammar import bulk
    from logparse.sources import text_source
    from logparse.store import Store, ingest

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
                monkeypatch.setattr(ingest, "BULK_MIN_BYTES", 0)
                monkeypatch.setattr(bulk, "MIN_BULK_BYTES", 0)
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
