"""Long output on a terminal through a pager, as git does it.

The pager is ``$LOGPARSE_PAGER``, else ``$PAGER``, else ``less``; an empty value or ``cat`` means
none.  ``less`` gets ``LESS=FRX`` unless ``$LESS`` is set (``-F``: quit when the text fits one
screen, ``-R``: show colours, ``-X``: leave the text on the screen), ``lv`` gets ``LV=-c``.  Output
that fits the terminal's height, output to a pipe or a file, and ``--no-pager`` skip it.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from typing import IO


def pager_command() -> list[str] | None:
    raw = os.environ.get("LOGPARSE_PAGER")
    if raw is None:
        raw = os.environ.get("PAGER", "less")
    try:
        cmd = shlex.split(raw)
    except ValueError:
        return None
    if not cmd or cmd == ["cat"]:
        return None
    return cmd


def wants_pager(stream: IO[str] | None = None) -> bool:
    """stdout is a terminal and a pager is configured."""
    stream = stream or sys.stdout
    try:
        tty = stream.isatty()
    except (ValueError, AttributeError):
        return False
    return tty and pager_command() is not None


def terminal_rows(stream: IO[str] | None = None) -> int:
    stream = stream or sys.stdout
    lines = os.environ.get("LINES", "").strip()
    if lines.isdigit() and int(lines) > 0:
        return int(lines)
    try:
        return os.get_terminal_size(stream.fileno()).lines
    except (OSError, ValueError, AttributeError):
        return 24


def page(text: str, stream: IO[str] | None = None) -> None:
    """``text`` on ``stream`` (stdout), through the pager when it is taller than the terminal."""
    stream = stream or sys.stdout
    cmd = pager_command()
    if cmd is None or text.count("\n") < terminal_rows(stream):
        stream.write(text)
        return
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    env.setdefault("LV", "-c")
    stream.flush()
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, env=env)
    except OSError:  # the pager is not installed: the text as it is
        stream.write(text)
        return
    assert proc.stdin is not None
    try:
        proc.stdin.write(text.encode(getattr(stream, "encoding", None) or "utf-8", errors="replace"))
        proc.stdin.close()
    except (BrokenPipeError, KeyboardInterrupt):  # the reader quit the pager early
        pass
    try:
        proc.wait()
    except KeyboardInterrupt:
        proc.wait()
