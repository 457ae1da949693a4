"""Command line: a thin layer over the library.

Exit codes (documented in the README): 0 ok, 1 a regression or problem found,
2 a usage or input error, 3 a store error, 4 a query stopped at its time limit, 5 a query
stopped at its memory limit.

Command modules register themselves on :data:`app`; heavy libraries (lark, polars,
duckdb, cairosvg) are imported inside the commands so that ``logparse --help``
stays fast.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    name="logparse",
    help="Parse SGLang and vLLM startup logs into launches, keep their history, and explain KV-cache "
    "capacity: explain (why this many KV tokens), diff (what changed between two launches), check (gate an "
    "upgrade), plan (what a launch will get), query (SQL over the history).",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, PowerShell)
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

EXIT_OK, EXIT_PROBLEM, EXIT_USAGE, EXIT_STORE = 0, 1, 2, 3
#: ``query`` past its bounds (``--timeout``, ``--memory-limit``).
EXIT_TIMEOUT, EXIT_TOO_BIG = 4, 5

#: Whether the running command leaves nothing to Python's teardown (see :func:`allow_quick_exit`).
_quick_exit = False


def allow_quick_exit() -> None:
    """The running command only reads, and holds nothing that needs Python's teardown once its
    output is written (its store connection is closed before it returns): ``logparse.cli.main``
    may end the process at once.  Freeing DuckDB's and rich's modules at exit costs ~20 ms, a
    sixth of a read command's own time."""
    global _quick_exit
    _quick_exit = True


def quick_exit_allowed() -> bool:
    return _quick_exit


def say(message: str) -> None:
    """A line on stderr; what it quotes of the input (a file name, a warning) shown as text, never
    as terminal commands (:func:`logparse.text.terminal_text`)."""
    from logparse.text import terminal_text

    typer.echo(terminal_text(message), err=True)


def fail(message: str, code: int = EXIT_USAGE) -> typer.Exit:
    """One clear line on stderr, then the documented exit code."""
    say(f"logparse: {message}")
    return typer.Exit(code)


@app.callback(invoke_without_command=True)
def _main(
    ctx: typer.Context,
    version: bool = typer.Option(False, "-V", "--version", help="Print the version and exit.", is_eager=True),
) -> None:
    if version:
        from logparse import __version__

        typer.echo(f"logparse {__version__}")
        raise typer.Exit(0)
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())
        raise typer.Exit(EXIT_USAGE)
