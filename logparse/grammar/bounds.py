"""The bounds of the figures a log prints: one per kind of figure, applied where numbers are read.

A log line can hold any text where a figure belongs: ``K size: 1e308 GB``, a ``#tokens:`` of 310
digits, ``nan``, digits of another script (``１２``).  Python reads most of it (``int()`` and
``float()`` take any Unicode digit; a float overflows to ``inf``), and what it reads then breaks
the arithmetic of the budget, the JSON and the BIGINT columns of the store.  So:

* **Only ASCII digits are numbers.**  :func:`read_number` reads an ASCII literal or nothing;
  :func:`has_foreign_digits` tells the readers to refuse a line with digits of another script
  (a near miss, with the reason: never a number read silently).
* **Every figure has a bound**, by the kind of figure its field holds (:data:`BOUNDS`, by field
  name: :func:`bound_of`).  The bounds are physical limits, far above any real launch and far
  below what overflows: a memory figure within ±1 PiB, a token count a whole number from 0 to
  10^12, seconds from 0 to 10^7 (115 days), a fraction from 0 to 1, anything else finite and
  within ±10^15 (inside int64, and exact as a double).
* A figure out of its bound is **kept as absent** (``None``) by :func:`bound_fields`, which
  notes the field and the raw text under ``out_of_range``; the launch assembler turns each note
  into a warning naming the line (:func:`out_of_range_warning`).

The same function checks what the store reads back (:func:`bound_fields` with ``strings=True``: a
store an older logparse wrote may hold ``"inf"`` where a figure belongs), and the bulk path's
vectorized batch figures use the same :data:`BATCH_FIELDS` bounds, so that every path and every
surface agrees on every figure.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

#: Where :func:`bound_fields` notes the figures it set aside: ``{field path: "raw text and why"}``.
OUT_OF_RANGE = "out_of_range"
#: How deep :func:`bound_fields` walks (the payloads it sees are bounded far below:
#: :data:`logparse.grammar.pyliteral.MAX_DEPTH`); deeper values are left as they are.
MAX_WALK_DEPTH = 64
#: How much of a raw text a warning quotes.
MAX_RAW_CHARS = 40


@dataclass(frozen=True, slots=True)
class Bound:
    """The range of one kind of figure."""

    kind: str
    lo: float
    hi: float
    #: a whole number (an int; a float is not one)
    whole: bool = False
    #: the unit a message shows the limits in
    unit: str = ""

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is not a figure of this kind (None: it is one)."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return "not a number"
        if isinstance(value, float) and not math.isfinite(value):
            return "not finite"
        if value > self.hi:
            return f"out of range (> {_limit(self.hi)}{self.unit})".replace(" )", ")")
        if value < self.lo:
            return f"out of range (< {_limit(self.lo)}{self.unit})".replace(" )", ")")
        if self.whole and not isinstance(value, int):
            return "not a whole number"
        return None

    def holds(self, value: Any) -> bool:
        return self.problem(value) is None


def _limit(v: float) -> str:
    return (f"{v:,.0f}" if v == int(v) and abs(v) < 1e16 else f"{v:g}") + " "


#: Device memory in GiB (SGLang's "GB", vLLM's GiB) and host memory in GB: within ±1 PiB.  Memory
#: figures may be negative (a "mem usage" of -0.01 GB when a step freed memory).
MEMORY = Bound("memory", -(2**20), 2**20, unit="GiB")
HOST_MEMORY = Bound("host memory", -1e6, 1e6, unit="GB")
MEMORY_KB = Bound("memory", -(2**40), 2**40, unit="KB")
MEMORY_BYTES = Bound("memory", 0, 2**50, whole=True, unit="bytes")
#: A number of tokens (a KV pool, a batch, a context): 10^12 is a million times the largest pool.
TOKENS = Bound("token count", 0, 10**12, whole=True, unit="tokens")
#: A number of requests, blocks, sequences.
COUNT = Bound("count", 0, 10**12, whole=True)
#: An elapsed time: up to 10^7 s (115 days).
SECONDS = Bound("seconds", 0, 1e7, unit="s")
#: A fraction (``mem_fraction_static``, ``gpu_memory_utilization``, a pool's token usage).
FRACTION = Bound("fraction", 0.0, 1.0)
#: A rank (``TP3``, ``DP-1`` on single-DP launches of 0.3.6) and a parallel size: 65,536 GPUs at most.
RANK = Bound("rank", -1, 2**16, whole=True)
PARALLEL = Bound("parallel size", 0, 2**16, whole=True)
#: Any other figure: finite and within ±10^15 (inside int64; sums stay exact as doubles).
FIGURE = Bound("figure", -1e15, 1e15)

#: Bounds by field name (event fields, launch and rank fields, ``extra`` and ``runtime`` keys).
BOUNDS: dict[str, Bound] = {
    "mem_fraction_static": FRACTION,
    "suggested_mem_fraction_static": FRACTION,
    "minimum_mem_fraction_static": FRACTION,
    "gpu_memory_utilization": FRACTION,
    "token_usage": FRACTION,
    "full_token_usage": FRACTION,
    "swa_token_usage": FRACTION,
    "gpu_token_usage": FRACTION,
    "cpu_token_usage": FRACTION,
    "mamba_usage": FRACTION,
    "peak_token_usage": FRACTION,
    "running_req": COUNT,
    "queue_req": COUNT,
    "peak_running_req": COUNT,
    "peak_queue_req": COUNT,
    "peak_tokens": TOKENS,
    "token": TOKENS,
    "full_token": TOKENS,
    "tokens": TOKENS,
    "kv_tokens": TOKENS,
    "max_total_num_tokens": TOKENS,
    "max_total_tokens": TOKENS,
    "max_prefill_tokens": TOKENS,
    "full_tokens": TOKENS,
    "swa_tokens": TOKENS,
    "hicache_host_tokens": TOKENS,
    "noop_pool_tokens": TOKENS,
    "predicted_kv_tokens": TOKENS,
    "context_len": TOKENS,
    "context_length": TOKENS,
    "max_model_len": TOKENS,
    "chunked_prefill_size": FIGURE,  # -1 turns chunking off
    "page_size": TOKENS,
    "tp_size": PARALLEL,
    "dp_size": PARALLEL,
    "pp_size": PARALLEL,
    "ep_size": PARALLEL,
    "world_size": PARALLEL,
    "tensor_parallel_size": PARALLEL,
    "pipeline_parallel_size": PARALLEL,
    "data_parallel_size": PARALLEL,
    "rank": RANK,
    "tp_rank": RANK,
    "dp_rank": RANK,
    "pp_rank": RANK,
    "ep_rank": RANK,
    "attn_cp_rank": RANK,
    "moe_dp_rank": RANK,
    "kv_bytes": MEMORY_BYTES,
    "placeholder_kb": MEMORY_KB,
    "seconds": SECONDS,
    "load_s": SECONDS,
    "graph_s": SECONDS,
    "startup_s": SECONDS,
}

#: The figures of a ``Decode batch``/``Prefill batch`` line the runtime peaks are made of, and
#: their bounds: the bulk path's vectorized reading keeps a batch line only when each of its
#: figures holds (else the record path reads it, warning and all).
BATCH_FIELDS = {"running_req": COUNT, "token_usage": FRACTION, "queue_req": COUNT, "token": TOKENS}


def bound_of(name: str) -> Bound:
    """The bound of a field, by its name: :data:`BOUNDS`, else by its suffix (``_gb`` memory,
    ``_s`` seconds, ``tokens`` token counts), else :data:`FIGURE`."""
    b = BOUNDS.get(name)
    if b is not None:
        return b
    if name.endswith("_gb"):
        return HOST_MEMORY if name.startswith("host") else MEMORY
    if name.endswith("_s"):
        return SECONDS
    if name.endswith("_tokens"):
        return TOKENS
    return FIGURE


def numeric_field(name: str) -> bool:
    """Whether a field of this name holds only figures (text there is a defect, not a value)."""
    return bound_of(name) is not FIGURE or name in BOUNDS


# --------------------------------------------------------------------------- reading a number
#: An ASCII number literal as a log prints one (Python's ``int()``/``float()`` take far more:
#: other scripts' digits, ``1_000``, surrounding spaces).
_NUMBER_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|nan)", re.ASCII)
_INT_RE = re.compile(r"[+-]?[0-9]+", re.ASCII)
#: ints beyond this many digits are not read (no figure has them; ``int()`` of a million digits is slow)
MAX_DIGITS = 40
_TOO_LONG = 10 ** (MAX_DIGITS + 1)


def has_foreign_digits(text: str) -> bool:
    """Whether ``text`` holds a decimal digit of another script than ASCII (``１２``, ``٣``): what
    ``int()`` reads and a regexp's ``\\d`` matches, in Python as in Rust's regex crate (``\\p{Nd}``)."""
    return not text.isascii() and any(ch.isdecimal() and not ch.isascii() for ch in text)


#: :func:`has_foreign_digits` for polars (Rust's regex crate: a class difference).
FOREIGN_DIGIT_PATTERN = r"[\d--0-9]"


def read_number(text: str) -> int | float | None:
    """An ASCII number literal as int (no fraction, no exponent) or float; None when ``text`` is
    no such literal (foreign digits included)."""
    s = text.strip(" ")
    if not _NUMBER_RE.fullmatch(s):
        return None
    if _INT_RE.fullmatch(s):
        if len(s.lstrip("+-").lstrip("0")) > MAX_DIGITS:
            return -_TOO_LONG if s[0] == "-" else _TOO_LONG  # beyond every bound, without reading it
        return int(s)
    return float(s)


class ForeignDigits(ValueError):
    """A number written with digits of another script: not read as a number."""

    def __init__(self, text: str) -> None:
        super().__init__(f"{shown(text)} is not a number (digits of another script than ASCII)")


def ascii_number(text: str) -> int | float:
    """:func:`read_number` for a token the grammar matched as a number: raises :class:`ForeignDigits`
    for digits of another script, ``ValueError`` for what is no number."""
    value = read_number(text)
    if value is None:
        if has_foreign_digits(text):
            raise ForeignDigits(text)
        raise ValueError(f"{shown(text)} is not a number")
    return value


def as_float(value: int | float) -> float:
    """A number read from a line as a float (an int too large for one is ``inf``: out of every bound)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def as_int(value: int | float) -> int | float:
    """A number read from a line as an int (a fraction dropped); ``inf`` and ``nan`` stay as they are,
    for the bounds to set aside."""
    return int(value) if isinstance(value, float) and math.isfinite(value) else value


