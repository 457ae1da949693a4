"""Command line: a thin layer over the library.

``app`` (:mod:`logparse.cli.app`) holds the typer application and the exit codes; each
command module registers its commands on it when imported here.  Heavy libraries (lark,
polars, duckdb, matplotlib) are imported inside the commands so that ``logparse --help``
stays fast.
"""

from __future__ import annotations

import sys

import typer

from logparse.cli import parse_cmd, report_cmds, store_cmds  # noqa: F401  (they register commands)
from logparse.cli.app import app

__all__ = ["app", "main"]


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        typer.echo("logparse: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
