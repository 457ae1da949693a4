"""The parse result: launches, their per-rank memory, and line accounting.

This is the JSON contract of ``logparse parse --json`` (documented in the README):

``{"launches": [...], "lines": {"total", "parsed", "noise", "unrecognized", "other_units"}, "warnings": [...]}``

Units: every ``*_gb`` figure of device memory is GiB (SGLang prints bytes / 2^30 and
calls it "GB"); HiCache host memory (``hicache_host_gb``) is decimal GB (10^9), as
SGLang prints it.  Absent values are ``None`` (JSON ``null``), never 0.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from logparse import engines

#: Metadata of a field that is carried for the store and reports but is not in the JSON contract.
INTERNAL = {"contract": False}
#: Metadata of a timestamp field: ISO text in Python and JSON, TIMESTAMP (plus ``*_text``) in the store.
TIMESTAMP = {"kind": "timestamp"}


def rank_label(obj: Any) -> str:
    """``DP1 PP0 TP3 EP3``: a rank (of a RankMemory or an Event) as SGLang's prefix names it."""
    parts = [f"DP{obj.dp_rank}"] if obj.dp_rank is not None else []
    if obj.pp_rank is not None:
        parts.append(f"PP{obj.pp_rank}")
    parts.append(f"TP{obj.tp_rank if obj.tp_rank is not None else 0}")
    if obj.ep_rank is not None:
        parts.append(f"EP{obj.ep_rank}")
    return " ".join(parts)


@dataclass(slots=True)
class RankMemory:
    dp_rank: int | None = None
    pp_rank: int | None = None
    tp_rank: int | None = None
    ep_rank: int | None = None
    worker: str = "target"
    avail_before_load_gb: float | None = None
    weights_gb: float | None = None
    avail_after_load_gb: float | None = None
    load_s: float | None = None
    kv_dtype: str | None = None
    kv_tokens: int | None = None
    k_size_gb: float | None = None
    v_size_gb: float | None = None
    kv_size_gb: float | None = None
    avail_after_pool_gb: float | None = None
    graph_gb: float | None = None
    avail_after_graph_gb: float | None = None
    graph_s: float | None = None
    #: vLLM: the activation peak of the profile run, and the memory outside PyTorch (GiB).
    activation_gb: float | None = None
    non_torch_gb: float | None = None
    # Beyond the contract: pools other than the plain KV pool, kept for explain/diff.
    extra: dict[str, Any] = field(default_factory=dict, metadata=INTERNAL)

    def key(self) -> tuple:
        return (self.dp_rank, self.pp_rank, self.tp_rank, self.ep_rank, self.worker)

    def label(self) -> str:
        return rank_label(self)

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in RANK_FIELDS}
        if self.extra:
            d["extra"] = dict(self.extra)
        return d


def default_engine_name() -> str:
    """The name of the engine of a launch that names none: the registry's default."""
    return engines.default().name


