"""Prometheus metrics of the store (typed; the text exposition is written by ``logparse.cli.metrics_text``).

Per deployment, the gauges describe its **latest** launch (``launch_sequence`` order) and the
counters count all of its launches.  Every figure is read from the store's ``launch_summary``
view, i.e. the persisted launch budget (:mod:`logparse.budget.model`): nothing is recomputed.
Units are the base units Prometheus asks for: GiB figures are turned into whole bytes (× 2^30,
rounded: the log prints GiB with two decimals, so a fraction of a byte is no information), times
into seconds since the epoch (the log's time read as UTC).

Every series carries the same fixed labels (:data:`SERIES_LABELS`): ``deployment``, the store's key,
and its parts as separate labels, ``engine``, ``host``, ``model``, ``tp``, ``dp``, ``pp``, ``ep``
(:meth:`logparse.launches.deployment.Deployment.parts`: ``?`` where the key says ``?``), to filter
and group by as with any exporter.  None of them changes across restarts and upgrades of a
deployment (they are what the key is made of), so ``max_over_time(logparse_kv_tokens[7d])``
compares a launch with the ones before it whatever the release.  ``deployment`` stays because it is
the one label that tells two replicas apart (a ``deployment`` label given at ingest) and the join
key of every query; the parts of such a labelled deployment are its latest launch's, so a move to
another host starts a new series (``max by (deployment)`` spans it).  What may change within a
deployment is in one info-style series per deployment, ``logparse_launch_info{<the series labels>,
unit, engine_version} 1``, joined in queries (``* on (deployment) group_left (engine_version)
logparse_launch_info``): the unit (a short journal rendering names the syslog identifier) and the
release.

``engine_version`` is a **stable** name of the release (:func:`release_labels`): SGLang never prints
its version, so a launch is dated to a release *range* (``0.5.10–0.5.10.post1``) whose ends depend on
which lines the log holds (a failed start prints fewer of them).  The label keeps the name the
deployment's earlier launch had as long as the new launch's evidence still allows it, and only changes
when the evidence rules it out: an upgrade the log can see, or (once) a launch that dates the release
more narrowly than the one that gave the name.  A new name is the exact version when
one is known (printed by vLLM, or pinned by the evidence or ``--sglang-version``), else the lowest
release of the range.  The cardinality is the fleet's size; a launch id is never a label.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from logparse import engines
from logparse.launches.deployment import FIELDS, PARTS, Deployment
from logparse.store import db as dbm

GIB = 1 << 30
#: The labels of every series: the store's key and its parts (:data:`logparse.launches.deployment.PARTS`).
SERIES_LABELS = ("deployment", *PARTS)
#: The labels of ``logparse_launch_info``: the series labels, then what may change within a deployment.
INFO_LABELS = (*SERIES_LABELS, "unit", "engine_version")
#: ``engine_version`` when nothing in the log or the command line dates the launch.
UNKNOWN_VERSION = "unknown"


@dataclass(frozen=True)
class Family:
    name: str  # as exposed (a counter's ``_total`` included; an info family's ``_info`` included)
    kind: str  # gauge | counter | info
    help: str
    column: str  # the launch_summary column (or counter) it reads
    scale: float = 1.0
    integer: bool = False  # whole numbers (bytes, tokens, counts)


FAMILIES = (
    Family(
        "logparse_kv_tokens",
        "gauge",
        "KV-cache tokens of the latest launch (the pool the engine allocated).",
        "kv_tokens",
        integer=True,
    ),
    Family(
        "logparse_kv_pool_bytes",
        "gauge",
        "KV-cache pool size of the latest launch, in bytes.",
        "kv_pool_gb",
        GIB,
        integer=True,
    ),
    Family(
        "logparse_headroom_bytes",
        "gauge",
        "GPU memory left free after startup on the binding rank of the latest launch, in bytes.",
        "headroom_gb",
        GIB,
        integer=True,
    ),
    Family(
        "logparse_weights_bytes",
        "gauge",
        "Model weights on the binding rank of the latest launch, in bytes.",
        "weights_gb",
        GIB,
        integer=True,
    ),
    Family(
        "logparse_max_running_requests",
        "gauge",
        "max_running_requests the scheduler settled on in the latest launch.",
        "max_running_requests_effective",
        integer=True,
    ),
    Family(
        "logparse_peak_kv_usage_ratio",
        "gauge",
        "Peak share of the KV cache in use in the latest launch's runtime lines (0-1: SGLang's token usage, "
        "vLLM's GPU KV cache usage).",
        "peak_token_usage",
    ),
    Family(
        "logparse_peak_running_requests",
        "gauge",
        "Peak requests running at once in the latest launch's runtime lines.",
        "peak_running_req",
        integer=True,
    ),
    Family(
        "logparse_peak_waiting_requests",
        "gauge",
        "Peak requests waiting (queued) in the latest launch's runtime lines.",
        "peak_queue_req",
        integer=True,
    ),
    *(
        Family(
            f"logparse_generation_throughput_{q}_tokens_per_second",
            "gauge",
            f"{what} of the generation throughput its runtime lines print in the latest launch (tokens/s, one value "
            "a line).",
            f"gen_throughput_{q}",
        )
        for q, what in (("p50", "Median"), ("p90", "90th percentile"), ("max", "Maximum"))
    ),
    Family(
        "logparse_startup_seconds", "gauge", "Startup time of the latest launch (first line to ready).", "startup_s"
    ),
    Family("logparse_launch_ready", "gauge", "1 if the latest launch became ready, else 0.", "ready", integer=True),
    Family(
        "logparse_launch_start_time_seconds",
        "gauge",
        "Start time of the latest launch, seconds since the epoch (the log's time read as UTC).",
        "start_time",
    ),
    Family("logparse_launches_total", "counter", "Launches of the deployment in the store.", "launches", integer=True),
    Family(
        "logparse_failed_launches_total",
        "counter",
        "Failed starts of the deployment in the store.",
        "failed",
        integer=True,
    ),
    Family(
        "logparse_launch_info",
        "info",
        "The latest launch's host, unit, model, engine and release (a stable name: it changes on an upgrade "
        "the log shows, never because one log dates the release more narrowly than another); value 1.",
        "info",
    ),
)

#: The throughput's figures, read from the runtime a launch keeps (:mod:`logparse.launches.runtime`).
_THROUGHPUT = ("gen_throughput_p50", "gen_throughput_p90", "gen_throughput_max")

_LATEST = f"""
WITH latest AS (
    SELECT deployment, max(launch_no) AS launch_no FROM launch_sequence GROUP BY deployment
), counts AS (
    SELECT q.deployment, count(q.launch_no) AS launches,
        count(q.launch_no) FILTER (WHERE l.outcome = 'failed') AS failed
    FROM launch_sequence q JOIN launches l USING (launch_id) GROUP BY q.deployment
)
SELECT s.deployment, {", ".join(f"s.{f}" for f in FIELDS)}, s.unit, s.outcome, s.started_at,
       s.kv_tokens, s.kv_pool_gb, s.headroom_gb, s.weights_gb, s.max_running_requests_effective, s.startup_s,
       s.peak_token_usage, s.peak_running_req, s.peak_queue_req,
       {", ".join(f"TRY_CAST(r.runtime ->> '{k}' AS DOUBLE) AS {k}" for k in _THROUGHPUT)},
       c.launches, c.failed
