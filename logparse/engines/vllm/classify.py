"""Classifying vLLM lines: parsed, known noise, or a near miss.

A line is vLLM's when vLLM's layers stand in front of its message (:mod:`logparse.engines.vllm.prefix`):
a process tag ``(Worker_TP1 pid=77)``, torch's ``[rank0]:``, or vLLM's log prefix
``INFO 06-11 10:04:31 [file.py:N]``.  Every such line carries its own context, so unlike SGLang's
bare tracebacks no state is kept: a tagged traceback frame is noise by its own shape.

A bare message (the prefix cut: a paste from a notebook, a trimmed log) is vLLM's when it starts with
one of vLLM's own first words (:data:`logparse.engines.vllm.prefix.BARE_MESSAGE_STARTS`, and its runtime
lines' start from their spec, :data:`BARE_MESSAGE_RE`): :func:`classify_bare_vllm`.

Only lines that mention a vLLM anchor (:data:`VLLM_ANCHORS`) reach the vLLM grammar; one that then
does not parse is a near miss (vLLM may print a wording we do not know).  Bare lines (no layer) stay
with the SGLang classifier; bare exception lines with a vLLM failure text are retried here
(:func:`parse_vllm_failure`), because an uncaught exception is printed by Python, not by vLLM.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any, NamedTuple

from logparse.data import tables
from logparse.engines.base import STRENGTH, Claim
from logparse.engines.vllm.line import VllmLineParseError, parse_line
from logparse.engines.vllm.prefix import LOG_PREFIX_SEARCH_RE, bare_message, split_head
from logparse.grammar import runtime_decoder
from logparse.grammar.noise import bare_noise

#: Substrings of the vLLM lines we extract figures or an outcome from (case-sensitive), in the
#: order of ``grammars/<engine>/anchors.toml``.
VLLM_ANCHORS: tuple[str, ...] = tuple(tables.table("vllm/anchors.toml")["anchors"])
#: A bare vLLM message at the start of a text (the same pattern the engine gives the sources stage,
#: :meth:`logparse.engines.vllm.VLLM.line_start_patterns`).
BARE_MESSAGE_RE = re.compile(bare_message(runtime_decoder.family_starts("vllm")))


class _Patterns(NamedTuple):
    """The patterns of vLLM's messages, compiled on the first line that needs them (~3 ms of an
    import, which a log without vLLM lines never needs)."""

    anchor: re.Pattern[str]
    #: the failure texts of catalogue §2.7 that an uncaught exception (a bare line) may carry
    failure: re.Pattern[str]
    exception: re.Pattern[str]
    #: a line of a traceback (frames, source lines, carets); the logo's art lines also start with spaces
    traceback: re.Pattern[str]
    tqdm: re.Pattern[str]
    #: Uvicorn's own lines that a stream wrapper tagged (access lines are noise)
    uvicorn: re.Pattern[str]


@cache
def _patterns() -> _Patterns:
    return _Patterns(
        anchor=re.compile("|".join(re.escape(a) for a in VLLM_ANCHORS)),
        failure=re.compile(
            r"No available memory for the cache blocks|max seq len \(|Free memory on device"
            r"|Failed to load model - not enough"
            r"|Error in memory profiling|Engine core initialization failed|EngineCore failed to start"
            r"|multimodal GPU decoding|Externally held weights"
        ),
        exception=re.compile(r"(?:[A-Za-z_]\w*\.)*\w*(?:Error|Exception)(?::|$)"),
        traceback=re.compile(
            r"\s*File \"|\s+[\w^~(\[{\"'@.]|During handling of the above exception"
            r"|The above exception was the direct cause"
        ),
        tqdm=re.compile(r"\d+%\||% Completed \|| \d+/\d+ \[\d\d:"),
        uvicorn=re.compile(r"(?:INFO|WARNING|ERROR|DEBUG|CRITICAL|TRACE):\s+"),
    )


#: Where a line of vLLM's layers may start: a tag, a rank prefix or a log level.
_LAYER_START = ("(", "[rank", "DEBUG ", "INFO ", "WARNING ", "ERROR ", "CRITICAL ")

#: ANSI colour codes whose ESC byte a copy/paste dropped (``[1;36m(VllmWorkerProcess pid=7)[0;0m INFO …``).
_COLOUR_DEBRIS_RE = re.compile(r"\[[0-9;]*m")

#: Ray's deduplication count at the end of a line it relayed.
_RAY_REPEATED_RE = re.compile(r" \[repeated \d+x across cluster\]$")

Result = tuple[str, str, Any, str]  # (status, reason, parsed, text)


def vllm_layers(text: str) -> tuple[str, int] | None:
    """``(text, message start)`` when vLLM's layers stand in front of the message, else None.

    Text glued in front of vLLM's log prefix (``VLLM_LOGGING_PREFIX``, a paste's line label) is cut,
    and so is the debris of colour codes whose ESC byte was lost."""
    if text.startswith("[") and _COLOUR_DEBRIS_RE.match(text):
        text = _COLOUR_DEBRIS_RE.sub("", text)
    if text.endswith("across cluster]"):
        text = _RAY_REPEATED_RE.sub("", text)
    head = text.lstrip() if text[:1].isspace() else text  # a paste indented as a code block
    if head.startswith(_LAYER_START):
        tags, rank, lp, end = split_head(head)
        if tags or rank is not None or lp is not None:
            return head, end
    m = LOG_PREFIX_SEARCH_RE.search(text)
    if m is not None and m.start() > 0 and not text.startswith("["):
        glued = text[m.start() :]
        tags, rank, lp, end = split_head(glued)
        if lp is not None:
            return glued, end
    return None


def classify_vllm(text: str, start: int) -> Result:
    """A line with vLLM's layers (``start``: where its message begins)."""
    msg = text[start:]
    if not msg.strip():
        return ("noise", "vllm_other", None, text)
    patterns = _patterns()
    if patterns.traceback.match(msg):
        return ("noise", "traceback", None, text)
    anchored = patterns.anchor.search(msg) is not None
    if not anchored and patterns.exception.match(msg) is None:
        if patterns.tqdm.search(msg):
            return ("noise", "tqdm", None, text)
        if patterns.uvicorn.match(msg):
            return ("noise", "uvicorn_access" if ' - "' in msg else "uvicorn", None, text)
        return ("noise", "vllm_other", None, text)
    try:
        parsed = parse_line(text)
    except VllmLineParseError as exc:
        if not anchored:
            return ("noise", "traceback", None, text)
        return ("unrecognized", f"near miss (vLLM may print a format we do not know): {exc}", None, text)
    kind = parsed[2][0]
    if kind == "uvicorn" and parsed[2][2] == "other":
        return ("noise", "uvicorn", None, text)
    return ("parsed", kind, parsed, text)


