"""SGLang's part of classifying a stream's lines (:class:`SglangClassifier`).

SGLang's own lines carry its prefix (:mod:`logparse.engines.sglang.prefix`); its runtime lines (``Decode
batch``/``Prefill batch``) are read without lark (:func:`fast_batch`).  Only lines that mention a
tracked anchor (:data:`ANCHORS`, ``grammars/<engine>/anchors.toml``) are parsed by the grammar; one that then
fails it is a *near miss*: SGLang may print a format variant we do not know yet.  Before 0.2.14 the
lines carry no prefix, so SGLang also reads bare lines by its anchors.

State per stream: a ``server_args`` line whose payload a terminal or a paste wrapped goes on in the
next lines (:meth:`SglangClassifier.continuation`).
"""

from __future__ import annotations

import re
from typing import Any

from logparse.data import tables
from logparse.engines.base import STRENGTH, Claim
from logparse.engines.sglang.line import LineParseError, parse_line
from logparse.engines.sglang.line_values import batch_value, field_name
from logparse.engines.sglang.prefix import PREFIX_RE, STAMP_START_RE, prefix_fields
from logparse.grammar import runtime_decoder
from logparse.grammar.bounds import has_foreign_digits
from logparse.grammar.kinds import GENERIC_KINDS
from logparse.grammar.noise import TQDM_RE, bare_noise, prefixed_noise
from logparse.grammar.pyliteral import payload_shape

#: Substrings that mark a line we extract figures from (case-sensitive), in the order of
#: ``grammars/<engine>/anchors.toml``.  A line with one of these must parse, or it is reported as a near miss.
ANCHORS: tuple[str, ...] = tuple(tables.table("sglang/anchors.toml")["anchors"])
_ANCHOR_RE = re.compile("|".join(re.escape(a) for a in ANCHORS))

#: Any line longer than this that is not a ``server_args`` line (tens of KB in practice) is kept as
#: unrecognized without parsing.
MAX_GRAMMAR_LINE = 65_536

#: A piece of a ``server_args`` payload: a dataclass field ``name=`` or a dict key ``'name': ``.
_PAYLOAD_FIELD_RE = re.compile(r"(?:^|[\s,(])[A-Za-z_]\w*=|'[A-Za-z_]\w*': ")
#: A piece of a payload without a field in it: the middle of a long list of numbers.
_PAYLOAD_BITS_RE = re.compile(r"[\d\s.,+eE\[\](){}-]*,[\d\s.,+eE\[\](){}-]*")
#: The kind of a line that continues a ``server_args`` line wrapped by a terminal or a paste.
SERVER_ARGS_CONTINUATION = "server_args_continuation"
#: How much of a wrapped payload is rejoined (the longest real ones are about 30 KB).
MAX_WRAPPED_PAYLOAD = 1_000_000

_NAME = "sglang"
#: What a batch line holds first after the prefix, by family (``Decode batch``, ``Prefill batch``:
#: grammars/sglang/runtime.toml).
BATCH_WORDS = {k: runtime_decoder.family_word(_NAME, k) for k in ("decode_batch", "prefill_batch")}
_BATCH_STARTS = tuple(BATCH_WORDS.values())


def prefix_info(head: str) -> dict[str, Any]:
    """``[2026-11-29 08:09:19 DP0 TP1] `` -> the grammar's prefix dict (fast path)."""
    m = PREFIX_RE.match(head)
    return prefix_fields(m) if m is not None else {"stamp": None, "tags": []}


def fast_batch(text: str, start: int, prefix: dict[str, Any] | None = None) -> tuple | None:
    """``Decode batch``/``Prefill batch`` lines without lark: same result as the grammar, or None.

    ``start``: where the message begins (the end of ``PREFIX_RE``'s match); ``prefix``: the
    prefix dict of that match, when the caller has it.

    Runtime lines are most of a production log; this keeps them off the LALR parser.
    ``tests/engines/sglang/test_classify.py`` checks that both agree.  Any shape it does not know
    (mixed-chunk header, the 0.4.9 ``full=N, swa=M`` items) falls back to the grammar.
    """
    kind = next((k for k, w in BATCH_WORDS.items() if text.startswith(w, start)), None)
    if kind is None:
        return None
    rest = text[start + len(BATCH_WORDS[kind]) :]
    fields: dict[str, Any] = {}
    if rest.startswith(" ["):
        end = rest.find("]")
        if end < 0 or not (rest[2:end].isascii() and rest[2:end].isdigit()):
            return None
        fields["iteration"] = int(rest[2:end])
        rest = rest[end + 1 :]
    if rest[:2] not in (". ", ", "):
        return None
    form = "dot" if rest[0] == "." else "comma"
    body = rest[2:].rstrip()
    if body.endswith(","):
        body = body[:-1].rstrip()
    if not body:
        return None
    for part in body.split(", "):
        key, sep, value = part.partition(": ")
        if not sep or not key or not value or "," in value or ": " in value:
            return None
        try:
            fields[field_name(key)] = batch_value(value)
        except ValueError:  # digits of another script: the grammar says why the line is a near miss
            return None
    return (prefix if prefix is not None else prefix_info(text[:start]), None, (kind, fields, form))


def line_start(text: str, exact: bool) -> int | None:
    """Where an SGLang line begins inside ``text`` (text glued in front of its bracket): with ``exact``
    the whole prefix must read there, else a stamp's bracket is enough (a ``\\r`` segment)."""
    m = STAMP_START_RE.search(text)
    if m is None or (exact and PREFIX_RE.match(text, m.start()) is None):
        return None
    return m.start()


def starts_line(text: str) -> bool:
    """Does an SGLang line (its prefix, or a stamp's bracket) begin at the start of ``text``?"""
    return bool(PREFIX_RE.match(text) or STAMP_START_RE.match(text))