FROM latest t
JOIN launch_sequence q ON q.deployment = t.deployment AND q.launch_no = t.launch_no
JOIN launch_summary s ON s.launch_id = q.launch_id
LEFT JOIN runtime_stats r ON r.launch_id = q.launch_id
JOIN counts c ON c.deployment = t.deployment
ORDER BY s.deployment
"""

#: Every launch's release evidence, in each deployment's launch order (for :func:`release_labels`).
_RELEASES = """
SELECT q.deployment, coalesce(l.engine, $default_engine) AS engine,
       coalesce(l.engine_version, l.sglang_version) AS exact, l.version_min, l.version_max
FROM launch_sequence q JOIN launches l USING (launch_id)
ORDER BY q.deployment, q.launch_no
"""


@dataclass(frozen=True)
class ReleaseEvidence:
    """What one launch says of its release: an exact version, or a range ``(lo, hi)``, or nothing."""

    engine: str
    exact: str | None = None
    lo: str | None = None
    hi: str | None = None

    def allows(self, name: str) -> bool:
        """Could the launch run release ``name``?  (No evidence allows every release.)"""
        if self.exact:
            return name == self.exact
        line = _release_line(self.engine) if self.lo and self.hi else None
        if line is not None:
            return line.in_range(name, (self.lo, self.hi))
        return True

    def name(self) -> str:
        """The name this launch alone would be given."""
        return self.exact or self.lo or UNKNOWN_VERSION


def _release_line(engine: str):
    """The engine's releases in order (an engine no registered engine has: the default engine's)."""
    return (engines.find(engine) or engines.default()).release_line()


def release_labels(launches: Iterable[ReleaseEvidence]) -> list[str]:
    """The stable release names of one deployment's launches, in launch order: a launch keeps the
    previous launch's name while its evidence allows it (an unknown name gives way to any)."""
    out: list[str] = []
    for ev in launches:
        prev = out[-1] if out else None
        keep = prev is not None and prev != UNKNOWN_VERSION and ev.allows(prev)
        out.append(prev if keep and prev is not None else ev.name())
    return out


