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
memory figures are then folded by :mod:`logparse.engines.sglang.ranks`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from logparse.engines.sglang import versions
from logparse.engines.sglang.prefix import PREFIX_RE, split_items
from logparse.engines.sglang.ranks import V01_SUMMARY_FORMS, rank_memory
from logparse.grammar.bounds import MAX_DIGITS, OUT_OF_RANGE, RANK, out_of_range_warning, shown
from logparse.grammar.events import Event
from logparse.grammar.kinds import GENERIC_KINDS
from logparse.grammar.pyliteral import (
    LiteralParseError,
    ReprRecord,
    is_abridged,
    json_safe_notes,
    parse_literal,
    parse_literal_prefix,
    whole_number,
)
from logparse.launches.figures import check_launch, event_warnings, outcome_evidence
from logparse.launches.identity import launch_id
from logparse.launches.model import Launch
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
FAILURE_KINDS = frozenset({"failure", "exception", "child_failed", "killed"})
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
#: ``exception_start`` components whose traceback ends the process, so the start failed even when
#: the traceback's last line is not one we recognize: the TP worker and controllers of
#: 0.1.x-0.3.2 (``Exception in ModelTpServer:`` ...), the 0.1.3-0.1.14 ``router init state:``
#: traceback, and the ``... hit an exception:`` components of 0.3.6.post3+.  ``Exception in
#: TokenizerManager:`` (an image that failed to load) is not fatal.
FATAL_COMPONENTS = frozenset(
    {
        ("exception_in:ModelTpServer", "ModelTpServer"),
        ("exception_in:run_tp_server", "run_tp_server"),
        ("exception_in:ControllerSingle", "ControllerSingle"),
        ("exception_in:ControllerMulti", "ControllerMulti"),
        ("exception_in:ModelRpcClient", "ModelRpcClient"),
        ("init_state", "router"),
        ("init_state", "detoken"),
        (None, "Scheduler"),
        (None, "TpModelWorkerClient"),
        (None, "DataParallelController"),
        (None, "DetokenizerManager"),
        (None, "TokenizerManager"),
        (None, "MultiTokenizerRouter"),
        (None, "MultiDetokenizerRouter"),
    }
)

#: Kinds printed at the start of a launch: a launch without any is a piece of a log.
_OPENING_KINDS = frozenset({"server_args", "init_begin", "load_begin", "launch_dp"})
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


#: Batch lines with a figure out of range whose warning a launch keeps (the rest are counted).
MAX_IGNORED_KEPT = 5


