"""Line classification: every line is ``parsed``, known ``noise``, or ``unrecognized``.

A stream's classifier (:class:`LineClassifier`, one per input stream: host, unit, boot, pid) owns what
every Python program prints around an engine's lines (:mod:`logparse.grammar.noise`): tracebacks and
``warnings`` output span several physical lines, and their continuation lines belong to the record
that opened them.  The engines' own lines are read by each engine's classifier
(:class:`logparse.engines.base.Classifier`), asked in the registry's order at each step:

1. a line with an engine's own layers in front (vLLM's process tags and log prefix);
2. the next line of a multi-line record: a traceback, a warning, an engine's wrapped line;
3. a traceback frame;
4. a line with an engine's prefix that the engine reads quickly (SGLang's runtime lines);
5. a Python warning (its message read by an engine's grammar when it names an anchor);
6. a bare line an engine claims by its first words, against the engines that read it by their
   anchors (the strongest claim wins: :data:`logparse.engines.base.STRENGTH`);
7. a line that names an engine's anchor: it must parse, else it is a *near miss* (the engine may
   print a format variant we do not know yet);
8. an exception line (``SomeError: …``), read by the engine whose failure texts it carries;
9. anything else: an engine's own untracked line, known noise, or unrecognized.
"""

from __future__ import annotations

from typing import Any

from logparse import engines
from logparse.engines.base import Claim, Classifier
from logparse.grammar.noise import (
    ANSI_RE,
    EXCEPTION_LINE_RE,
    NOISE,
    QUALIFIED_EXC_RE,
    TQDM_RE,
    WARNING_HEADER_RE,
    bare_noise,
    is_exception_tail,
    is_traceback_frame,
    own_line,
)
from logparse.sources.records import Record

__all__ = ["MAX_LINE", "NOISE", "Classified", "LineClassifier", "clean_text", "engine_line"]

#: One line as classified (an engine's :class:`~logparse.engines.base.Claim`, or the stream's own).
Classified = Claim

#: Bounded time per line: a line longer than this is kept as unrecognized without parsing.
MAX_LINE = 2_000_000
#: An exception line longer than this is not read by any grammar.
MAX_EXCEPTION_LINE = 65_536


def _line_start(text: str, exact: bool) -> int | None:
    """Where one of an engine's lines begins inside a text (:func:`logparse.engines.claim`)."""
    found = engines.claim(text, exact=exact)
    return found[1] if found is not None else None


def engine_line(text: str | None) -> str | None:
    """The engine whose line (its whole prefix) is in ``text``, perhaps after text glued in front."""
    found = engines.claim(text, exact=True) if text else None
    return found[0].name if found is not None else None


def clean_text(text: str) -> tuple[str, list[str]]:
    """Remove terminal debris: ANSI codes, NULs, tqdm ``\\r`` updates, text glued in front."""
    notes: list[str] = []
    if "\x1b" in text:
        text = ANSI_RE.sub("", text)
    if "\x00" in text:
        text = text.replace("\x00", "")
        notes.append("NUL bytes removed")
    if "\r" in text:
        segments = [s for s in text.split("\r") if s.strip()]
        chosen = None
        for seg in reversed(segments):
            at = _line_start(seg, exact=False)
            if at is not None:
                chosen = seg[at:]
                break
        text = chosen if chosen is not None else (segments[-1] if segments else "")
    elif text and text[0] != "[" and not text[0].isspace():
        at = _line_start(text, exact=True)
        if at:
            notes.append(f"text before the log line ignored: {text[:at][:60]!r}")
            text = text[at:]
    return text.rstrip(), notes


def _noise(reason: str, text: str = "") -> Claim:
    return Claim("noise", reason, text=text)