@dataclass(slots=True)
class Launch:
    launch_id: str = ""
    #: The inference engine that printed the log, by its name (``sglang``, ``vllm``); a launch made
    #: without one is the default engine's (:func:`logparse.engines.default`).
    engine: str = field(default_factory=default_engine_name)
    source: str | None = None
    host: str | None = None
    unit: str | None = None
    pid: int | None = None
    boot: str | None = None
    started_at: str | None = field(default=None, metadata=TIMESTAMP)
    ready_at: str | None = field(default=None, metadata=TIMESTAMP)
    #: The UTC offset of ``started_at`` and ``ready_at`` as ISO 8601 writes it (``+00:00``), when the
    #: input said it (a journal, docker or kubectl time with its zone); None when it printed no zone
    #: (a plain log's stamps are the server's local time): :func:`logparse.launches.times.iso_time`.
    time_zone: str | None = None
    outcome: str = "incomplete"  # ready | failed | incomplete
    error: str | None = None
    #: Which line decided ``outcome``, why it decides, and its time of day (``the API server listed its
    #: routes … (at 09:00:52)``); for an incomplete launch, what the input lacks.  One line of text,
    #: the same whichever input (or piece of one) held the line.
    outcome_evidence: str | None = None
    sglang_version: str | None = None
    sglang_version_range: str | None = None
    #: The engine's release, whatever the engine: printed (vLLM), given, or dated from the wording.
    engine_version: str | None = None
    #: The release range the log's wording allows (``0.8.0–0.8.5.post1``), or the one release.
    engine_version_range: str | None = None
    version_evidence: list[str] = field(default_factory=list)
    #: vLLM: the engine generation, ``V0`` (``LLMEngine``, up to 0.10.2) or ``V1`` (``EngineCore``).
    engine_generation: str | None = None
    model_path: str | None = None
    tp_size: int | None = None
    dp_size: int | None = None
    pp_size: int | None = None
    ep_size: int | None = None
    mem_fraction_static: float | None = None
    kv_cache_dtype: str | None = None
    page_size: int | None = None
    context_length: int | None = None
    chunked_prefill_size: int | None = None
    max_running_requests: int | None = None
    max_total_tokens: int | None = None
    speculative_algorithm: str | None = None
    enable_hierarchical_cache: bool | None = None
    hicache_ratio: float | None = None
    hicache_size: float | None = None
    enable_dp_attention: bool | None = None
    device: str | None = None
    #: The server's role in prefill/decode disaggregation (``prefill`` | ``decode``): from the word
    #: a build puts in the line prefix (``[… DisaggregationMode.DECODE TP1]``), else from
    #: ``server_args``' ``disaggregation_mode``; None for a server that is not disaggregated.
    role: str | None = None
    server_args: dict[str, Any] | None = None
    server_args_form: str | None = None  # "dataclass" | "dict"
    max_total_num_tokens: int | None = None
    max_prefill_tokens: int | None = None
    max_running_requests_effective: int | None = None
    context_len: int | None = None
    available_mem_gb: float | None = None
    available_mem_kind: str | None = None  # "gpu" | "cpu"
    hicache_host_gb: float | None = None  # decimal GB, as SGLang prints host memory
    hicache_host_tokens: int | None = None
    # vLLM (None on SGLang launches; catalogue §9)
    #: ``gpu_memory_utilization``: the fraction of *total* GPU memory the instance may use.
    gpu_memory_utilization: float | None = None
    #: ``set`` (in the arguments), ``default`` (the release default: absent from ``non-default args``),
    #: or ``printed`` (read from a memory line; the arguments were not in the log).
    gpu_memory_utilization_source: str | None = None
    max_model_len: int | None = None
    #: The engine's KV blocks: the minimum over workers (V0 ``# GPU blocks``; V1 0.6.4-0.7.3).
    num_gpu_blocks: int | None = None
    block_size: int | None = None
    #: The engine's KV capacity in tokens; what it counts is ``kv_tokens_definition``.
    kv_tokens: int | None = None
    #: ``blocks×block_size`` (up to 0.20.0) or ``concurrency×max_model_len`` (0.20.1+).
    kv_tokens_definition: str | None = None
    #: ``Maximum concurrency for L tokens per request: C x``: C, and L in ``max_concurrency_tokens``.
    max_concurrency: float | None = None
    max_concurrency_tokens: int | None = None
    #: The kind of a failed start (catalogue §2.7): ``no_kv_memory``, ``max_len_exceeds_kv``,
    #: ``free_memory_at_start``, ``weights_oom``, ``profile_assertion``, ``mm_reservation``, ``engine_failed``,
    #: ``exception``, ``killed``.
    error_kind: str | None = None
    first_line: int | None = None
    last_line: int | None = None
    warnings: list[str] = field(default_factory=list)
    ranks: list[RankMemory] = field(default_factory=list)
    # Not in the JSON contract; carried for the store and reports.
    events: list[Any] = field(default_factory=list, metadata=INTERNAL)
    runtime: dict[str, Any] = field(default_factory=dict, metadata=INTERNAL)
    version_range: tuple[str, str] | None = field(default=None, metadata=INTERNAL)
    #: 1-based position among the launches of its source (completes the identity of a log without time).
    source_ordinal: int | None = field(default=None, metadata=INTERNAL)
    #: A stored launch's inputs (path, first line, last line of it there; ``launch_sources``), the
    #: one it names (``source``) first; empty for a parsed launch (its lines are in ``source``).
    line_ranges: list[tuple[str, int, int]] = field(default_factory=list, metadata=INTERNAL)
    #: The model's config found for it (:mod:`logparse.store.model_configs`): where it was and its
    #: document, kept by ingest or met beside its log; None when none is known.
    model_config: tuple[str, dict[str, Any], int | None] | None = field(default=None, metadata=INTERNAL)

    def to_dict(self, *, with_events: bool = False) -> dict[str, Any]:
        d: dict[str, Any] = {}
        for k in LAUNCH_FIELDS:
            if k == "ranks":
                d[k] = [r.to_dict() for r in self.ranks]
            elif k in ("warnings", "version_evidence"):
                d[k] = list(getattr(self, k))
            else:
                d[k] = getattr(self, k)
        d["runtime"] = dict(self.runtime)
        if with_events:
            d["events"] = [e.to_dict() for e in self.events]
        return d

    def rank(self, worker: str = "target", tp_rank: int | None = 0) -> RankMemory | None:
        for r in self.ranks:
            if r.worker == worker and (r.tp_rank or 0) == (tp_rank or 0) and not r.dp_rank:
                return r
        return None