@dataclass
class Sample:
    labels: dict[str, str]
    value: float


@dataclass
class Metrics:
    """Each family with its samples (one per deployment that has a value)."""

    families: list[tuple[Family, list[Sample]]] = field(default_factory=list)

    def samples(self, name: str) -> list[Sample]:
        return next((s for fam, s in self.families if fam.name == name), [])

    def value(self, name: str, deployment: str) -> float | None:
        return next((s.value for s in self.samples(name) if s.labels["deployment"] == deployment), None)


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
    out["info"] = 1
    return out


def _series_labels(row: dict[str, Any]) -> dict[str, str]:
    """The store's key and its parts, read from the latest launch's fields (never from the key's text:
    a ``deployment`` label given at ingest replaces the key, and its parts are still the launch's)."""
    parts = Deployment.of_fields({f: row[f] for f in FIELDS}).parts()
    return {"deployment": row["deployment"] or ""} | parts


def _info_labels(row: dict[str, Any], version: str) -> dict[str, str]:
    return _series_labels(row) | {"unit": row["unit"] or "", "engine_version": version}


def _latest_labels(rows: list[tuple]) -> dict[str, str]:
    """deployment -> the stable release name of its latest launch."""
    by_deployment: dict[str, list[ReleaseEvidence]] = {}
    for deployment, engine, exact, lo, hi in rows:
        by_deployment.setdefault(deployment, []).append(ReleaseEvidence(engine, exact, lo, hi))
    return {d: release_labels(evs)[-1] for d, evs in by_deployment.items()}


def _sample(fam: Family, row: dict[str, Any], version: str) -> Sample | None:
    v = _values(row).get(fam.column)
    if v is None:
        return None
    if fam.kind == "info":
        return Sample(_info_labels(row, version), 1.0)
    value = float(v) * fam.scale
    return Sample(_series_labels(row), float(round(value)) if fam.integer else value)


def collect(path) -> Metrics:
    """The metrics of the store at ``path`` (an empty set when there is no store yet)."""
    try:
        with dbm.connection(path, write=False) as con:
            cur = con.execute(_LATEST)
            names = [d[0] for d in cur.description]
            rows = [dict(zip(names, r)) for r in cur.fetchall()]
            versions = _latest_labels(con.execute(_RELEASES, {"default_engine": engines.default().name}).fetchall())
    except dbm.StoreMissing:
        rows, versions = [], {}
    out = Metrics()
    for fam in FAMILIES:
        samples = [_sample(fam, row, versions.get(row["deployment"], UNKNOWN_VERSION)) for row in rows]
        out.families.append((fam, [s for s in samples if s is not None]))
    return out
