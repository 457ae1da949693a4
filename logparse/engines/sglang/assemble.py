"""Launches: split a stream of events into server starts and assemble each one.

A *launch* is one start of the SGLang server.  Within one process stream (host,
unit, boot, pid), a new launch begins when

* a second ``server_args=`` line appears (SGLang prints it once per start),
* a rank starts its distributed init again, or a rank starts loading weights after
  the launch already reached its summary line, became ready, or failed,
* systemd says it (re)started the unit (handled by the pipeline, which sees records).

Events are grouped by rank (dp, pp, tp, ep) and by worker: the first model runner on
a rank is the ``target``; a later ``Load weight begin`` on the same rank is the
speculative-decoding ``draft`` (SGLang prints nothing else that says so).  The per-rank
memory figures are then folded by :mod:`logparse.engines.sglang.ranks`, and the launch's figures
read from its events by :mod:`logparse.engines.sglang.figures`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from logparse.engines.sglang.figures import FAILURE_KINDS, fill_launch
from logparse.engines.sglang.ranks import V01_SUMMARY_FORMS, rank_memory
from logparse.grammar.bounds import MAX_DIGITS, OUT_OF_RANGE, RANK, shown
from logparse.grammar.events import Event
from logparse.grammar.kinds import GENERIC_KINDS
from logparse.launches.figures import check_launch, event_warnings
from logparse.launches.identity import launch_id
from logparse.launches.model import Launch
from logparse.launches.runtime import RuntimeAgg
from logparse.launches.times import zone_text

#: Event kinds printed by scheduler (GPU worker) processes: they belong to a rank even
#: when the line has no rank tag (single GPU from 0.4.6.post2 on).
SCHEDULER_KINDS = frozenset(
    {
        "init_begin",
        "init_end",
        "memory_baseline",
        "comm_warmup",
        "memory_unbalanced",
        "load_begin",
        "load_end",
        "kv_dtype",
        "kv_scales",
        "kv_alloc",
        "kv_post_capture_info",
        "mamba_alloc",
        "swa_tokens",
        "swakv_pool",
        "dsv4_memory",
        "dsv4_pools",
        "dsv4_swa_sizing",
        "mm_reservation",
        "max_running_capped",
        "pool_end",
        "max_total_tokens_capped",
        "graph_begin",
        "graph_end",
        "graph_bs",
        "summary",
        "hicache_alloc",
        "hicache_not_enough",
        "decode_batch",
        "prefill_batch",
        "retract",
        "draft_load_format",
    }
)
RUNTIME_KINDS = frozenset({"decode_batch", "prefill_batch", "retract"})
#: Kinds that show a launch really started (not only runtime lines of an earlier one).  A piece
#: of a log holding any of them is a launch (``incomplete`` when its start is missing): a user's
#: paste of a few ``Load weight end`` / ``KV Cache is allocated`` / ``Memory pool end`` / HiCache
#: lines keeps the figures they show.
STARTUP_KINDS = frozenset(
    {
        "memory_unbalanced",
        "comm_warmup",
        "kv_scales",
        "kv_post_capture_info",
        "mamba_alloc",
        "swa_tokens",
        "swakv_pool",
        "dsv4_memory",
        "dsv4_pools",
        "dsv4_swa_sizing",
        "mm_reservation",
        "max_running_capped",
        "max_total_tokens_capped",
        "graph_bs",
        "hicache_alloc",
        "hicache_not_enough",
        "server_args",
        "init_begin",
        "init_end",
        "memory_baseline",
        "load_begin",
        "load_end",
        "kv_alloc",
        "pool_end",
        "graph_begin",
        "graph_end",
        "summary",
        "ready",
        "failure",
        "exception_start",
        "launch_dp",
        "kv_dtype",
        "startup_info",
    }
)

#: Memory lines a rank prints once per model runner, each after a load line of that runner.
_REPEATED_MEMORY_KINDS = frozenset({"load_end", "kv_alloc", "pool_end"})


def _memory_key(ev: Event) -> tuple:
    return (ev.rank_key(), ev.kind, ev.fields.get("label"), ev.form)


_TAG_FIELDS = {
    "DP": "dp_rank",
    "PP": "pp_rank",
    "TP": "tp_rank",
    "EP": "ep_rank",
    "ATTN_CP": "attn_cp_rank",
    "MOE_DP": "moe_dp_rank",
}


def apply_prefix(event: Event, prefix: dict[str, Any], gpu: int | None) -> None:
    """Fill rank fields and timestamp of an event from the parsed line prefix."""
    for tag in prefix.get("tags", ()):
        for name, attr in _TAG_FIELDS.items():
            digits = tag[len(name) :]
            if tag.startswith(name) and digits.lstrip("-").isascii() and digits.lstrip("-").isdigit():
                rank = int(digits) if len(digits) <= MAX_DIGITS else None
                if rank is None or not RANK.holds(rank):  # TP99999999999: no rank (nor a range to build)
                    notes = event.fields.setdefault(OUT_OF_RANGE, {})
                    notes[f"rank tag {shown(tag)}"] = RANK.problem(rank) if rank is not None else "too long"
                    break
                setattr(event, attr, rank)
                event.tagged = True
                break
    if gpu is not None:
        if RANK.holds(gpu) and isinstance(gpu, int):
            event.tp_rank = gpu
            event.tagged = True
        else:  # [gpu_id=nan], [gpu_id=1e308]: no rank (the grammar reads any number there)
            event.fields.setdefault(OUT_OF_RANGE, {})[f"rank tag gpu_id={shown(str(gpu))}"] = (
                RANK.problem(gpu) or "not a whole number"
            )
    stamp = prefix.get("stamp")
    if stamp:
        event.ts = stamp.replace(" ", "T") if len(stamp) > 8 else stamp


def add_batch(agg: RuntimeAgg, kind: str, f: dict[str, Any], ts: str | None, line_no: int = 0) -> None:
    """A ``Decode batch`` / ``Prefill batch`` line's share of its launch's runtime aggregate (the bulk
    path, :mod:`logparse.engines.sglang.bulk_runtime`, computes the same in bulk), its ``gen
    throughput`` (a decode line's) one value of the launch's throughput distribution."""
    decode = kind == "decode_batch"
    agg.add_line(
        ts,
        f,
        line_no,
        gen_throughput=f.get("gen_throughput") if decode else None,
        running_req=f.get("running_req"),
        token_usage=f.get("token_usage", f.get("full_token_usage")),
        queue_req=f.get("queue_req"),
        tokens=f.get("token", f.get("full_token")) if decode else None,
    )


class LaunchAssembler:
    """Collects the events of one launch; ``finish()`` turns them into a :class:`Launch`
    (:class:`logparse.engines.base.Assembler`)."""

    def __init__(self, source: str, stream: tuple) -> None:
        self.source = source
        self.stream = stream
        self.events: list[Event] = []
        #: the launch's place among the launches of its input (the parse loop numbers them)
        self.order = 0
        self.has_server_args = False
        self.inited_ranks: set[tuple] = set()
        self.loaded_ranks: set[tuple] = set()
        self.summary_ranks: set[tuple] = set()  # 0.1.x summary lines (0.1.3-0.1.5 print nothing else)
        self.terminal = False  # summary/ready/failure reached
        #: (rank, kind, label) of the memory lines seen since the rank's last load line
        self.memory_lines: set[tuple] = set()
        self.startup_seen = False
        self.runtime = RuntimeAgg()

    # ------------------------------------------------------------------ splitting
    def starts_new_launch(self, ev: Event) -> bool:
        if ev.kind == "server_args":
            # SGLang prints server_args once per start, before any scheduler line: anything
            # already collected (even runtime lines of an earlier, unseen start) is another launch.
            # Exception: the offline Engine of 0.5.7+ prints the same server_args twice in a row
            # (Engine.__init__, then _launch_subprocesses).
            if (
                self.events
                and self.runtime.batch_lines == 0
                and all(e.kind == "server_args" for e in self.events)
                and self.events[-1].fields.get("payload") == ev.fields.get("payload")
            ):
                return False
            return bool(self.events) or self.runtime.batch_lines > 0
        if not self.events:
            return False
        rk = ev.rank_key()
        if ev.kind == "init_begin" and rk in self.inited_ranks:
            return True
        # A rank loading weights again after the launch reached its summary, became ready or
        # failed is a new start (a draft model loads before the summary line).
        if ev.kind == "load_begin" and self.terminal and rk in self.loaded_ranks:
            return True
        if ev.kind == "summary" and ev.form in V01_SUMMARY_FORMS and rk in self.summary_ranks:
            return True  # 0.1.x: a rank prints its summary once per start
        # A piece of another start pasted after a finished one (no load or init line in it): a rank
        # printing the same memory line again, with no load line in between (a draft loads first).
        if ev.kind in _REPEATED_MEMORY_KINDS and self.terminal and _memory_key(ev) in self.memory_lines:
            return True
        return bool(ev.kind == "init_begin" and self.terminal and rk in self.loaded_ranks)

    def add(self, ev: Event) -> None:
        if ev.kind in ("decode_batch", "prefill_batch"):
            add_batch(self.runtime, ev.kind, ev.fields, ev.ts, ev.line_no)
            return
        if ev.kind == "retract":
            self.runtime.add_retract(ev.ts)
        if ev.kind == "server_args":
            self.has_server_args = True
        elif ev.kind == "init_begin":
            self.inited_ranks.add(ev.rank_key())
        elif ev.kind == "load_begin":
            self.loaded_ranks.add(ev.rank_key())
        elif ev.kind == "summary" and ev.form in V01_SUMMARY_FORMS:
            self.summary_ranks.add(ev.rank_key())
        if ev.kind == "load_begin" or ev.kind == "load_end":
            rk = ev.rank_key()
            self.memory_lines = {k for k in self.memory_lines if k[0] != rk}
        if ev.kind in _REPEATED_MEMORY_KINDS:
            self.memory_lines.add(_memory_key(ev))
        if ev.kind in ("summary", "ready") or ev.kind in FAILURE_KINDS:
            self.terminal = True
        if ev.kind in STARTUP_KINDS:
            self.startup_seen = True
        ev.seq = len(self.events)
        self.events.append(ev)

    def is_launch(self) -> bool:
        """A launch, or a piece of one that began before the input (runtime lines, a traceback)?"""
        return any(e.kind in STARTUP_KINDS for e in self.events)

    def only_generic(self) -> bool:
        """Only lines any program prints (a traceback, uvicorn's), no runtime line."""
        return not self.runtime.batch_lines and all(e.kind in GENERIC_KINDS for e in self.events)

    def continue_wrapped(self, piece: str) -> None:
        """Rejoin a ``server_args`` line a terminal or a paste wrapped (the classifier said this line
        goes on with its payload): the event gets the whole payload back."""
        ev = self.events[-1] if self.events else None
        if ev is None or ev.kind != "server_args":
            return
        ev.fields["payload"] = ev.fields.get("payload", "") + piece
        ev.fields["wrapped_lines"] = ev.fields.get("wrapped_lines", 1) + 1
        ev.text += piece

    def merge_runtime(self, agg: dict[str, Any]) -> None:
        """Add a runtime aggregate the fast path decoded in bulk."""
        self.runtime.merge(agg)

    # ------------------------------------------------------------------ assembly
    def finish(self, version: str | None = None, ordinal: int | None = None) -> Launch:
        """The launch; ``version``: the release the user says it is (``--sglang-version``); ``ordinal``
        (its position in the source) completes the identity of a log without time."""
        launch = Launch(source=self.source, source_ordinal=ordinal)
        host, unit, boot, pid = self.stream
        launch.host, launch.unit, launch.boot, launch.pid = host, unit, boot, pid
        evs = self.events
        launch.events = evs
        launch.first_line = evs[0].line_no if evs else None
        launch.last_line = evs[-1].line_no if evs else None
        first_timed = next((e for e in evs if e.ts), None)
        launch.started_at = first_timed.ts if first_timed else None
        launch.time_zone = zone_text(first_timed.utc_offset) if first_timed else None

        self._assign_workers(evs)
        launch.ranks = rank_memory(evs)
        fill_launch(launch, evs, self.runtime.to_dict(), version)
        launch.warnings.extend(event_warnings(evs) + self.runtime.warnings())
        check_launch(launch)
        launch.launch_id = launch_id(launch)
        return launch

    @staticmethod
    def _assign_workers(evs: list[Event]) -> None:
        """target/draft per rank, from the order of model runners (see module doc)."""
        assigner = _WorkerAssigner()
        for ev in evs:
            if ev.kind in SCHEDULER_KINDS:
                ev.worker = assigner.worker_of(ev)


class _WorkerAssigner:
    """Which model runner printed a scheduler line, from what each rank printed before it.

    The first runner on a rank is the target; a second ``Load weight begin``, KV pool, pool end
    or HiCache pool on the same rank is the draft's.  Graph captures name their worker."""

    def __init__(self) -> None:
        self.loads: dict[tuple, int] = defaultdict(int)  # load_begin count per rank
        self.target_loaded: set[tuple] = set()
        self.pools_seen: dict[tuple, dict[tuple, int]] = defaultdict(lambda: defaultdict(int))
        self.pool_ends_seen: dict[tuple, int] = defaultdict(int)
        self.target_graph_done: set[tuple] = set()
        self._steps: dict[str, Callable[[Event, tuple], str]] = {
            "load_begin": self._load_begin,
            "load_end": self._load_end,
            "kv_alloc": self._kv_alloc,
            "pool_end": self._pool_end,
            "mamba_alloc": self._pool_end,
            "hicache_alloc": self._pool_end,
            "graph_begin": self._graph,
            "graph_end": self._graph,
            "graph_bs": self._graph,
        }

    def worker_of(self, ev: Event) -> str:
        step = self._steps.get(ev.kind)
        return step(ev, ev.rank_key()) if step is not None else "target"

    def _load_begin(self, ev: Event, rk: tuple) -> str:
        self.loads[rk] += 1
        return "target" if self.loads[rk] == 1 else "draft"

    def _load_end(self, ev: Event, rk: tuple) -> str:
        worker = "target" if rk not in self.target_loaded else "draft"
        # Only a complete "Load weight end" closes the target's load (not the overlap-commit form).
        if ev.fields.get("mem_usage_gb") is not None or ev.fields.get("avail_gb") is not None:
            self.target_loaded.add(rk)
        return worker

    def _kv_alloc(self, ev: Event, rk: tuple) -> str:
        if ev.fields.get("worker") == "draft":
            return "draft"
        label = (ev.fields.get("label") or "", ev.form)
        self.pools_seen[rk][label] += 1
        return "target" if self.pools_seen[rk][label] == 1 else "draft"

    def _pool_end(self, ev: Event, rk: tuple) -> str:
        key = (rk, ev.kind + (ev.fields.get("label") or ""))
        self.pool_ends_seen[key] += 1
        return "target" if self.pool_ends_seen[key] == 1 else "draft"

    def _graph(self, ev: Event, rk: tuple) -> str:
        worker = ev.fields.get("worker", "target")
        if (
            worker == "target"
            and ev.kind != "graph_bs"
            and rk in self.target_graph_done
            and self.loads[rk] > 1
            and ev.fields.get("name", "").lower() == "cuda graph"
        ):
            worker = "draft"  # 0.4.2.post2-0.4.3.post2: the EAGLE worker printed the target's wording
        if ev.kind == "graph_end" and worker == "target":
            self.target_graph_done.add(rk)
        return worker


#: SGLang's runtime batch lines (the store counts them per second).
BATCH_KINDS = frozenset({"decode_batch", "prefill_batch"})


class SglangAssembly:
    """How SGLang's events become launches on a stream (:class:`logparse.engines.base.Assembly`)."""

    def new(self, source: str, stream: tuple) -> LaunchAssembler:
        return LaunchAssembler(source, stream)

    def opens(self, ev: Event) -> bool:
        return True  # any line opens a launch (a piece of a log: its runtime lines alone)

    def holds(self, ev: Event) -> bool:
        return False

    def marks_stream(self, ev: Event) -> bool:
        return ev.kind in STARTUP_KINDS and ev.kind not in GENERIC_KINDS  # a traceback names no engine

    def adopts_head(self, ev: Event) -> bool:
        return False

    def owns_generic(self, prefix: dict[str, Any]) -> bool:
        return False  # SGLang's prefix says nothing of the program that printed a traceback

    def place(
        self, ev: Event, prefix: dict[str, Any], gpu: int | None, own: bool, outer: str | None, mtime: float | None
    ) -> None:
        apply_prefix(ev, prefix, gpu)

    def date(self, ev: Event, outer: str | None) -> None:
        # no date in SGLang's prefix: use the outer layer's time
        if outer and (ev.ts is None or len(ev.ts) <= 12):
            ev.ts = outer if ev.ts is None else outer[:11] + ev.ts
        if ev.kind in SCHEDULER_KINDS and ev.tp_rank is None:
            ev.tp_rank = 0  # a single-GPU scheduler (0.4.6.post2+) or DP without TP prints no TP tag

    def is_batch(self, ev: Event) -> bool:
        return ev.kind in BATCH_KINDS


def assemble(events: Iterable[Event], source: str, stream: tuple) -> list[LaunchAssembler]:
    """Split one stream's events into launch assemblers (used by tests and the pipeline)."""
    out: list[LaunchAssembler] = []
    cur = LaunchAssembler(source, stream)
    for ev in events:
        if cur.starts_new_launch(ev):
            out.append(cur)
            cur = LaunchAssembler(source, stream)
        cur.add(ev)
    if cur.events:
        out.append(cur)
    return out
