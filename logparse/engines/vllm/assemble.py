"""vLLM launches: split a stream of vLLM events into server starts and assemble each one.

A vLLM launch is one start of ``vllm serve`` (or of an offline ``LLM(...)``).  It opens on one of
vLLM's own engine anchors (:data:`OPENING_KINDS`: the version, the arguments, the engine init, a KV
or profile line, a startup failure); a vLLM library line printed inside an SGLang 0.2-0.3 launch
(SGLang used vLLM's loaders) opens nothing and stays that SGLang launch's noise (the pipeline holds
such weak lines back until an anchor shows).  Within one stream a new launch begins when

* the API server prints its version or arguments again after the engine started,
* an engine (the same DP rank) prints its init line again,
* a rank prints its weights, KV or profile figures again after the launch became ready or failed.

Figures (catalogue §9): the launch fields of :class:`~logparse.launches.model.Launch` that vLLM fills
are read by :mod:`logparse.engines.vllm.figures`; per-rank memory by :func:`vllm_rank_memory`.
"""

from __future__ import annotations

import re
from typing import Any

from logparse.engines.vllm.figures import fill_launch
from logparse.engines.vllm.prefix import RAY_ACTORS, split_head
from logparse.grammar.bounds import RANK
from logparse.grammar.events import Event
from logparse.grammar.kinds import GENERIC_KINDS
from logparse.launches.figures import check_launch, event_warnings, mark_rank, settle_marks
from logparse.launches.identity import launch_id
from logparse.launches.model import Launch, RankMemory
from logparse.launches.runtime import RuntimeAgg
from logparse.launches.times import zone_text

#: Kinds that are vLLM's own engine anchors: a vLLM launch needs one of them.
OPENING_KINDS = frozenset(
    {
        "vllm_version",
        "vllm_args",
        "vllm_engine_init",
        "vllm_engine_process",
        "vllm_profile",
        "vllm_kv_memory",
        "vllm_kv_tokens",
        "vllm_blocks",
        "vllm_concurrency",
        "vllm_budget_report",
        "vllm_init_engine",
        "vllm_failure",
        "vllm_engine_failed",
        "vllm_worker_exception",
        "vllm_graph_advice",
    }
)
#: Kinds the API server prints before the engine starts.
_SERVER_HEAD_KINDS = frozenset({"vllm_version", "vllm_args", "vllm_logo_model", "vllm_blank"})
#: Per-rank figures: printed again after a terminal line, they belong to another start.
_RANK_FIGURE_KINDS = frozenset({"vllm_weights", "vllm_profile", "vllm_kv_memory", "vllm_blocks", "vllm_kv_tokens"})
#: Kinds a worker prints about its own rank.
WORKER_KINDS = frozenset(
    {
        "vllm_weights",
        "vllm_load_time",
        "vllm_profile",
        "vllm_kv_memory",
        "vllm_graph",
        "vllm_graph_estimate",
        "vllm_graph_pool",
        "vllm_graph_advice",
        "vllm_budget_report",
        "vllm_rank_assign",
    }
)
_PARTS_RE = re.compile(r"(DP|PP|PCP|TP|DCP|EP)([0-9]{1,5})(?![0-9])")
_PART_FIELDS = {"DP": "dp_rank", "PP": "pp_rank", "TP": "tp_rank", "EP": "ep_rank"}


def apply_vllm_prefix(event: Event, prefix: dict[str, Any]) -> None:
    """Ranks and time of an event from vLLM's layers: process tags name the worker's ranks
    (``Worker_DP1_TP3``, ``VllmWorker rank=2``, ``EngineCore_DP1``), torch's ``[rankN]:`` the global rank.
    The stamp has no year (``MM-DDTHH:MM:SS``); the pipeline completes it."""
    for name, _pid, _ip in prefix.get("procs", ()):
        _ranks_from_tag(event, name or "")
    if event.tp_rank is None and prefix.get("rank") is not None:
        event.tp_rank = prefix["rank"]
        event.tagged = True
    stamp = prefix.get("stamp")
    if stamp:
        event.ts = stamp.replace(" ", "T")


