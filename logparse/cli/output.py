"""One set of output options for every command that prints data (as sqlite-utils shares one).

:func:`output_options` adds ``--format table|csv|tsv|json|ndjson[|parquet]``, ``--output FILE``
(``-o``; ``-`` is stdout), ``--json`` and ``--ndjson`` (short for those formats), ``--wide`` (every
column, nothing shortened) and ``--no-pager`` to a command, and hands it an :class:`Output`.

* A **table** result (``launches``, ``history``, ``query``) prints its rows in every format;
  parquet too.
* A **nested** result (``parse``, ``show``, ``explain``, ``diff``, ``check``, ``doctor``): ``table``
  prints the human report, ``csv``/``tsv`` its main rows (parse: one row per launch; show: one per
  rank; explain: the budget steps; diff: one row per compared figure; check: one row per check),
  ``json`` the whole result as one document and ``ndjson`` the whole result on one line
  (``parse``: one launch per line).
* A **stream** (``watch``) has ``ndjson``: one object per line as it comes.

The human tables fit the terminal (:mod:`logparse.cli.layout`); on a terminal, long output goes
through a pager (:mod:`logparse.cli.pager`).
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
from typing import Any, Optional

import typer

from logparse.cli.app import EXIT_USAGE, fail, say
from logparse.cli.options import complete_choices
from logparse.files import AtomicFile, write_atomic

TABLE_FORMATS = ("table", "csv", "tsv", "json", "ndjson", "parquet")
DOCUMENT_FORMATS = ("table", "csv", "tsv", "json", "ndjson")


@dataclass
class Output:
    fmt: str
    path: str | None  #: None: stdout (``--output -`` too)
    #: ``--wide``: every column of a human table, nothing shortened, whatever the width
    wide: bool = False
    #: a pager may show long output on a terminal (not ``--no-pager``, not a stream such as ``watch``)
    pager: bool = True

    # ------------------------------------------------------------------ writing
    def write(self, text: str) -> None:
        if self.path:
            try:
                write_atomic(self.path, text)
            except OSError as exc:
                raise fail(f"--output {self.path}: {exc.strerror or exc}", EXIT_USAGE) from None
        elif self._paged():
            from logparse.cli.pager import page

            page(text)
        else:
            sys.stdout.write(text)

    def _paged(self) -> bool:
        from logparse.cli.pager import wants_pager

        return self.pager and not self.path and wants_pager()

    def width(self) -> int | None:
        """The width human tables are fitted to (None: no limit)."""
        from logparse.cli.layout import output_width

        return None if self.wide or self.path else output_width()

    def console(self):
        """A rich console on stdout (through the pager on a terminal), or on the ``--output`` file;
        lines on a pipe or a file without trailing spaces."""
        from logparse.cli.layout import UNBOUNDED, StripTrailing
        from logparse.cli.render import report_console

        if self.path:
            try:
                fh = AtomicFile(self.path)  # put in place by close_console
            except OSError as exc:
                raise fail(f"--output {self.path}: {exc.strerror or exc}", EXIT_USAGE) from None
            return report_console(file=StripTrailing(fh), width=UNBOUNDED, no_color=True)
        width = self.width()
        if self._paged():
            return report_console(file=io.StringIO(), force_terminal=True, width=width or UNBOUNDED)
        if sys.stdout.isatty():
            return report_console(width=width or UNBOUNDED)
        return report_console(file=StripTrailing(sys.stdout), width=width or UNBOUNDED)

    @staticmethod
    def close_console(console, *, failed: bool = False) -> None:
        """Show or complete what the console wrote; ``failed``: the rendering stopped half way (an
        ``--output`` file is then left as it was)."""
        from logparse.cli.layout import StripTrailing

        fh = console.file
        if isinstance(fh, io.StringIO):
            from logparse.cli.pager import page

            if not failed:
                page(fh.getvalue())
        elif isinstance(fh, StripTrailing):
            if isinstance(fh.target, AtomicFile) and failed:
                fh.target.abort()
                return
            fh.close()
            if fh.target is not sys.stdout:
                fh.target.close()
        elif fh is not sys.stdout:
            fh.close()

    def render(self, draw: Callable, *args: Any) -> None:
        """``draw(*args, console)`` on this output's console, completed (or left out) as it ends."""
        console = self.console()
        try:
            draw(*args, console)
        except BaseException as exc:
            self.close_console(console, failed=True)
            if self.path and isinstance(exc, OSError):  # a full disk: the previous file is kept
                raise fail(f"--output {self.path}: {exc.strerror or exc}", EXIT_USAGE) from None
            raise
        try:
            self.close_console(console)
        except OSError as exc:
            raise fail(f"--output {self.path}: {exc.strerror or exc}", EXIT_USAGE) from None

    # ------------------------------------------------------------------ documents
    def document(self, doc: dict[str, Any], rows: Callable[[], list[dict[str, Any]]], render: Callable) -> None:
        """A nested result: the human report, its main rows, or the whole document."""
        if self.fmt == "json":
            self.write(dumps(doc, indent=2) + "\n")
        elif self.fmt == "ndjson":
            self.write(dumps(doc) + "\n")
        elif self.fmt in ("csv", "tsv"):
            self.write(csv_text(rows(), delimiter=self.delimiter))
        else:
            from logparse.cli.cells import for_terminal

            self.render(render, for_terminal(doc))

    @property
    def delimiter(self) -> str:
        return "\t" if self.fmt == "tsv" else ","

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
        elif self.fmt in ("csv", "tsv"):
            self.write(csv_text([dict(zip(columns, r)) for r in rows], columns, delimiter=self.delimiter))
        else:
            from logparse.cli.cells import for_terminal

            self.render(render_table or plain_table, columns, for_terminal(rows))
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


