"""Every input format: a few lines of it -> the records' ts, host, unit, pid, text and format.

One case per format name (``FORMATS``); the lines are written by us in the real formats
(see each module of logparse/sources/formats/).  A case is read sniffed unless its format
cannot be told from the lines alone (``raw``; kubectl's ``--timestamps`` is docker's shape).
"""

from __future__ import annotations

import calendar
import json
import os
import struct
import time

import pytest

from logparse.sources import FORMATS, open_inputs, text_source
from logparse.sources.sniff import sniff_format

HOST = "gpu-node-1"
BOOT = "0123456789abcdef0123456789abcdef"
ARGS = "[2026-11-29 08:08:05] server_args=ServerArgs(model_path='/models/m', tp_size=1)"
LOAD = "[2026-11-29 08:08:06 TP0] Load weight begin. avail mem=21.02 GB"


def utc(stamp: str) -> float:
    """``2026-11-29 08:08:05.25`` (UTC) -> epoch seconds."""
    whole, _, frac = stamp.partition(".")
    return calendar.timegm(time.strptime(whole, "%Y-%m-%d %H:%M:%S")) + (float("0." + frac) if frac else 0.0)


def us(stamp: str) -> int:
    return round(utc(stamp) * 1_000_000)


T5, T6 = utc("2026-11-29 08:08:05"), utc("2026-11-29 08:08:06")


def _json_entry(stamp: str, pid: int, message, unit: str = "sglang.service") -> str:
    return json.dumps(
        {
            "__CURSOR": f"s=ab;i={pid}",
            "__REALTIME_TIMESTAMP": str(us(stamp)),
            "_BOOT_ID": BOOT,
            "_HOSTNAME": HOST,
            "_SYSTEMD_UNIT": unit,
            "_PID": str(pid),
            "MESSAGE": message,
        }
    )


def _export() -> bytes:
    out = b""
    for stamp, msg in (("2026-11-29 08:08:05", ARGS.encode()), ("2026-11-29 08:08:06", b"50%|#####\rdone\nnext")):
        out += f"__CURSOR=s=ab;i=1\n__REALTIME_TIMESTAMP={us(stamp)}\n_BOOT_ID={BOOT}\n".encode()
        out += f"_HOSTNAME={HOST}\n_SYSTEMD_UNIT=sglang.service\n_PID=4669\nSYSLOG_IDENTIFIER=python3\n".encode()
        if b"\n" in msg or b"\r" in msg:  # binary-safe form
            out += b"MESSAGE\n" + struct.pack("<Q", len(msg)) + msg + b"\n\n"
        else:
            out += b"MESSAGE=" + msg + b"\n\n"
    return out


def _verbose() -> str:
    cursor = f"s=ab;i=3;b={BOOT};m=5f5e100;t={us('2026-11-29 08:08:05'):x};x=9a"
    return (
        f"Sun 2026-11-29 08:08:05.000000 UTC [{cursor}]\n"
        f"    _BOOT_ID={BOOT}\n    _HOSTNAME={HOST}\n    _SYSTEMD_UNIT=sglang.service\n    _PID=4669\n"
        "    MESSAGE=two\n"
        "            lines\n"
        "    SYSLOG_IDENTIFIER=python3\n"
        # no t= in the cursor: the header's time and zone
        f"Sun 2026-11-29 09:08:06.000000 CET [s=ab;i=4;b={BOOT}]\n"
        f"    _HOSTNAME={HOST}\n    _SYSTEMD_UNIT=sglang.service\n    _PID=4669\n    MESSAGE={LOAD}\n"
    )


