"""bulk_export.segments, which finds a text-only stretch's cut in the chunks themselves, against the
cut of each gathered piece by _cut (what it did before, and still does where a NUL is held): the
same clean blocks and raw entries, whatever the chunks' sizes and wherever an entry's blank line
falls (within a chunk, across two, at a chunk's start or end)."""

from __future__ import annotations

import struct

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from logparse.engines.sglang import bulk_export
from logparse.sources.streams import gathered


def _reference(chunks: list[bytes], block_bytes: int) -> list:
    out: list = []
    buf = b""
    for data, final in gathered(chunks, block_bytes):
        pieces = bulk_export._cut(buf + data, final=final)
        while True:
            try:
                out.append(next(pieces))
            except StopIteration as stop:
                buf = stop.value
                break
    return out


_FIELD = st.one_of(
    st.sampled_from(["MESSAGE=a", "_PID=1", "__CURSOR=s=1", "X=", "", "\n"]),
    st.binary(max_size=6).map(lambda b: b"MESSAGE\n" + struct.pack("<Q", len(b)) + b + b"\n"),
)
_STREAM = st.lists(st.lists(_FIELD, max_size=5), max_size=12).map(
    lambda entries: b"".join(
        b"".join(f if isinstance(f, bytes) else f.encode() + b"\n" for f in entry) + b"\n" for entry in entries
    )
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_STREAM, st.lists(st.integers(1, 9), min_size=1, max_size=6), st.integers(1, 24))
@example(b"A=1\n\nB=2\n\nC=3\n", [4], 4)  # a blank line at a chunk's start
@example(b"A=1\n\nB=2\n\n\nC=3\n", [4, 1], 5)  # three newlines across chunks
@example(b"", [1], 1)
def test_segments_cut_where_the_gathered_pieces_are_cut(stream, sizes, block_bytes):
    chunks, pos, k = [], 0, 0
    while pos < len(stream):
        chunks.append(stream[pos : pos + sizes[k % len(sizes)]])
        pos += sizes[k % len(sizes)]
        k += 1
    got = [(type(s).__name__, s.data) for s in bulk_export.segments(iter(chunks), block_bytes)]
    assert got == [(type(s).__name__, s.data) for s in _reference(chunks, block_bytes)]
