"""The ``server_args=`` payload: a Python repr read back with ``pyliteral.lark``.

SGLang prints its ``ServerArgs`` as a dataclass repr (``ServerArgs(model_path='…', tp_size=2)``,
up to 0.5.18) or as a dict (0.5.19+).  :func:`parse_literal` reads either into plain Python
values; a dataclass repr becomes a :class:`ReprRecord`, a dict that remembers its class name.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from lark import Lark, Token, Transformer
from lark.exceptions import LarkError

from logparse.grammar.bounds import read_number, shown
from logparse.grammar.lalr import build_parser, first_line_of


class LiteralParseError(ValueError):
    """The payload is not a Python literal (a truncated line, most often)."""


#: How deep a payload may nest (records, dicts, lists, tuples, sets).  SGLang's and vLLM's arguments
#: nest four levels at most (``cuda_graph_config=CudaGraphConfig(decode=PhaseConfig(...))``); a value
#: nested deeper is kept as the text :data:`TOO_DEEP` (with a warning, by :func:`json_safe_notes`),
#: the rest of the payload is read as usual, and every walk of a parsed payload stays shallow.
MAX_DEPTH = 32
#: The text a value nested deeper than :data:`MAX_DEPTH` is kept as.
TOO_DEEP = f"<nested deeper than {MAX_DEPTH} levels>"


class NotANumber(str):
    """A number token that is none: digits of another script (``２``), kept as its text."""


class ReprRecord(dict):
    """A dataclass repr ``Name(k=v, ...)`` read back: a dict that remembers its class name, and whether
    the text was abridged (``...`` or ``…`` where fields were left out: the missing ones are unknown)."""

    def __init__(self, name: str, fields: dict[str, Any], abridged: bool = False):
        super().__init__(fields)
        self.record_name = name
        self.abridged = abridged


class AbridgedDict(dict):
    """A dict repr with ``...`` or ``…`` where entries were left out (a hand-abridged paste)."""

    abridged = True


def is_abridged(value: Any) -> bool:
    """Was this record or dict abridged by hand (``...``/``…`` in place of fields)?"""
    return bool(getattr(value, "abridged", False))


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
        if escape[0] in "xuU" and len(escape) > 1:  # a bare \x (a damaged line) is an unknown escape
            code = int(escape[1:], 16)
            if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
                # not a character: the text as printed (lone surrogates: see logparse.text)
                return "\\" + escape
            return chr(code)
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
        if not s.isascii():  # digits of another script: text, not a number (json_safe says so)
            return NotANumber(s)
        if s.endswith("j"):
            return complex(s)
        value = read_number(s)
        return NotANumber(s) if value is None else value

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
        elided = any(isinstance(x, Token) and x.type == "ELIDED" for x in c[1:])
        return ReprRecord(name, dict(x for x in c[1:] if isinstance(x, tuple)), elided)

    def pair(self, c):
        return (c[0], c[1])

    def dict(self, c):
        out: dict[Any, Any] = AbridgedDict() if any(isinstance(p, Token) for p in c) else {}
        for p in c:
            if not isinstance(p, tuple):
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


# --------------------------------------------------------------------------- the quick reader
#
# A payload as SGLang prints it (no ``...``, no keyword as a field name) is read by a small
# recursive reader over one regular expression's tokens: the grammar's terminals with the same
# patterns, the same values (the transformer's own methods), about three times faster than lark's
# contextual lexer.  Anything else it is not sure of raises :class:`_Unsure` and goes to lark,
# which gives the same value or the same error as ever (``tests/test_pyliteral_quick.py``).

#: The grammar's terminals (``grammars/pyliteral.lark``), whitespace (``common.WS``) skipped.
_TOKEN = re.compile(
    r"""[ \t\f\r\n]*(?:(?P<STRING>'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")|(?P<ANGLE><[^<>]*>)"""
    r"|(?P<NUMBER>-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?j?|-inf|-nan)|(?P<NAME>[A-Za-z_][\w.]*)"
    r"|(?P<PUNCT>[()\[\]{},:=]))"
)
_TRAILING_WS = re.compile(r"[ \t\f\r\n]*")
_KEYWORDS = {"None": None, "True": True, "False": False}


class _Unsure(Exception):
    """The quick reader leaves this payload to lark."""


def _tokens(text: str) -> list[tuple[str, str]]:
    """``(kind, text)`` of each token: a punctuation's kind is its own text."""
    out: list[tuple[str, str]] = []
    pos, end, match = 0, len(text), _TOKEN.match
    while True:
        m = match(text, pos)
        if m is None:
            if _TRAILING_WS.match(text, pos).end() != end:  # type: ignore[union-attr]
                raise _Unsure
            return out
        kind, tok = m.lastgroup, m.group(m.lastindex)  # type: ignore[arg-type]
        out.append((tok if kind == "PUNCT" else kind, tok))  # type: ignore[arg-type]
        pos = m.end()


class _QuickReader:
    """A recursive reader of :func:`_tokens` building what :class:`PyLiteralTransformer` builds."""

    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0
        self.tf = PyLiteralTransformer()

    def take(self) -> tuple[str, str]:
        if self.i >= len(self.toks):
            raise _Unsure
        self.i += 1
        return self.toks[self.i - 1]

    def peek(self) -> str | None:
        return self.toks[self.i][0] if self.i < len(self.toks) else None

    def whole(self) -> Any:
        value = self.value()
        if self.i != len(self.toks):
            raise _Unsure
        return value

    def value(self) -> Any:
        kind, tok = self.take()
        if kind == "NAME":
            if tok in _KEYWORDS:  # a keyword, never a record's name (lark's lexer makes it one)
                return _KEYWORDS[tok]
            if self.peek() == "(":
                self.i += 1
                return self.record(tok)
            return self.tf.name([tok])
        if kind == "STRING":
            return self.tf.string([tok])
        if kind == "NUMBER":
            return self.tf.number([tok])
        if kind == "ANGLE":
            return tok
        if kind in ("(", "[", "{"):
            return self.read_tuple() if kind == "(" else self.read_list() if kind == "[" else self.read_braces()
        raise _Unsure

    def record(self, name: str) -> ReprRecord:
        fields: list[tuple[str, Any]] = []
        while (kind := self.take()[0]) != ")":
            if kind == ",":
                continue
            field_name = self.toks[self.i - 1][1]
            if kind != "NAME" or field_name in _KEYWORDS or self.take()[0] != "=":
                raise _Unsure
            fields.append((field_name, self.value()))
        return self.tf.record([name, *fields])

    def items(self, closer: str, first: list[Any]) -> list[Any]:
        """The values of a list, tuple or set after ``first`` (read already): ``, value`` up to
        ``closer``, one trailing comma allowed."""
        out = first
        while (kind := self.take()[0]) != closer:
            if kind != ",":
                raise _Unsure
            if self.peek() == closer:
                self.i += 1
                break
            out.append(self.value())
        return out

    def read_list(self) -> list[Any]:
        if self.peek() == "]":
            self.i += 1
            return []
        return self.tf.list(self.items("]", [self.value()]))

    def read_tuple(self) -> list[Any]:
        if self.peek() == ")":
            self.i += 1
            return []
        first = self.value()
        if self.peek() != ",":  # a value in brackets is no tuple: the grammar refuses it
            raise _Unsure
        return self.tf.tuple(self.items(")", [first]))

    def read_braces(self) -> Any:
        """A dict (``{}``, pairs with or without commas between them) or a set (``{v, ...}``)."""
        if self.peek() == "}":
            self.i += 1
            return self.tf.dict([])
        if self.peek() == ",":
            return self.tf.dict(self.pairs([]))
        first = self.value()
        if self.peek() != ":":
            return self.tf.set(self.items("}", [first]))
        self.i += 1
        return self.tf.dict(self.pairs([(first, self.value())]))

    def pairs(self, out: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
        while self.peek() != "}":
            if self.peek() == ",":
                self.i += 1
                continue
            key = self.value()
            if self.take()[0] != ":":
                raise _Unsure
            out.append((key, self.value()))
        self.i += 1
        return out


def quick_literal(text: str) -> Any:
    """The value lark's grammar reads from ``text`` when the quick reader is sure of it; raises
    :class:`LiteralParseError` otherwise (lark may still read it: :func:`parse_literal`)."""
    try:
        return _QuickReader(text).whole()
    except Exception:  # as _parsed: lark decides
        raise LiteralParseError("left to the grammar") from None


def parse_literal(text: str) -> Any:
    """Parse a Python repr (the ``server_args=`` payload).  Raises :class:`LiteralParseError`.

    A value nested deeper than :data:`MAX_DEPTH` is read as the text :data:`TOO_DEEP`.
    The same text is parsed once (a log prints one payload per rank and restart, a re-read reads it
    again): the value is kept by its text, and each call gets its own copy of it (a caller may change it)."""
    value, error = _parsed(text)
    if error is not None:
        raise LiteralParseError(error)
    return _copied(value)


@lru_cache(maxsize=256)
def _parsed(text: str) -> tuple[Any, str | None]:
    """The value of ``text`` (never handed out: :func:`parse_literal` copies it), or why there is none."""
    text = shallow(text)
    try:
        return _QuickReader(text).whole(), None
    except Exception:  # _Unsure, or anything else: lark reads it, or says why not, as ever
        pass
    try:
        return literal_parser().parse(text), None
    except LarkError as exc:
        return None, f"server_args payload is not a Python literal: {first_line_of(exc)}"
    except RecursionError:
        return None, "server_args payload nests too deeply"


def _copied(value: Any) -> Any:
    """A copy of a parsed literal: new dicts, records and lists (its scalars are immutable: str,
    :class:`NotANumber`, numbers, None).  Walked without recursion, as :func:`json_safe_notes`."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while stack:
        v, parent, key = stack.pop()
        if isinstance(v, dict):
            out: Any = ReprRecord(v.record_name, v, v.abridged) if isinstance(v, ReprRecord) else type(v)(v)
            stack.extend((x, out, k) for k, x in v.items() if isinstance(x, (dict, list)))
        elif isinstance(v, list):
            out = list(v)
            stack.extend((x, out, i) for i, x in enumerate(v) if isinstance(x, (dict, list)))
        else:
            out = v
        parent[key] = out
    return root[0]


# --------------------------------------------------------------------------- a cut or wrapped payload

#: The pieces of a payload that matter for its shape: strings, reprs in angle brackets, brackets
#: and commas; a lone quote or ``<`` is a string (or repr) the cut left open.
_SHAPE_TOKEN = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|<[^<>]*>|['"<]|[()\[\]{},]""")
_CLOSER = {"(": ")", "[": "]", "{": "}"}


@dataclass(slots=True)
class PayloadShape:
    """How far a payload's brackets go: is the outer record/dict closed, where are its own commas."""

    #: the outer record or dict was closed (at ``end``)
    closed: bool = False
    end: int = -1
    #: the payload is not a literal's shape at all (a closing bracket that closes nothing)
    broken: bool = False
    #: the opening bracket of the outer record/dict, and the positions of its own (top-level) commas
    opener: str | None = None
    commas: list[int] = field(default_factory=list)


def payload_shape(text: str) -> PayloadShape:
    """The bracket structure of a ``server_args=`` payload, read without parsing it (fast: one
    regexp over the text).  A payload cut by a paste is neither closed nor broken."""
    shape = PayloadShape()
    stack: list[str] = []
    for m in _SHAPE_TOKEN.finditer(text):
        tok = m.group()
        if len(tok) > 1 or tok not in "()[]{},'\"<":
            continue  # a whole string or <repr>
        if tok in "'\"<":
            return shape  # a string (or repr) the cut left open
        if tok in "([{":
            if shape.opener is None:
                shape.opener = tok
            stack.append(tok)
        elif tok == ",":
            if len(stack) == 1:
                shape.commas.append(m.start())
        elif not stack or _CLOSER[stack.pop()] != tok:
            shape.broken = True
            return shape
        elif not stack:
            shape.closed, shape.end = True, m.end()
            return shape
    return shape


@dataclass(slots=True)
class PartialLiteral:
    """The fields of a payload that could be read before it stops being readable."""

    value: dict
    #: why the rest is missing: ``cut`` (the line ends inside the payload) or ``unreadable``
    why: str
    #: the last field read, and how many characters of the payload were read
    last_field: str | None
    read_chars: int


def parse_literal_prefix(text: str) -> PartialLiteral | None:
    """The complete fields of a payload that does not parse as a whole (a line cut when pasted,
    or one holding a value the grammar does not know): the longest run of its top-level fields,
    from the start, that reads as a literal.  None when not even the first field reads.

    A field is kept whole or not at all: a nested record cut half-way is left out."""
    text = text.rstrip()
    shape = payload_shape(text)
    if shape.opener not in ("(", "{") or shape.broken or not shape.commas:
        return None
    closer = _CLOSER[shape.opener]
    commas = shape.commas

    def attempt(i: int) -> Any:
        try:
            value = parse_literal(text[: commas[i]] + closer)
        except LiteralParseError:
            return None
        return value if isinstance(value, dict) else None

    # the fields before the k-th comma read when those before the (k+1)-th do: a binary search
    lo, hi, best = 0, len(commas) - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        value = attempt(mid)
        if value is not None:
            best, lo = (mid, value), mid + 1
        else:
            hi = mid - 1
    if best is None:
        return None
    i, value = best
    return PartialLiteral(
        value,
        "unreadable" if shape.closed else "cut",
        next(reversed(value), None) if value else None,
        commas[i],
    )


def shallow(text: str) -> str:
    """``text`` with each bracketed value that opens deeper than :data:`MAX_DEPTH` replaced by
    :data:`TOO_DEEP` (a ``<…>`` repr, which the grammar keeps as text).  One scan, no recursion;
    a bracket the text leaves open is left as it is (the payload is cut: the parser says so)."""
    if text.count("(") + text.count("[") + text.count("{") <= MAX_DEPTH:
        return text
    out: list[str] = []
    depth, cut_from, done = 0, -1, 0
    for m in _SHAPE_TOKEN.finditer(text):
        tok = m.group()
        if len(tok) > 1 or tok not in "()[]{}":
            continue
        if tok in "([{":
            depth += 1
            if depth == MAX_DEPTH + 1 and cut_from < 0:
                cut_from = m.start()
        else:
            depth -= 1
            if depth == MAX_DEPTH and cut_from >= 0:
                out += [text[done:cut_from], TOO_DEEP]
                done, cut_from = m.end(), -1
    out.append(text[done:])
    return "".join(out)


#: JSON numbers that are exact in every reader of the store (DuckDB, polars, a BIGINT): int64.
_INT64 = 1 << 63


def json_safe(value: Any) -> Any:
    """A parsed literal as JSON can hold it: records as plain dicts, keys as text; NaN, ±inf,
    complex, ints beyond int64 and :class:`NotANumber` as text (:func:`json_safe_notes`)."""
    return json_safe_notes(value)[0]


def json_safe_notes(value: Any) -> tuple[Any, list[str]]:
    """:func:`json_safe`, and a note for each value kept as text that a reader may take for a
    number (``"tp_size: '２' is not a number …"``, ``"x: nested deeper than 32 levels"``).
    Walked without recursion (the depth is bounded by :data:`MAX_DEPTH` anyway)."""
    notes: list[str] = []
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, str]] = [(value, root, 0, "")]
    while stack:
        v, parent, key, path = stack.pop()
        if isinstance(v, dict):
            out: Any = {str(k): None for k in v}  # the keys in their order; the values filled below
            parent[key] = out
            stack.extend((x, out, str(k), f"{path}.{k}" if path else str(k)) for k, x in reversed(v.items()))
            continue
        if isinstance(v, list):
            out = [None] * len(v)
            parent[key] = out
            stack.extend((x, out, i, f"{path}[{i}]") for i, x in reversed(list(enumerate(v))))
            continue
        safe, why = _scalar(v)
        parent[key] = safe
        if why:
            notes.append(f"{shown(path) if path else 'the value'}: {why}")
    return root[0], notes


def _scalar(v: Any) -> tuple[Any, str | None]:
    """A scalar as JSON holds it, and why it is text now (None: it is what it was)."""
    if isinstance(v, NotANumber):
        return str(v), f"{v} is not a number (digits of another script than ASCII): kept as text"
    if v == TOO_DEEP and isinstance(v, str):
        return v, f"nested deeper than {MAX_DEPTH} levels: kept as text"
    if isinstance(v, float) and not math.isfinite(v):
        return str(v), None  # Python prints inf and nan in arguments; JSON has no such numbers
    if isinstance(v, int) and not isinstance(v, bool) and not -_INT64 <= v < _INT64:
        return str(v), f"{shown(v)} is beyond 64 bits: kept as text"
    if isinstance(v, complex):
        return str(v), None
    return v, None


def whole_number(v: Any) -> int | None:
    """A parsed value as an int when it is one: an int, or a float without a fraction (never a bool)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return None
