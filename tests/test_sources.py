"""Source layer: wrapper formats, compression, collections, stdin, robustness.

Samples under tests/data/sources/ are written by us in the real formats.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import random
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from journal_fixture import Entry, export_stream

import logparse.sources as sources
from logparse.sources import FORMATS, InputError, open_inputs, text_source

DATA = Path(__file__).parent / "data" / "sources"
SAMPLES = sorted(p.name for p in DATA.iterdir())


def read(name: str, fmt: str | None = None):
    src = next(open_inputs([str(DATA / name)], input_format=fmt))
    return src, list(src.records())


def physical_lines(data: bytes) -> int:
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def texts(recs):
    return [r.text for r in recs]


# ---------------------------------------------------------------------------------------
# accounting


@pytest.mark.parametrize("name", SAMPLES)
def test_one_record_per_physical_line(name):
    data = (DATA / name).read_bytes()
    src, recs = read(name)
    assert len(recs) == physical_lines(data)
    assert [r.line_no for r in recs] == list(range(1, len(recs) + 1))
    assert all(r.source == str(DATA / name) for r in recs)
    assert src.bytes_read == len(data)
    assert src.content_hash == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("name", SAMPLES)
def test_small_chunks_give_the_same_records(name, monkeypatch):
    _, whole = read(name)
    monkeypatch.setattr(sources, "CHUNK_SIZE", 7)
    _, small = read(name)
    assert [(r.text, r.ts, r.unit, r.pid, r.host) for r in small] == [
        (r.text, r.ts, r.unit, r.pid, r.host) for r in whole
    ]


# ---------------------------------------------------------------------------------------
# wrapper formats


def test_docker_timestamps():
    src, recs = read("docker-timestamps.log")
    assert src.fmt == "docker"
    assert {r.fmt for r in recs} == {"docker"}
    assert recs[3].text.startswith("[2026-09-22 06:49:56] server_args=ServerArgs(model_path=")
    assert recs[1].text == "  Example: sglang serve --model-path <model> [options]"
    assert recs[3].ts == pytest.approx(1790059796.336833841)
    assert recs[4].ts == pytest.approx(1790059802.5)  # Go trims trailing zeros: ".5Z"
    assert recs[9].ts == 1790059820.0
    assert all(r.text.startswith(("[", "/", "  ")) for r in recs)


def test_compose_services_are_units():
    src, recs = read("compose.log")
    assert src.fmt == "compose"
    by_unit = {}
    for r in recs:
        by_unit.setdefault(r.unit, []).append(r.text)
    assert by_unit["sglang-1"][0].startswith("[2026-09-22 06:49:56] server_args=ServerArgs(")
    assert "" in by_unit["sglang-1"]  # "sglang-1  | " with an empty line
    assert by_unit["router-1"] == ["INFO:     Started server process [1]", "INFO:     Waiting for application startup."]
    # compose's own lines stay plain
    assert recs[0].text == "Attaching to router-1, sglang-1, syslog-1" and recs[0].unit is None
    assert recs[-1].text == "sglang-1 exited with code 0"
    # a service printing journald-style lines: header peeled too, host/pid from it
    sys_recs = [r for r in recs if r.unit == "syslog-1"]
    assert [r.text for r in sys_recs] == [
        "[2026-09-22 06:50:03] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=70.11 GB, mem usage=8.51 GB.",
        "[2026-09-22 06:50:04] Memory pool end. avail mem=15.92 GB",
    ]
    assert {(r.host, r.pid) for r in sys_recs} == {("gpu-node-3", 2211)}
    assert [time.gmtime(r.ts).tm_year for r in sys_recs] == [2026, 2026]


def test_compose_with_timestamps():
    src, recs = read("compose-timestamps.log")
    assert src.fmt == "compose"
    assert [r.unit for r in recs] == ["sglang-1", "worker-12", "sglang-1"]
    assert recs[1].text == "[2026-09-22 06:50:02 TP0] Load weight begin. avail mem=78.62 GB"
    assert recs[1].ts == pytest.approx(1790059802.5)


def test_kubectl_prefix():
    src, recs = read("kubectl-prefix.log")
    assert src.fmt == "kubectl"
    assert recs[0].unit == "sglang-6f7d9c8b5-x2k4q/fetch-model"
    assert {r.unit for r in recs[1:]} == {"sglang-6f7d9c8b5-x2k4q/sglang"}
    assert recs[3].text == "Traceback (most recent call last):"
    assert recs[4].text.startswith('  File "/srv/venv/')


def test_kubectl_prefix_and_timestamps():
    src, recs = read("kubectl-prefix-timestamps.log")
    assert src.fmt == "kubectl"
    assert [r.unit for r in recs] == ["sglang-0/sglang", "sglang-0/sglang", "sglang-1/sglang"]
    assert recs[2].ts == pytest.approx(1790059803.25)
    assert recs[2].text.startswith("[2026-09-22 06:50:03 TP0] Load weight begin.")


def test_kubectl_timestamps_same_shape_as_docker():
    src, recs = read("kubectl-timestamps.log")
    assert src.fmt == "docker"  # indistinguishable; --input-format kubectl names it
    src2, recs2 = read("kubectl-timestamps.log", "kubectl")
    assert src2.fmt == "kubectl" and {r.fmt for r in recs2} == {"kubectl"}
    assert texts(recs) == texts(recs2)
    assert recs[0].text.startswith("[2026-09-22 06:49:56] server_args=")


def test_ray_actor_prefix():
    src, recs = read("ray.log")
    assert src.fmt == "ray"
    assert all(r.text.startswith(("[2026-09-22", "Loading safetensors")) for r in recs)
    assert [r.pid for r in recs] == [None, 31337, 31338, 31337, 31337, 31338, None]
    assert recs[1].notes == ["ray actor Scheduler, ip=10.0.0.12"]
    assert recs[4].text.startswith("[2026-09-22 06:50:11 TP0] KV Cache is allocated.")  # ANSI-coloured prefix
    # Ray's dedup suffix is Ray's, not SGLang's: stripped, and kept as a note
    assert recs[5].text.endswith("avail mem=15.92 GB") and "ray: [repeated 2x across cluster]" in recs[5].notes
    assert recs[0].fmt == "plain" and recs[1].fmt == "ray"


def test_python_logging_wrapper():
    src, recs = read("pylogging.log")
    assert src.fmt == "pylogging"
    assert recs[0].text.startswith("[2025-03-07 23:50:27] server_args=ServerArgs(")
    assert recs[2].text.startswith("[2025-03-07 23:50:40 TP0] KV Cache is allocated.")
    assert recs[3].text == "child exited with status 0"
    assert recs[0].ts == pytest.approx(1741391427.531)


def test_docker_desktop_local_time():
    src, recs = read("docker-desktop.log")
    assert src.fmt == "docker-desktop"
    assert recs[1].text == "[2026-09-22 06:50:02 TP0] Load weight begin. avail mem=78.62 GB"
    assert recs[1].ts == 1790067002.0
    assert "local time" in recs[1].notes[0]


def test_free_text_before_sglang_line():
    src, recs = read("freetext.log")
    assert src.fmt == "plain"
    assert recs[0].text.startswith("[2026-11-29 08:08:12] server_args=")
    assert "'run-17 >>> '" in recs[0].notes[0]
    assert recs[2].text == "[2026-11-29 08:08:20 TP0] Load weight begin. avail mem=21.02 GB"
    # not an SGLang line after the bracket: left alone
    assert recs[1].text == "nohup: ignoring input" and not recs[1].notes
    assert recs[3].text.startswith("Loading safetensors checkpoint shards:") and not recs[3].notes
    assert recs[4].text == "build [2026-11-29] finished: not an SGLang prefix" and not recs[4].notes


def test_tqdm_carriage_return_is_not_a_prefix():
    line = (
        "Capturing batches (bs=4 avail_mem=10.61 GB):  50%|#####| 1/2\r[2026-11-29 08:08:14] Capture cuda graph end.\n"
    )
    recs = list(text_source("t", line).records())
    assert recs[0].text == line[:-1] and not recs[0].notes


def test_mixed_formats_in_one_input():
    src, recs = read("mixed.log")
    assert src.fmt == "plain"
    assert [r.fmt for r in recs] == ["plain", "journal-short", "docker", "ray", "pylogging", "plain", "plain"]
    assert all(r.text.startswith("[2026-11-29 08:08:") for i, r in enumerate(recs) if i != 5)
    assert recs[5].text == "  warnings.warn("
    assert (recs[1].host, recs[1].pid, recs[1].unit) == ("gpu-node-1", 4669, "python3")
    assert recs[1].ts == 1795939700.0  # Nov 29 -> 2026 from its SGLang timestamp
    assert recs[3].pid == 4700


def test_crlf_file_keeps_inner_carriage_returns():
    _src, recs = read("crlf.log")
    assert len(recs) == 3
    assert recs[0].text == "[2026-11-29 08:08:12] Load weight begin. avail mem=21.02 GB"
    assert recs[1].text.startswith("\rCapturing batches (bs=4 avail_mem=10.61 GB)")
    assert "\rCapturing batches (bs=1 avail_mem=10.55 GB)" in recs[1].text
    assert not recs[1].text.endswith("\r") and not recs[2].text.endswith("\r")


def test_trailing_cr_kept_in_lf_files():
    recs = list(text_source("t", "[2026-11-29 08:08:12] a\nprogress 50%\r\n[2026-11-29 08:08:13] b\n").records())
    assert recs[1].text == "progress 50%\r"


def test_journal_short_new_year_rollover():
    src, recs = read("journal-short-newyear.log")
    assert src.fmt == "journal-short"
    got = [time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(r.ts)) for r in recs]
    assert got == ["2026-12-31 23:59:58", "2026-12-31 23:59:59", "2027-01-01 00:00:01", "2027-01-01 00:00:02"]
    assert all("year from the SGLang timestamp" in r.notes for r in recs)
    assert [r.unit for r in recs] == ["sglang.service"] * 4  # python3[4242] follows "Started sglang.service"
    assert recs[0].pid == 1 and recs[1].pid == 4242


def test_year_from_mtime_without_sglang_timestamps(tmp_path):
    p = tmp_path / "j.log"
    p.write_text("Dec 30 10:00:00 h python3[7]: warming up\nJan 02 10:00:00 h python3[7]: still warming up\n")
    mtime = time.mktime((2025, 1, 5, 12, 0, 0, 0, 0, -1))
    os.utime(p, (mtime, mtime))
    recs = list(next(open_inputs([str(p)])).records())
    assert [time.gmtime(r.ts)[:3] for r in recs] == [(2024, 12, 30), (2025, 1, 2)]
    assert all("year from the file's modification time" in r.notes for r in recs)


def test_year_lookahead_is_bounded(monkeypatch):
    monkeypatch.setattr(sources, "MAX_YEAR_LOOKAHEAD", 10)
    lines = [f"Mar 01 10:00:{i % 60:02d} h python3[7]: line {i}" for i in range(50)]
    lines.append("Mar 01 10:01:00 h python3[7]: [2019-03-01 10:01:00] late timestamp")
    recs = list(text_source("t", "\n".join(lines) + "\n", mtime=time.mktime((2024, 6, 1, 0, 0, 0, 0, 0, -1))).records())
    assert len(recs) == 51
    assert time.gmtime(recs[0].ts).tm_year == 2024 and "modification time" in recs[0].notes[-1]
    assert time.gmtime(recs[-1].ts).tm_year == 2019


def test_short_variants():
    text = (
        "2026-11-29T08:08:05+00:00 python3[4669]: [2026-11-29 08:08:05] a\n"  # v255 offset, --no-hostname
        "2026-11-29T09:08:06+0100 vm python3[4669]: [2026-11-29 08:08:06] b\n"
        "Sun 2026-11-29 08:08:07 UTC vm python3[4669]: [2026-11-29 08:08:07] c\n"
        "Sun 2026-11-29 09:08:08 CET vm python3[4669]: [2026-11-29 08:08:08] d\n"
        "1795939689.500000 vm python3[4669]: [2026-11-29 08:08:09] e\n"
        "[   95.000000] vm python3[4669]: [2026-11-29 08:08:10] f\n"
        "[   96.000000 <    1.000000>] vm python3[4669]: [2026-11-29 08:08:11] g\n"
        "Nov 29 08:08:12 vm kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n"
        "Dez 29 08:08:13 vm python3[4669]: [2026-12-29 08:08:13] h\n"
    )
    recs = list(text_source("t", text).records())
    assert texts(recs)[:7] == [f"[2026-11-29 08:08:{5 + i:02d}] {c}" for i, c in enumerate("abcdefg")]
    assert [r.ts for r in recs[:5]] == [1795939685.0, 1795939686.0, 1795939687.0, 1795939688.0, 1795939689.5]
    assert recs[5].ts is None and recs[6].ts is None
    assert [r.fmt for r in recs[:7]] == [
        "journal-short-iso",
        "journal-short-iso",
        "journal-short-full",
        "journal-short-full",
        "journal-short-unix",
        "journal-short-monotonic",
        "journal-short-delta",
    ]
    assert recs[0].host is None and recs[1].host == "vm"
    assert (recs[7].unit, recs[7].pid, recs[7].text) == (
        "kernel",
        None,
        "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
    )
    assert recs[8].text == "[2026-12-29 08:08:13] h" and time.gmtime(recs[8].ts)[:3] == (2026, 12, 29)


def test_markers():
    text = (
        "-- Logs begin at Thu 2021-04-29 17:44:42 BST, end at Thu 2021-05-06 09:00:00 BST. --\n"
        "Hint: You are currently not seeing messages from other users and the system.\n"
        "      Users in groups 'adm', 'systemd-journal' can see all messages.\n"
        "      Pass -q to turn off this notice.\n"
        "Apr 29 17:44:43 vm python3[101]: [2021-04-29 17:44:43] one\n"
        "-- Reboot --\n"
        "Apr 29 17:50:00 vm python3[102]: [2021-04-29 17:50:00] two\n"
        "-- Journal begins at Thu 2021-04-08 21:18:47 CEST, ends at Fri 2021-04-09 20:34:38 CEST. --\n"
        "-- Boot 0d7350dbe429f0ee884905998968980f --\n"
        "Apr 29 17:55:00 vm python3[103]: [2021-04-29 17:55:00] three\n"
        "-- cursor: s=1e7a;i=3;b=0d73\n"
        "-- No entries --\n"
    )
    recs = list(text_source("t", text).records())
    assert len(recs) == 12
    assert [r.marker for r in recs] == [True, True, True, True, False, True, False, True, True, False, True, True]
    assert all(r.text == ln for r, ln in zip(recs, text.splitlines()) if r.marker)
    assert [r.boot for r in recs if not r.marker] == [None, "reboot-1", "0d7350dbe429f0ee884905998968980f"]
    assert recs[10].cursor == "s=1e7a;i=3;b=0d73"
    # a plain input keeps only the unmistakable journal markers
    plain = list(text_source("p", "-- a note --\n-- No entries --\n", "plain").records())
    assert [r.marker for r in plain] == [False, True]
    # "-o cat" output with journalctl's own lines is sniffed as journal-cat
    cat = text_source("c", "-- No entries --\n")
    assert cat.fmt == "journal-cat" and [r.marker for r in cat.records()] == [True]


def test_blob_data_in_short_is_a_problem():
    text = (
        "Nov 29 08:09:15 vm python3[4669]: [142B blob data]\n"
        "Nov 29 08:09:16 vm python3[4669]: [2026-11-29 08:09:16] Load weight end.\n"
    ) * 2
    src = text_source("s.txt", text)
    recs = list(src.records())
    assert [r.text is None for r in recs] == [True, False, True, False]
    assert "[142B blob data]" in recs[0].problem and "python3" in recs[0].problem
    assert "Nov 29 08:09:15" in recs[0].problem and "--all" in recs[0].problem
    assert recs[0].ts == 1795939755.0  # still dated
    assert src.warnings == [
        "s.txt: 2 journal messages printed as '[NB blob data]' (control characters or "
        "invalid UTF-8, e.g. tqdm progress bars): text lost; rerun journalctl with --all "
        "(-a), or use -o export"
    ]


def test_export_stream_binary_safe_and_chunked(monkeypatch):
    boot = "ab" * 16
    entries = [
        Entry(1795939685000000, boot, "vm", "sglang.service", "python3", 4669, b"[2026-11-29 08:08:05] plain"),
        Entry(1795939686000000, boot, "vm", "sglang.service", "python3", 4669, b"two\nlines"),
        Entry(1795939687000000, boot, "vm", "sglang.service", "python3", 4669, b"tq\rdm \xff\x00x"),
        Entry(1795939688000000, boot, "vm", "sglang.service", "systemd", 1, b"Started sglang.service - x."),
    ]
    data = export_stream(entries)
    for chunk in (1 << 20, 5):
        monkeypatch.setattr(sources, "CHUNK_SIZE", chunk)
        monkeypatch.setattr(sources, "SNIFF_BYTES", max(chunk, 64))
        src = text_source("e", data)
        recs = list(src.records())
        assert src.fmt == "journal-export"
        assert texts(recs) == [
            "[2026-11-29 08:08:05] plain",
            "two",
            "lines",
            "tq\rdm \ufffd\x00x",
            "Started sglang.service - x.",
        ]
        assert [r.ts for r in recs] == [1795939685.0, 1795939686.0, 1795939686.0, 1795939687.0, 1795939688.0]
        assert {r.unit for r in recs} == {"sglang.service"} and {r.boot for r in recs} == {boot}
        assert recs[1].line_no == recs[2].line_no  # pieces of one entry share its line


def test_export_garbage_does_not_raise():
    data = export_stream([Entry(1, "ab" * 16, "vm", "u.service", "p", 2, b"ok")])
    bad = b"garbage line\n" + data + b"MESSAGE\n\xff\xff\xff\xff\xff\xff\xff\xff" + b"tail"
    src = text_source("e", bad, "journal-export")
    recs = list(src.records())
    assert "ok" in texts(recs) and "garbage line" in texts(recs)
    assert any("not journal fields" in w for w in src.warnings)


def test_json_pretty_streamed(monkeypatch):
    obj = '{\n\t"MESSAGE" : "[2026-11-29 08:08:05] hi",\n\t"_PID" : "5",\n\t"_SYSTEMD_UNIT" : "u.service"\n}\n'
    monkeypatch.setattr(sources, "CHUNK_SIZE", 3)
    src = text_source("p", obj * 3 + '{\n\t"MESSAGE" : "cut')
    recs = list(src.records())
    assert src.fmt == "journal-json-pretty"
    assert texts(recs)[:3] == ["[2026-11-29 08:08:05] hi"] * 3
    assert [r.line_no for r in recs[:3]] == [1, 6, 11]
    assert texts(recs)[3:] == ["{", '\t"MESSAGE" : "cut']  # unterminated object: its lines as text
    assert any("not valid JSON" in w for w in src.warnings)


def test_json_object_over_lines_any_layout():
    text = '{ "MESSAGE": "first { brace",\n  "_PID": "3" }\n{"MESSAGE":"one line"}\n\x1e{\n "MESSAGE": "x}"\n}\n'
    recs = list(text_source("x", text).records())
    assert [(r.line_no, r.text) for r in recs] == [(1, "first { brace"), (3, "one line"), (4, "x}")]
    assert recs[0].pid == 3


# ---------------------------------------------------------------------------------------
# compression, collections, stdin, errors


def test_gzip_and_zstd_round_trip(tmp_path):
    import zstandard

    data = (DATA / "docker-timestamps.log").read_bytes()
    want = texts(read("docker-timestamps.log")[1])
    gz = tmp_path / "d.log.gz"
    gz.write_bytes(gzip.compress(data[:500]) + gzip.compress(data[500:]))  # two members
    zst = tmp_path / "d.log.zst"
    zst.write_bytes(zstandard.ZstdCompressor().compress(data))
    noext = tmp_path / "d.bin"  # recognised by magic bytes, not by name
    noext.write_bytes(gzip.compress(data))
    for p in (gz, zst, noext):
        src = next(open_inputs([str(p)]))
        recs = list(src.records())
        assert src.fmt == "docker"
        assert texts(recs) == want
        assert src.bytes_read == p.stat().st_size == src.size
        assert src.content_hash == hashlib.sha256(data).hexdigest()


def test_truncated_gzip_warns(tmp_path):
    data = (DATA / "docker-timestamps.log").read_bytes() * 50
    p = tmp_path / "cut.gz"
    p.write_bytes(gzip.compress(data)[:-200])
    src = next(open_inputs([str(p)]))
    recs = list(src.records())
    assert recs and any("corrupt or truncated" in w for w in src.warnings)


def _zstd_variants(data: bytes) -> dict[str, bytes]:
    """``data`` compressed as zstd is met: with and without the content size in the frame header
    (a stream: ``zstd < in > out``, ``journalctl | zstd``), with a checksum, in two frames, by the
    real ``zstd`` and ``pzstd`` (a skippable frame first) when installed."""
    import shutil
    import subprocess

    import zstandard

    stream = zstandard.ZstdCompressor(write_checksum=True).compressobj()
    out = {
        "content-size": zstandard.ZstdCompressor().compress(data),
        "no-content-size": zstandard.ZstdCompressor(write_content_size=False).compress(data),
        "stream-checksum": stream.compress(data) + stream.flush(),
        "two-frames": zstandard.ZstdCompressor().compress(data[:3000])
        + zstandard.ZstdCompressor(level=19).compress(data[3000:]),
    }
    for tool, args in (("zstd", ["-q", "-c", "-19"]), ("pzstd", ["-q", "-c", "-p", "2"])):
        if shutil.which(tool):
            out[tool] = subprocess.run([tool, *args], input=data, capture_output=True, check=True).stdout
    assert zstandard.get_frame_parameters(out["no-content-size"]).content_size in (0, zstandard.CONTENTSIZE_UNKNOWN)
    assert zstandard.get_frame_parameters(out["content-size"]).content_size == len(data)
    return out


def test_truncated_zstd_warns_like_gzip(tmp_path):
    """A .zst cut anywhere (inside the frame header, a block, the checksum, between frames) says
    so, as a cut .gz does; a whole one does not (issue 18: a cut .zst gave 0 lines and no word)."""
    data = (DATA / "docker-timestamps.log").read_bytes() * 50
    variants = _zstd_variants(data)
    for kind, blob in variants.items():
        whole = tmp_path / f"{kind}.zst"
        whole.write_bytes(blob)
        src = next(open_inputs([str(whole)]))
        assert len(list(src.records())) == data.count(b"\n") and not src.warnings, kind
        assert src.content_hash == hashlib.sha256(data).hexdigest()
        for cut in sorted({4, 6, 12, len(blob) // 3, len(blob) // 2, len(blob) - 5, len(blob) - 1}):
            p = tmp_path / f"{kind}-{cut}.zst"
            p.write_bytes(blob[:cut])
            src = next(open_inputs([str(p)]))
            recs = list(src.records())
            assert len(recs) <= data.count(
                b"\n"
            )  # what came before the cut (all of it when the cut is in the checksum)
            assert any("corrupt or truncated" in w for w in src.warnings), (kind, cut, len(blob))
    gz = tmp_path / "cut.gz"
    gz.write_bytes(gzip.compress(data)[: len(variants["content-size"]) // 2])
    src = next(open_inputs([str(gz)]))
    list(src.records())
    assert any("corrupt or truncated" in w for w in src.warnings)


def test_zstd_frames_walker_on_every_cut():
    """:class:`ZstdFrames` says complete exactly at the ends of frames, cut anywhere."""
    import zstandard

    from logparse.sources.streams import ZstdFrames

    one = zstandard.ZstdCompressor(write_checksum=True).compress(b"x" * 5000 + bytes(range(256)) * 300)
    two = zstandard.ZstdCompressor(write_content_size=False).compress(b"y" * 100)
    skip = b"\x50\x2a\x4d\x18" + (3).to_bytes(4, "little") + b"abc"
    blob = skip + one + two
    ends = {len(skip) + len(one), len(blob)}  # a skippable frame alone holds nothing: not complete
    for cut in range(len(blob) + 1):
        walker = ZstdFrames()
        walker.feed(blob[: cut // 2])
        walker.feed(blob[cut // 2 : cut])
        assert walker.complete is (cut in ends and cut > len(skip)), cut


def test_directory_recursive_sorted(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "a.log").write_text("[2026-11-29 08:08:05] a\n")
    (tmp_path / "b" / "c.log").write_text("[2026-11-29 08:08:06] c\n")
    (tmp_path / "b" / "a.log.gz").write_bytes(gzip.compress(b"[2026-11-29 08:08:07] b/a\n"))
    (tmp_path / "empty").mkdir()
    srcs = list(open_inputs([str(tmp_path)]))
    assert [Path(s.name).relative_to(tmp_path).as_posix() for s in srcs] == ["a.log", "b/a.log.gz", "b/c.log"]
    assert [t for s in srcs for t in texts(s.records())] == [
        "[2026-11-29 08:08:05] a",
        "[2026-11-29 08:08:07] b/a",
        "[2026-11-29 08:08:06] c",
    ]
    with pytest.raises(InputError, match="no log files"):
        list(open_inputs([str(tmp_path / "empty")]))
    # documentation, code and hidden files in a directory walk are not logs
    (tmp_path / "README.md").write_text("# notes\n")
    (tmp_path / ".hidden.log").write_text("x\n")
    (tmp_path / "gen.py").write_text("print()\n")
    assert len(list(open_inputs([str(tmp_path)]))) == 3
    assert len(list(open_inputs([str(tmp_path / "README.md")]))) == 1  # named explicitly: read


def test_several_paths_and_stdin(monkeypatch):
    data = (DATA / "compose.log").read_bytes()

    class FakeStdin:
        buffer = io.BytesIO(data)

    monkeypatch.setattr(sys, "stdin", FakeStdin)
    srcs = list(open_inputs([str(DATA / "ray.log"), "-"]))
    assert [s.name for s in srcs] == [str(DATA / "ray.log"), "-"]
    stdin = srcs[1]
    assert stdin.fmt == "compose" and stdin.size is None
    assert texts(stdin.records()) == texts(read("compose.log")[1])
    assert stdin.bytes_read == len(data)
    assert not FakeStdin.buffer.closed


def test_input_errors(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        list(open_inputs([str(tmp_path / "missing.log")]))
    with pytest.raises(InputError) as e:
        list(open_inputs([str(DATA / "ray.log")], input_format="syslog-ng"))
    msg = str(e.value)
    assert "unknown input format 'syslog-ng'" in msg
    assert all(name in msg for name in FORMATS)
    if os.geteuid() != 0:
        p = tmp_path / "secret.log"
        p.write_text("x\n")
        p.chmod(0)
        with pytest.raises(InputError, match="permission"):
            list(open_inputs([str(p)]))


def test_format_aliases_and_raw():
    src, recs = read("compose.log", "raw")
    assert src.fmt == "raw"
    assert texts(recs) == (DATA / "compose.log").read_text().splitlines()
    assert next(open_inputs([str(DATA / "ray.log")], "short-iso")).fmt == "journal-short-iso"
    # a forced format still reads other lines of the input line by line
    src, recs = read("compose.log", "compose")
    assert src.fmt == "compose" and recs[1].unit == "sglang-1"


def test_fmt_before_reading_and_read_once():
    src = next(open_inputs([str(DATA / "pylogging.log")]))
    assert src.fmt == "pylogging"  # sniffed without consuming the stream
    recs = list(src.records())
    assert len(recs) == 4
    with pytest.raises(RuntimeError):
        list(src.records())


def test_long_lines_are_cut_not_held(monkeypatch):
    monkeypatch.setattr(sources, "MAX_LINE", 1000)
    monkeypatch.setattr(sources, "CHUNK_SIZE", 256)
    src = text_source("l", "x" * 200_000 + "\nend\n")
    recs = list(src.records())
    assert "".join(texts(recs[:-1])) == "x" * 200_000 and recs[-1].text == "end"
    assert [len(r.text) for r in recs[:-1]] == [1000] * 200  # pieces of the limit, whatever the chunks
    assert src.warnings == ["l: 1 line longer than 1,000 bytes was cut into pieces of 1,000 bytes, each read as a line"]


# ---------------------------------------------------------------------------------------
# garbage never raises


def test_random_binary_never_raises():
    rng = random.Random(1234)
    for n in range(60):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 3000)))
        if n % 3 == 0:  # garbage after a header that selects a structured reader
            data = (
                rng.choice(
                    [
                        b"__CURSOR=x\nMESSAGE=y\n",
                        b"{\n",
                        b"\x1e{",
                        b"Nov 29 08:08:05 h p[1]: ",
                        b"\x1f\x8b",
                        b"\x28\xb5\x2f\xfd",
                        b"sglang-1  | ",
                    ]
                )
                + data
            )
        src = text_source("g", data)
        recs = list(src.records())
        assert all(r.text is None or isinstance(r.text, str) for r in recs)
        if src.fmt not in ("journal-export", "journal-json-pretty") and not data.startswith((b"\x1f\x8b", b"\x28\xb5")):
            assert len(recs) == physical_lines(data)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(
            st.binary(max_size=80),
            st.sampled_from(
                [
                    b"[2026-11-29 08:08:05 TP0] Load weight begin. avail mem=1.00 GB",
                    b"Nov 29 08:08:05 vm python3[1]: x",
                    b"-- Boot 0d7350dbe429f0ee884905998968980f --",
                    b"2026-09-22T06:49:56.3Z y",
                    b"(Scheduler pid=3, ip=1.2.3.4) z",
                    b'{"MESSAGE":[1,2,300]}',
                    b"{",
                    b"}",
                    b"   continuation",
                    b"Hint: x",
                    b"data: {",
                    b'\x1e{"MESSAGE":null}',
                    b"2025-03-07 23:50:27,531 - n - INFO - w",
                    b"a  | b",
                    b"[pod/p/c] q",
                ]
            ),
        ),
        max_size=30,
    )
)
def test_fuzz_lines(lines):
    data = b"\n".join(lines)
    recs = list(text_source("f", data).records())
    for r in recs:
        assert r.text is None or isinstance(r.text, str)
        assert r.text is not None or r.problem


@given(
    st.lists(st.binary(max_size=30).map(lambda b: b.replace(b"\r", b"\n")), max_size=12),
    st.integers(min_value=1, max_value=40),
)
@settings(max_examples=300, deadline=None)
def test_line_blocks_cut_only_at_newlines_and_lose_nothing(chunks, size):
    """The fast stage's blocks: joined with the newlines they were cut at, they are the input (its
    one trailing newline aside); every block but the last is at least ``size`` bytes of chunks."""
    from logparse.sources.streams import line_blocks

    text = b"".join(chunks)
    blocks = list(line_blocks(chunks, size))
    assert b"\n".join(blocks) == (text[:-1] if text.endswith(b"\n") else text)
    assert bool(blocks) == bool(text)
    assert all(isinstance(b, bytes) for b in blocks)
