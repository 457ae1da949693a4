"""Prometheus metrics of the store (typed; the text exposition is written by ``logparse.cli.metrics``).

Per deployment, the gauges describe its **latest** launch (``launch_sequence`` order) and the
counters count all of its launches.  Every figure is read from the store's ``launch_summary``
view, i.e. the persisted launch budget (:mod:`logparse.budget.model`): nothing is recomputed.
Units are the base units Prometheus asks for: GiB figures are turned into bytes (× 2^30), times
into seconds since the epoch (the log's time read as UTC).

Labels are ``host``, ``unit``, ``model``, ``deployment``, ``engine`` and ``engine_version``: one
series per deployment and family (never a launch id), so the cardinality is the fleet's size.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from logparse.store import db as dbm

GIB = 1 << 30
LABELS = ("host", "unit", "model", "deployment", "engine", "engine_version")
#: Counters leave out the version: an upgrade must not start a new counter series at 0.
COUNTER_LABELS = LABELS[:-1]


@dataclass(frozen=True)
class Family:
    name: str
    kind: str  # gauge | counter
    help: str
    column: str  # the launch_summary column (or counter) it reads
    scale: float = 1.0


FAMILIES = (
    Family(
        "logparse_kv_tokens", "gauge", "KV-cache tokens of the latest launch (the pool SGLang allocated).", "kv_tokens"
    ),
    Family("logparse_kv_pool_bytes", "gauge", "KV-cache pool size of the latest launch, in bytes.", "kv_pool_gb", GIB),
    Family(
        "logparse_headroom_bytes",
        "gauge",
        "GPU memory left free after startup on the binding rank of the latest launch, in bytes.",
        "headroom_gb",
        GIB,
    ),
    Family(
        "logparse_weights_bytes",
        "gauge",
        "Model weights on the binding rank of the latest launch, in bytes.",
        "weights_gb",
        GIB,
    ),
    Family(
        "logparse_max_running_requests",
        "gauge",
        "max_running_requests the scheduler settled on in the latest launch.",
        "max_running_requests_effective",
    ),
    Family(
        "logparse_startup_seconds", "gauge", "Startup time of the latest launch (first line to ready).", "startup_s"
    ),
    Family("logparse_launch_ready", "gauge", "1 if the latest launch became ready, else 0.", "ready"),
    Family(
        "logparse_launch_start_time_seconds",
        "gauge",
        "Start time of the latest launch, seconds since the epoch (the log's time read as UTC).",
        "start_time",
    ),
    Family("logparse_launches_total", "counter", "Launches of the deployment in the store.", "launches"),
    Family("logparse_failed_launches_total", "counter", "Failed starts of the deployment in the store.", "failed"),
)

_LATEST = """
WITH latest AS (
    SELECT deployment, max(launch_no) AS launch_no FROM launch_sequence GROUP BY deployment
), counts AS (
    SELECT q.deployment, count(q.launch_no) AS launches,
        count(q.launch_no) FILTER (WHERE l.outcome = 'failed') AS failed
    FROM launch_sequence q JOIN launches l USING (launch_id) GROUP BY q.deployment
)
SELECT s.deployment, s.host, s.unit, s.model_path, s.engine, s.version, s.outcome, s.started_at,
       s.kv_tokens, s.kv_pool_gb, s.headroom_gb, s.weights_gb, s.max_running_requests_effective, s.startup_s,
       c.launches, c.failed
FROM latest t
JOIN launch_sequence q ON q.deployment = t.deployment AND q.launch_no = t.launch_no
JOIN launch_summary s ON s.launch_id = q.launch_id
JOIN counts c ON c.deployment = t.deployment
ORDER BY s.deployment
"""


@dataclass
class Sample:
    labels: dict[str, str]
    value: float


@dataclass
class Metrics:
    """Each family with its samples (one per deployment that has a value)."""

    families: list[tuple[Family, list[Sample]]] = field(default_factory=list)

    def value(self, name: str, deployment: str) -> float | None:
        for fam, samples in self.families:
            if fam.name == name:
                return next((s.value for s in samples if s.labels["deployment"] == deployment), None)
        return None


def _epoch(v: Any) -> float | None:
    if v is None:
        return None
    if isinstance(v, str):
        v = datetime.fromisoformat(v)
    if v.tzinfo is None:
        v = v.replace(tzinfo=UTC)
    return v.timestamp()


def _values(row: dict[str, Any]) -> dict[str, Any]:
    out = dict(row)
    out["ready"] = 1 if row["outcome"] == "ready" else 0
    out["start_time"] = _epoch(row["started_at"])
    return out


def _labels(row: dict[str, Any]) -> dict[str, str]:
    return {
        "host": row["host"] or "",
        "unit": row["unit"] or "",
        "model": row["model_path"] or "",
        "deployment": row["deployment"] or "",
        "engine": row["engine"] or "",
        "engine_version": row["version"] or "",
    }


def collect(path) -> Metrics:
    """The metrics of the store at ``path`` (an empty set when there is no store yet)."""
    try:
        with dbm.connection(path, write=False) as con:
            cur = con.execute(_LATEST)
            names = [d[0] for d in cur.description]
            rows = [dict(zip(names, r)) for r in cur.fetchall()]
    except dbm.StoreMissing:
        rows = []
    out = Metrics()
    for fam in FAMILIES:
        samples = []
        for row in rows:
            v = _values(row).get(fam.column)
            if v is not None:
                labels = _labels(row)
                if fam.kind == "counter":
                    labels = {k: labels[k] for k in COUNTER_LABELS}
                samples.append(Sample(labels, float(v) * fam.scale))
        out.families.append((fam, samples))
    return out
