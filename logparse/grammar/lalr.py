"""Building the LALR parsers of the ``.lark`` grammars (``grammars/`` at the top, package ``logparse.grammars``).

Each grammar module (:mod:`~logparse.engines.sglang.line`, :mod:`~logparse.grammar.pyliteral`)
builds its parser once per process through :func:`build_parser`.  Building the LALR tables
takes about half a second and loading them about 20 ms, so lark keeps them on disk
(:func:`table_cache_path`), keyed by the grammar text and the lark version: an edited
grammar is rebuilt.
"""

from __future__ import annotations

import hashlib
import os
from importlib import resources
from typing import Any

import lark
from lark import Lark

from logparse.data.tables import cache_folder


def grammar_text(filename: str) -> str:
    """The text of one of logparse's grammar files, e.g. ``sglang/line.lark`` (an engine's in its folder)."""
    return resources.files("logparse.grammars").joinpath(*filename.split("/")).read_text()


def table_cache_path(grammar_name: str) -> str:
    """Where lark keeps the LALR tables of ``<grammar_name>.lark``."""
    text = grammar_text(f"{grammar_name}.lark")
    digest = hashlib.sha256((text + lark.__version__).encode()).hexdigest()[:16]
    return os.path.join(cache_folder(), f"lark-{grammar_name.replace('/', '-')}-{digest}.pickle")


def build_parser(grammar_name: str, **options: Any) -> Lark:
    """An LALR parser with the contextual lexer for ``<grammar_name>.lark``; ``options`` go to :class:`Lark`."""
    # lark checks a cached table against a hash of the options in the order given: keep ``cache`` last.
    return Lark(
        grammar_text(f"{grammar_name}.lark"),
        parser="lalr",
        lexer="contextual",
        maybe_placeholders=False,
        **options,
        cache=table_cache_path(grammar_name),
    )


def first_line_of(exc: Exception) -> str:
    """lark's error messages run over several lines (context, expected tokens): keep the first, shortened.

    An unexpected token's first line is written here as lark writes it: its message would first
    work out every token the parser accepts there (a copy of the parser per terminal, ~4 ms a line,
    most of the time of the lines the grammar refuses)."""
    if isinstance(exc, lark.exceptions.UnexpectedToken):
        return f"Unexpected token {exc.token!r} at line {exc.line}, column {exc.column}."[:200]
    lines = str(exc).strip().splitlines()
    return lines[0][:200] if lines else exc.__class__.__name__
