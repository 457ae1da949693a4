"""Line classification: every line is ``parsed``, known ``noise``, or ``unrecognized``.

The cheap pre-filter decides which lines reach lark: only lines that mention a
tracked anchor (``ANCHORS``) are parsed by the grammar.  Everything else is either
known noise (the table ``NOISE``, data in ``grammars/noise.toml``: each entry has a sample line
and a test) or kept as unrecognized with a reason.  A line that mentions an anchor but fails the grammar
is a *near miss*: SGLang may have a format variant we do not know yet.

The classifier is stateful per stream (host, unit, boot, pid): Python tracebacks and
``warnings`` output span several physical lines, and their continuation lines belong
to the record that opened them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from logparse.data import tables
from logparse.grammar.bounds import has_foreign_digits
from logparse.grammar.pyliteral import payload_shape
from logparse.grammar.sglang_line import LineParseError, batch_value, field_name, parse_line
from logparse.grammar.vllm_classify import classify_bare_vllm, classify_vllm, parse_vllm_failure, vllm_layers
from logparse.sglang_prefix import PREFIX_RE, STAMP_START_RE, prefix_fields
from logparse.sources.records import Record
from logparse.vllm_prefix import BARE_MESSAGE_RE

#: Substrings that mark a line we extract figures from (case-sensitive), in the order of
#: ``grammars/anchors.toml``.  A line with one of these must parse, or it is reported as a near miss.
ANCHORS: tuple[str, ...] = tuple(tables.table("anchors.toml")["sglang"])
_ANCHOR_RE = re.compile("|".join(re.escape(a) for a in ANCHORS))

# SGLang's own line prefix: PREFIX_RE (the fast path's form of the grammar's ``prefix`` rule,
# with the optional ``LEVEL file.py:N: ``) and STAMP_START_RE (where a prefix may begin inside
# a line) come from logparse.sglang_prefix; tests/test_prefix.py proves that the grammar, this
# fast path and the bulk path agree on every sample.
_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_WARNING_HEADER_RE = re.compile(r"^(?:\S.*?|)\.py:\d+: (?:\w+\.)*\w*Warning: ")
_EXCEPTION_LINE_RE = re.compile(r"^(?:[A-Za-z_]\w*\.)*\w*(?:Error|Exception|Exit|Interrupt|KeyboardInterrupt)(?::|$)")
#: A module-qualified exception class of any name ("triton.runtime.errors.OutOfResources: ..."):
#: the last line of a traceback, recognized only inside one.
_QUALIFIED_EXC_RE = re.compile(r"^(?:[a-z_]\w*\.)+[A-Z]\w*: ")
_TQDM_RE = re.compile(r"\d+%\|| \d+/\d+ \[\d|it/s\]|s/it\]|\[\d\d:\d\d<|% Completed \|")

#: Known noise: dicts of name, category, ``after_prefix``, ``re`` and a sample written by us, in the
#: order of ``grammars/noise.toml``.  A regexp is matched at the start of the line (after SGLang's
#: prefix when ``after_prefix`` is set).
NOISE: list[dict[str, Any]] = [dict(entry) for entry in tables.entries("noise.toml", "noise")]

#: A glog-format line of C++ code (PyTorch, NCCL, gRPC): ``W1129 08:17:30.618000 24008 path/file.py:183] msg``
#: (level I/W/E/F, month and day, time, thread id, file:line), optionally after torch's ``[rank0]:``:
#: the ``glog`` noise entry.  Written for Python's ``re`` and polars alike (no look-around): the bulk
#: path counts these lines too.
GLOG: str = next(entry["re"] for entry in NOISE if entry["name"] == "glog")
_NOISE_PREFIXED = re.compile("|".join(f"(?P<{n['name']}>{n['re']})" for n in NOISE if n["after_prefix"]))
_NOISE_BARE = re.compile("|".join(f"(?P<{n['name']}>{n['re']})" for n in NOISE if not n["after_prefix"]))
_NOISE_CATEGORY = {n["name"]: n["category"] for n in NOISE}

#: Kinds any program prints (an exception line, uvicorn's): a bare vLLM message read so by SGLang's grammar is vLLM's.
_GENERIC_SGLANG_KINDS = frozenset({"exception", "exception_start", "uvicorn", "killed"})

#: Bounded time per line: a ``server_args`` line (tens of KB in practice) may be this long;
#: any other line longer than ``MAX_GRAMMAR_LINE`` is kept as unrecognized without parsing.
MAX_LINE = 2_000_000
MAX_GRAMMAR_LINE = 65_536


def prefix_info(head: str) -> dict[str, Any]:
    """``[2026-11-29 08:09:19 DP0 TP1] `` -> the grammar's prefix dict (fast path)."""
    m = PREFIX_RE.match(head)
    return prefix_fields(m) if m is not None else {"stamp": None, "tags": []}


