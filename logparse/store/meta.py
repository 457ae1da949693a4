"""What the store keeps about a launch beside its parse (light: no polars, for the read commands)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from logparse.store import columns as C

JSON_LAUNCH_COLUMNS = C.json_launch_columns()


@dataclass
class LaunchMeta:
    """What the store knows about a launch beyond the parse: where it came from, labels."""

    source_id: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    sglang_version_given: str | None = None
    ingested_at: datetime | None = None
    updated_at: datetime | None = None
    #: id(event) -> (source_id, journal cursor) for events whose origin differs from ``source_id``.
    event_origin: dict[int, tuple[str | None, str | None]] = field(default_factory=dict)
    #: The stored span of batch lines (see ``logparse.store.runtime``), kept in ``runtime_stats.runtime``.
    batch_edges: dict[str, Any] | None = None
    #: source id -> the line hashes of its lines of this launch that were not kept: another input
    #: holds other lines at their place (a damaged copy); kept in ``runtime_stats.runtime`` so the
    #: launch's warning survives later merges (see ``logparse.store.union``)
    disagreeing: dict[str, list[str]] = field(default_factory=dict)
