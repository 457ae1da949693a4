"""What an ingest is given and what it answers: the options, each input's outcome, the run's report.

:class:`IngestOptions` carries the command line's choices (``--host``, ``--label``, the release,
the lock timeout, the input format, the progress bar); :class:`SourceOutcome` says what became of
one input (stored, skipped, pending, failed, ...) and what it did to the store, launch by launch;
:class:`IngestReport` gathers them, counts the run's launches once
(:class:`~logparse.store.tally.RunTally`) and writes its one-line summary as ``ingest`` prints it
(``ingest --json``: :meth:`IngestReport.to_dict`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from logparse import engines
from logparse.store import db as dbm
from logparse.store.tally import RunTally, Step
from logparse.text import valid_text


@dataclass
class IngestOptions:
    host: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    sglang_version: str | None = None
    lock_timeout: float = dbm.DEFAULT_LOCK_TIMEOUT
    input_format: str | None = None
    progress: bool | None = None  # None: when stderr is a terminal

    def __post_init__(self) -> None:
        # names from the command line: valid text before they are stored (logparse.text)
        self.host = valid_text(self.host) if self.host is not None else None
        self.labels = {valid_text(k): valid_text(v) for k, v in self.labels.items()}


@dataclass
class SourceOutcome:
    name: str
    #: stored | skipped | empty (no engine lines) | pending (kept until its launch's start arrives) |
    #: unattached | imported | binary (not read) | failed (could not be read: not stored) |
    #: model_config (a model's config.json, kept for its launches: :mod:`logparse.store.model_configs`)
    status: str
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    dropped_lines: int = 0
    kept_lines: int = 0  # lines of launches whose start is not in the store yet (kept until it is)
    message: str = ""
    #: launches already stored that this input showed to be part of another one (see :mod:`.tally`)
    united: int = 0
    #: what the input did to the store, launch by launch (:class:`~logparse.store.tally.RunTally`)
    lineage: list[Step] = field(default_factory=list, repr=False)

    @classmethod
    def of(cls, name: str, status: str, lineage: list[Step], **rest: Any) -> SourceOutcome:
        """An input's outcome, its launches counted from what it did to the store."""
        t = RunTally().follow(lineage)
        return cls(name, status, t.added, t.updated, t.unchanged, united=t.united, lineage=list(lineage), **rest)


def source_dict(s: SourceOutcome) -> dict[str, Any]:
    """One input's outcome as ``ingest --json`` prints it (its lineage is the store's business)."""
    keys = ("name", "status", "added", "updated", "unchanged", "united", "dropped_lines", "kept_lines", "message")
    return {k: getattr(s, k) for k in keys}


@dataclass
class IngestReport:
    sources: list[SourceOutcome] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def tally(self) -> RunTally:
        """What the run did to the store: a launch one input added and a later one updated or
        united with another is one launch added, a launch two inputs hold is counted once."""
        return RunTally().follow(step for s in self.sources for step in s.lineage)

    @property
    def added(self) -> int:
        return self.tally().added

    @property
    def updated(self) -> int:
        return self.tally().updated

    @property
    def unchanged(self) -> int:
        return self.tally().unchanged

    @property
    def united(self) -> int:
        return self.tally().united

    @property
    def skipped(self) -> int:
        return sum(1 for s in self.sources if s.status == "skipped")

    @property
    def failed(self) -> list[SourceOutcome]:
        """The inputs that could not be read (not stored)."""
        return [s for s in self.sources if s.status == "failed"]

    @property
    def useful(self) -> bool:
        """Did the run store anything, or find it stored already?  (Else ``ingest`` exits 2.)"""
        return any(s.status in ("stored", "imported", "pending", "skipped", "unattached") for s in self.sources)

    def to_dict(self) -> dict[str, Any]:
        """The report as ``ingest --json`` prints it: the run's counts, then each input's outcome."""
        t = self.tally()
        return {
            "added": t.added,
            "updated": t.updated,
            "unchanged": t.unchanged,
            "united": t.united,
            "skipped": self.skipped,
            "failed": len(self.failed),
            "summary": self.summary(),
            "sources": [source_dict(s) for s in self.sources],
            "warnings": list(dict.fromkeys(self.warnings)),
        }

    def summary(self) -> str:
        stored = sum(1 for s in self.sources if s.status in ("stored", "imported"))
        empty = sum(1 for s in self.sources if s.status == "empty")
        t = self.tally()
        parts = [f"{t.added} launch(es) added", f"{t.updated} updated", f"{t.unchanged} unchanged"]
        if t.united:
            parts.append(f"{t.united} stored launch(es) united with another (one launch, read in pieces)")
        text = f"ingested {stored} input(s): " + ", ".join(parts)
        if self.skipped:
            text += f"; {self.skipped} input(s) skipped (already in the store)"
        pending = [s for s in self.sources if s.status == "pending"]
        if pending:
            lines = sum(s.kept_lines for s in pending)
            text += (
                f"; {len(pending)} input(s) hold only lines of launches whose start is not in the store yet "
                f"({lines} line(s) kept until it is)"
            )
        configs = sum(1 for s in self.sources if s.status == "model_config")
        if configs:
            text += f"; {configs} model file(s) (config.json, weights index) kept for their launches"
        if empty:
            text += f"; {empty} input(s) without engine lines ({engines.labels()}) not stored"
        if self.failed:
            names = ", ".join(s.name for s in self.failed[:3]) + (", ..." if len(self.failed) > 3 else "")
            text += f"; {len(self.failed)} input(s) could not be read, not stored: {names}"
        binary = sum(1 for s in self.sources if s.status == "binary")
        if binary:
            text += f"; {binary} binary file(s) met in a directory not read"
        dropped = sum(s.dropped_lines for s in self.sources)
        if dropped:
            text += f"; {dropped} line(s) of launches whose start is in no input and not in the store were dropped"
        return text