def fast_batch(text: str, start: int, prefix: dict[str, Any] | None = None) -> tuple | None:
    """``Decode batch``/``Prefill batch`` lines without lark: same result as the grammar, or None.

    ``start``: where the message begins (the end of ``PREFIX_RE``'s match); ``prefix``: the
    prefix dict of that match, when the caller has it.

    Runtime lines are most of a production log; this keeps them off the LALR parser.
    ``tests/test_fastpath.py`` checks that both agree.  Any shape it does not know
    (mixed-chunk header, the 0.4.9 ``full=N, swa=M`` items) falls back to the grammar.
    """
    if text.startswith("Decode batch", start):
        kind, rest = "decode_batch", text[start + 12 :]
    else:
        kind, rest = "prefill_batch", text[start + 13 :]
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


@dataclass(slots=True)
class Classified:
    status: str  # parsed | noise | unrecognized
    reason: str  # noise category, or why unrecognized, or the event kind
    parsed: Any = None  # (prefix, gpu, (kind, fields, form)) when parsed
    text: str = ""  # the text given to the grammar (cleaned)


def clean_text(text: str) -> tuple[str, list[str]]:
    """Remove terminal debris: ANSI codes, NULs, tqdm ``\\r`` updates, text glued in front."""
    notes: list[str] = []
    if "\x1b" in text:
        text = _ANSI_RE.sub("", text)
    if "\x00" in text:
        text = text.replace("\x00", "")
        notes.append("NUL bytes removed")
    if "\r" in text:
        segments = [s for s in text.split("\r") if s.strip()]
        chosen = None
        for seg in reversed(segments):
            m = STAMP_START_RE.search(seg)
            if m:
                chosen = seg[m.start() :]
                break
        text = chosen if chosen is not None else (segments[-1] if segments else "")
    elif text and text[0] != "[" and not text[0].isspace():
        m = STAMP_START_RE.search(text)
        if m and m.start() > 0 and PREFIX_RE.match(text, m.start()):
            notes.append(f"text before the log line ignored: {text[: m.start()][:60]!r}")
            text = text[m.start() :]
    return text.rstrip(), notes


#: A piece of a ``server_args`` payload: a dataclass field ``name=`` or a dict key ``'name': ``.
_PAYLOAD_FIELD_RE = re.compile(r"(?:^|[\s,(])[A-Za-z_]\w*=|'[A-Za-z_]\w*': ")
#: A piece of a payload without a field in it: the middle of a long list of numbers.
_PAYLOAD_BITS_RE = re.compile(r"[\d\s.,+eE\[\](){}-]*,[\d\s.,+eE\[\](){}-]*")
#: The kind of a line that continues a ``server_args`` line wrapped by a terminal or a paste.
SERVER_ARGS_CONTINUATION = "server_args_continuation"
#: How much of a wrapped payload is rejoined (the longest real ones are about 30 KB).
MAX_WRAPPED_PAYLOAD = 1_000_000