class RuntimeAgg:
    """Runtime KV pressure of one launch, aggregated as lines arrive.

    ``Decode batch``/``Prefill batch`` lines are most of a production log: they are
    reduced to these aggregates (by the per-record path here, by vectorized extraction
    in :mod:`logparse.engines.sglang.bulk`) instead of being kept as events.  Both paths use the same
    definitions, so a launch gets the same figures whichever path read it.
    """

    __slots__ = (
        "batch_lines",
        "first_at",
        "ignored",
        "last_at",
        "n_ignored",
        "peak_queue_req",
        "peak_running_req",
        "peak_token_usage",
        "peak_tokens",
        "retractions",
    )

    def __init__(self) -> None:
        self.batch_lines = 0
        self.peak_running_req: float | None = None
        self.peak_token_usage: float | None = None
        self.peak_queue_req: float | None = None
        self.peak_tokens: float | None = None
        self.retractions = 0
        self.first_at: str | None = None
        self.last_at: str | None = None
        #: warnings for the first batch figures out of their bounds (:mod:`logparse.grammar.bounds`), and how many
        self.ignored: list[str] = []
        self.n_ignored = 0

    def _ts(self, ts: str | None) -> None:
        if ts:
            if self.first_at is None or ts < self.first_at:
                self.first_at = ts
            if self.last_at is None or ts > self.last_at:
                self.last_at = ts

    def add_batch(self, kind: str, f: dict[str, Any], ts: str | None, line_no: int = 0) -> None:
        self.batch_lines += 1
        self._ts(ts)
        notes = f.get(OUT_OF_RANGE)
        if notes:
            self.n_ignored += 1
            if len(self.ignored) < MAX_IGNORED_KEPT:
                self.ignored.extend(out_of_range_warning(line_no, k, v) for k, v in notes.items())
        self.merge_peaks(
            f.get("running_req"),
            f.get("token_usage", f.get("full_token_usage")),
            f.get("queue_req"),
            f.get("token", f.get("full_token")) if kind == "decode_batch" else None,
        )

    def add_retract(self, ts: str | None) -> None:
        self.retractions += 1
        self._ts(ts)

    def merge_peaks(self, running, usage, queue, tokens) -> None:
        if isinstance(running, (int, float)) and not isinstance(running, bool):
            self.peak_running_req = running if self.peak_running_req is None else max(self.peak_running_req, running)
        if isinstance(usage, (int, float)) and not isinstance(usage, bool):
            self.peak_token_usage = usage if self.peak_token_usage is None else max(self.peak_token_usage, usage)
        if isinstance(queue, (int, float)) and not isinstance(queue, bool):
            self.peak_queue_req = queue if self.peak_queue_req is None else max(self.peak_queue_req, queue)
        if isinstance(tokens, (int, float)) and not isinstance(tokens, bool):
            self.peak_tokens = tokens if self.peak_tokens is None else max(self.peak_tokens, tokens)

    def merge(self, other: dict[str, Any]) -> None:
        """Merge a vectorized aggregate (same keys as :meth:`to_dict`)."""
        self.batch_lines += int(other.get("batch_lines") or 0)
        self.retractions += int(other.get("retractions") or 0)
        self.merge_peaks(
            other.get("peak_running_req"),
            other.get("peak_token_usage"),
            other.get("peak_queue_req"),
            other.get("peak_tokens"),
        )
        self._ts(other.get("first_runtime_at"))
        self._ts(other.get("last_runtime_at"))

    def warnings(self) -> list[str]:
        """The launch's warnings for batch lines whose figures are out of their bounds."""
        more = self.n_ignored - MAX_IGNORED_KEPT
        tail = [f"{more} more batch line(s) with a figure out of range: ignored"] if more > 0 else []
        return self.ignored + tail

    def to_dict(self) -> dict[str, Any]:
        if not self.batch_lines and not self.retractions:
            return {}
        return {
            "peak_running_req": self.peak_running_req,
            "peak_token_usage": self.peak_token_usage,
            "peak_queue_req": self.peak_queue_req,
            "peak_tokens": self.peak_tokens,
            "retractions": self.retractions,
            "batch_lines": self.batch_lines,
            "first_runtime_at": self.first_at,
            "last_runtime_at": self.last_at,
        }


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
            self.runtime.add_batch(ev.kind, ev.fields, ev.ts, ev.line_no)
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
        evidence: list[tuple[str, tuple[str, str]]] = []
        self._server_args(launch, evs, evidence)
        if not any(e.kind in _OPENING_KINDS for e in evs):
            launch.warnings.append(
                "the start of this launch is not in the input (no server_args, init or load-begin line): "
                "a piece of a log; only the figures its lines show are known"
            )
        launch.ranks = rank_memory(evs)
        self._summary(launch, evs)
        self._outcome(launch, evs)
        self._runtime(launch, evs, self.runtime)
        self._hicache(launch, evs)
        self._fill_from_ranks(launch)
        self._role(launch, evs)
        self._version(launch, evs, evidence, version)
        self._sanity(launch)
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

    @staticmethod
    def _server_args(launch: Launch, evs: list[Event], evidence: list) -> None:
        ev = next((e for e in evs if e.kind == "server_args"), None)
        if ev is None:
            return
        value, whole = _read_server_args(launch, ev)
        if value is None:
            return
        launch.server_args_form = "dataclass" if isinstance(value, ReprRecord) else "dict"
        launch.server_args, notes = json_safe_notes(value)
        launch.warnings.extend(f"line {ev.line_no}: server_args field {note}" for note in notes)
        evidence.extend(_server_args_evidence(launch.server_args_form, launch.server_args, whole))
        for attr, names, convert in _LAUNCH_ARGS:
            arg = next((launch.server_args[n] for n in names if launch.server_args.get(n) is not None), None)
            setattr(launch, attr, convert(arg))
            if arg is not None and getattr(launch, attr) is None:
                launch.warnings.append(
                    f"line {ev.line_no}: server_args field {attr}={shown(arg)} is not a figure: ignored"
                )

    @staticmethod
    def _summary(launch: Launch, evs: list[Event]) -> None:
        sums = [e for e in evs if e.kind == "summary"]
        if not sums:
            return
        best = min(sums, key=lambda e: ((e.dp_rank or 0), (e.tp_rank or 0), e.seq))
        f = best.fields
        launch.max_total_num_tokens = f.get("max_total_num_tokens")
        launch.max_prefill_tokens = f.get("max_prefill_tokens")
        launch.max_running_requests_effective = f.get("max_running_requests")
        launch.context_len = f.get("context_len")
        launch.available_mem_gb = f.get("available_mem_gb")
        launch.available_mem_kind = f.get("available_mem_kind")
        if launch.chunked_prefill_size is None and isinstance(f.get("chunked_prefill_size"), int):
            launch.chunked_prefill_size = f["chunked_prefill_size"]
        if len({e.dp_rank for e in sums}) > 1:
            launch.runtime["summary_per_dp"] = {str(e.dp_rank): e.fields.get("max_total_num_tokens") for e in sums}

    @staticmethod
    def _outcome(launch: Launch, evs: list[Event]) -> None:
        ready = next((e for e in evs if e.kind == "ready"), None)
        failures = [e for e in evs if e.kind in FAILURE_KINDS]
        crashes = [
            e for e in evs if e.kind == "exception_start" and (e.form, e.fields.get("component")) in FATAL_COMPONENTS
        ]
        if ready is None and any(e.form in _V01_ROUTER_FORMS for e in evs):
            # 0.1.3-0.1.16 print no ready line: uvicorn starts only after every rank loaded the model
            # (launch_server waits for the router's "init ok"), so its running line stands for it -
            # unless the model process then crashed (the warmup request is its first forward pass).
            ready = next((e for e in evs if e.kind == "uvicorn" and e.form in ("running", "startup_complete")), None)
            if ready is not None and any(e.seq > ready.seq for e in crashes):
                ready = None
        if ready is not None:
            launch.outcome = "ready"
            launch.ready_at = ready.ts
            launch.outcome_evidence = outcome_evidence(
                ready,
                f"the ready line {_quoted(ready.text)}"
                if ready.kind == "ready"
                else "uvicorn started (0.1.x prints no ready line)",
            )
            return
        if not failures and crashes:
            # The traceback's last line was not recognized: the crash line itself is the error.
            launch.outcome = "failed"
            launch.error = crashes[0].text
            launch.outcome_evidence = outcome_evidence(crashes[0], "a fatal traceback (its exception line not read)")
            return
        if not failures:
            launch.outcome = "incomplete"
            launch.outcome_evidence = "neither a ready nor a failure line in the input"
            if any(e.kind == "summary" for e in evs):
                launch.warnings.append(
                    "startup reached the scheduler summary but no ready line "
                    "(offline engine, benchmark, or the log ends early)"
                )
            return
        launch.outcome = "failed"
        # The most specific explanation wins: a known failure, then an exception text, then the rest.
        # "Initialization failed. <process>_init_state: Traceback ..." (0.1.15-0.3.2) only announces
        # the traceback that follows: the exception at its end explains more.
        rank = {"failure": 0, "exception": 1, "child_failed": 2, "killed": 3}
        best = min(failures, key=lambda e: (1.5 if e.form == "init_failed" else rank[e.kind], e.seq))
        launch.error = _error_text(best)
        launch.outcome_evidence = outcome_evidence(best, f"the failure line {_quoted(launch.error or best.text)}")

    @staticmethod
    def _runtime(launch: Launch, evs: list[Event], agg: RuntimeAgg) -> None:
        rt = agg.to_dict()
        timings = next((e.fields for e in evs if e.kind == "startup_timings"), None)
        if timings:
            rt["startup_timings"] = timings
        launch.runtime.update(rt)

    @staticmethod
    def _hicache(launch: Launch, evs: list[Event]) -> None:
        hc = [
            e
            for e in evs
            if e.kind == "hicache_alloc"
            and e.fields.get("label") in ("kv", "full")
            and (e.worker or "target") == "target"
        ]
        if not hc:
            return
        best = min(hc, key=lambda e: ((e.dp_rank or 0), (e.tp_rank or 0), e.seq))
        launch.hicache_host_gb = best.fields.get("host_gb")
        launch.hicache_host_tokens = best.fields.get("tokens")

    @staticmethod
    def _fill_from_ranks(launch: Launch) -> None:
        """Parallel sizes when ``server_args`` is missing (a journal window, an old log)."""
        tps = {r.tp_rank for r in launch.ranks if r.tp_rank is not None}
        dps = {r.dp_rank for r in launch.ranks if r.dp_rank is not None and r.dp_rank >= 0}
        if launch.tp_size is None and tps:
            launch.tp_size = max(tps) + 1
            if tps != set(range(launch.tp_size)):
                launch.warnings.append(
                    f"tp_size={launch.tp_size} is inferred from the highest rank tag seen (TP{max(tps)}); "
                    f"the lines of rank(s) {', '.join(f'TP{r}' for r in sorted(set(range(launch.tp_size)) - tps))} "
                    "are missing, so it is a lower bound"
                )
        if launch.dp_size is None and dps:
            launch.dp_size = max(dps) + 1

    @staticmethod
    def _role(launch: Launch, evs: list[Event]) -> None:
        """The disaggregation role, from the words a build puts in the line prefix (else from
        ``server_args``); words that name no role are kept in a warning."""
        roles: dict[str, None] = {}
        other: dict[str, None] = {}
        for ev in evs:
            if not ev.text.startswith("[") or not (m := PREFIX_RE.match(ev.text)):
                continue
            for word in split_items(m.group("tags"))[1]:
                role = role_of_word(word)
                if role is None:
                    other[word] = None
                elif role:
                    roles[role] = None
        if other:
            shown = ", ".join(repr(w) for w in list(other)[:5]) + (", …" if len(other) > 5 else "")
            launch.warnings.append(
                f"the line prefix carries word(s) that name no rank and no role: {shown} "
                "(a build or fork of SGLang; kept here, the lines are parsed)"
            )
        arg = (launch.server_args or {}).get("disaggregation_mode")
        from_args = arg if arg in ("prefill", "decode") else None
        if len(roles) > 1:
            launch.warnings.append(
                f"lines of both a prefill and a decode server ({', '.join(roles)}) are in one launch: "
                "the log mixes two servers; split it per server"
            )
            launch.role = from_args
            return
        from_prefix = next(iter(roles), None)
        if from_prefix and from_args and from_prefix != from_args:
            launch.warnings.append(
                f"the line prefix says role {from_prefix!r}, server_args says disaggregation_mode={from_args!r}"
            )
        launch.role = from_prefix or from_args

    @staticmethod
    def _version(launch: Launch, evs: list[Event], evidence: list, user_version: str | None) -> None:
        from logparse.engines.sglang.variants import evidence_for_events

        evidence.extend(evidence_for_events(evs, launch))
        rng, used, disagreements = versions.sglang().narrow(evidence)
        launch.warnings.extend(disagreements)
        launch.version_range = rng
        launch.sglang_version_range = versions.format_range(rng)
        launch.version_evidence = used
        if user_version:
            launch.sglang_version = user_version
            if rng is not None and user_version in versions.releases() and not versions.in_range(user_version, rng):
                launch.warnings.append(
                    f"--sglang-version {user_version} is outside what the log shows ({launch.sglang_version_range})"
                )
        elif rng is not None and rng[0] == rng[1]:
            launch.sglang_version = rng[0]
        launch.engine_version, launch.engine_version_range = launch.sglang_version, launch.sglang_version_range

    @staticmethod
    def _sanity(launch: Launch) -> None:
        """Values that parse but make no sense are flagged, not stored as truth silently."""
        for r in launch.ranks:
            who = f"{r.worker} rank tp{r.tp_rank}" + (f" dp{r.dp_rank}" if r.dp_rank is not None else "")
            # figures out of their bounds (NaN, 1e308, 10^13 tokens) were set aside where they were
            # read (logparse.grammar.bounds); memory cannot be free below zero
            for name in (
                "avail_before_load_gb",
                "avail_after_load_gb",
                "avail_after_pool_gb",
                "avail_after_graph_gb",
                "kv_size_gb",
            ):
                v = getattr(r, name)
                if v is not None and v < 0:
                    launch.warnings.append(f"{who}: {name}={v} is not a plausible memory figure")
            if (
                r.avail_before_load_gb is not None
                and r.avail_after_load_gb is not None
                and r.avail_after_load_gb > r.avail_before_load_gb + 0.05
            ):
                launch.warnings.append(
                    f"{who}: available memory rose while loading weights "
                    f"({r.avail_before_load_gb} -> {r.avail_after_load_gb} GB); "
                    "another process freed memory, or the log is not what it seems"
                )


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