def shown(raw: Any) -> str:
    """A raw text as a message quotes it: short (a long run of digits says how many)."""
    s = str(raw)
    if len(s) <= MAX_RAW_CHARS:
        return s
    return f"{s[:12]}…{s[-6:]} ({len(s)} characters)"


# --------------------------------------------------------------------------- bounding fields
def bound_fields(fields: dict[str, Any], text: str = "", *, strings: bool = False) -> dict[str, str]:
    """Every figure of ``fields`` out of its bound replaced by None, in place (nested dicts and
    lists included, walked without recursion).  Each one is noted under ``fields["out_of_range"]``
    as ``{field path: "raw text, and why"}``, the raw text as ``text`` (the line) wrote it; the new
    notes are returned.

    ``strings``: a text under a figure's name (:func:`numeric_field`) is set aside too (a store an
    older logparse wrote holds ``"inf"`` there)."""
    notes: dict[str, str] = {}
    stack: list[tuple[Any, str, str, int]] = [(fields, "", "", 0)]
    while stack:
        container, path, name, depth = stack.pop()
        if depth > MAX_WALK_DEPTH:
            continue
        items = container.items() if isinstance(container, dict) else enumerate(container)
        for key, value in list(items):
            if key == OUT_OF_RANGE and container is fields:
                continue
            here = name if isinstance(container, list) else str(key)
            where = f"{path}[{key}]" if isinstance(container, list) else f"{path}.{key}" if path else str(key)
            if isinstance(value, (dict, list)):
                stack.append((value, where, here, depth + 1))
                continue
            problem = _problem(here, value, strings)
            if problem is not None:
                container[key] = None
                notes[where] = f"{shown(raw_text(text, value))} {problem}"
    if notes:
        old = fields.get(OUT_OF_RANGE)
        fields[OUT_OF_RANGE] = {**(old if isinstance(old, dict) else {}), **notes}
    return notes