#: A text cell a spreadsheet would run as a formula begins with one of these (OWASP, "CSV Injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
#: Text that begins so but is data a spreadsheet reads as data: a number, a UTC offset (``+00:00``).
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]\d{2}:?\d{2}")


def neutralised(text: str) -> str:
    """A text cell that cannot run as a formula: one that begins like a formula gets a leading
    ``'`` (OWASP's advice); a number written as text (``-0.5``) or a UTC offset (``+02:00``) stays as it is."""
    if text.startswith(_FORMULA_START) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


def _csv_cell(v: Any) -> Any:
    v = plain(v)
    if isinstance(v, (dict, list)):
        v = json.dumps(v, ensure_ascii=False)
    if v is None:
        return ""
    return neutralised(v) if isinstance(v, str) else v


def csv_text(rows: list[dict[str, Any]], columns: list[str] | None = None, delimiter: str = ",") -> str:
    """CSV (or with ``delimiter="\\t"`` TSV: the same quoting, so that a cell's tab or line break survives)."""
    cols = columns or list(dict.fromkeys(k for r in rows for k in r))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n", delimiter=delimiter)
    w.writerow([neutralised(str(c)) for c in cols])
    for r in rows:
        w.writerow([_csv_cell(r.get(c)) for c in cols])
    return buf.getvalue()


def write_parquet(columns: list[str], rows: list[tuple], path: str | None) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({c: _parquet_column([r[i] for r in rows]) for i, c in enumerate(columns)})
    if path is None:  # --output -: the file's bytes on stdout
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        sys.stdout.flush()
        sys.stdout.buffer.write(sink.getvalue().to_pybytes())
        sys.stdout.buffer.flush()
        return
    try:
        with AtomicFile(path, binary=True) as fh:
            pq.write_table(table, fh.fh)
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
    """A query's rows: fitted to the width (text columns wrap, nothing is cut); a single row that
    does not fit across is shown as one line per column (``column  value``)."""
    from logparse.cli.cells import cell
    from logparse.cli.layout import Col, cell_width
    from logparse.cli.render import console_width, print_fitted

    numeric = [
        all(isinstance(r[i], (int, float)) and not isinstance(r[i], bool) for r in rows if r[i] is not None)
        and any(r[i] is not None for r in rows)
        for i in range(len(columns))
    ]
    texts = [[cell(v) for v in r] for r in rows]
    title = f"{len(rows)} row" + ("" if len(rows) == 1 else "s")
    width = console_width(console)
    across = sum(max([cell_width(c), *(cell_width(r[i]) for r in texts)]) for i, c in enumerate(columns))
    if len(rows) == 1 and len(columns) > 1 and width is not None and across + 3 * (len(columns) - 1) > width:
        record = [[c, v] for c, v in zip(columns, texts[0])]
        print_fitted(console, title, [Col("column"), Col("value", wrap=True)], record)
        return
    cols = [Col(c, right=num, wrap=not num) for c, num in zip(columns, numeric)]
    print_fitted(console, title, cols, texts)