def _claim(status: str, reason: str, parsed: Any = None, text: str = "", strength: int = 0) -> Claim:
    return Claim(status, reason, parsed, text, strength, _NAME)


class SglangClassifier:
    """SGLang's steps of a stream's classification (see :class:`logparse.engines.base.Classifier`)."""

    engine = _NAME
    line_start = staticmethod(line_start)

    def __init__(self) -> None:
        #: the payload of a server_args line whose brackets are still open (wrapped when pasted)
        self.payload: str | None = None

    @property
    def continuing(self) -> bool:
        return self.payload is not None

    def reset(self) -> None:
        self.payload = None

    def layered(self, text: str) -> Claim | None:
        return None  # SGLang's prefix is read after the stream's multi-line records (a traceback)

    def has_prefix(self, text: str) -> re.Match | None:
        return PREFIX_RE.match(text)

    def starts_line(self, text: str) -> bool:
        return starts_line(text)

    def continuation(self, text: str) -> Claim | None:
        """The next piece of a ``server_args`` line a terminal or a paste wrapped: it reads as the
        payload going on (a field, or the middle of a list, or the end that closes it).  None: the
        payload ends here (cut); the stream's classifier has already ended it for a line of its own."""
        payload = self.payload or ""
        self.payload = None
        if len(payload) + len(text) > MAX_WRAPPED_PAYLOAD:
            return None
        joined = payload + text
        shape = payload_shape(joined)
        if shape.broken or (shape.closed and joined[shape.end :].strip()):
            return None
        if not (shape.closed or _PAYLOAD_FIELD_RE.search(text) or _PAYLOAD_BITS_RE.fullmatch(text)):
            return None
        if not shape.closed:
            self.payload = joined
        return _claim("parsed", SERVER_ARGS_CONTINUATION, None, text)

    def prefixed(self, text: str, m: re.Match | None) -> Claim | None:
        """A runtime line (``Decode batch``/``Prefill batch``) read without lark (``m``: its prefix)."""
        if m is not None and text.startswith(_BATCH_STARTS, m.end()):
            fast = fast_batch(text, m.end(), prefix_fields(m))
            if fast is not None:
                return _claim("parsed", fast[2][0], fast, text)
        return None

    def bare(self, text: str) -> Claim | None:
        """A bare line is SGLang's only by its anchors (:meth:`contest`, :meth:`tracked`)."""
        return None

    def contest(self, text: str) -> Claim | None:
        """SGLang's reading of a bare line another engine claims by its first words (an anchor of
        SGLang's in it): a parse into one of SGLang's own kinds is the strongest claim."""
        if not _ANCHOR_RE.search(text):
            return None
        got = self.parse(text)
        if got.status != "parsed":
            got.strength = STRENGTH["near_miss"]
        else:
            got.strength = STRENGTH["generic" if got.reason in GENERIC_KINDS else "own_kind"]
        return got

    def anchored(self, text: str) -> bool:
        return bool(_ANCHOR_RE.search(text)) or text == "Killed"

    def tracked(self, text: str, m: re.Match | None) -> Claim:
        """A line that mentions something tracked: it must parse (else a near miss), unless it is an
        unprefixed progress bar or known noise."""
        if m is None and TQDM_RE.search(text) and not text.startswith("[gpu"):
            return _claim("noise", "tqdm")
        result = self.parse(text)
        if result.status == "parsed" or m is not None:
            return result
        noise = bare_noise(text)
        return _claim("noise", noise) if noise else result

    def message(self, msg: str) -> Any:
        """A Python warning's message that SGLang's grammar reads (its anchors), else None."""
        if not _ANCHOR_RE.search(msg):
            return None
        try:
            return parse_line(msg)
        except LineParseError:
            return None

    def exception(self, text: str) -> Claim | None:
        """An exception line SGLang's grammar reads (any exception line: a claim of a generic kind)."""
        try:
            parsed = parse_line(text)
        except LineParseError:
            return None
        claim = self._parsed(parsed, text)
        claim.strength = STRENGTH["generic" if claim.reason in GENERIC_KINDS else "own_kind"]
        return claim

    def untracked(self, text: str, m: re.Match | None) -> Claim | None:
        """A prefixed line that names nothing tracked: known noise after the prefix, else SGLang's own."""
        if m is None:
            return None
        return _claim("noise", prefixed_noise(text, m.end()) or "sglang_other")

    def parse(self, text: str) -> Claim:
        """The grammar's reading of a tracked line: parsed, or a near miss with the reason."""
        if len(text) > MAX_GRAMMAR_LINE and "server_args=" not in text[:300]:
            return _claim(
                "unrecognized",
                f"line of {len(text)} characters mentions a tracked message but is too long to be one",
                text=text[:MAX_GRAMMAR_LINE],
            )
        try:
            parsed = parse_line(text)
        except LineParseError as exc:
            why = str(exc)
            if has_foreign_digits(text) and "another script" not in why:
                why += "; the line holds digits of another script than ASCII, which are not read as numbers"
            return _claim("unrecognized", f"near miss (SGLang may print a format we do not know): {why}", text=text)
        return self._parsed(parsed, text)

    def _parsed(self, parsed: tuple, text: str) -> Claim:
        claim = _claim("parsed", parsed[2][0], parsed, text)
        if claim.reason == "exception_start":
            claim.opens = "traceback"
        elif claim.reason == "server_args":
            payload = parsed[2][1].get("payload", "")
            shape = payload_shape(payload)
            if not shape.closed and not shape.broken and shape.opener is not None:
                self.payload = payload  # wrapped (or cut): may go on
                claim.opens = "continuation"
        return claim