def _ranks_from_tag(event: Event, name: str) -> None:
    if name.startswith("VllmWorker rank="):
        event.tp_rank = _rank(name.split("=", 1)[1])
    elif name.startswith("VllmWorker-") and _rank(name[11:]) is not None:
        event.tp_rank = _rank(name[11:])
    elif name.startswith(("Worker_", "VllmWorker ")):
        for part, value in _PARTS_RE.findall(name.split("_", 1)[-1] if name.startswith("Worker_") else name[11:]):
            if part in _PART_FIELDS:
                setattr(event, _PART_FIELDS[part], int(value))
    elif name.startswith("EngineCore_"):
        digits = name.rsplit("_", 1)[-1].lstrip("DP")
        if _rank(digits) is not None:
            event.dp_rank = _rank(digits)
    else:
        return
    event.tagged = True


def _rank(digits: str) -> int | None:
    """A rank written in ASCII digits within :data:`~logparse.grammar.bounds.RANK`, else None."""
    if not (digits.isascii() and digits.isdigit() and len(digits) <= 6):
        return None
    return int(digits) if RANK.holds(int(digits)) else None


def proc_of(ev: Event) -> tuple[str | None, int] | None:
    """The innermost process tag of an event's line (vLLM's own, after Ray's), or None."""
    tags, _, _, _ = split_head(ev.text)
    return (tags[-1][0], tags[-1][1]) if tags else None


#: vLLM lines a launch can begin with (its API server's head, an engine's init): generic lines
#: printed before one are not its lines.
BEGIN_KINDS = frozenset({"vllm_version", "vllm_args", "vllm_engine_init", "vllm_engine_process"})


def vllm_time(ts: str | None, outer: str | None, mtime: float | None) -> str | None:
    """vLLM's ``MM-DDTHH:MM:SS`` (NIM's ``.mmm`` after it) with its year, as journald's short stamps get theirs: from the
    record's own time (the year around it), else the input's modification time (else today): a
    month and day after that date belong to the year before."""
    import time

    if ts is None or len(ts) not in (14, 18) or ts[2] != "-":  # 18: NIM's milliseconds
        return outer if ts is None else ts
    month, day = int(ts[:2]), int(ts[3:5])
    if outer:
        year, ref_month = int(outer[:4]), int(outer[5:7])
        year += 1 if month == 1 and ref_month == 12 else -1 if month == 12 and ref_month == 1 else 0
    else:
        ref = time.localtime(mtime) if mtime is not None else time.localtime()
        year = ref.tm_year - (1 if (month, day) > (ref.tm_mon, ref.tm_mday) else 0)
    return f"{year:04d}-{ts}"


class VllmAssembly:
    """How vLLM's events become launches on a stream (:class:`logparse.engines.base.Assembly`): a launch
    opens on a line a launch begins with; vLLM's lines before one are held back (vLLM's library lines
    inside an SGLang 0.2-0.3 launch are that launch's noise)."""

    def new(self, source: str, stream: tuple) -> VllmLaunchAssembler:
        return VllmLaunchAssembler(source, stream)

    def opens(self, ev: Event) -> bool:
        return ev.kind in OPENING_KINDS

    def holds(self, ev: Event) -> bool:
        return ev.kind.startswith("vllm_")

    def marks_stream(self, ev: Event) -> bool:
        return True

    def adopts_head(self, ev: Event) -> bool:
        return ev.kind not in BEGIN_KINDS

    def owns_generic(self, prefix: dict[str, Any]) -> bool:
        # any torch program's ranks print ``[rankN]:`` (SGLang's too): only vLLM's tags or stamp say whose
        return bool(prefix.get("procs") or prefix.get("stamp"))

    def place(
        self, ev: Event, prefix: dict[str, Any], gpu: int | None, own: bool, outer: str | None, mtime: float | None
    ) -> None:
        if own:
            apply_vllm_prefix(ev, prefix)
        ev.ts = vllm_time(ev.ts, outer, mtime)

    def date(self, ev: Event, outer: str | None) -> None:
        ev.ts = ev.ts or outer

    def is_batch(self, ev: Event) -> bool:
        return ev.kind == "vllm_stats"  # the store counts them per second, as SGLang's batch lines


