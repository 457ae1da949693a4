"""One set of output options for every command that prints data (as sqlite-utils shares one).

:func:`output_options` adds ``--format table|csv|json|ndjson[|parquet]``, ``--output FILE`` (``-o``)
and ``--json`` (short for ``--format json``) to a command, and hands it an :class:`Output`.

* A **table** result (``launches``, ``history``, ``query``) prints its rows in every format;
  parquet too.
* A **nested** result (``parse``, ``show``, ``explain``, ``diff``, ``check``): ``table`` prints the
  human report, ``csv`` its main rows (parse: one row per launch; show: one per rank; explain: the
  budget steps; diff: one row per compared figure; check: one row per check), ``json`` the whole
  result and ``ndjson`` the whole result on one line (``parse``: one launch per line).
"""

from __future__ import annotations

import csv
import functools
import inspect
import io
import json
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any, Optional

import typer

from logparse.cli.app import EXIT_USAGE, fail
from logparse.cli.options import complete_choices

TABLE_FORMATS = ("table", "csv", "json", "ndjson", "parquet")
DOCUMENT_FORMATS = ("table", "csv", "json", "ndjson")


@dataclass
class Output:
    fmt: str
    path: str | None

    # ------------------------------------------------------------------ writing
    def write(self, text: str) -> None:
        if self.path:
            try:
                Path(self.path).write_text(text, encoding="utf-8")
            except OSError as exc:
                raise fail(f"--output {self.path}: {exc.strerror or exc}", EXIT_USAGE) from None
        else:
            sys.stdout.write(text)

    def console(self):
        """A rich console on stdout, or on the ``--output`` file."""
        from logparse.cli.render import make_console, report_console

        if self.path:
            try:
                fh = open(self.path, "w", encoding="utf-8")  # noqa: SIM115 - closed by close_console
            except OSError as exc:
                raise fail(f"--output {self.path}: {exc.strerror or exc}", EXIT_USAGE) from None
            return report_console(file=fh, width=200, no_color=True)
        return make_console()

    @staticmethod
    def close_console(console) -> None:
        if console.file is not sys.stdout:
            console.file.close()

    # ------------------------------------------------------------------ documents
    def document(self, doc: dict[str, Any], rows: Callable[[], list[dict[str, Any]]], render: Callable) -> None:
        """A nested result: the human report, its main rows, or the whole document."""
        if self.fmt == "json":
            self.write(dumps(doc, indent=2) + "\n")
        elif self.fmt == "ndjson":
            self.write(dumps(doc) + "\n")
        elif self.fmt == "csv":
            self.write(csv_text(rows()))
        else:
            from logparse.cli.cells import for_terminal

            console = self.console()
            try:
                render(for_terminal(doc), console)
            finally:
                self.close_console(console)

    # ------------------------------------------------------------------ tables
    def rows(self, columns: list[str], rows: Iterable[tuple], render_table: Callable | None = None) -> int:
        """A table result in any format; returns the number of rows written."""
        rows = list(rows)
        if self.fmt == "parquet":
            write_parquet(columns, rows, self.path)
        elif self.fmt in ("json", "ndjson"):
            dicts = [{c: plain(v) for c, v in zip(columns, r)} for r in rows]
            if self.fmt == "json":
                self.write(dumps(dicts, indent=2) + "\n")
            else:
                self.write("".join(dumps(d) + "\n" for d in dicts))
        elif self.fmt == "csv":
            self.write(csv_text([dict(zip(columns, r)) for r in rows], columns))
        else:
            from logparse.cli.cells import for_terminal

            console = self.console()
            try:
                (render_table or plain_table)(columns, for_terminal(rows), console)
            finally:
                self.close_console(console)
        return len(rows)