#: Wording printed only by 0.1.3-0.1.16 (the "Rank N:" router era), which has no ready line.
_V01_ROUTER_FORMS = frozenset({"v01", "v01_paste", "lower", "optional_modes", "init_state"})


#: Words of the line prefix that name a disaggregation role (``DisaggregationMode.DECODE`` -> ``decode``),
#: or say there is none (``""``).
_ROLE_WORDS = {"prefill": "prefill", "decode": "decode", "null": "", "none": ""}


def role_of_word(word: str) -> str | None:
    """``DisaggregationMode.DECODE``/``decode`` -> ``decode``; ``DisaggregationMode.NULL`` -> ``""``
    (no role); a word that names no role -> None."""
    return _ROLE_WORDS.get(word.rsplit(".", 1)[-1].lower())


def _read_server_args(launch: Launch, ev: Event) -> tuple[dict | None, bool]:
    """The ``server_args=`` payload as a dict (and whether it is whole), or None with a warning.

    A line cut when pasted (or holding a value the grammar does not read) keeps the fields
    before the cut, with a warning naming it; a line wrapped over several lines was rejoined
    by the classifier (``wrapped_lines``)."""
    payload = ev.fields.get("payload", "")
    wrapped = ev.fields.get("wrapped_lines")
    if wrapped:
        launch.warnings.append(
            f"line {ev.line_no}: server_args was wrapped over {wrapped} lines (a terminal or a paste); rejoined"
        )
    try:
        value = parse_literal(payload)
    except LiteralParseError as exc:
        part = parse_literal_prefix(payload)
        if part is None:
            launch.warnings.append(f"line {ev.line_no}: server_args not readable ({exc}); truncated line?")
            return None, False
        rest = len(payload.rstrip()) - part.read_chars
        if part.why == "cut":
            launch.warnings.append(
                f"line {ev.line_no}: server_args is cut after field {part.last_field!r} ({len(part.value)} "
                f"fields read; the line ends {rest} characters later, inside the payload: truncated or "
                "wrapped when pasted); the fields after it are unknown"
            )
        else:
            launch.warnings.append(
                f"line {ev.line_no}: server_args is not readable after field {part.last_field!r} "
                f"({len(part.value)} fields read; {exc}); the fields after it are unknown"
            )
        return part.value, False
    if not isinstance(value, dict):
        launch.warnings.append(f"line {ev.line_no}: server_args is not a record")
        return None, False
    if is_abridged(value):
        launch.warnings.append(
            f"line {ev.line_no}: server_args is abridged ('...' or '…' in place of fields; {len(value)} fields "
            "read): the fields left out are unknown, not the defaults"
        )
        return value, False
    return value, True


