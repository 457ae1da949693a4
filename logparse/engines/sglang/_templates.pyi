# The C scanner's entry points (_templates.c); bulk_native.py is their one caller and says what
# each buffer holds.
from typing import Any

def batch(
    data: Any,
    pos: Any,
    end: Any,
    decode: tuple,
    prefill: tuple,
    methods: tuple,
    reasons: tuple,
    col_is_float: bytes,
    kind: Any,
    tmpl: Any,
    ts: Any,
    ts_at: Any,
    icols: Any,
    fcols: Any,
    /,
) -> None: ...
def headers(
    data: Any, starts: Any, ends: Any, pattern: str, rest: bytes, real: bool, ok: Any, pid: Any, msg: Any, /
) -> None: ...
def entries(
    block: bytes, names: tuple[bytes, ...], slots: bytes, n_watched: int, n_once: int, /
) -> tuple[int, bytes]: ...
def json(data: Any, starts: Any, ends: Any, ok: Any, pid: Any, msg: Any, msg_end: Any, /) -> bytes: ...
def span_ints(data: Any, starts: Any, ends: Any, out: Any, /) -> None: ...
def same_spans(data: Any, starts: Any, ends: Any, k: int, out: Any, /) -> None: ...
def newlines(data: Any, /) -> int: ...
def lines(data: Any, starts: Any, ends: Any, /) -> None: ...
