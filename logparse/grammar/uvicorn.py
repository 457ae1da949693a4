"""Uvicorn's own lines, which every engine's API server prints through its logger (``INFO:     Started
server process [N]``): the messages both engines' grammars read alike (rule ``uvicorn_msg``), built once.
An engine's Transformer takes :class:`UvicornLines` among its builders and keeps its own ``uvicorn``
method (where the line goes: the engine's layers differ)."""

from __future__ import annotations

from typing import Any

from logparse.grammar.bounds import as_int, ascii_number


class UvicornLines:
    """The builders of uvicorn's messages: ``(form, fields)`` for the engine's ``uvicorn`` rule."""

    def uvicorn_started(self, c: list[Any]) -> tuple[str, dict[str, Any]]:
        return ("started", {"pid": as_int(ascii_number(str(c[0])))})

    def uvicorn_running(self, c: list[Any]) -> tuple[str, dict[str, Any]]:
        return ("running", {"url": str(c[0])})

    def uvicorn_startup_complete(self, c: list[Any]) -> tuple[str, dict[str, Any]]:
        return ("startup_complete", {})

    def uvicorn_other(self, c: list[Any]) -> tuple[str, dict[str, Any]]:
        return ("other", {"text": str(c[0])})