def plain(v: Any) -> Any:
    """A JSON-ready value (datetimes as ISO text, NaN as null, bytes as hex, other objects as text)."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if v == v and v not in (float("inf"), float("-inf")) else None
    if isinstance(v, (datetime, date)):
        return v.isoformat()
    if isinstance(v, timedelta):
        return v.total_seconds()
    if isinstance(v, Decimal):
        return float(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set)):
        return [plain(x) for x in v]
    return str(v)


def dumps(obj: Any, indent: int | None = None) -> str:
    """JSON text, UTF-8 as it is, but every character a terminal would act on as a ``\\u`` escape:
    json escapes C0 controls itself; DEL, C1 controls, the bidi controls and the line separators
    (which can only stand inside a string) are escaped here.  The value read back is the same."""
    text = json.dumps(plain(obj), indent=indent, ensure_ascii=False)
    if text.isascii() and "\x7f" not in text:
        return text
    return _JSON_UNSAFE.sub(_json_escape, text)


#: What :func:`logparse.text.terminal_text` escapes beyond the C0 controls json escapes itself
#: (json's own newlines and indentation are C0 too: they stay).
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def _json_escape(m: re.Match) -> str:
    return f"\\u{ord(m.group()):04x}"


def _csv_cell(v: Any) -> Any:
    v = plain(v)
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False)
    return "" if v is None else v


def csv_text(rows: list[dict[str, Any]], columns: list[str] | None = None) -> str:
    cols = columns or list(dict.fromkeys(k for r in rows for k in r))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        w.writerow([_csv_cell(r.get(c)) for c in cols])
    return buf.getvalue()


def write_parquet(columns: list[str], rows: list[tuple], path: str | None) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({c: _parquet_column([r[i] for r in rows]) for i, c in enumerate(columns)})
    try:
        pq.write_table(table, path)
    except OSError as exc:
        raise fail(f"--output {path}: {exc.strerror or exc}", EXIT_USAGE) from None
    typer.echo(f"wrote {len(rows)} row(s) to {path}", err=True)


def _parquet_column(values: list[Any]):
    """An Arrow column of the values' own type, or of their text when Arrow has none for them
    (a DuckDB UNION or VARIANT mixing types, a HUGEINT beyond 64 bits)."""
    import pyarrow as pa

    cells = [_parquet_cell(v) for v in values]
    try:
        return pa.array(cells)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return pa.array([None if v is None else str(_csv_cell(v)) for v in values], pa.string())


def _parquet_cell(v: Any) -> Any:
    if isinstance(v, (dict, list, tuple, set)):
        return json.dumps(plain(v), ensure_ascii=False)
    if isinstance(v, (timedelta, Decimal)):
        return plain(v)
    return v


def plain_table(columns: list[str], rows: list[tuple], console) -> None:
    from rich.table import Table

    from logparse.cli.cells import cell
    from logparse.cli.render import print_table

    table = Table(title=f"{len(rows)} row(s)", title_justify="left", show_edge=False, pad_edge=False)
    numeric = [
        all(isinstance(r[i], (int, float)) and not isinstance(r[i], bool) for r in rows if r[i] is not None)
        and any(r[i] is not None for r in rows)
        for i in range(len(columns))
    ]
    for c, num in zip(columns, numeric):
        table.add_column(c, justify="right" if num else "left", overflow="fold")
    for r in rows:
        table.add_row(*[cell(v) for v in r])
    print_table(console, table)


# ---------------------------------------------------------------------------- the decorator
def output_options(formats: tuple[str, ...] = TABLE_FORMATS, default: str = "table", extra_help: str = ""):
    """Add ``--format``, ``--output``/``-o`` and ``--json`` to a command; it receives ``out: Output``."""

    def decorate(fn):
        sig = inspect.signature(fn)
        params = [p for p in sig.parameters.values() if p.name != "out"]
        names = ", ".join(formats)
        added = [
            inspect.Parameter(
                "fmt",
                inspect.Parameter.KEYWORD_ONLY,
                default=typer.Option(
                    None,
                    "--format",
                    "-f",
                    help=f"Output format: {names} (default {default}). {extra_help}".strip(),
                    autocompletion=complete_choices(formats),
                ),
                annotation=Optional[str],
            ),
            inspect.Parameter(
                "output",
                inspect.Parameter.KEYWORD_ONLY,
                default=typer.Option(None, "--output", "-o", metavar="FILE", help="Write to FILE instead of stdout."),
                annotation=Optional[str],
            ),
            inspect.Parameter(
                "as_json",
                inspect.Parameter.KEYWORD_ONLY,
                default=typer.Option(False, "--json", help="Short for --format json."),
                annotation=bool,
            ),
        ]

        @functools.wraps(fn)
        def wrapper(*args, fmt: str | None = None, output: str | None = None, as_json: bool = False, **kw):
            return fn(*args, out=make_output(fmt, output, as_json, formats, default), **kw)

        wrapper.__signature__ = sig.replace(parameters=[*params, *added])  # type: ignore[attr-defined]
        return wrapper

    return decorate


def make_output(fmt: str | None, output: str | None, as_json: bool, formats: tuple[str, ...], default: str) -> Output:
    if as_json and fmt and fmt.lower() != "json":
        raise fail(f"--json and --format {fmt} disagree: give one of them", EXIT_USAGE)
    chosen = (fmt or ("json" if as_json else default)).lower()
    if chosen not in formats:
        raise fail(f"unknown --format {fmt!r}; choose one of {', '.join(formats)}", EXIT_USAGE)
    if chosen == "parquet" and not output:
        raise fail("--format parquet needs --output FILE", EXIT_USAGE)
    return Output(chosen, output)
