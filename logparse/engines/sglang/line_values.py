"""The values of SGLang's line fields: numbers of tokens, field names, batch and timing values, capture names.

What the line transformer (:mod:`logparse.engines.sglang.line` and its families of lines,
``line_startup``, ``line_memory``, ``line_runtime``) makes of the tokens the grammar matched: numbers
in ASCII digits only (:func:`logparse.grammar.bounds.ascii_number`), device memory marked as GiB and
durations as seconds, so that a rule's builder tells its figures apart by type.
"""

from __future__ import annotations

import re
from typing import Any

from logparse.grammar import bounds
from logparse.grammar.bounds import ForeignDigits, ascii_number, has_foreign_digits, read_number
from logparse.grammar.pyliteral import MAX_DEPTH


class GiB(float):
    """A device-memory figure as SGLang prints it ("GB" = GiB)."""


class Seconds(float):
    pass


def first_int(text: str) -> int:
    """The first run of digits in a token the grammar matched with one (0 if, against the grammar, none)."""
    m = re.search(r"\d+", text)
    return int(ascii_number(m.group())) if m else 0


def number(tok: Any) -> int | float:
    """A number token as int or float: ASCII digits only (:func:`logparse.grammar.bounds.ascii_number`)."""
    return ascii_number(str(tok))


def as_float(tok: Any) -> float:
    """A number token as a float (:func:`logparse.grammar.bounds.as_float`)."""
    return bounds.as_float(number(tok))


def as_int(tok: Any) -> int | float:
    """A number token as an int (:func:`logparse.grammar.bounds.as_int`)."""
    return bounds.as_int(number(tok))


def field_name(value: str) -> str:
    """``#running-req`` -> ``running_req``; ``gen throughput (token/s)`` -> ``gen_throughput``."""
    value = re.sub(r"\s*\([^)]*\)", "", value)
    return value.strip().lower().replace(".", "").replace("/", "_").replace(" ", "_").replace("#", "").replace("-", "_")


_GRAPH_DEVICES = {"cuda": "cuda", "cpu": "cpu", "npu": "npu", "xpu": "xpu", "musa": "musa", "hpu": "hpu"}


def graph_name_fields(name: str) -> dict[str, Any]:
    """Split a capture name ("draft extend cuda graph", "target decode CUDA graph") into parts."""
    words = name.split()
    low = [w.lower() for w in words]
    device = None
    for w in low:
        if w in _GRAPH_DEVICES:
            device = _GRAPH_DEVICES[w]
    worker = "draft" if "draft" in low else "target"
    phase = None
    for candidate in ("verify", "extend", "prefill", "decode", "piecewise", "tree"):
        if candidate in low:
            phase = candidate
            break
    return {"name": name, "device": device, "worker": worker, "phase": phase or "decode"}


def batch_value(raw: str) -> Any:
    """A value of a batch-statistics line: ``True``/``False``, a number (``0.42%`` -> ``0.42``), else the text."""
    raw = raw.strip()
    if raw in ("True", "False"):
        return raw == "True"
    value = read_number(raw[:-1] if raw.endswith("%") else raw)
    if value is None and has_foreign_digits(raw):
        raise ForeignDigits(raw)  # the line is a near miss, not a number read silently
    return raw if value is None else value


def parse_timings(text: str) -> dict[str, Any]:
    """``load_weight=0.08, kv_cache_allocation=1.04, cuda_graph={prefill=0.00, decode=0.00}, ...``"""
    out: dict[str, Any] = {}
    key = ""
    buf = ""
    stack: list[tuple[str, dict]] = []
    cur = out
    for ch in text + ",":
        if ch == "{" and len(stack) < MAX_DEPTH:  # deeper: text (a walk of the fields stays shallow)
            stack.append((key, cur))
            new: dict[str, Any] = {}
            cur[key.strip()] = new
            cur = new
            key, buf = "", ""
        elif ch == "}" and stack:
            if key.strip():
                cur[key.strip()] = batch_value(buf)
            _, cur = stack.pop()
            key, buf = "", ""
        elif ch == "=" and not key:
            key = buf
            buf = ""
        elif ch == ",":
            if key.strip():
                cur[key.strip()] = batch_value(buf)
            key, buf = "", ""
        else:
            buf += ch
    return out
