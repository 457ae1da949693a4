"""Running it unattended: ``watch``, ``metrics`` and ``systemd-units``.

``watch`` follows a growing log file (``tail -F``) or the journal (``journalctl -f``) into the store
(:mod:`logparse.store.watch`) and prints one block per launch that becomes ready or failed
(:mod:`logparse.reports.watch_block`); ``--exec`` hands each block to a command as JSON, ``--metrics``
keeps a Prometheus textfile current (:mod:`logparse.reports.metrics`).
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any, Optional, TextIO

import typer

from logparse.cli.app import EXIT_OK, EXIT_STORE, EXIT_USAGE, app, fail, say
from logparse.cli.options import sglang_version_option
from logparse.cli.output import Output, dumps, output_options
from logparse.cli.store_options import DB_HELP, parse_labels, store_errors

WATCH_FORMATS = ("table", "ndjson")
#: ``watch`` writes one object per line as launches finish: NDJSON, which it called json until 0.1.
_WATCH_RENAMED = {
    "json": ("ndjson", "watch writes one JSON object per line: that is --format ndjson (json is its old name)")
}
_LOCK_HELP = (
    "Seconds another process (a writer, or any reader while watch writes) may hold the store before watch "
    "says so, once; it keeps what it read and tries again until the store is free."
)


class _Stop:
    """SIGTERM and Ctrl-C ask the loop to stop after its current write (the cursor is saved)."""

    def __init__(self) -> None:
        self.asked = False
        self._old: dict[int, Any] = {}

    def __enter__(self) -> _Stop:
        for sig in (signal.SIGTERM, signal.SIGINT):
            self._old[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        if self.asked:  # a second Ctrl-C: stop now
            raise KeyboardInterrupt
        self.asked = True

    def __exit__(self, *exc) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)


@app.command()
@output_options(
    formats=WATCH_FORMATS, extra_help="ndjson: one object per finished launch.", renamed=_WATCH_RENAMED, pager=False
)
def watch(
    path: Optional[str] = typer.Argument(None, metavar="[FILE]", help="A log file to follow (rotation included)."),
    journal: bool = typer.Option(False, "--journal", help="Follow the systemd journal from the stored cursor."),
    unit: Optional[str] = typer.Option(None, "-u", "--unit", help="journalctl -u UNIT"),
    directory: Optional[str] = typer.Option(None, "-D", "--directory", help="journalctl -D DIR"),
    jfile: Optional[str] = typer.Option(None, "--file", help="journalctl --file F.journal"),
    once: bool = typer.Option(False, "--once", help="Read what is there now, write it, and exit."),
    exec_cmd: Optional[str] = typer.Option(
        None, "--exec", metavar="CMD", help="Run CMD (with sh -c) per finished launch, the block as JSON on stdin."
    ),
    exec_timeout: float = typer.Option(60.0, "--exec-timeout", help="Seconds --exec may take."),
    metrics_file: Optional[str] = typer.Option(
        None, "--metrics", metavar="FILE", help="Keep FILE current with `logparse metrics` after every write."
    ),
    runtime_interval: float = typer.Option(
        60.0, "--runtime-interval", help="Write pending batch/access-log lines at most every S seconds."
    ),
    host: Optional[str] = typer.Option(None, "--host", help="Host name for a file that does not say."),
    label: Optional[list[str]] = typer.Option(None, "--label", help="key=value label on every launch (repeatable)."),
    sglang_version: Optional[str] = sglang_version_option(),
    input_format: Optional[str] = typer.Option(None, "--input-format", help="Force the file's format."),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    lock_timeout: float = typer.Option(30.0, "--lock-timeout", help=_LOCK_HELP),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="Only the blocks and errors (no progress, no notes)."),
    *,
    out: Output,
) -> None:
    """Follow a log file or the journal into the store; one block per launch that becomes ready or failed."""
    from logparse.store import Store
    from logparse.store.ingest_types import IngestOptions
    from logparse.store.watch import Policy, StoreWriter

    use_journal = journal or any(x is not None for x in (unit, directory, jfile))
    if use_journal == (path is not None):
        raise fail("give a FILE to follow, or --journal (with -u, -D or --file)", EXIT_USAGE)
    if path is not None and path != "-" and os.path.isdir(path):
        raise fail(f"{path}: a directory; watch follows one file", EXIT_USAGE)
    store = Store(db, lock_timeout=lock_timeout)
    opts = IngestOptions(
        host=host,
        labels=parse_labels(label),
        sglang_version=sglang_version,
        lock_timeout=lock_timeout,
        input_format=input_format,
        progress=False if quiet else None,
    )
    session = _Session(store, out, exec_cmd, exec_timeout, metrics_file, quiet)
    policy = Policy(runtime_interval_s=runtime_interval)
    with store_errors(), _Stop() as stop:
        writer = StoreWriter(store, opts, wait=_store_wait(session, stop))
        query = (unit, directory, jfile) if use_journal else None
        _follow(writer, session, stop, policy, once, query, (str(path), input_format))
    session.close()
    raise typer.Exit(EXIT_OK)


def _follow(writer, session: _Session, stop: _Stop, policy, once: bool, query: tuple | None, file: tuple) -> None:
    """The journal (``query``: unit, directory, file) or the file (``file``: path, format) into the store."""
    from logparse.store.watch import StoppedWhileBusy

    try:
        session.update_metrics()
        if query is not None:
            _watch_journal(writer, session, stop, policy, once, query)
        else:
            _watch_file(file[0], writer, session, stop, policy, once, file[1])
    except StoppedWhileBusy as exc:
        typer.echo(f"logparse watch: {exc}", err=True)  # stopped as asked: nothing is lost


def _store_wait(session: _Session, stop: _Stop):
    """A busy store is waited for, never given up on: said once, on stderr (with -q too)."""
    from logparse.store.watch import StoreWait

    session.wait = StoreWait(
        note=lambda msg: typer.echo(f"logparse watch: {msg}", err=True), stopping=lambda: stop.asked
    )
    return session.wait


def _loop(session: _Session, stop: _Stop, policy):
    from logparse.store.watch import Loop

    return Loop(
        on_written=session.written,
        stopping=lambda: stop.asked,
        policy=policy,
        note=session.note,
        on_read=session.read,
        on_idle=session.caught_up,
    )


def _watch_file(path, writer, session: _Session, stop: _Stop, policy, once: bool, input_format) -> None:
    from logparse.store.watch import FileWatch, run_file

    fw = FileWatch(path, writer, input_format=input_format)
    if once and not os.path.exists(path):
        raise fail(f"{path}: no such file", EXIT_USAGE)
    session.start_bar(os.path.basename(path), "lines", total=_size(path))
    try:
        run_file(fw, _loop(session, stop, policy), once=once)
    finally:
        fw.close()


def _size(path: str) -> int | None:
    try:
        return os.path.getsize(path)
    except OSError:
        return None


def _watch_journal(writer, session: _Session, stop: _Stop, policy, once: bool, query: tuple) -> None:
    from logparse.sources import InputError
    from logparse.store.watch import JournalWatch, run_journal

    unit, directory, jfile = query
    jw = JournalWatch(writer, unit, directory, jfile)
    session.start_bar("journal", "entries")
    try:
        run_journal(jw, _loop(session, stop, policy), once=once)
    except InputError as exc:
        raise fail(str(exc), EXIT_USAGE) from None


class _Session:
    """What watch does with each write: blocks, --exec, --metrics, notes and the catch-up bar."""

    def __init__(self, store, out: Output, exec_cmd, exec_timeout: float, metrics_file, quiet: bool) -> None:
        self.store, self.out = store, out
        self.exec_cmd, self.exec_timeout = exec_cmd, exec_timeout
        self.metrics_file, self.quiet = metrics_file, quiet
        self.bar: Any = None
        self.reported: dict[str, None] = {}  # launch ids already reported (bounded, oldest dropped)
        self._fh: TextIO | None = None
        #: how the store is waited for while another process holds it (set by watch)
        self.wait: Any = None

    # -- progress and notes --------------------------------------------------------------------
    def start_bar(self, name: str, unit: str, total: int | None = None) -> None:
        from logparse.cli.progress import Bar

        self.bar = Bar(f"catching up {name}", total=total, quiet=self.quiet, unit=unit)

    def read(self, nbytes: int, lines: int) -> None:
        if self.bar is not None:
            if lines:
                self.bar.advance(nbytes, lines)
            else:
                self.bar.set(nbytes, 0)

    def caught_up(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def note(self, msg: str) -> None:
        if not self.quiet:
            say(f"logparse watch: {msg}")

    # -- writes ---------------------------------------------------------------------------------
    def written(self, w) -> None:
        if self.bar is not None and w.lines_so_far is not None:
            self.bar.set(self.bar.bytes, w.lines_so_far)
        for warning in dict.fromkeys(w.warnings):
            self.note(f"warning: {warning}")
        if w.outcome.status == "stored" and not self.quiet:
            o = w.outcome
            self.note(f"stored {w.lines:,} line(s): {o.added} launch(es) added, {o.updated} updated")
        for lid in w.finished:
            if lid in self.reported:
                continue
            self.reported[lid] = None
            if len(self.reported) > 10_000:
                self.reported.pop(next(iter(self.reported)))
            self.report(lid)
        if w.outcome.status == "stored":
            self.update_metrics()

    def report(self, launch_id: str) -> None:
        from logparse.reports.watch_block import launch_block

        block = self._waiting(f"the block of launch {launch_id}", lambda: launch_block(launch_id, str(self.store.path)))
        block = block.to_dict()
        self.print_block(block)
        if self.exec_cmd:
            self.run_exec(block)

    def print_block(self, block: dict[str, Any]) -> None:
        if self.out.fmt in ("json", "ndjson"):
            self._emit(dumps(block) + "\n")
            return
        from logparse.cli.cells import for_terminal
        from logparse.cli.render_watch import block_text

        self._emit(block_text(for_terminal(block)) + "\n")

    def _emit(self, text: str) -> None:
        if self.out.path:
            if self._fh is None:
                try:
                    self._fh = open(self.out.path, "a", encoding="utf-8")  # noqa: SIM115 (closed by close)
                except OSError as exc:
                    raise fail(f"--output {self.out.path}: {exc.strerror or exc}", EXIT_USAGE) from None
            self._fh.write(text)
            self._fh.flush()
        else:
            sys.stdout.write(text)
            sys.stdout.flush()

    def run_exec(self, block: dict[str, Any]) -> None:
        from logparse.cli.exec_hook import run_hook

        res = run_hook(self.exec_cmd, block, self.exec_timeout)
        if res.timed_out:
            say(f"logparse watch: --exec took more than {self.exec_timeout:g} s: its process group was stopped")
        elif res.returncode is None:
            say(f"logparse watch: --exec {res.message}")
        elif res.returncode != 0:
            say(f"logparse watch: --exec exited {res.returncode}: {res.message}")

    def update_metrics(self) -> None:
        if not self.metrics_file:
            return
        from logparse.cli.metrics_text import write_textfile
        from logparse.reports.metrics import collect

        try:
            write_textfile(self.metrics_file, self._waiting("--metrics", lambda: collect(self.store.path)))
        except OSError as exc:
            raise fail(f"--metrics {self.metrics_file}: {exc.strerror or exc}", EXIT_STORE) from None

    def _waiting(self, what: str, read):
        return read() if self.wait is None else self.wait.run(what, read)

    def close(self) -> None:
        self.caught_up()
        if self._fh is not None:
            self._fh.close()
            self._fh = None


# ---------------------------------------------------------------------------- metrics


@app.command()
def metrics(
    output: Optional[str] = typer.Option(
        None, "--output", "-o", metavar="FILE", help="Write FILE atomically (temp file + rename); '-' or none: stdout."
    ),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Prometheus text format 0.0.4 (node_exporter textfile collector): per deployment, its latest launch."""
    from logparse.cli.metrics_text import exposition, write_textfile
    from logparse.reports.metrics import collect
    from logparse.store.db import resolve_db_path

    with store_errors():
        found = collect(resolve_db_path(db))
    if output and output != "-":  # '-': stdout, as every output path
        try:
            write_textfile(output, found)
        except OSError as exc:
            raise fail(f"--output {output}: {exc.strerror or exc}", EXIT_USAGE) from None
        typer.echo(f"wrote {output}", err=True)
    else:
        sys.stdout.write(exposition(found))
    raise typer.Exit(EXIT_OK)