# ---------------------------------------------------------------------------- the decorator
def output_options(
    formats: tuple[str, ...] = TABLE_FORMATS,
    default: str = "table",
    extra_help: str = "",
    renamed: dict[str, tuple[str, str]] | None = None,
    pager: bool = True,
    tables: bool = True,
):
    """Add ``--format``, ``--output``/``-o``, ``--json``, ``--ndjson``, ``--wide`` and ``--no-pager``
    to a command; it receives ``out: Output``.  ``renamed``: a format that is still accepted under
    its old name, ``{old: (new, why)}`` (the message says so on stderr); ``pager``: False for a
    command whose output is a stream; ``tables``: False for a command whose human output is lines
    of text, not tables (no ``--wide``)."""
    renamed = renamed or {}

    def decorate(fn):
        sig = inspect.signature(fn)
        params = [p for p in sig.parameters.values() if p.name != "out"]
        added = _option_parameters(formats, default, extra_help, pager, "json" in renamed, tables)

        @functools.wraps(fn)
        def wrapper(
            *args,
            fmt: str | None = None,
            output: str | None = None,
            as_json: bool = False,
            as_ndjson: bool = False,
            wide: bool = False,
            no_pager: bool = False,
            **kw,
        ):
            out = make_output(fmt, output, as_json, formats, default, as_ndjson=as_ndjson, renamed=renamed)
            out.wide, out.pager = wide, pager and not no_pager
            return fn(*args, out=out, **kw)

        wrapper.__signature__ = sig.replace(parameters=[*params, *added])  # type: ignore[attr-defined]
        return wrapper

    return decorate


def _option_parameters(
    formats: tuple[str, ...], default: str, extra_help: str, pager: bool, old_json: bool, tables: bool
) -> list:
    def option(name: str, default_value: Any, annotation: Any, *decls: str, **kw: Any) -> inspect.Parameter:
        return inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            default=typer.Option(default_value, *decls, **kw),
            annotation=annotation,
        )

    names = ", ".join(formats)
    out = [
        option(
            "fmt",
            None,
            Optional[str],
            "--format",
            "-f",
            metavar="|".join(formats),
            help=f"Output format: {names} (default {default}). {extra_help}".strip(),
            autocompletion=complete_choices(formats),
        ),
        option("output", None, Optional[str], "--output", "-o", metavar="FILE", help="Write to FILE ('-': stdout)."),
    ]
    if "json" in formats or old_json:
        what = "one JSON document" if "json" in formats else "the old spelling of --ndjson"
        out.append(option("as_json", False, bool, "--json", help=f"Short for --format json ({what})."))
    if "ndjson" in formats:
        out.append(option("as_ndjson", False, bool, "--ndjson", help="Short for --format ndjson (one object a line)."))
    if tables and "table" in formats:
        out.append(option("wide", False, bool, "--wide", help="Tables: every column, nothing shortened."))
    if pager and tables and "table" in formats:
        out.append(
            option("no_pager", False, bool, "--no-pager", help="Never page (default: $PAGER on a terminal, less -FRX).")
        )
    return out


def make_output(
    fmt: str | None,
    output: str | None,
    as_json: bool,
    formats: tuple[str, ...],
    default: str,
    *,
    as_ndjson: bool = False,
    renamed: dict[str, tuple[str, str]] | None = None,
) -> Output:
    """The output a command's options ask for, or exit 2 with the reason."""
    flags = [f for f, given in (("json", as_json), ("ndjson", as_ndjson)) if given]
    if len(flags) > 1:
        raise fail("--json and --ndjson disagree: give one of them", EXIT_USAGE)
    if flags and fmt and fmt.lower() != flags[0]:
        raise fail(f"--{flags[0]} and --format {fmt} disagree: give one of them", EXIT_USAGE)
    chosen = (fmt or (flags[0] if flags else default)).lower()
    if chosen in (renamed or {}):
        chosen, why = (renamed or {})[chosen]
        say(f"logparse: {why}")
    if chosen not in formats:
        raise fail(f"unknown --format {fmt!r}; choose one of {', '.join(formats)}", EXIT_USAGE)
    path = None if output == "-" else output
    if chosen == "parquet" and not output:
        raise fail("--format parquet needs --output FILE (or '-o -' for stdout)", EXIT_USAGE)
    if chosen == "parquet" and path is None and sys.stdout.isatty():
        raise fail("--format parquet -o -: stdout is a terminal; redirect it to a file", EXIT_USAGE)
    return Output(chosen, path)