# --------------------------------------------------------------------------- the declaration
#: Kinds of a declared field: what JSON, polars and DuckDB each make of it.
KINDS = ("str", "int", "float", "bool", "json", "timestamp")


def field_kind(f: Any) -> str:
    """The kind of a dataclass field, from its metadata or its annotation."""
    if "kind" in f.metadata:
        return f.metadata["kind"]
    ann = str(f.type).replace(" ", "")
    base = ann.split("|")[0]
    if base.startswith(("dict", "list", "tuple")):
        return "json"
    return {"str": "str", "int": "int", "float": "float", "bool": "bool"}.get(base, "json")


def declared(cls: type, *, contract_only: bool = True) -> dict[str, str]:
    """Field name -> kind of a dataclass, in declaration order (the one declaration of its fields)."""
    return {f.name: field_kind(f) for f in fields(cls) if not contract_only or f.metadata.get("contract", True)}


#: Launch fields, in contract order (``ranks`` comes last): the JSON keys of ``parse --json``.
LAUNCH_FIELDS = tuple(declared(Launch))
#: Per (rank, worker) fields, in contract order.
RANK_FIELDS = tuple(declared(RankMemory))


@dataclass(slots=True)
class LineCounts:
    """Every input line is counted once: ``parsed + noise + unrecognized + other_units == total``.

    ``other_units``: lines of other programs in a journal or a compose/kubectl capture (nginx next
    to ``sglang.service``): a unit (a service, a container) none of whose lines is SGLang's."""

    total: int = 0
    parsed: int = 0
    noise: int = 0
    unrecognized: int = 0
    other_units: int = 0

    def add(self, status: str) -> None:
        self.total += 1
        if status == "parsed":
            self.parsed += 1
        elif status == "noise":
            self.noise += 1
        else:
            self.unrecognized += 1

    def merge(self, other: LineCounts) -> None:
        self.total += other.total
        self.parsed += other.parsed
        self.noise += other.noise
        self.unrecognized += other.unrecognized
        self.other_units += other.other_units

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(slots=True)
class Unrecognized:
    source: str
    line_no: int
    reason: str
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "line_no": self.line_no, "reason": self.reason, "text": self.text}


@dataclass(slots=True)
class SourceSummary:
    name: str
    fmt: str
    bytes: int | None
    lines: LineCounts
    content_hash: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "format": self.fmt,
            "bytes": self.bytes,
            "content_hash": self.content_hash,
            "lines": self.lines.to_dict(),
        }


@dataclass(slots=True)
class ParseResult:
    launches: list[Launch] = field(default_factory=list)
    lines: LineCounts = field(default_factory=LineCounts)
    warnings: list[str] = field(default_factory=list)
    unrecognized: list[Unrecognized] = field(default_factory=list)
    sources: list[SourceSummary] = field(default_factory=list)

    def to_dict(self, *, with_events: bool = False) -> dict[str, Any]:
        return {
            "launches": [launch.to_dict(with_events=with_events) for launch in self.launches],
            "lines": self.lines.to_dict(),
            "warnings": list(self.warnings),
            "unrecognized": [u.to_dict() for u in self.unrecognized],
            "sources": [s.to_dict() for s in self.sources],
        }