def parse_vllm_failure(text: str) -> tuple | None:
    """A bare exception line with a vLLM failure text (catalogue §2.7) as a vLLM event, else None."""
    if _patterns().failure.search(text) is None:
        return None
    try:
        parsed = parse_line(text)
    except VllmLineParseError:
        return None
    return parsed if parsed[2][0].startswith("vllm_") else None


def classify_bare_vllm(text: str) -> Result | None:
    """A line without any prefix that starts as a vLLM message does: parsed by the vLLM grammar (its
    head is all optional), else a near miss when it names an anchor (as a prefixed line would be); None
    when it does not start so, or does not parse and is a weak start (a route, the runner's name) or
    names no anchor: such a line is no evidence and stays generic."""
    m = BARE_MESSAGE_RE.match(text)
    if m is None:
        return None
    try:
        parsed = parse_line(text.lstrip(" \t"))
    except VllmLineParseError as exc:
        if m.group("weak") is not None or _patterns().anchor.search(text) is None:
            return None
        return ("unrecognized", f"near miss (vLLM may print a format we do not know): {exc}", None, text)
    return ("parsed", parsed[2][0], parsed, text)


def _claim(res: Result, strength: int = 0) -> Claim:
    status, reason, parsed, text = res
    return Claim(status, reason, parsed, text, strength, "vllm")


class VllmClassifier:
    """vLLM's steps of a stream's classification (see :class:`logparse.engines.base.Classifier`): its
    layered lines carry their own context, so it keeps no state."""

    engine = "vllm"
    continuing = False

    def reset(self) -> None:
        pass

    def line_start(self, text: str, exact: bool) -> None:
        return None  # text glued in front of vLLM's layers is cut where they are read (vllm_layers)

    def layered(self, text: str) -> Claim | None:
        """A line with vLLM's layers in front: parsed, a near miss, or noise (known noise of any program
        after the layers of a line vLLM does not track)."""
        vllm = vllm_layers(text)
        if vllm is None:
            return None
        res = classify_vllm(*vllm)
        noise = bare_noise(text) if res[1] == "vllm_other" else None
        return Claim("noise", noise, None, text, 0, "vllm") if noise else _claim(res)

    def has_prefix(self, text: str) -> None:
        return None  # a line with vLLM's layers was read first (layered)

    def starts_line(self, text: str) -> bool:
        return BARE_MESSAGE_RE.match(text) is not None

    def continuation(self, text: str) -> None:
        return None

    def prefixed(self, text: str, m: Any) -> None:
        return None

    def bare(self, text: str) -> Claim | None:
        """A bare line that starts as a vLLM message does (:func:`classify_bare_vllm`)."""
        res = classify_bare_vllm(text)
        if res is None:
            return None
        return _claim(res, STRENGTH["own_words" if res[0] == "parsed" else "near_miss_own_words"])

    def contest(self, text: str) -> None:
        return None

    def anchored(self, text: str) -> bool:
        return False  # a bare line names vLLM by its first words (bare), not by its anchors alone

    def tracked(self, text: str, m: Any) -> None:
        return None

    def message(self, msg: str) -> None:
        return None

    def exception(self, text: str) -> Claim | None:
        """A bare exception line with one of vLLM's failure texts (catalogue §2.7)."""
        parsed = parse_vllm_failure(text)
        return None if parsed is None else Claim("parsed", parsed[2][0], parsed, text, STRENGTH["own_kind"], "vllm")

    def untracked(self, text: str, m: Any) -> None:
        return None