def _server_args_evidence(form: str, args: dict[str, Any], whole: bool = True) -> list[tuple[str, tuple[str, str]]]:
    """Release ranges implied by how ``server_args`` is printed and by its field set (of a
    payload cut short: the releases that have every field it shows)."""
    evidence = [
        (
            "server_args form " + form,
            ("0.1.24", "0.5.18") if form == "dataclass" else ("0.5.19", versions.last()),
        )
    ]
    if not whole:
        sub = versions.date_field_subset(set(args))
        if sub is not None:
            evidence.append((f"server_args fields before the cut ({len(args)} fields)", sub))
        return evidence
    rng, exact = versions.date_field_set(set(args))
    if rng is not None:
        evidence.append((f"server_args field set ({len(args)} fields{'' if exact else ', closest releases'})", rng))
    return evidence


def _quoted(text: str, n: int = 80) -> str:
    """A line's message for the outcome evidence: without its prefix (the same launch read from another
    rendering, or with a damaged stamp, has the same evidence), stripped, at most ``n`` characters."""
    text = text.strip()
    m = PREFIX_RE.match(text)
    if m is not None:
        text = text[m.end() :]
    elif text.startswith("[") and "] " in text:  # a bracket whose stamp did not read
        text = text.split("] ", 1)[1]
    return repr(text if len(text) <= n else text[: n - 1] + "…")


