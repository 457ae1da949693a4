"""Memory bounded by a constant whatever the input: long lines cut, decompression bombs read in bounded
memory (`docs/performance.md`, "Memory and its limits").  The bounds are asserted on Python's own allocations
(tracemalloc: the bytes and strings the sources and the parse hold), with the limits lowered through
the modules, so that the inputs stay small and the tests fast; no time is asserted."""

from __future__ import annotations

import gzip
import random
import tracemalloc

import pytest

import logparse.sources as sources
from logparse.pipeline import parse_sources
from logparse.sources import Source, text_source
from logparse.sources.streams import cut_long_lines, split_lines

MiB = 1 << 20


def _cut(data: bytes, max_line: int, chunk: int) -> tuple[bytes, int]:
    cuts = []
    out = b"".join(
        cut_long_lines((data[i : i + chunk] for i in range(0, len(data), chunk)), max_line, lambda: cuts.append(1))
    )
    return out, len(cuts)


def _expected(data: bytes, max_line: int) -> tuple[bytes, int]:
    """Each line cut into pieces of ``max_line`` bytes, one after the other."""
    lines = data.split(b"\n")
    out = [b"\n".join(ln[i : i + max_line] for i in range(0, len(ln), max_line)) for ln in lines]
    return b"\n".join(out), sum(len(ln) > max_line for ln in lines)


@pytest.mark.parametrize("seed", range(40))
def test_long_lines_are_cut_into_pieces_of_the_limit_whatever_the_chunks(seed):
    rnd = random.Random(seed)
    lengths = [rnd.choice([0, 1, rnd.randrange(40), rnd.randrange(200)]) for _ in range(rnd.randrange(1, 30))]
    data = b"\n".join(bytes([rnd.choice(b"ab\r\x00")]) * n for n in lengths) + rnd.choice([b"", b"\n"])
    max_line = rnd.randrange(1, 50)
    expected = _expected(data, max_line)
    for chunk in (1, 2, 7, max_line, max_line + 1, 64, len(data) or 1):
        assert _cut(data, max_line, chunk) == expected, (chunk, max_line)


def test_lines_within_the_limit_are_untouched():
    data = b"a" * 100 + b"\n" + b"b" * 99 + b"\n\n" + b"c" * 100
    assert _cut(data, 100, 33) == (data, 0)
    assert _cut(data, 100, 1000) == (data, 0)
    assert [p for parts in split_lines([data[:150], data[150:]], False) for p in parts] == data.split(b"\n")


def _gz_zeros(mib: int) -> bytes:
    """A gzip stream of ``mib`` MiB of NUL bytes, built cheaply: members of one MiB, concatenated."""
    return gzip.compress(bytes(MiB), compresslevel=1) * mib


def _zst_zeros(mib: int) -> bytes:
    zstandard = pytest.importorskip("zstandard")
    return zstandard.ZstdCompressor(level=1).compress(bytes(MiB)) * mib


def _source(data: bytes, sized: bool) -> Source:
    """A source over compressed bytes; without a size it is a stream (stdin), which the bulk path reads."""
    import io

    return Source("bomb", lambda: io.BytesIO(data), None, len(data) if sized else None)


def _peak(run) -> tuple[int, object]:
    tracemalloc.start()
    try:
        result = run()
        return tracemalloc.get_traced_memory()[1], result
    finally:
        tracemalloc.stop()


@pytest.fixture
def small_limits(monkeypatch):
    monkeypatch.setattr(sources, "CHUNK_SIZE", 256 << 10)
    monkeypatch.setattr(sources, "MAX_LINE", 1 * MiB)


def _parse_peak(mib: int, path: str):
    src = _source(_gz_zeros(mib), sized=path == "records")
    peak, result = _peak(lambda: parse_sources([src], bulk="force" if path == "bulk" else False, block_bytes=MiB))
    return peak, result, src


@pytest.mark.parametrize("path", ["records", "bulk"])
def test_a_gzip_bomb_of_zeros_is_read_in_bounded_memory_and_accounted(small_limits, path):
    if path == "bulk":
        pytest.importorskip("polars")
    _parse_peak(2, path)  # the modules each path imports, imported before anything is measured
    small, _, _ = _parse_peak(8, path)
    peak, result, src = _parse_peak(64, path)
    # the whole content would be 64 MiB (and the old reader copied it many times over)
    assert peak < 16 * MiB and peak < small + 2 * MiB, f"{peak / MiB:.1f} MiB held for 64 MiB, {small / MiB:.1f} for 8"
    assert result.launches == [] and result.lines.total == 64  # every piece of the flood is a line, accounted
    assert result.lines.total == result.lines.parsed + result.lines.noise + result.lines.unrecognized
    assert "bomb: 1 line longer than 1 MiB was cut into pieces of 1 MiB, each read as a line" in result.warnings
    assert any("looks like binary data" in w for w in result.warnings)
    assert src.content_hash == _zeros_hash(64)


def _zeros_hash(mib: int) -> str:
    import hashlib

    h = hashlib.sha256()
    for _ in range(mib):
        h.update(bytes(MiB))
    return h.hexdigest()


def test_a_zstd_bomb_is_read_in_bounded_memory(small_limits):
    _peak(lambda: parse_sources([_source(_zst_zeros(2), sized=True)], bulk=False))
    peak, result = _peak(lambda: parse_sources([_source(_zst_zeros(32), sized=True)], bulk=False))
    assert peak < 16 * MiB and result.lines.total == 32


def test_the_pieces_of_a_long_line_are_unrecognized_with_a_reason(monkeypatch):
    monkeypatch.setattr(sources, "MAX_LINE", 3_000_000)
    text = "[2026-05-18 09:00:00] " + "x" * 5_000_000 + "\n[2026-05-18 09:00:01] end\n"
    result = parse_sources([text_source("long", text)], bulk=False)
    assert result.lines.total == 3 and result.lines.unrecognized >= 1
    assert result.unrecognized[0].reason == "line of 3000000 characters is too long to parse"
    assert len(result.unrecognized[0].text) <= 200


def test_decompression_hands_over_a_chunk_at_a_time(monkeypatch):
    """What the decompressor hands over is at most a chunk, whatever the expansion (zlib's max_length)."""
    monkeypatch.setattr(sources, "CHUNK_SIZE", 64 << 10)
    for blob in (gzip.compress(bytes(8 * MiB)), _zst_zeros(8)):
        with _source(blob, sized=True).open_content() as content:
            sizes = [len(c) for c in content.chunks]
        assert sum(sizes) == 8 * MiB + 1 and max(sizes) <= (64 << 10) + 1  # a chunk, and the newline cutting it