class VllmLaunchAssembler:
    """Collects the events of one vLLM launch; ``finish()`` turns them into a :class:`Launch`."""

    engine = "vllm"

    def __init__(self, source: str, stream: tuple) -> None:
        self.source = source
        self.stream = stream
        self.events: list[Event] = []
        #: the launch's place among the launches of its input (the parse loop numbers them)
        self.order = 0
        self.terminal = False
        self.engine_ranks: set[int | None] = set()
        self.progressed = False  # the engine started (anything beyond the API server's first lines)
        #: the statistics lines, reduced as they arrive (not kept as events)
        self.runtime = RuntimeAgg()

    def starts_new_launch(self, ev: Event) -> bool:
        if not self.events:
            return False
        if ev.kind in ("vllm_version", "vllm_args") and ev.form != "batch":
            return self.progressed or any(e.kind == ev.kind for e in self.events)
        if ev.kind == "vllm_engine_init":
            return self.terminal or ev.dp_rank in self.engine_ranks
        return self.terminal and ev.kind in _RANK_FIGURE_KINDS

    def add(self, ev: Event) -> None:
        if ev.kind == "vllm_stats":
            add_stats(self.runtime, ev)
            self.progressed = True
            return
        if ev.kind == "vllm_preempted":
            self.runtime.add_retract(ev.ts)
        if ev.kind == "vllm_engine_init":
            self.engine_ranks.add(ev.dp_rank)
        if ev.kind not in _SERVER_HEAD_KINDS and ev.kind.startswith("vllm_"):
            self.progressed = True
        if _is_terminal(ev):
            self.terminal = True
        ev.seq = len(self.events)
        self.events.append(ev)

    def is_launch(self) -> bool:
        return True  # a launch opens only on a line a launch begins with (OPENING_KINDS)

    def only_generic(self) -> bool:
        return not self.runtime.batch_lines and all(e.kind in GENERIC_KINDS for e in self.events)

    def continue_wrapped(self, piece: str) -> None:
        pass  # vLLM's lines are not rejoined

    def merge_runtime(self, agg: dict[str, Any]) -> None:
        self.runtime.merge(agg)

    def finish(self, ordinal: int | None = None, version: str | None = None) -> Launch:
        """The launch (vLLM prints its own release: ``version`` is not needed)."""
        launch = Launch(engine="vllm", source=self.source, source_ordinal=ordinal)
        launch.host, launch.unit, launch.boot, launch.pid = self.stream
        evs = self.events
        launch.events = evs
        launch.first_line = evs[0].line_no if evs else None
        launch.last_line = evs[-1].line_no if evs else None
        first_timed = next((e for e in evs if e.ts), None)
        launch.started_at = first_timed.ts if first_timed else None
        launch.time_zone = zone_text(first_timed.utc_offset) if first_timed else None
        launch.ranks = vllm_rank_memory(evs)
        fill_launch(launch, evs)
        launch.runtime.update(self.runtime.to_dict())
        launch.warnings.extend(event_warnings(evs) + self.runtime.warnings())
        check_launch(launch)
        launch.launch_id = launch_id(launch)
        return launch


def add_stats(agg: RuntimeAgg, ev: Event) -> None:
    """A statistics line's share of its launch's runtime aggregate (catalogue §2.9): the KV cache
    usage in % as a share, the requests running and waiting (V0's ``Pending``), the generation
    throughput."""
    f = ev.fields
    usage = f.get("kv_usage_pct")
    agg.add_line(
        ev.ts,
        f,
        ev.line_no,
        gen_throughput=f.get("gen_throughput"),
        running_req=f.get("running"),
        token_usage=round(usage / 100, 6) if isinstance(usage, (int, float)) else None,
        queue_req=f.get("waiting"),
    )


def _is_terminal(ev: Event) -> bool:
    if ev.kind in ("vllm_failure", "vllm_engine_failed", "vllm_worker_exception", "killed"):
        return True
    return ev.kind == "uvicorn" and ev.form == "startup_complete"


# --------------------------------------------------------------------------- per rank
class _VllmRanks:
    """Which rank printed a worker line.  Tags name it from 0.6.5 on; V0's ``(VllmWorkerProcess pid=N)``
    names only a process: rank 0 runs untagged in the engine process, the tagged processes are ranks
    1, 2, ... in the order they first print."""

    def __init__(self, first: int) -> None:
        #: the rank of the first tagged process: 1 when rank 0 prints untagged (V0's engine process)
        self.first = first
        self.pids: dict[int, int] = {}
        self.ranks: dict[tuple, RankMemory] = {}

    def of(self, ev: Event) -> RankMemory:
        tp = ev.tp_rank
        if tp is None:
            proc = proc_of(ev)
            if proc is not None and proc[0] in _PID_NAMED:
                tp = self.pids.setdefault(proc[1], len(self.pids) + self.first)
        dp = ev.dp_rank if ev.dp_rank else None
        key = (dp, ev.pp_rank, tp or 0)
        if key not in self.ranks:
            self.ranks[key] = RankMemory(dp_rank=dp, pp_rank=ev.pp_rank, tp_rank=tp or 0, ep_rank=ev.ep_rank)
        return self.ranks[key]