#: format -> (input, --input-format or None to sniff, [(ts, host, unit, pid, text, fmt), ...])
CASES: dict[str, tuple] = {
    "plain": (
        f"{ARGS}\n{LOAD}\nnode3: {LOAD}\n",
        None,
        [
            (None, None, None, None, ARGS, "plain"),
            (None, None, None, None, LOAD, "plain"),
            (None, None, None, None, LOAD, "plain"),  # the free text in front is cut (with a note)
        ],
    ),
    "raw": (
        f"node3: {LOAD}\n-- No entries --\n",
        "raw",
        [(None, None, None, None, f"node3: {LOAD}", "raw"), (None, None, None, None, "-- No entries --", "raw")],
    ),
    "journal-cat": (
        f"-- Boot {BOOT} --\n{ARGS}\n{LOAD}\n",
        None,
        [
            (None, None, None, None, f"-- Boot {BOOT} --", "journal-cat"),
            (None, None, None, None, ARGS, "journal-cat"),
            (None, None, None, None, LOAD, "journal-cat"),
        ],
    ),
    "journal-short": (
        f"Nov 29 08:08:04 {HOST} systemd[1]: Started sglang.service - SGLang server.\n"
        f"Nov 29 08:08:05 {HOST} python3[4669]: {ARGS}\n"
        f"Nov 29 08:08:06 {HOST} python3[4669]: {LOAD}\n",
        None,
        [
            (
                utc("2026-11-29 08:08:04"),
                HOST,
                "sglang.service",
                1,
                "Started sglang.service - SGLang server.",
                "journal-short",
            ),
            (T5, HOST, "sglang.service", 4669, ARGS, "journal-short"),
            (T6, HOST, "sglang.service", 4669, LOAD, "journal-short"),
        ],
    ),
    "journal-short-precise": (
        f"Nov 29 08:08:05.250000 {HOST} python3[4669]: {ARGS}\nNov 29 08:08:06.000001 python3[4669]: {LOAD}\n",
        None,
        [
            (T5 + 0.25, HOST, "python3", 4669, ARGS, "journal-short-precise"),
            (T6 + 0.000001, None, "python3", 4669, LOAD, "journal-short-precise"),  # --no-hostname
        ],
    ),
    "journal-short-iso": (
        f"2026-11-29T09:08:05+0100 {HOST} python3[4669]: {ARGS}\n2026-11-29T08:08:06+00:00 {HOST} python3[4669]: {LOAD}\n",
        None,
        [
            (T5, HOST, "python3", 4669, ARGS, "journal-short-iso"),
            (T6, HOST, "python3", 4669, LOAD, "journal-short-iso"),
        ],
    ),
    "journal-short-iso-precise": (
        f"2026-11-29T08:08:05.500000+0000 {HOST} python3[4669]: {ARGS}\n",
        None,
        [(T5 + 0.5, HOST, "python3", 4669, ARGS, "journal-short-iso-precise")],
    ),
    "journal-short-full": (
        f"Sun 2026-11-29 08:08:05 UTC {HOST} python3[4669]: {ARGS}\nSun 2026-11-29 09:08:06 CET {HOST} python3[4669]: {LOAD}\n",
        None,
        [
            (T5, HOST, "python3", 4669, ARGS, "journal-short-full"),
            (T6, HOST, "python3", 4669, LOAD, "journal-short-full"),
        ],
    ),
    "journal-with-unit": (
        f"Sun 2026-11-29 08:08:05 UTC {HOST} sglang.service[4669]: {ARGS}\n",
        None,
        [(T5, HOST, "sglang.service", 4669, ARGS, "journal-with-unit")],
    ),
    "journal-short-unix": (
        f"{T5:.6f} {HOST} python3[4669]: {ARGS}\n{T6 + 0.5:.6f} {HOST} python3[4669]: {LOAD}\n",
        None,
        [
            (T5, HOST, "python3", 4669, ARGS, "journal-short-unix"),
            (T6 + 0.5, HOST, "python3", 4669, LOAD, "journal-short-unix"),
        ],
    ),
    "journal-short-monotonic": (
        f"[   95.000000] {HOST} python3[4669]: {ARGS}\n",
        None,
        [(None, HOST, "python3", 4669, ARGS, "journal-short-monotonic")],
    ),
    "journal-short-delta": (
        f"[   95.000000 <    0.000000>] {HOST} python3[4669]: {ARGS}\n[   96.000000 <    1.000000>] {HOST} python3[4669]: {LOAD}\n",
        None,
        [
            (None, HOST, "python3", 4669, ARGS, "journal-short-delta"),
            (None, HOST, "python3", 4669, LOAD, "journal-short-delta"),
        ],
    ),
    "journal-json": (
        _json_entry("2026-11-29 08:08:05", 4669, ARGS)
        + "\n"
        + _json_entry("2026-11-29 08:08:06", 4669, list(b"a\nb"))
        + "\n",
        None,
        [
            (T5, HOST, "sglang.service", 4669, ARGS, "journal-json"),
            (T6, HOST, "sglang.service", 4669, "a", "journal-json"),  # a byte-array MESSAGE of two lines
            (T6, HOST, "sglang.service", 4669, "b", "journal-json"),
        ],
    ),
    "journal-json-seq": (
        "\x1e" + _json_entry("2026-11-29 08:08:05", 4669, ARGS) + "\n",
        None,
        [(T5, HOST, "sglang.service", 4669, ARGS, "journal-json-seq")],
    ),
    "journal-json-sse": (
        "data: " + _json_entry("2026-11-29 08:08:05", 4669, ARGS) + "\n\n",
        None,
        [(T5, HOST, "sglang.service", 4669, ARGS, "journal-json-sse")],  # the blank line after an event: a marker
    ),
    "journal-json-pretty": (
        "{\n"
        f'\t"__REALTIME_TIMESTAMP" : "{us("2026-11-29 08:08:05")}",\n'
        f'\t"_HOSTNAME" : "{HOST}",\n\t"_SYSTEMD_UNIT" : "sglang.service",\n\t"_PID" : "4669",\n'
        f'\t"MESSAGE" : "{ARGS}"\n'
        "}\n",
        None,
        [(T5, HOST, "sglang.service", 4669, ARGS, "journal-json-pretty")],
    ),
    "journal-export": (
        _export(),
        None,
        [
            (T5, HOST, "sglang.service", 4669, ARGS, "journal-export"),
            (T6, HOST, "sglang.service", 4669, "50%|#####\rdone", "journal-export"),
            (T6, HOST, "sglang.service", 4669, "next", "journal-export"),
        ],
    ),
    "journal-verbose": (
        _verbose(),
        None,
        [
            (T5, HOST, "sglang.service", 4669, "two", "journal-verbose"),
            (T5, HOST, "sglang.service", 4669, "lines", "journal-verbose"),
            (T6, HOST, "sglang.service", 4669, LOAD, "journal-verbose"),
        ],
    ),
    "docker": (
        f"2026-11-29T08:08:05.123456789Z {ARGS}\n2026-11-29T09:08:06+01:00 {LOAD}\n",
        None,
        [(T5 + 0.123456789, None, None, None, ARGS, "docker"), (T6, None, None, None, LOAD, "docker")],
    ),
    "compose": (
        f"sglang-1  | {ARGS}\nrouter-1  | INFO:     Started server process [1]\nsglang-1  | 2026-11-29T08:08:06Z {LOAD}\n",
        None,
        [
            (None, None, "sglang-1", None, ARGS, "compose"),
            (None, None, "router-1", None, "INFO:     Started server process [1]", "compose"),
            (T6, None, "sglang-1", None, LOAD, "compose"),  # compose logs -t
        ],
    ),
    "kubectl": (
        f"[pod/sglang-0/sglang] {ARGS}\n[pod/sglang-0/sglang] 2026-11-29T08:08:06.5Z {LOAD}\n2026-11-29T08:08:05Z {ARGS}\n",
        "kubectl",  # --timestamps alone is docker's shape: named, not sniffed
        [
            (None, None, "sglang-0/sglang", None, ARGS, "kubectl"),
            (T6 + 0.5, None, "sglang-0/sglang", None, LOAD, "kubectl"),
            (T5, None, None, None, ARGS, "kubectl"),
        ],
    ),
    "ray": (
        f"(Scheduler pid=4700, ip=10.0.0.5) {ARGS}\n(pid=4701) {LOAD} [repeated 2x across cluster]\n",
        None,
        [(None, None, None, 4700, ARGS, "ray"), (None, None, None, 4701, LOAD, "ray")],
    ),
    "pylogging": (
        f"2026-11-29 08:08:05,250 - launcher - INFO - {ARGS}\n2026-11-29 08:08:06,000 - launcher - WARNING - child exited\n",
        None,
        [(T5 + 0.25, None, None, None, ARGS, "pylogging"), (T6, None, None, None, "child exited", "pylogging")],
    ),
    "docker-json": (
        # docker's json-file driver; the second line was split by docker into two pieces
        "\n".join(
            json.dumps({"log": text, "stream": "stderr", "time": when})
            for text, when in (
                (ARGS + "\n", "2026-11-29T08:08:05.25Z"),
                (LOAD[:10], "2026-11-29T09:08:06+01:00"),
                (LOAD[10:] + "\n", "2026-11-29T09:08:06+01:00"),
            )
        )
        + "\n",
        None,
        [
            (T5 + 0.25, None, None, None, ARGS, "docker-json"),
            (T6, None, None, None, "", "docker-json"),  # the first piece: counted, its text goes with the next
            (T6, None, None, None, LOAD, "docker-json"),
        ],
    ),
    "json-log": (
        json.dumps(
            {
                "asctime": "2026-11-29 08:08:05,250",
                "levelname": "INFO",
                "name": "vllm.v1.worker.gpu_worker",
                "processName": "EngineCore_DP0",
                "process": 4301,
                "message": "Available KV cache memory: 61.3 GiB",
            }
        )
        + "\n"
        + json.dumps({"asctime": "2026-11-29 08:08:06,000", "levelname": "INFO", "name": "launcher", "message": LOAD})
        + "\n",
        None,
        [
            (T5 + 0.25, None, None, None, "(EngineCore_DP0 pid=4301) Available KV cache memory: 61.3 GiB", "json-log"),
            (T6, None, None, None, LOAD, "json-log"),
        ],
    ),
    "docker-desktop": (
        f"2026-11-29 09:08:05 {ARGS}\n2026-11-29 09:08:06.500 {LOAD}\n",
        None,
        [
            (utc("2026-11-29 09:08:05"), None, None, None, ARGS, "docker-desktop"),  # local time, read as UTC
            (utc("2026-11-29 09:08:06.5"), None, None, None, LOAD, "docker-desktop"),
        ],
    ),
}