def _error_text(ev: Event) -> str:
    f = ev.fields
    exc = f.get("exception")
    text = ev.text
    if exc and text.startswith(exc):
        return text
    if ev.kind == "killed":
        return "Killed (the process was killed by a signal, often the OOM killer)"
    return text


def _float(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        try:
            return float(v)
        except OverflowError:  # beyond every bound: check_launch says so
            return math.inf
    return None


def _bool(v: Any) -> bool | None:
    return v if isinstance(v, bool) else None


def _text(v: Any) -> str | None:
    """An argument as the text the launch keeps (the store's column is text: the same value)."""
    return v if isinstance(v, str) or v is None else str(v)


#: Launch fields read from ``server_args``: (launch attribute, the argument names tried in
#: order, the first one set wins; conversion to the field's type: None when it is not of it).
_LAUNCH_ARGS: tuple[tuple[str, tuple[str, ...], Callable[[Any], Any]], ...] = (
    ("model_path", ("model_path",), _text),
    ("tp_size", ("tp_size",), whole_number),
    ("dp_size", ("dp_size",), whole_number),
    ("pp_size", ("pp_size",), whole_number),
    ("ep_size", ("ep_size", "moe_ep_size"), whole_number),
    ("mem_fraction_static", ("mem_fraction_static",), _float),
    ("kv_cache_dtype", ("kv_cache_dtype",), _text),
    ("page_size", ("page_size",), whole_number),
    ("context_length", ("context_length",), whole_number),
    ("chunked_prefill_size", ("chunked_prefill_size",), whole_number),
    ("max_running_requests", ("max_running_requests",), whole_number),
    ("max_total_tokens", ("max_total_tokens",), whole_number),
    ("speculative_algorithm", ("speculative_algorithm",), _text),
    ("enable_hierarchical_cache", ("enable_hierarchical_cache",), _bool),
    ("hicache_ratio", ("hicache_ratio",), _float),
    ("hicache_size", ("hicache_size",), _float),
    ("enable_dp_attention", ("enable_dp_attention",), _bool),
    ("device", ("device",), _text),
)


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
