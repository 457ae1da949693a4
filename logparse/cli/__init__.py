"""Command line: a thin layer over the library.

``app`` (:mod:`logparse.cli.app`) holds the typer application and the exit codes; each
command module registers its commands on it when imported here.  Heavy libraries (lark,
polars, duckdb, cairosvg) are imported inside the commands so that ``logparse --help``
stays fast.  ``logparse CMD`` imports only the module of CMD (:data:`COMMAND_MODULES`); help,
completion, an unknown name and ``logparse.cli.app`` (the application for tests and the library)
import them all.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys

import typer

from logparse.cli import app as _app_module
from logparse.cli.app import quick_exit_allowed

__all__ = ["app", "main"]

# Importing the submodule bound its name here; ``logparse.cli.app`` is the whole application (see
# :func:`__getattr__`), the submodule stays ``sys.modules["logparse.cli.app"]``.
del globals()["app"]

#: The module that registers each command, in the order of the help's list of commands.
COMMAND_MODULES = {
    "parse": "parse_cmd",
    "ingest": "ingest_cmd",
    "launches": "launches_cmd",
    "show": "show_cmd",
    "history": "history_cmd",
    **dict.fromkeys(("query", "export", "doctor"), "store_cmds"),
    **dict.fromkeys(("explain", "diff", "check", "report"), "report_cmds"),
    "plan": "plan_cmd",
    "systemd-units": "systemd_cmd",
    **dict.fromkeys(("watch", "metrics"), "watch_cmd"),
}
_registered: set[str] = set()


def register_commands(command: str | None = None) -> typer.Typer:
    """Import the module of ``command`` (it registers its commands), or all of them for None or a
    name no module has; the application, ready to run."""
    wanted = COMMAND_MODULES.get(command or "")
    for module in dict.fromkeys(COMMAND_MODULES.values()):
        if module not in _registered and wanted in (None, module):
            importlib.import_module(f"logparse.cli.{module}")
            _registered.add(module)
    _name_metavars(_app_module.app)
    from logparse.cli.options import add_value_completion

    add_value_completion(_app_module.app)
    return _app_module.app


def __getattr__(name: str) -> typer.Typer:
    if name == "app":
        return register_commands()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _command_name(argv: list[str]) -> str | None:
    """The command ``argv`` runs (its first word that is not an option), None for help or
    completion."""
    if "_LOGPARSE_COMPLETE" in os.environ:
        return None
    return next((a for a in argv if not a.startswith("-")), None)


def _name_metavars(typer_app: typer.Typer) -> None:
    """Help shows ``--since SINCE``, not ``--since <str>``: every option that takes a value is named."""
    import inspect

    from typer.models import ArgumentInfo, OptionInfo

    for command in typer_app.registered_commands:
        if command.callback is None:
            continue
        for param in inspect.signature(command.callback).parameters.values():
            info = param.default
            if isinstance(info, ArgumentInfo) and info.metavar is None:
                info.metavar = param.name.upper().rstrip("S")
                if "list[" in str(param.annotation):  # several values: ``[PATH]...`` as click's own usage says
                    info.metavar = f"[{info.metavar}]..." if info.default is None else f"{info.metavar}..."
                continue
            if not isinstance(info, OptionInfo) or info.metavar is not None or isinstance(info.default, bool):
                continue
            longs = [d for d in info.param_decls or () if d.startswith("--")]
            info.metavar = (longs[0][2:] if longs else param.name).upper().replace("-", "_")


def _argument_without_type(self, ctx) -> None:
    """Typer prints an argument's Python type after its name (``LAUNCH <str>``); the name says it."""
    return None


if hasattr(typer.core.TyperArgument, "display_type_rich"):  # typer 0.29 (older ones print no type)
    setattr(typer.core.TyperArgument, "display_type_rich", _argument_without_type)  # noqa: B010


def main() -> None:
    from logparse.files import private_umask

    private_umask()  # stores, exports and reports are their owner's only (logparse.files)
    app = register_commands(_command_name(sys.argv[1:]))
    try:
        app(prog_name="logparse")  # also under `python -m logparse`: one name, one completion variable
    except KeyboardInterrupt:
        typer.echo("logparse: interrupted", err=True)
        sys.exit(130)
    except SystemExit as exc:  # typer turns Ctrl-C into exit 130 without a word
        if exc.code == 130:
            typer.echo("logparse: interrupted", err=True)
        elif exc.code == 1 and _stdout_closed_by_reader():
            _end_as_a_filter()
        elif exc.code is None or isinstance(exc.code, int):
            _end_read_command(exc.code or 0)
        raise
    except BrokenPipeError:
        _end_as_a_filter()
    finally:
        # The interpreter's last collection walks every object the imports made (typer, DuckDB,
        # numpy, lark: 60 ms of a 1 s ingest, measured) to free memory the exit frees anyway; what
        # needs closing (stores, files, temporary directories) is closed by the commands themselves.
        gc.freeze()


def _stdout_closed_by_reader() -> bool:
    """Whether typer ended the command with its exit 1 for a closed pipe (``logparse … | head -1``):
    it then wraps stdout so that the final flush stays silent."""
    return type(sys.stdout).__name__ == "PacifyFlushWrapper"


def _end_as_a_filter() -> None:
    """End as ``cat`` or ``grep`` end when their reader goes away: silently, by SIGPIPE (status
    141 in a shell), not with exit 1, which ``check`` uses for a regression."""
    import contextlib
    import signal

    with contextlib.suppress(OSError, ValueError):
        sys.stderr.flush()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGPIPE)
    os._exit(141)  # not reached: a platform without SIGPIPE's default action


def _end_read_command(code: int) -> None:
    """End the process now, without Python's teardown, after a read command that allowed it
    (:func:`logparse.cli.app.allow_quick_exit`), once its output is flushed, and only when no
    other thread or child process is left to finish."""
    if not quick_exit_allowed():
        return
    import threading

    mp = sys.modules.get("multiprocessing")
    if threading.active_count() > 1 or (mp is not None and mp.active_children()):
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # the reader went away before the last of the output
        _end_as_a_filter()
    except (OSError, ValueError):  # the usual way out reports it
        return
    os._exit(code)