def test_every_format_has_a_case():
    assert set(CASES) == set(FORMATS)


@pytest.mark.parametrize("fmt", list(CASES))
def test_format_gives_the_expected_records(fmt):
    data, named, want = CASES[fmt]
    src = text_source(f"{fmt}.txt", data, named)
    assert src.fmt == fmt
    recs = [r for r in src.records() if not r.marker or fmt in ("raw", "journal-cat")]
    got = [(r.ts, r.host, r.unit, r.pid, r.text, r.fmt) for r in recs]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g[1:] == w[1:]
        if w[0] is None:
            assert g[0] is None
        else:
            assert g[0] == pytest.approx(w[0], abs=1e-6)


def test_notes_say_where_a_value_came_from():
    data, _, _ = CASES["plain"]
    free = list(text_source("p", data).records())[2]
    assert free.notes == ["text before the SGLang prefix removed: 'node3: '"]
    ray = list(text_source("r", CASES["ray"][0]).records())
    assert ray[0].notes == ["ray actor Scheduler, ip=10.0.0.5"]
    assert ray[1].notes == ["ray: [repeated 2x across cluster]"]
    desktop = list(text_source("d", CASES["docker-desktop"][0]).records())
    assert desktop[0].notes == ["Docker Desktop local time read as UTC"]
    short = list(text_source("s", CASES["journal-short"][0]).records())
    assert "year from the SGLang timestamp" in short[1].notes
    assert "unit from systemd's 'Started' line before this process's first line" in short[1].notes


