"""What every store command shares: the ``--db`` option, the store it opens, ``--label`` and
``--plot`` values, and the store's errors turned into exit codes.

The store is ``--db PATH`` when given, else ``$LOGPARSE_DB``, else
``$XDG_DATA_HOME/logparse/history.duckdb`` (``~/.local/share/logparse/history.duckdb``).
Store problems (busy, damaged, too new, missing) exit with code 3; a bad reference,
option or refused query with code 2.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Optional

import typer

from logparse.cli.app import EXIT_STORE, EXIT_USAGE, fail
from logparse.store.db import default_db_path

DB_HELP = f"History store (default: $LOGPARSE_DB, else {default_db_path()})."


def db_option():
    """``--db PATH``: the history store (see the module's docstring)."""
    return typer.Option(None, "--db", help=DB_HELP)


def _input_error() -> type[BaseException]:
    """:class:`logparse.sources.InputError` when the sources were imported (only they raise it),
    else an exception nothing raises: a read command need not import every input format."""
    errors = sys.modules.get("logparse.sources.errors")
    return errors.InputError if errors is not None else _NeverRaised


class _NeverRaised(Exception):
    pass


@contextmanager
def store_errors() -> Iterator[None]:
    """Library errors -> one line on stderr and the documented exit code."""
    from logparse.store import QueryRefused, StoreError
    from logparse.store.refs import RefError

    try:
        yield
    except StoreError as exc:
        raise fail(str(exc), EXIT_STORE) from None
    except (RefError, QueryRefused) as exc:
        raise fail(str(exc), EXIT_USAGE) from None
    except _input_error() as exc:
        raise fail(str(exc), EXIT_USAGE) from None
    except OSError as exc:  # disk full, read-only file system, permissions on the store's folder
        where = f": {exc.filename}" if exc.filename else ""
        raise fail(f"store: {exc.strerror or exc}{where}", EXIT_STORE) from None
    except Exception as exc:  # duckdb.Error and friends: the transaction was rolled back
        import duckdb

        if not isinstance(exc, duckdb.Error):
            raise
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
        raise fail(f"store error: {first}", EXIT_STORE) from None


def open_store(db: Optional[str], lock_timeout: float | None = None):
    from logparse.store import Store

    return Store(db) if lock_timeout is None else Store(db, lock_timeout=lock_timeout)


def parse_labels(labels: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in labels or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise fail(f"--label {item!r}: expected key=value", EXIT_USAGE)
        out[key.strip()] = value.strip()
    return out


def plot_path(plot: str | None) -> str | None:
    """``--plot FILE``: a kind of file logparse can write here (.svg always; .png/.pdf with the extra), or exit 2."""
    if plot:
        from logparse.cli.charts import PlotUnavailable, check_plot_path

        try:
            check_plot_path(plot)
        except PlotUnavailable as exc:
            raise fail(f"--plot {plot}: {exc}", EXIT_USAGE) from None
    return plot
