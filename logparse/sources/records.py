"""Records: what the source layer hands to the grammar.

A *record* is one logical log line as the SGLang process printed it, stripped of
everything an outer layer added (journald header, docker/kubectl prefix, Ray actor
prefix, a Python-logging wrapper).  The outer layer's facts (its timestamp, host,
unit, pid, boot) travel with the record because the launch splitter needs them:
a new ``pid`` or ``boot`` is a new launch, and two units in one journal are two
independent streams.

Every *physical input line* (or journal entry) produces exactly one record, so
that ``parsed + noise + unrecognized + other_units == total`` can be checked per source.  A
record whose text could not be recovered (journal ``MESSAGE`` null, ``[NB blob
data]``) carries ``text=None`` and a ``problem`` saying why; a journal marker
(``-- Boot ... --``) carries ``marker=True``.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Record:
    #: 1-based line (or journal entry) number inside its source.
    line_no: int
    #: The SGLang line itself, without outer prefixes and without the trailing newline.
    #: ``None`` when the outer layer lost it (see ``problem``).
    text: str | None
    #: Which input this came from (a path, ``-``, or a journal query string).
    source: str = ""
    #: Outer timestamp as seconds since the epoch (UTC), when the outer layer had one.
    ts: float | tuple[int, int, int] | None = (
        None  # (month, day, second of day): a year-less stamp until sources.years dates it
    )
    host: str | None = None
    #: systemd unit, docker/compose service, kubernetes pod/container: the "stream" name.
    unit: str | None = None
    pid: int | None = None
    boot: str | None = None
    #: journald ``__CURSOR`` (export/json modes), for resume and de-duplication.
    cursor: str | None = None
    #: A journal marker (boot separator, header, ``-- No entries --``, ``Hint:``): noise.
    marker: bool = False
    #: Why ``text`` is missing or suspect (shown to the user, stored as unrecognized reason).
    problem: str | None = None
    #: Name of the input format that produced the record (``plain``, ``journal-short``, ...).
    fmt: str = "plain"
    #: Free-form notes from the outer layer (e.g. "year taken from SGLang timestamp").
    notes: list[str] = field(default_factory=list)

    def stream_key(self) -> tuple:
        """Identity of the process that printed the line, as far as the outer layer knows.

        Ray prefixes every actor's lines with the actor's pid; the ranks of one server are
        different actors, so that pid does not identify the server process."""
        return (self.host, self.unit, self.boot, None if self.fmt == "ray" else self.pid)
