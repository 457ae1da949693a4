"""A stamp that names no real time (month 13, Feb 30, hour 25, year 0, a year past 9999, a
journal time of 10^20 µs) costs its line that time, with a warning; never the file, never
another launch (issue 18, item 4).

The inputs are the genuine renderings of ``corpus/journal/0.5.23-restart`` (two launches,
every journalctl mode) and genuine plain logs, with the stamp of one line position damaged at a
time, every position in turn; plus docker / kubectl / CRI / Docker Desktop / Python-logging
wrappers and vLLM's ``MM-DD`` stamps.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest
from helpers import CORPUS, NO_CORPUS, SAMPLES, needs_corpus

from logparse.pipeline import parse_sources, parse_text
from logparse.sources import text_source
from logparse.sources.timestamps import civil_epoch, iso_stamp_ok, stamp_epoch

RESTART = CORPUS / "journal" / "0.5.23-restart"
needs_restart = pytest.mark.skipif(not RESTART.is_dir(), reason=NO_CORPUS)

#: The fields a launch's own time makes (its id is a hash of its first line's time, among others).
TIME_FIELDS = ("launch_id", "started_at", "ready_at", "time_zone", "runtime")
#: What the pipeline says of a line read without its time.
WARNING = "names no real time"

_ISO_BAD = ("2026-13-29T08:08:05", "2026-02-30T08:08:05", "2026-11-29T25:08:05", "0000-11-29T08:08:05", "2026-04-31T08:08:05", "2026-11-29T08:60:05")  # fmt: skip
_SHORT_BAD = ("Nov 31 08:08:05", "Feb 30 08:08:05", "Nov 29 25:08:05", "Nov 00 08:08:05", "Nov 29 08:08:61")
_SGLANG_BAD = ("[2026-13-29 08:09:11", "[2026-02-30 08:09:11", "[2026-11-29 24:09:11", "[0000-11-29 08:09:11")
_MICROS_BAD = ("99999999999999999999999", "-999999999999999999999", "1e300", "x")


def _cycle(values: tuple[str, ...]) -> Callable[[re.Match, int], str]:
    return lambda m, k: values[k % len(values)]


#: Per rendering: the stamp of a line (a regexp) and what to put in its place (the k-th damaged line
#: gets the k-th value).  Modes whose own time cannot be impossible (short-unix prints at most 11
#: digits, monotonic is no wall clock, cat has none) damage SGLang's stamp instead.
_ISO = (
    re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?P<frac>\.\d+)?(?P<tz>[+-]\d\d(?P<colon>:?)\d\d)"),
    lambda m, k: (
        _ISO_BAD[k % 7] + (m["frac"] or "") + m["tz"]
        if k % 7 < 6
        else "9999-12-31T23:59:59" + (m["frac"] or "") + f"-14{m['colon']}00"  # past 9999 in UTC
    ),
)
_FULL = (re.compile(r"^(?P<wd>[A-Z][a-z]{2}) \d{4}-\d\d-\d\d \d\d:\d\d:\d\d"), lambda m, k: m["wd"] + " " + _ISO_BAD[k % 6].replace("T", " "))  # fmt: skip
_SHORT = (re.compile(r"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d"), _cycle(_SHORT_BAD))
_SGLANG = (re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"), _cycle(_SGLANG_BAD))
_EXPORT = (re.compile(r"^__REALTIME_TIMESTAMP=\d+"), lambda m, k: "__REALTIME_TIMESTAMP=" + _MICROS_BAD[k % 4])
_JSON = (re.compile(r'"__REALTIME_TIMESTAMP"(\s*):(\s*)"\d+"'), lambda m, k: f'"__REALTIME_TIMESTAMP"{m[1]}:{m[2]}"{_MICROS_BAD[k % 4]}"')  # fmt: skip
_VERBOSE = (re.compile(r";t=[0-9a-f]+;"), lambda m, k: ";t=" + "f" * (20 + k % 3) + ";")

RENDERINGS = {
    "short.txt": _SHORT,
    "short-precise.txt": _SHORT,
    "short.no-hostname.txt": _SHORT,
    "short-iso.txt": _ISO,
    "short-iso-precise.txt": _ISO,
    "short-full.txt": _FULL,
    "with-unit.txt": _FULL,
    "short-unix.txt": _SGLANG,
    "short-monotonic.txt": _SGLANG,
    "cat.txt": _SGLANG,
    "export.txt": _EXPORT,
    "json.txt": _JSON,
    "json-seq.txt": _JSON,
    "json-pretty.txt": _JSON,
    "verbose.txt": _VERBOSE,
}


def _damaged(lines: list[bytes], how) -> Iterator[tuple[int, list[bytes]]]:
    """(line index, the lines with that line's stamp damaged) for every line that has one."""
    pattern, value = how
    k = 0
    for i, raw in enumerate(lines):
        text = raw.decode("utf-8", "surrogateescape")
        m = pattern.search(text)
        if m is None:
            continue
        out = list(lines)
        out[i] = (text[: m.start()] + value(m, k) + text[m.end() :]).encode("utf-8", "surrogateescape")
        k += 1
        yield i, out


def _entry_starts(lines: list[bytes], name: str) -> list[int]:
    """The 1-based line where each record starts: a line, or a whole entry (export, verbose, json-pretty)."""
    if name == "export.txt":
        return [1] + [i + 2 for i, ln in enumerate(lines) if not ln]
    if name == "verbose.txt":
        return [i + 1 for i, ln in enumerate(lines) if ln[:1].isupper()]
    if name == "json-pretty.txt":
        return [i + 1 for i, ln in enumerate(lines) if ln == b"{"]
    return list(range(1, len(lines) + 1))


def _record_line(starts: list[int], i: int) -> int:
    """The record line (1-based) that line index ``i`` belongs to."""
    import bisect

    return starts[bisect.bisect_right(starts, i + 1) - 1]


def _without_time(doc: dict) -> dict:
    """The launch without its times (the outcome evidence says when its line was printed: that too)."""
    out = {k: v for k, v in doc.items() if k not in TIME_FIELDS}
    if isinstance(out.get("outcome_evidence"), str):
        out["outcome_evidence"] = re.sub(r" \(at [0-9:.]+\)$", "", out["outcome_evidence"])
    return out


def _parse(data: bytes, name: str, bulk):
    return parse_sources([text_source(name, data)], bulk=bulk)


def assert_only_that_line(base, got, line: int) -> None:
    """``got`` (a parse of the input with one line's stamp damaged) holds ``base``'s lines and launches:
    every launch that does not hold ``line`` unchanged, the one that does changed in its times only;
    and when anything changed, one warning says why."""
    assert got.lines.to_dict() == base.lines.to_dict()
    assert len(got.launches) == len(base.launches)
    changed = False
    ends = [la.first_line - 1 for la in base.launches[1:]] + [1 << 60]  # a launch's runtime lines go on
    for want, have, end in zip(base.launches, got.launches, ends):
        a, b = want.to_dict(), have.to_dict()
        if want.first_line <= line <= end:
            assert _without_time(b) == _without_time(a)
        else:
            assert b == a, f"launch {want.launch_id} (lines {want.first_line}-{end}) changed by line {line}"
        changed |= a != b
    if changed:
        assert any(WARNING in w for w in got.warnings), got.warnings


@needs_restart
@pytest.mark.parametrize("name", sorted(RENDERINGS))
def test_a_damaged_stamp_costs_its_line_only(name):
    data = (RESTART / name).read_bytes()
    lines = data.split(b"\n")
    base = parse_text(data, name=name)
    assert len(base.launches) == 2 and not any(WARNING in w for w in base.warnings)
    starts = _entry_starts(lines, name)
    n = 0
    for i, damaged in _damaged(lines, RENDERINGS[name]):
        got = parse_text(b"\n".join(damaged), name=name)
        assert_only_that_line(base, got, _record_line(starts, i))
        n += 1
    assert n >= 100  # every line position with a stamp (export: every entry)


@needs_restart
@pytest.mark.parametrize("name", ["short-iso.txt", "json.txt", "export.txt", "cat.txt"])
def test_a_damaged_stamp_on_the_vectorized_path(name):
    """The same on the bulk path (numpy's proof of batch lines, polars' classification): a batch
    line whose stamp names no real time is not proven; the record path reads it without its time."""
    data = (RESTART / name).read_bytes()
    lines = data.split(b"\n")
    base = _parse(data, name, "force")
    starts = _entry_starts(lines, name)
    for i, damaged in list(_damaged(lines, _SGLANG if name == "cat.txt" else RENDERINGS[name]))[::3]:
        got = _parse(b"\n".join(damaged), name, "force")
        assert_only_that_line(base, got, _record_line(starts, i))


@needs_corpus
def test_damaged_sglang_stamps_in_plain_logs_every_position():
    """Two genuine plain logs one after the other; SGLang's stamp damaged at each line in turn, on
    both paths.  A batch line's stamp too: the runtime span of its launch loses that line's time."""
    a = (CORPUS / "sglang-0.5.23" / "restart-1.log").read_bytes()
    b = (CORPUS / "sglang-0.5.23" / "server-memfrac0.3.log").read_bytes()
    data = a + b
    lines = data.split(b"\n")
    for bulk in (False, "force"):
        base = _parse(data, "two.log", bulk)
        assert len(base.launches) == 2
        for i, damaged in _damaged(lines, _SGLANG):
            got = _parse(b"\n".join(damaged), "two.log", bulk)
            assert_only_that_line(base, got, i + 1)


@needs_corpus
def test_a_batch_line_with_a_bad_stamp_keeps_its_figures():
    """The runtime figures of a batch line whose stamp is damaged still count: only its time goes."""
    text = (CORPUS / "sglang-0.5.23" / "server-memfrac0.3.log").read_text()
    batch = [ln for ln in text.splitlines() if "] Decode batch" in ln or "] Prefill batch" in ln]
    latest = max(ln[1:20] for ln in batch)
    damaged = text.replace(f"[{latest}", "[2026-02-30" + latest[10:])  # every batch line of the last second
    for bulk in (False, "force"):
        base = _parse(text.encode(), "x.log", bulk).launches[0].runtime
        got = _parse(damaged.encode(), "x.log", bulk)
        rt = got.launches[0].runtime
        assert rt["batch_lines"] == base["batch_lines"] and rt["peak_tokens"] == base["peak_tokens"]
        assert rt["last_runtime_at"] < base["last_runtime_at"]  # that line's time is not the last any more
        assert any(WARNING in w and "2026-02-30" in w for w in got.warnings)


def _wrapped(prefix: Callable[[str], str]) -> bytes:
    """The genuine restart-1.log with an outer layer in front of every line, its time from SGLang's."""
    out, stamp = [], "2026-11-29 08:08:05"
    for ln in (CORPUS / "sglang-0.5.23" / "restart-1.log").read_text().splitlines():
        if re.match(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", ln):
            stamp = ln[1:20]
        out.append(prefix(stamp) + ln)
    return ("\n".join(out) + "\n").encode()


WRAPPERS = {
    "docker": (lambda s: s.replace(" ", "T") + ".123456789Z ", re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")),
    "cri": (lambda s: s.replace(" ", "T") + ".5Z stdout F ", re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")),
    "kubectl": (
        lambda s: "[pod/sglang-0/server] " + s.replace(" ", "T") + "Z ",
        re.compile(r"(?<=\] )\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"),
    ),
    "docker-desktop": (lambda s: s + ".125 ", re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")),
    "pylogging": (lambda s: s + ",531 - launcher - INFO - ", re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")),
}


@needs_corpus
@pytest.mark.parametrize("kind", sorted(WRAPPERS))
def test_damaged_wrapper_times(kind):
    """docker / kubectl / CRI / Docker Desktop / Python logging: the wrapper's time damaged at each
    line in turn (month 13, Feb 30, hour 25, year 0): every line still read, one warning."""
    prefix, pattern = WRAPPERS[kind]
    data = _wrapped(prefix)
    lines = data.split(b"\n")
    base = parse_text(data, name=kind)
    assert len(base.launches) == 1 and base.launches[0].outcome == "ready"
    sep = " " if kind in ("docker-desktop", "pylogging") else "T"
    how = (pattern, lambda m, k: _ISO_BAD[k % 6].replace("T", sep))
    for i, damaged in _damaged(lines, how):
        got = parse_text(b"\n".join(damaged), name=kind)
        assert_only_that_line(base, got, i + 1)
        assert any(WARNING in w for w in got.warnings), (i, got.warnings)


def test_vllm_month_day_stamps():
    """vLLM's year-less ``MM-DD HH:MM:SS``: month 13, Feb 30 (with the year completed), hour 25."""
    path = SAMPLES / "vllm" / "v1-defaults-0.20.2.log"
    data = path.read_bytes()
    lines = data.split(b"\n")
    base = parse_text(data, name="v.log")
    assert base.launches and base.launches[0].engine == "vllm"
    how = (re.compile(r"(?<= )\d\d-\d\d \d\d:\d\d:\d\d(?= \[)"), _cycle(("13-29 08:08:05", "02-30 08:08:05", "05-12 25:40:01")))  # fmt: skip
    n = 0
    for i, damaged in _damaged(lines, how):
        got = parse_text(b"\n".join(damaged), name="v.log")
        assert_only_that_line(base, got, i + 1)
        n += 1
    assert n > 20


@needs_restart
@pytest.mark.parametrize("name", ["short-iso.txt", "short.txt", "short-full.txt", "export.txt", "json.txt", "verbose.txt", "cat.txt"])  # fmt: skip
def test_ingest_keeps_the_other_launch(tmp_path, name):
    """The issue's case and its kin: ``ingest`` of a rendering with every 9th stamp of its second
    launch damaged stores both launches, with a warning; the first is stored exactly as from the
    clean file; the store is healthy."""
    from logparse.store import Store

    data = (RESTART / name).read_bytes()
    lines = data.split(b"\n")
    how = _SGLANG if name == "cat.txt" else RENDERINGS[name]
    first, second = parse_text(data, name=name).launches
    damaged = list(lines)
    for i, out in list(_damaged(lines, how))[::9]:
        if i + 1 >= second.first_line:  # the second launch's lines: the first is not touched
            damaged[i] = out[i]
    assert damaged != lines
    path = tmp_path / name
    stored = {}
    for label, content in (("clean", data), ("damaged", b"\n".join(damaged))):
        path.write_bytes(content)
        store = Store(tmp_path / f"{label}.duckdb")
        report = store.ingest_paths([path])
        assert report.added == 2
        assert any(WARNING in w for w in report.warnings) is (label == "damaged")
        stored[label] = store.load_launch(first.launch_id).to_dict()
        assert store.doctor().healthy
        store.close()
    assert stored["damaged"] == stored["clean"]


def test_the_issue_repro(tmp_path):
    """``sed '5s/^2026-11-29T/2026-13-29T/' short-iso.txt``: parse and ingest read every line."""
    if not RESTART.is_dir():
        pytest.skip(NO_CORPUS)
    from logparse.store import Store

    lines = (RESTART / "short-iso.txt").read_bytes().split(b"\n")
    lines[4] = lines[4].replace(b"2026-11-29T", b"2026-13-29T", 1)
    path = tmp_path / "x"
    path.write_bytes(b"\n".join(lines))
    res = parse_text(path.read_bytes(), name="x")
    assert len(res.launches) == 2
    (warning,) = [w for w in res.warnings if WARNING in w]
    assert "line 5" in warning and "2026-13-29T08:08:05+0000" in warning
    store = Store(tmp_path / "s.duckdb")
    assert store.ingest_paths([path]).added == 2
    store.close()


@pytest.mark.parametrize(
    "parts,ok",
    [
        ((2026, 11, 29, 8, 8, 5), True),
        ((2024, 2, 29, 23, 59, 59), True),
        ((2026, 2, 29, 0, 0, 0), False),
        ((2026, 2, 30, 0, 0, 0), False),
        ((2026, 4, 31, 0, 0, 0), False),
        ((2026, 13, 1, 0, 0, 0), False),
        ((2026, 0, 1, 0, 0, 0), False),
        ((2026, 1, 0, 0, 0, 0), False),
        ((2026, 1, 1, 24, 0, 0), False),
        ((2026, 1, 1, 0, 60, 0), False),
        ((2026, 1, 1, 0, 0, 60), False),
        ((0, 1, 1, 0, 0, 0), False),
        ((10000, 1, 1, 0, 0, 0), False),
        ((1900, 2, 29, 0, 0, 0), False),
        ((2000, 2, 29, 0, 0, 0), True),
    ],
)
def test_the_checked_constructor(parts, ok):
    assert (civil_epoch(*parts) is not None) is ok
    y, mo, d, h, mi, s = parts
    assert iso_stamp_ok(f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}") is ok
    assert (stamp_epoch(f"{y:04d}-{mo:02d}-{d:02d}".encode(), f"{h:02d}:{mi:02d}:{s:02d}".encode()) is not None) is ok


def test_stamps_past_the_range_of_every_surface():
    assert stamp_epoch(b"9999-12-31", b"23:59:59", None, -14 * 3600) is None  # year 10000 in UTC
    assert stamp_epoch(b"0001-01-01", b"00:00:00", None, 3600) is None  # year 0 in UTC
    assert not iso_stamp_ok("２０２６-11-29T08:08:05")  # other scripts' digits
    assert not iso_stamp_ok("2026-11-29T8:08:05x")
    assert iso_stamp_ok("08:09:11") and not iso_stamp_ok("25:09:11")  # SGLang 0.2.14-0.3.3's time of day


def test_the_three_checks_agree():
    """:func:`civil_epoch` (the record path), the numpy proof of :mod:`bulk_template` and the regexp
    polars runs (:data:`timestamps.REAL_STAMP`) say the same of 200,000 random stamps."""
    import random

    import numpy as np

    from logparse.engines.sglang import bulk_template
    from logparse.sources.timestamps import REAL_STAMP

    rnd = random.Random(18)
    years = [0, 1, 4, 100, 400, 1900, 2000, 2024, 2026, 2100, 9999]
    parts = [
        (rnd.choice(years) if rnd.random() < 0.5 else rnd.randint(0, 9999), rnd.randint(0, 13), rnd.randint(0, 32))
        + (rnd.randint(0, 25), rnd.randint(0, 61), rnd.randint(0, 61))
        for _ in range(200_000)
    ]
    want = np.array([civil_epoch(*p) is not None for p in parts])
    columns = [np.array(c, np.int64) for c in zip(*parts)]
    assert (bulk_template._real_time(*columns) == want).all()
    rx = re.compile(rf"(?:{REAL_STAMP})\Z")
    got = np.array([rx.match("{:04d}-{:02d}-{:02d} {:02d}:{:02d}:{:02d}".format(*p)) is not None for p in parts])
    assert (got == want).all()
    assert 0.2 < want.mean() < 0.8  # both kinds, many of each
