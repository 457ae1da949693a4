"""The ``server_args=`` payload: a Python repr read back with ``pyliteral.lark``.

SGLang prints its ``ServerArgs`` as a dataclass repr (``ServerArgs(model_path='…', tp_size=2)``,
up to 0.5.18) or as a dict (0.5.19+).  :func:`parse_literal` reads either into plain Python
values; a dataclass repr becomes a :class:`ReprRecord`, a dict that remembers its class name.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from lark import Lark, Transformer
from lark.exceptions import LarkError

from logparse.grammar.lalr import build_parser, first_line_of


class LiteralParseError(ValueError):
    """The payload is not a Python literal (a truncated line, most often)."""


class ReprRecord(dict):
    """A dataclass repr ``Name(k=v, ...)`` read back: a dict that remembers its class name."""

    def __init__(self, name: str, fields: dict[str, Any]):
        super().__init__(fields)
        self.record_name = name


_ESCAPES = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|N\{[^}]*\}|[0-7]{1,3}|.)", re.S)
_SIMPLE_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "0": "\0",
}


def _unescape(body: str) -> str:
    def replace(m: re.Match) -> str:
        escape = m.group(1)
        if escape in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[escape]
        if escape[0] in "xuU":
            return chr(int(escape[1:], 16))
        if escape[0].isdigit():
            return chr(int(escape, 8))
        return "\\" + escape  # \N{...} and unknown escapes stay as written

    return _ESCAPES.sub(replace, body)


class PyLiteralTransformer(Transformer):
    """Tree of a Python repr -> the value (``ReprRecord`` for a dataclass repr; sets and tuples as lists)."""

    def start(self, c):
        return c[0]

    def string(self, c):
        s = str(c[0])
        return _unescape(s[1:-1])

    def number(self, c):
        s = str(c[0])
        if s.endswith("j"):
            return complex(s)
        try:
            return int(s)
        except ValueError:
            return float(s)

    def none(self, c):
        return None

    def true(self, c):
        return True

    def false(self, c):
        return False

    def opaque(self, c):
        return str(c[0])

    def name(self, c):
        s = str(c[0])
        if s in ("inf", "nan"):
            return float(s)
        return s

    def field(self, c):
        return (str(c[0]), c[1])

    def record(self, c):
        name = str(c[0])
        return ReprRecord(name, dict(x for x in c[1:] if x is not None))

    def pair(self, c):
        return (c[0], c[1])

    def dict(self, c):
        out = {}
        for p in c:
            if p is None:
                continue
            k, v = p
            try:
                out[k] = v
            except TypeError:  # unhashable key: keep its text form
                out[repr(k)] = v
        return out

    def set(self, c):
        return list(c)

    def list(self, c):
        return list(c)

    def tuple(self, c):
        return list(c)


@lru_cache(maxsize=1)
def literal_parser() -> Lark:
    # The transformer runs inside the LALR parser: no tree is built for a payload of 300 fields.
    return build_parser("pyliteral", transformer=PyLiteralTransformer())


def parse_literal(text: str) -> Any:
    """Parse a Python repr (the ``server_args=`` payload).  Raises :class:`LiteralParseError`."""
    try:
        return literal_parser().parse(text)
    except LarkError as exc:
        raise LiteralParseError(f"server_args payload is not a Python literal: {first_line_of(exc)}") from None
    except RecursionError:
        raise LiteralParseError("server_args payload nests too deeply") from None


def json_safe(value: Any) -> Any:
    """A parsed literal as JSON can hold it: records as plain dicts, keys as text, NaN, ±inf and complex as text."""
    if isinstance(value, ReprRecord):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return str(value)
    if isinstance(value, complex):
        return str(value)
    return value