#: Process tags that name a worker only by its pid: V0's mp workers and Ray's actors.
_PID_NAMED = frozenset({"VllmWorkerProcess", *RAY_ACTORS})


def _fold(rank: RankMemory, ev: Event) -> None:
    f = ev.fields
    if ev.kind == "vllm_weights":
        rank.weights_gb = f.get("weights_gb")
        if f.get("load_s") is not None:
            rank.load_s = round(f["load_s"], 2)
    elif ev.kind == "vllm_load_time" and rank.load_s is None:
        rank.load_s = f.get("load_s")
    elif ev.kind in ("vllm_profile", "vllm_budget_report"):
        _fold_profile(rank, f)
    elif ev.kind == "vllm_kv_memory":
        rank.kv_size_gb = f.get("kv_gb")
    elif ev.kind == "vllm_graph":
        rank.graph_s = f.get("graph_s")
        if f.get("graph_gb") is not None:
            rank.graph_gb = f["graph_gb"]
    elif ev.kind == "vllm_graph_estimate":
        rank.extra["graph_estimate_gb"] = f.get("graph_estimate_gb")
    elif ev.kind == "vllm_graph_pool":
        # 0.18.0+: the pool the capture used against the estimate that was budgeted for it
        if rank.graph_gb is None:
            rank.graph_gb = f.get("actual_gb")
        rank.extra.setdefault("graph_estimate_gb", f.get("estimated_gb"))
        rank.extra["graph_estimate_error_gb"] = f.get("diff_gb")


def _fold_profile(rank: RankMemory, f: dict[str, Any]) -> None:
    for name, attr in (
        ("weights_gb", "weights_gb"),
        ("activation_gb", "activation_gb"),
        ("non_torch_gb", "non_torch_gb"),
    ):
        if f.get(name) is not None and getattr(rank, attr) is None:
            setattr(rank, attr, f[name])
    if f.get("kv_gb") is not None:
        rank.kv_size_gb = f["kv_gb"]
    for name in ("total_gb", "requested_gb", "consumed_gb", "free_gb"):
        if f.get(name) is not None:
            rank.extra[name] = f[name]
    if f.get("graph_gb") is not None and rank.graph_gb is None:
        rank.graph_gb = f["graph_gb"]


def vllm_rank_memory(evs: list[Event]) -> list[RankMemory]:
    """One :class:`RankMemory` per rank that printed a figure, in rank order.

    From 0.11.1 vLLM prints these lines once per node: a multi-GPU launch then shows one rank."""
    workers = [e for e in evs if e.kind in WORKER_KINDS and e.kind != "vllm_rank_assign"]
    table = _VllmRanks(first=1 if any(e.tp_rank is None and proc_of(e) is None for e in workers) else 0)
    for ev in evs:
        if ev.kind in WORKER_KINDS and ev.kind != "vllm_rank_assign":
            _fold(table.of(ev), ev)
            mark_rank(table.of(ev), ev)
    _per_worker_tokens(evs, table)
    for rank in table.ranks.values():
        settle_marks(rank)
    return [table.ranks[k] for k in sorted(table.ranks, key=lambda k: (k[0] or 0, k[1] or 0, k[2]))]


def _per_worker_tokens(evs: list[Event], table: _VllmRanks) -> None:
    """0.8.0-0.11.0: the engine prints one ``GPU KV cache size`` per worker, in worker order, each with
    that worker's own (pre-minimum) count; with one line per known rank, each rank keeps its own."""
    lines = [e for e in evs if e.kind == "vllm_kv_tokens" and e.form == "separate"]
    ranks = sorted(table.ranks.values(), key=lambda r: (r.dp_rank or 0, r.pp_rank or 0, r.tp_rank or 0))
    if len(lines) == 1 and len(ranks) == 1:
        ranks[0].kv_tokens = lines[0].fields.get("kv_tokens")
    elif len(lines) > 1 and len(lines) == len(ranks):
        for rank, ev in zip(ranks, lines, strict=True):
            rank.kv_tokens = ev.fields.get("kv_tokens")