def _problem(name: str, value: Any, strings: bool) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return bound_of(name).problem(value)
    if strings and isinstance(value, str) and numeric_field(name):
        return "not a number"
    return None


_LITERAL_RE = re.compile(r"(?<![\w.])[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|nan)(?![\w.])")


def raw_text(text: str, value: Any) -> str:
    """How the line wrote ``value``: the first number literal of ``text`` that reads as it (a float
    that overflowed reads as the ``inf`` it became), else the value's own text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and text:
        want = _same(value)
        for m in _LITERAL_RE.finditer(text):
            got = read_number(m.group())
            if got is not None and _same(got) == want:
                return m.group()
    return repr(value) if isinstance(value, float) else str(value)


def _same(v: int | float) -> Any:
    """What two readings of one literal share (an int and the float it was turned into): the value
    as a float, or for a value beyond every float its sign."""
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if isinstance(v, int) and abs(v) >= _TOO_LONG:
        return ("long", v > 0)
    try:
        f = float(v)
    except OverflowError:
        return ("inf", v > 0)
    return ("inf", f > 0) if math.isinf(f) else f


#: How a warning names the fields SGLang prints under another name.
LABELS = {
    "k_gb": "K size",
    "v_gb": "V size",
    "kv_gb": "KV size",
    "tokens": "#tokens",
    "avail_gb": "avail mem",
    "mem_usage_gb": "mem usage",
    "elapsed_s": "elapsed",
    "running_req": "#running-req",
    "queue_req": "#queue-req",
    "token": "#token",
    "token_usage": "token usage",
}


def out_of_range_warning(line_no: int, path: str, note: str) -> str:
    """The launch warning for a figure :func:`bound_fields` set aside: the line, the field, the
    raw text and the bound (``line 2: K size 1e308 out of range (> 1,048,576 GiB): ignored``)."""
    head, _, name = path.rpartition(".")
    label = LABELS.get(name, name)
    return f"line {line_no}: {head + '.' if head else ''}{label} {note}: ignored"
