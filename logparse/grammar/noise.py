"""What every Python program prints around an engine's lines: known noise, tracebacks, warnings,
progress bars.  No engine's own; every engine's classifier and the stream's classifier
(:mod:`logparse.grammar.classify`) read these.

Known noise is data (``grammars/noise.toml``): dicts of name, category, ``after_prefix``, ``re`` and a
sample written by us.  A regexp is matched at the start of the line (after an engine's prefix when
``after_prefix`` is set).
"""

from __future__ import annotations

import re
from typing import Any

from logparse.data import tables

#: Known noise in the order of ``grammars/noise.toml``.
NOISE: list[dict[str, Any]] = [dict(entry) for entry in tables.entries("noise.toml", "noise")]

#: A glog-format line of C++ code (PyTorch, NCCL, gRPC): ``W1129 08:17:30.618000 24008 path/file.py:183] msg``
#: (level I/W/E/F, month and day, time, thread id, file:line), optionally after torch's ``[rank0]:``:
#: the ``glog`` noise entry.  Written for Python's ``re`` and polars alike (no look-around): the bulk
#: path counts these lines too.
GLOG: str = next(entry["re"] for entry in NOISE if entry["name"] == "glog")
#: Noise after an engine's prefix, and noise at the start of a bare line.
NOISE_PREFIXED = re.compile("|".join(f"(?P<{n['name']}>{n['re']})" for n in NOISE if n["after_prefix"]))
NOISE_BARE = re.compile("|".join(f"(?P<{n['name']}>{n['re']})" for n in NOISE if not n["after_prefix"]))
NOISE_CATEGORY: dict[str, str] = {n["name"]: n["category"] for n in NOISE}

ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
#: ``file.py:N: SomeWarning: message``: Python's ``warnings`` output.
WARNING_HEADER_RE = re.compile(r"^(?:\S.*?|)\.py:\d+: (?:\w+\.)*\w*Warning: ")
EXCEPTION_LINE_RE = re.compile(r"^(?:[A-Za-z_]\w*\.)*\w*(?:Error|Exception|Exit|Interrupt|KeyboardInterrupt)(?::|$)")
#: A module-qualified exception class of any name ("triton.runtime.errors.OutOfResources: ..."):
#: the last line of a traceback, recognized only inside one.
QUALIFIED_EXC_RE = re.compile(r"^(?:[a-z_]\w*\.)+[A-Z]\w*: ")
TQDM_RE = re.compile(r"\d+%\|| \d+/\d+ \[\d|it/s\]|s/it\]|\[\d\d:\d\d<|% Completed \|")
_EXCEPTION_TAIL_RE = re.compile(
    r"(?:\d+\. |Possible solutions:|Open an issue on GitHub|If you need|Please |"
    r"Example: |Hint: |Note: |For (?:more|example)|See )"
)


def bare_noise(text: str) -> str | None:
    """The category of a known noise line without any prefix, else None."""
    m = NOISE_BARE.match(text)
    return NOISE_CATEGORY[m.lastgroup] if m is not None and m.lastgroup else None


def prefixed_noise(text: str, start: int) -> str | None:
    """The category of known noise after an engine's prefix (the message starts at ``start``), else None."""
    m = NOISE_PREFIXED.match(text, start)
    return NOISE_CATEGORY[m.lastgroup] if m is not None and m.lastgroup else None


def is_exception_tail(text: str) -> bool:
    """Lines that continue a multi-line exception message (e.g. CUDA graph capture's hints)."""
    return bool(_EXCEPTION_TAIL_RE.match(text))


def is_traceback_frame(text: str) -> bool:
    """``  File "x.py", line 3, in f``: unmistakable even when another rank's line came in between."""
    return text[0] == " " and text.lstrip().startswith('File "') and ", line " in text


def own_line(text: str) -> bool:
    """A line that is a line of its own, not the next piece of a wrapped one: a traceback's start, known
    noise, a progress bar."""
    return bool(
        text.lstrip().startswith(('File "', "Traceback (most recent call last)"))
        or NOISE_BARE.match(text)
        or TQDM_RE.search(text)
    )
