"""The event kinds every engine's grammar emits alike: what any Python program prints.

An engine's own kinds are declared by the engine (``Engine.event_kinds()``); these are nobody's, so a line of
one of them is no evidence of which engine printed it (:mod:`logparse.pipeline` routes it to the
engine its stream printed last).
"""

from __future__ import annotations

#: An exception's last line, a ``Traceback`` header, uvicorn's own lines, the shell's ``Killed``.
EXCEPTION = "exception"
EXCEPTION_START = "exception_start"
UVICORN = "uvicorn"
KILLED = "killed"

#: Kinds any Python program prints: not evidence of an engine.
GENERIC_KINDS = frozenset({UVICORN, EXCEPTION, EXCEPTION_START, KILLED})