def test_boot_and_cursor_of_journal_records():
    short = list(text_source("s", f"-- Boot {BOOT} --\n" + CASES["journal-short"][0]).records())
    assert [r.boot for r in short] == [BOOT] * 4
    js = list(text_source("j", CASES["journal-json"][0]).records())
    assert {r.boot for r in js} == {BOOT} and js[0].cursor == "s=ab;i=4669"
    verbose = list(text_source("v", CASES["journal-verbose"][0]).records())
    assert {r.boot for r in verbose} == {BOOT}


def test_free_text_cut_in_sources_dates_yearless_lines(tmp_path):
    """Why the sources stage, not the grammar, cuts text glued in front of SGLang's prefix:
    a year-less journald ``short`` line takes its year from SGLang's stamp at the start of
    the record text, which only the sources stage can see before the records are dated."""
    p = tmp_path / "short.log"
    p.write_text(
        f"Dec 31 23:59:58 {HOST} python3[7]: node3: [2026-12-31 23:59:58] Load weight begin. avail mem=1.00 GB\n"
    )
    later = time.mktime((2030, 6, 1, 0, 0, 0, 0, 0, -1))
    os.utime(p, (later, later))
    (rec,) = list(next(open_inputs([str(p)])).records())
    assert rec.ts == utc("2026-12-31 23:59:58") and "year from the SGLang timestamp" in rec.notes