class LineClassifier:
    """Stateful classifier; one instance per input stream."""

    def __init__(self) -> None:
        # "traceback" | "warning" | "exception_tail" | "server_args" | None
        self.mode: str | None = None
        #: the payload of a server_args line whose brackets are still open (wrapped when pasted)
        self.payload: str | None = None

    def end_multiline(self) -> None:
        """A well-formed line arrived elsewhere: no traceback, warning or wrapped line continues."""
        self.mode = None
        self.payload = None

    def classify(self, rec: Record) -> Classified:
        if rec.marker:
            self.mode = None
            return Classified("noise", "journal_marker")
        if rec.text is None:
            return Classified("unrecognized", rec.problem or "text lost by the outer layer")
        raw = rec.text
        if len(raw) > MAX_LINE:
            self.mode = None
            return Classified("unrecognized", f"line of {len(raw)} characters is too long to parse", text=raw[:200])
        text, _notes = clean_text(raw)
        if not text.strip():
            return Classified("noise", "blank")
        vllm = vllm_layers(text)
        if vllm is not None:
            # vLLM's lines carry their own context (tags, rank prefix): no multi-line state.
            self.end_multiline()
            res = Classified(*classify_vllm(*vllm))
            nm = _NOISE_BARE.match(text) if res.reason == "vllm_other" else None
            return Classified("noise", _NOISE_CATEGORY[nm.lastgroup], text=text) if nm else res
        if self.mode == "server_args":
            cont = self._payload_continuation(text)
            if cont is not None:
                return cont
        elif self.mode is not None:
            cont = self._continuation(text)
            if cont is not None:
                return cont
        # A traceback frame is unmistakable even when another rank's line came in between
        # (TP ranks write to the same stream concurrently): it re-enters traceback mode.
        if text[0] == " " and text.lstrip().startswith('File "') and ", line " in text:
            self.mode = "traceback"
            return Classified("noise", "traceback")
        m = PREFIX_RE.match(text)
        if m is not None and text.startswith(("Decode batch", "Prefill batch"), m.end()):
            fast = fast_batch(text, m.end(), prefix_fields(m))
            if fast is not None:
                return Classified("parsed", fast[2][0], fast, text)
        if m is None and _WARNING_HEADER_RE.match(text):
            return self._warning(text)
        if m is None and BARE_MESSAGE_RE.match(text):
            bare = self._bare_vllm(text)
            if bare is not None:
                return bare
        if _ANCHOR_RE.search(text) or text == "Killed":
            return self._tracked(text, m)
        if m is None and _EXCEPTION_LINE_RE.match(text) and ": " in text:
            return self._parse(text, exception=True)
        return _untracked(text, m)

    def _bare_vllm(self, text: str) -> Classified | None:
        """A bare vLLM message (its prefix cut by a paste); None: not one (the SGLang rules go on).
        A line SGLang's grammar reads stays SGLang's, as before, unless it read only a generic event
        (an exception) that vLLM's grammar reads as one of vLLM's."""
        res = classify_bare_vllm(text)
        if res is None:
            return None
        if _ANCHOR_RE.search(text):
            sglang = self._parse(text)
            if sglang.status == "parsed" and (res[0] != "parsed" or sglang.reason not in _GENERIC_SGLANG_KINDS):
                return sglang
            self.mode = None  # an exception_start read by SGLang's grammar opened no traceback here
        return Classified(*res)

    def _continuation(self, text: str) -> Classified | None:
        """A line inside a multi-line record (a warning's source line, a traceback, the tail
        of an exception message); None when the record has ended (mode reset)."""
        first = text[0]
        if self.mode == "warning":
            if first.isspace():
                return Classified("noise", "python_warning")
            self.mode = None
            return None
        # traceback or exception_tail
        if first.isspace() or text.startswith(
            (
                "During handling of the above exception",
                "The above exception was the direct cause",
                "Traceback (most recent call last)",
            )
        ):
            self.mode = "traceback"
            return Classified("noise", "traceback")
        if _EXCEPTION_LINE_RE.match(text) or (self.mode == "traceback" and _QUALIFIED_EXC_RE.match(text)):
            self.mode = "exception_tail"
            return self._parse(text, exception=True)
        if self.mode == "exception_tail" and not PREFIX_RE.match(text) and _is_exception_tail(text):
            return Classified("noise", "traceback")
        self.mode = None
        return None

    def _payload_continuation(self, text: str) -> Classified | None:
        """The next piece of a ``server_args`` line a terminal or a paste wrapped: a line that is
        not a line of its own (no prefix, no known noise) and reads as the payload going on (a
        field, or the middle of a list, or the end that closes it).  None: the payload ends here
        (cut), and the line is classified as itself."""
        payload = self.payload or ""
        self.mode, self.payload = None, None
        if (
            PREFIX_RE.match(text)
            or STAMP_START_RE.match(text)
            or BARE_MESSAGE_RE.match(text)
            or text.lstrip().startswith(('File "', "Traceback (most recent call last)"))
            or _NOISE_BARE.match(text)
            or _TQDM_RE.search(text)
            or len(payload) + len(text) > MAX_WRAPPED_PAYLOAD
        ):
            return None
        joined = payload + text
        shape = payload_shape(joined)
        if shape.broken or (shape.closed and joined[shape.end :].strip()):
            return None
        if not (shape.closed or _PAYLOAD_FIELD_RE.search(text) or _PAYLOAD_BITS_RE.fullmatch(text)):
            return None
        if not shape.closed:
            self.mode, self.payload = "server_args", joined
        return Classified("parsed", SERVER_ARGS_CONTINUATION, None, text)

    def _warning(self, text: str) -> Classified:
        """``file.py:N: SomeWarning: message``: noise, unless the message is one we track."""
        self.mode = "warning"
        msg = text.split("Warning: ", 1)[1]
        if _ANCHOR_RE.search(msg):
            try:
                return Classified("parsed", "warning", parse_line(msg), msg)
            except LineParseError:
                pass
        return Classified("noise", "python_warning")

    def _tracked(self, text: str, m: re.Match | None) -> Classified:
        """A line that mentions something tracked: it must parse (else a near miss), unless
        it is an unprefixed progress bar or known noise."""
        if m is None and _TQDM_RE.search(text) and not text.startswith("[gpu"):
            return Classified("noise", "tqdm")
        result = self._parse(text)
        if result.status == "parsed" or m is not None:
            return result
        nm = _NOISE_BARE.match(text)
        return Classified("noise", _NOISE_CATEGORY[nm.lastgroup]) if nm else result

    def _parse(self, text: str, exception: bool = False) -> Classified:
        if len(text) > MAX_GRAMMAR_LINE and "server_args=" not in text[:300]:
            return Classified(
                "unrecognized",
                f"line of {len(text)} characters mentions a tracked message but is too long to be one",
                text=text[:MAX_GRAMMAR_LINE],
            )
        vllm = parse_vllm_failure(text) if exception else None
        if vllm is not None:
            return Classified("parsed", vllm[2][0], vllm, text)
        try:
            parsed = parse_line(text)
        except LineParseError as exc:
            if exception:
                return Classified("noise", "traceback", text=text)
            why = str(exc)
            if has_foreign_digits(text) and "another script" not in why:
                why += "; the line holds digits of another script than ASCII, which are not read as numbers"
            return Classified("unrecognized", f"near miss (SGLang may print a format we do not know): {why}", text=text)
        kind = parsed[2][0]
        if kind == "exception_start":
            self.mode = "traceback"
        elif kind == "server_args":
            payload = parsed[2][1].get("payload", "")
            shape = payload_shape(payload)
            if not shape.closed and not shape.broken and shape.opener is not None:
                self.mode, self.payload = "server_args", payload  # wrapped (or cut): may go on
        return Classified("parsed", kind, parsed, text)


def _untracked(text: str, m: re.Match | None) -> Classified:
    """A line that mentions nothing tracked: known noise, or unrecognized.  ``m``: its SGLang
    prefix (any prefixed line is SGLang's own, at worst ``sglang_other``)."""
    if m is not None:
        nm = _NOISE_PREFIXED.match(text, m.end())
        return Classified("noise", _NOISE_CATEGORY[nm.lastgroup] if nm else "sglang_other")
    nm = _NOISE_BARE.match(text)
    if nm:
        return Classified("noise", _NOISE_CATEGORY[nm.lastgroup])
    if _TQDM_RE.search(text):
        return Classified("noise", "tqdm")
    return Classified("unrecognized", "unknown line", text=text)


def _is_exception_tail(text: str) -> bool:
    """Lines that continue a multi-line exception message (e.g. CUDA graph capture's hints)."""
    return bool(
        re.match(
            r"(?:\d+\. |Possible solutions:|Open an issue on GitHub|If you need|Please |"
            r"Example: |Hint: |Note: |For (?:more|example)|See )",
            text,
        )
    )