class LineClassifier:
    """Stateful classifier; one instance per input stream."""

    def __init__(self) -> None:
        #: "traceback" | "warning" | "exception_tail" | None
        self.mode: str | None = None
        #: each engine's classifier for this stream, in the registry's order
        self.parts: list[Classifier] = [e.classifier() for e in engines.all()]

    @property
    def continuing(self) -> bool:
        """A wrapped line of an engine's is open: the next line may be its next piece."""
        return any(p.continuing for p in self.parts)

    def end_multiline(self) -> None:
        """A well-formed line arrived elsewhere: no traceback, warning or wrapped line continues."""
        self.mode = None
        for p in self.parts:
            p.reset()

    def classify(self, rec: Record) -> Claim:
        if rec.marker:
            self.mode = None
            return _noise("journal_marker")
        if rec.text is None:
            return Claim("unrecognized", rec.problem or "text lost by the outer layer")
        raw = rec.text
        if len(raw) > MAX_LINE:
            self.mode = None
            return Claim("unrecognized", f"line of {len(raw)} characters is too long to parse", text=raw[:200])
        text, _notes = clean_text(raw)
        if not text.strip():
            return _noise("blank")
        for part in self.parts:
            claim = part.layered(text)
            if claim is not None:  # an engine's layers carry their own context: no multi-line state
                self.end_multiline()
                return claim
        return self._unlayered(text)

    def _unlayered(self, text: str) -> Claim:
        went_on = self._went_on(text)
        if went_on is not None:
            return went_on
        if is_traceback_frame(text):  # re-enters a traceback even after another rank's line
            self.mode = "traceback"
            return _noise("traceback")
        owner, m = next(((p, m) for p in self.parts if (m := p.has_prefix(text)) is not None), (None, None))
        if owner is not None:
            quick = owner.prefixed(text, m)
            if quick is not None:
                return quick
        if owner is None and WARNING_HEADER_RE.match(text):
            return self._warning(text)
        if owner is None:
            bare = self._bare(text)
            if bare is not None:
                return bare
        for part in self.parts:
            claim = (
                self._chosen(part.tracked(text, m if part is owner else None), part) if part.anchored(text) else None
            )
            if claim is not None:
                return claim
        if owner is None and EXCEPTION_LINE_RE.match(text) and ": " in text:
            return self._exception(text)
        return self._untracked(text, owner, m)

    def _went_on(self, text: str) -> Claim | None:
        """The next line of a multi-line record open on the stream, or None (the record ended)."""
        wrapped = next((p for p in self.parts if p.continuing), None)
        if wrapped is not None:
            if any(p.starts_line(text) for p in self.parts) or own_line(text):
                wrapped.reset()  # a line of its own: the wrapped line was cut there
                return None
            return self._chosen(wrapped.continuation(text), wrapped)
        return self._continuation(text) if self.mode is not None else None

    def _chosen(self, claim: Claim | None, part: Classifier) -> Claim | None:
        """The claim of ``part`` taken: the record it opens is open now, the others' are closed."""
        if claim is None:
            return None
        for other in self.parts:
            if other is not part and other.continuing:
                other.reset()
        if claim.opens == "traceback":
            self.mode = "traceback"
        elif claim.opens == "continuation":
            self.mode = None
        return claim

    def _bare(self, text: str) -> Claim | None:
        """A bare line an engine claims by its first words, against the others' reading by their anchors:
        the strongest claim wins (the first engine on a tie)."""
        claims = [(c, p) for p in self.parts if (c := p.bare(text)) is not None]
        if not claims:
            return None
        claims += [(c, p) for p in self.parts if (c := p.contest(text)) is not None]
        claim, part = max(claims, key=lambda cp: cp[0].strength)  # max keeps the first of equals
        if claim.opens is None:
            self.mode = None
        return self._chosen(claim, part)

    def _continuation(self, text: str) -> Claim | None:
        """A line inside a multi-line record (a warning's source line, a traceback, the tail of an
        exception message); None when the record has ended (mode reset)."""
        first = text[0]
        if self.mode == "warning":
            if first.isspace():
                return _noise("python_warning")
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
            return _noise("traceback")
        if EXCEPTION_LINE_RE.match(text) or (self.mode == "traceback" and QUALIFIED_EXC_RE.match(text)):
            self.mode = "exception_tail"
            return self._exception(text)
        if self.mode == "exception_tail" and not self._prefixed(text) and is_exception_tail(text):
            return _noise("traceback")
        self.mode = None
        return None

    def _prefixed(self, text: str) -> bool:
        return any(p.has_prefix(text) is not None for p in self.parts)

    def _warning(self, text: str) -> Claim:
        """``file.py:N: SomeWarning: message``: noise, unless the message is one we track."""
        self.mode = "warning"
        msg = text.split("Warning: ", 1)[1]
        for part in self.parts:
            parsed = part.message(msg)
            if parsed is not None:
                return Claim("parsed", "warning", parsed, msg, engine=part.engine)
        return _noise("python_warning")

    def _exception(self, text: str) -> Claim:
        """An exception line: the strongest engine's reading of it, else a traceback's noise."""
        if len(text) > MAX_EXCEPTION_LINE:
            return Claim(
                "unrecognized",
                f"line of {len(text)} characters mentions a tracked message but is too long to be one",
                text=text[:MAX_EXCEPTION_LINE],
            )
        claims = [(c, p) for p in self.parts if (c := p.exception(text)) is not None]
        if not claims:
            return _noise("traceback", text)
        claim, part = max(claims, key=lambda cp: cp[0].strength)
        return self._chosen(claim, part) or claim

    def _untracked(self, text: str, owner: Classifier | None, m: Any) -> Claim:
        """A line that mentions nothing tracked: an engine's own line (its prefix), known noise, or
        unrecognized."""
        if owner is not None:
            own = owner.untracked(text, m)
            if own is not None:
                return own
        noise = bare_noise(text)
        if noise:
            return _noise(noise)
        if TQDM_RE.search(text):
            return _noise("tqdm")
        return Claim("unrecognized", "unknown line", text=text)