def test_cri_log_files_of_a_kubernetes_node_read_as_docker_times():
    uvicorn = "INFO:     Started server process [4669]"
    data = f"2026-11-29T08:08:05.25Z stderr F {ARGS}\n2026-11-29T08:08:06Z stdout F {uvicorn}\n"
    src = text_source("0.log", data)
    assert src.fmt == "docker"
    got = [(r.ts, r.text, r.fmt) for r in src.records()]
    assert got == [(T5 + 0.25, ARGS, "docker"), (T6, uvicorn, "docker")]


_ENTRY = {
    "journal-json": '{"MESSAGE":"[2026-11-29 08:09:15] hello","_PID":"9"}\n' * 3,
    "journal-json-seq": '\x1e{"MESSAGE":"[2026-11-29 08:09:15] hello","_PID":"9"}\n' * 3,
    "journal-json-pretty": '{\n\t"MESSAGE" : "[2026-11-29 08:09:15] hello",\n\t"_PID" : "9"\n}\n' * 2,
    "journal-export": "__CURSOR=s=1;i=1\n__REALTIME_TIMESTAMP=1795939685000000\n_PID=9\nMESSAGE=hello\n\n" * 2,
    "journal-verbose": "Sun 2026-11-29 08:08:05.000000 UTC [s=1e7a;i=1;b=06f3;m=4c;t=66;x=86]\n"
    "    _PID=9\n    MESSAGE=hello\n",
}


@pytest.mark.parametrize("fmt", sorted(_ENTRY))
def test_a_line_of_debris_before_a_rendering_costs_that_line_not_the_format(fmt):
    """Found by the fuzz tests: a junk first line made an export stream plain text (every field a
    line of its own, 2592 unrecognized lines, the launches without host, unit or pid)."""
    for debris in ("\x08\x08\u202e\x7fcaf\ufffd/<<\n", "garbage\n-- cut --\n"):
        assert sniff_format((debris + _ENTRY[fmt]).encode())[0] == fmt


def test_a_plain_log_printing_json_of_its_own_stays_plain():
    log = '[2026-11-29 08:09:15] hello\n{\n  "a": 1\n}\n[2026-11-29 08:09:16] {"b": 2}\n[2026-11-29 08:09:17] x\n'
    assert sniff_format(log.encode())[0] == "plain"
    one = "[2026-11-29 08:09:15] hello\n" + '{"a": 1}\n' + "[2026-11-29 08:09:16] x\n" * 3
    assert sniff_format(one.encode())[0] == "plain"
