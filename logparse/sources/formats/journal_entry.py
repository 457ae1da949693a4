"""A journal entry (from ``-o json*``, ``-o export`` or ``-o verbose``) to records.

The structured renderings give an entry's fields by name; the records take:

==========================  ===========================================================
``ts``                      ``_SOURCE_REALTIME_TIMESTAMP``, else ``__REALTIME_TIMESTAMP``
``host``                    ``_HOSTNAME``
``unit``                    ``UNIT``/``USER_UNIT`` (systemd's lines about a unit),
                            ``CONTAINER_NAME`` (docker's journald driver),
                            ``_SYSTEMD_USER_UNIT`` under ``user@``, ``_SYSTEMD_UNIT``,
                            else ``SYSLOG_IDENTIFIER`` / ``_COMM``
``pid``                     ``_PID``, else ``SYSLOG_PID``
``boot``, ``cursor``        ``_BOOT_ID``, ``__CURSOR``
``text``                    ``MESSAGE``: one record per line of it (same ``line_no``)
==========================  ===========================================================

A MESSAGE that journalctl did not print (``null``: 4 KiB or more without ``--all``;
``[NNNB blob data]``: control characters or invalid UTF-8 without ``--all``) is a record
with ``text=None``, a ``problem`` saying how to get it back, and a counted warning.
"""

from __future__ import annotations

import re

from logparse.sources.layers import ProblemSink
from logparse.sources.records import Record
from logparse.sources.timestamps import bad_time_note, epoch_of_micros, fmt_utc

#: The journal fields the source layer reads.
META_KEYS = (
    "__CURSOR",
    "__REALTIME_TIMESTAMP",
    "_SOURCE_REALTIME_TIMESTAMP",
    "_BOOT_ID",
    "_HOSTNAME",
    "_SYSTEMD_UNIT",
    "_SYSTEMD_USER_UNIT",
    "UNIT",
    "USER_UNIT",
    "_PID",
    "SYSLOG_PID",
    "SYSLOG_IDENTIFIER",
    "_COMM",
    "CONTAINER_NAME",
)
#: The same, by their bytes (export and verbose read bytes).
META_KEYS_BYTES = {k.encode(): k for k in META_KEYS}


#: What journalctl prints instead of a MESSAGE with control characters or invalid UTF-8
#: (without ``--all``), in the short and verbose renderings.
BLOB_RE = re.compile(rb"\[(\d+(?:\.\d+)?[KMG]?)B blob data\]")


class Blob(str):
    """A ``[NB blob data]`` MESSAGE as verbose mode prints it (the text is lost)."""


def entry_unit(f: dict) -> str | None:
    """The stream a journal entry belongs to.

    systemd's own lines about a unit ("Started x.service", pid 1, ``_SYSTEMD_UNIT=init.scope``)
    carry ``UNIT=x.service``: they belong to x's stream.  Docker's journald log driver sets
    ``CONTAINER_NAME``.  Without any unit field (kernel, plain syslog) the identifier is used.
    """
    get = f.get
    u = get("UNIT") or get("USER_UNIT") or get("CONTAINER_NAME")
    if u:
        return u
    su = get("_SYSTEMD_UNIT")
    if su and su.startswith("user@") and get("_SYSTEMD_USER_UNIT"):
        return get("_SYSTEMD_USER_UNIT")
    return su or get("SYSLOG_IDENTIFIER") or get("_COMM")


def _to_int(s: str | None) -> int | None:
    if s is None:
        return None
    try:
        return int(s)
    except ValueError:
        return None


def entry_time(source_rt: str | None, rt: str | None) -> tuple[float | None, tuple[str, ...]]:
    """The entry's time (``_SOURCE_REALTIME_TIMESTAMP``, else ``__REALTIME_TIMESTAMP``) and the
    notes on it: a value that is no time leaves the entry without one, with a note."""
    ts, bad = epoch_of_micros(source_rt)
    if ts:
        return ts, ()
    ts2, bad2 = epoch_of_micros(rt)
    if ts2 is not None:
        return ts2, ()
    if bad or bad2:
        return None, (bad_time_note(str(source_rt if bad else rt)[:80]),)
    return None, ()


def entry_records(n: int, f: dict, values: list, fmt: str, sink: ProblemSink) -> list[Record]:
    """Records of one journal entry.  ``f``: metadata fields as str; ``values``: the MESSAGE
    values (str, bytes, or None / :class:`Blob` when journalctl did not print it)."""
    get = f.get
    host = get("_HOSTNAME")
    boot = get("_BOOT_ID")
    cursor = get("__CURSOR")
    pid = _to_int(get("_PID")) or _to_int(get("SYSLOG_PID"))
    unit = entry_unit(f)
    ts, notes = entry_time(get("_SOURCE_REALTIME_TIMESTAMP"), get("__REALTIME_TIMESTAMP"))
    if cursor is not None:
        sink.last_cursor[(host, unit)] = cursor
    src = sink.name
    if not values:  # an entry without MESSAGE (``-o cat`` prints an empty line)
        return [Record(n, "", src, ts, host, unit, pid, boot, cursor, False, None, fmt, list(notes))]
    out = []
    for v in values:
        if v is None or v.__class__ is Blob:
            problem = _lost_message(v, unit, ts, sink)
            out.append(Record(n, None, src, ts, host, unit, pid, boot, cursor, False, problem, fmt, list(notes)))
            continue
        for text in message_lines(v):
            out.append(Record(n, text, src, ts, host, unit, pid, boot, cursor, False, None, fmt, list(notes)))
    return out


def message_lines(v: str | bytes) -> list[str]:
    """The lines of a MESSAGE value (a final newline does not make an empty line)."""
    if isinstance(v, str):
        pieces = v.split("\n")
        if len(pieces) > 1 and pieces[-1] == "":
            pieces.pop()
        return pieces
    bpieces = v.split(b"\n")
    if len(bpieces) > 1 and bpieces[-1] == b"":
        bpieces.pop()
    return [p.decode("utf-8", "replace") for p in bpieces]


def _lost_message(v: Blob | None, unit: str | None, ts: float | None, sink: ProblemSink) -> str:
    """The problem of a MESSAGE journalctl did not print (and count it)."""
    if v is None:
        sink.note_problem("null")
        return (
            f"journalctl printed MESSAGE as null for {unit} at {fmt_utc(ts)}: fields of "
            "4 KiB or more are dropped unless --all is given (a long server_args= line is "
            "typical); rerun with `journalctl --all -o json` or `-o export`"
        )
    sink.note_problem("blob")
    return (
        f"journalctl printed '{v}' instead of the message of {unit} at "
        f"{fmt_utc(ts)}: it holds control characters or invalid UTF-8; rerun "
        "journalctl with --all (-a), or use -o export"
    )
