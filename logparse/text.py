"""Two rules for text: what is stored is valid Unicode, and what is printed cannot drive a terminal.

**Valid text.**  A lone surrogate (a code point U+D800-U+DFFF on its own) is not text: UTF-8 cannot
encode it, so DuckDB, Arrow, polars and ``sys.stdout`` all refuse it.  It reaches logparse two ways,
and both keep what the log or the system said, as the six characters Python prints for it
(``\\udce9``):

* **As an escape in a log line.**  Python prints a file name its file system could not decode
  (bytes ``caf\\xe9`` read with ``surrogateescape``) as ``'/models/caf\\udce9'`` in a repr, and
  SGLang's ``server_args=`` line is such a repr.  :mod:`logparse.grammar.pyliteral` reads every
  other escape back to its character, but a ``\\udXXX`` escape that names a lone surrogate (and a
  ``\\U`` escape beyond U+10FFFF) stays as written: the value is the text the log printed.
* **As a code point in a ``str``.**  Names the operating system gives (a path on the command
  line, a file met in a directory walk: ``surrogateescape`` decoded) and strings handed to the
  Python API pass :func:`valid_text` where they enter: the name of a
  :class:`logparse.sources.Source` (what every launch, warning and ``sources`` row calls its
  input; the file is still opened by its own name), :func:`logparse.sources.text_source`'s text,
  and the ``--host`` and ``--label`` of an ingest (:class:`logparse.store.ingest_types.IngestOptions`).
  Each lone surrogate becomes its escape: the same text as the first way, so a path reads the same
  whether it came in a log line or on the command line.

Bytes that are not UTF-8 (a log line, a journal field) are decoded with U+FFFD for the bad bytes,
as the sources always did; no byte sequence decodes to a lone surrogate.

**Terminal text.**  Control characters (NUL, ESC, C1) are valid text: they are stored as they are,
and JSON, CSV and Parquet output keep them exact (JSON writes them as ``\\u001b``).  On a terminal
they are data, never commands: a model path holding ``\\x1b]0;...\\x07`` (set the window title),
``\\x1b[2J`` (clear the screen), a C1 ``\\x9b`` or a bidi override (U+202E: what follows shows
backwards) would act on the terminal if printed as is.  :func:`terminal_text` shows each such
character as its Python escape (``\\x1b``, ``\\u202e``); every table and text the CLI prints goes
through it (:mod:`logparse.cli.cells`), and rich's markup and emoji codes are off on every console,
so a ``[bold]`` in a path is text.  ``NO_COLOR`` (https://no-color.org: set and not empty) means no
styling at all on every console, neither colour nor bold, dim or italic (:func:`console_style`).  (A backslash is not escaped: a path holding the four characters
``\\x1b`` shows as one holding an ESC; the JSON output tells them apart.)  Where a value cannot hold
a character at all, the rule is said there: an environment variable cannot hold a NUL
(``watch --exec``).
"""

from __future__ import annotations

import os
import re
from typing import Any

#: A lone surrogate code point (a Python ``str`` may hold one; UTF-8 cannot).
SURROGATE_RE = re.compile("[\\ud800-\\udfff]")

#: What a terminal acts on instead of showing: C0 controls (tab and newline too: a cell is one
#: line), DEL, C1 controls, the bidi controls (U+061C, U+200E/F, U+202A-E, U+2066-9), the line and
#: paragraph separators, and lone surrogates (which valid text never holds).
UNSAFE_FOR_TERMINAL = re.compile(
    "[\\x00-\\x1f\\x7f-\\x9f\\u061c\\u200e\\u200f\\u2028-\\u202e\\u2066-\\u2069\\ud800-\\udfff]"
)
_NAMED_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def valid_text(text: str) -> str:
    """``text`` with each lone surrogate written as Python's ``\\udXXX`` escape (the rule above)."""
    if text.isascii() or SURROGATE_RE.search(text) is None:
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def terminal_text(text: str) -> str:
    """``text`` safe to print on a terminal: each control character shown as its escape (``\\x1b``)."""
    if text.isascii() and text.isprintable():
        return text
    return UNSAFE_FOR_TERMINAL.sub(_escape, text)


def _escape(m: re.Match) -> str:
    c = m.group()
    named = _NAMED_ESCAPES.get(c)
    if named is not None:
        return named
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def console_style() -> dict[str, Any]:
    """Options for every rich console logparse makes: with ``NO_COLOR`` set (and not empty) no
    ANSI styles at all.  rich itself drops only the colours and still sends bold, dim and italic."""
    return {"color_system": None} if os.environ.get("NO_COLOR") else {}
