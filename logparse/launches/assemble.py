"""Launches: split a stream of events into server starts and assemble each one.

A *launch* is one start of the SGLang server.  Within one process stream (host,
unit, boot, pid), a new launch begins when

* a second ``server_args=`` line appears (SGLang prints it once per start),
* a rank starts its distributed init again, or a rank starts loading weights after
  the launch already reached its summary line, became ready, or failed,
* systemd says it (re)started the unit (handled by the pipeline, which sees records).

Events are grouped by rank (dp, pp, tp, ep) and by worker: the first model runner on
a rank is the ``target``; a later ``Load weight begin`` on the same rank is the
speculative-decoding ``draft`` (SGLang prints nothing else that says so).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from logparse.grammar.events import Event
from logparse.grammar.pyliteral import LiteralParseError, ReprRecord, json_safe, parse_literal
from logparse.launches import versions
from logparse.launches.model import Launch, RankMemory

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
#: Kinds that show a launch really started (not only runtime lines of an earlier one).
STARTUP_KINDS = frozenset(
    {
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
    }
)

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
            if tag.startswith(name) and (tag[len(name) :].lstrip("-").isdigit()):
                setattr(event, attr, int(tag[len(name) :]))
                event.tagged = True
                break
    if gpu is not None:
        event.tp_rank = gpu
        event.tagged = True
    stamp = prefix.get("stamp")
    if stamp:
        event.ts = stamp.replace(" ", "T") if len(stamp) > 8 else stamp


class RuntimeAgg:
    """Runtime KV pressure of one launch, aggregated as lines arrive.

    ``Decode batch``/``Prefill batch`` lines are most of a production log: they are
    reduced to these aggregates (by the per-record path here, by vectorized extraction
    in :mod:`logparse.grammar.bulk`) instead of being kept as events.  Both paths use the same
    definitions, so a launch gets the same figures whichever path read it.
    """

    __slots__ = (
        "batch_lines",
        "first_at",
        "last_at",
        "peak_queue_req",
        "peak_running_req",
        "peak_token_usage",
        "peak_tokens",
        "retractions",
    )

    def __init__(self) -> None:
        self.batch_lines = 0
        self.peak_running_req = self.peak_token_usage = self.peak_queue_req = self.peak_tokens = None
        self.retractions = 0
        self.first_at = self.last_at = None

    def _ts(self, ts: str | None) -> None:
        if ts:
            if self.first_at is None or ts < self.first_at:
                self.first_at = ts
            if self.last_at is None or ts > self.last_at:
                self.last_at = ts

    def add_batch(self, kind: str, f: dict[str, Any], ts: str | None) -> None:
        self.batch_lines += 1
        self._ts(ts)
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
    """Collects the events of one launch; ``finish()`` turns them into a :class:`Launch`."""

    def __init__(self, source: str, stream: tuple) -> None:
        self.source = source
        self.stream = stream
        self.events: list[Event] = []
        self.has_server_args = False
        self.inited_ranks: set[tuple] = set()
        self.loaded_ranks: set[tuple] = set()
        self.terminal = False  # summary/ready/failure reached
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
        return bool(ev.kind == "init_begin" and self.terminal and rk in self.loaded_ranks)

    def add(self, ev: Event) -> None:
        if ev.kind in ("decode_batch", "prefill_batch"):
            self.runtime.add_batch(ev.kind, ev.fields, ev.ts)
            return
        if ev.kind == "retract":
            self.runtime.add_retract(ev.ts)
        if ev.kind == "server_args":
            self.has_server_args = True
        elif ev.kind == "init_begin":
            self.inited_ranks.add(ev.rank_key())
        elif ev.kind == "load_begin":
            self.loaded_ranks.add(ev.rank_key())
        if ev.kind in ("summary", "ready") or ev.kind in FAILURE_KINDS:
            self.terminal = True
        if ev.kind in STARTUP_KINDS:
            self.startup_seen = True
        ev.seq = len(self.events)
        self.events.append(ev)

    # ------------------------------------------------------------------ assembly
    def finish(self, sglang_version: str | None = None) -> Launch:
        launch = Launch(source=self.source)
        host, unit, boot, pid = self.stream
        launch.host, launch.unit, launch.boot, launch.pid = host, unit, boot, pid
        evs = self.events
        launch.events = evs
        launch.first_line = evs[0].line_no if evs else None
        launch.last_line = evs[-1].line_no if evs else None
        launch.started_at = next((e.ts for e in evs if e.ts), None)

        self._assign_workers(evs)
        evidence: list[tuple[str, tuple[str, str]]] = []
        self._server_args(launch, evs, evidence)
        self._ranks(launch, evs)
        self._summary(launch, evs)
        self._outcome(launch, evs)
        self._runtime(launch, evs, self.runtime)
        self._hicache(launch, evs)
        self._fill_from_ranks(launch)
        self._version(launch, evs, evidence, sglang_version)
        self._sanity(launch)
        launch.launch_id = stable_launch_id(launch, evs)
        return launch

    @staticmethod
    def _assign_workers(evs: list[Event]) -> None:
        """target/draft per rank, from the order of model runners (see module doc)."""
        loads: dict[tuple, int] = defaultdict(int)  # load_begin count per rank
        target_loaded: set[tuple] = set()
        pools_seen: dict[tuple, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        pool_end_seen: dict[tuple, int] = defaultdict(int)
        target_graph_done: set[tuple] = set()
        for ev in evs:
            if ev.kind not in SCHEDULER_KINDS:
                continue
            rk = ev.rank_key()
            if ev.kind == "load_begin":
                loads[rk] += 1
                ev.worker = "target" if loads[rk] == 1 else "draft"
            elif ev.kind == "load_end":
                ev.worker = "target" if rk not in target_loaded else "draft"
                if ev.fields.get("mem_usage_gb") is not None or ev.fields.get("avail_gb") is not None:
                    target_loaded.add(rk)
            elif ev.kind == "kv_alloc":
                if ev.fields.get("worker") == "draft":
                    ev.worker = "draft"
                else:
                    label = (ev.fields.get("label") or "", ev.form)
                    pools_seen[rk][label] += 1
                    ev.worker = "target" if pools_seen[rk][label] == 1 else "draft"
            elif ev.kind in ("pool_end", "mamba_alloc", "hicache_alloc"):
                key = ev.kind + (ev.fields.get("label") or "")
                pool_end_seen[(rk, key)] += 1
                ev.worker = "target" if pool_end_seen[(rk, key)] == 1 else "draft"
            elif ev.kind in ("graph_begin", "graph_end", "graph_bs"):
                w = ev.fields.get("worker", "target")
                if (
                    w == "target"
                    and ev.kind != "graph_bs"
                    and rk in target_graph_done
                    and loads[rk] > 1
                    and ev.fields.get("name", "").lower() == "cuda graph"
                ):
                    w = "draft"  # 0.4.2.post2-0.4.3.post2: the EAGLE worker printed the target's wording
                if ev.kind == "graph_end" and w == "target":
                    target_graph_done.add(rk)
                ev.worker = w
            else:
                ev.worker = "target"

    @staticmethod
    def _server_args(launch: Launch, evs: list[Event], evidence: list) -> None:
        ev = next((e for e in evs if e.kind == "server_args"), None)
        if ev is None:
            return
        payload = ev.fields.get("payload", "")
        try:
            value = parse_literal(payload)
        except LiteralParseError as exc:
            launch.warnings.append(f"line {ev.line_no}: server_args not readable ({exc}); truncated line?")
            return
        if not isinstance(value, dict):
            launch.warnings.append(f"line {ev.line_no}: server_args is not a record")
            return
        launch.server_args_form = "dataclass" if isinstance(value, ReprRecord) else "dict"
        launch.server_args = json_safe(value)
        sa = launch.server_args
        evidence.append(
            (
                "server_args form " + launch.server_args_form,
                ("0.2.0", "0.5.18") if launch.server_args_form == "dataclass" else ("0.5.19", versions.last()),
            )
        )
        rng, exact = versions.date_field_set(set(sa))
        if rng is not None:
            evidence.append((f"server_args field set ({len(sa)} fields{'' if exact else ', closest releases'})", rng))

        def get(*names):
            for n in names:
                if n in sa and sa[n] is not None:
                    return sa[n]
            return None

        launch.model_path = get("model_path")
        launch.tp_size = _int(get("tp_size"))
        launch.dp_size = _int(get("dp_size"))
        launch.pp_size = _int(get("pp_size"))
        launch.ep_size = _int(get("ep_size", "moe_ep_size"))
        launch.mem_fraction_static = _float(get("mem_fraction_static"))
        launch.kv_cache_dtype = get("kv_cache_dtype")
        launch.page_size = _int(get("page_size"))
        launch.context_length = _int(get("context_length"))
        launch.chunked_prefill_size = _int(get("chunked_prefill_size"))
        launch.max_running_requests = _int(get("max_running_requests"))
        launch.max_total_tokens = _int(get("max_total_tokens"))
        launch.speculative_algorithm = get("speculative_algorithm")
        launch.enable_hierarchical_cache = get("enable_hierarchical_cache")
        launch.hicache_ratio = _float(get("hicache_ratio"))
        launch.hicache_size = _float(get("hicache_size"))
        launch.enable_dp_attention = get("enable_dp_attention")
        launch.device = get("device")

    @staticmethod
    def _ranks(launch: Launch, evs: list[Event]) -> None:
        ranks: dict[tuple, RankMemory] = {}
        kv_dtype_line = next((e.fields["dtype"] for e in evs if e.kind == "kv_dtype"), None)

        def rm(ev: Event) -> RankMemory:
            key = (ev.dp_rank, ev.pp_rank, ev.tp_rank, ev.ep_rank, ev.worker or "target")
            if key not in ranks:
                ranks[key] = RankMemory(
                    dp_rank=ev.dp_rank,
                    pp_rank=ev.pp_rank,
                    tp_rank=ev.tp_rank,
                    ep_rank=ev.ep_rank,
                    worker=ev.worker or "target",
                )
            return ranks[key]

        graph_begin_avail: dict[tuple, float] = {}
        for ev in evs:
            f = ev.fields
            if ev.kind == "load_begin":
                r = rm(ev)
                if r.avail_before_load_gb is None:
                    r.avail_before_load_gb = f["avail_gb"]
            elif ev.kind == "load_end":
                r = rm(ev)
                if ev.form == "overlap":
                    r.extra["overlap_commit_s"] = f.get("commit_s")
                    continue
                r.avail_after_load_gb = f.get("avail_gb")
                usage = f.get("mem_usage_gb")
                if usage is None and r.avail_before_load_gb is not None and r.avail_after_load_gb is not None:
                    usage = round(r.avail_before_load_gb - r.avail_after_load_gb, 2)
                r.weights_gb = (r.weights_gb or 0.0) + usage if usage is not None else r.weights_gb
                if f.get("elapsed_s") is not None:
                    r.load_s = (r.load_s or 0.0) + f["elapsed_s"]
                if f.get("model_type"):
                    r.extra["model_type"] = f["model_type"]
                if f.get("dtype"):
                    r.extra["model_dtype"] = f["dtype"]
                if f.get("quant"):
                    r.extra["quant"] = f["quant"]
            elif ev.kind == "kv_alloc":
                r = rm(ev)
                form = ev.form
                label = f.get("label")
                if form in ("post_capture", "post_capture_draft"):
                    r.extra["post_capture"] = {k: f.get(k) for k in ("tokens", "kv_gb", "avail_gb", "dtype")}
                    r.kv_tokens = f.get("tokens", r.kv_tokens)
                    r.kv_size_gb = f.get("kv_gb", r.kv_size_gb)
                    r.kv_dtype = f.get("dtype") or r.kv_dtype
                    continue
                if form == "noop":
                    r.extra["noop_pool_tokens"] = f.get("tokens")
                    continue
                size = f.get("kv_gb")
                if size is None and f.get("k_gb") is not None:
                    size = round(f["k_gb"] + f["v_gb"], 2)
                pools = r.extra.setdefault("pools", [])
                pools.append(
                    {
                        "label": label,
                        "tokens": f.get("tokens"),
                        "k_gb": f.get("k_gb"),
                        "v_gb": f.get("v_gb"),
                        "kv_gb": size,
                        "dtype": f.get("dtype"),
                        "va_upper_bound": form == "va_upper_bound",
                    }
                )
                if label in (None, "Full") or r.kv_tokens is None:
                    r.kv_tokens = f.get("tokens", r.kv_tokens)
                    r.k_size_gb = f.get("k_gb", r.k_size_gb)
                    r.v_size_gb = f.get("v_gb", r.v_size_gb)
                r.kv_size_gb = round(sum(p["kv_gb"] for p in pools if p["kv_gb"] is not None), 2)
                if f.get("dtype"):
                    r.kv_dtype = f["dtype"]
            elif ev.kind == "mamba_alloc":
                r = rm(ev)
                r.extra["mamba"] = dict(f)
            elif ev.kind == "swa_tokens":
                rm(ev).extra["swa_tokens"] = dict(f)
            elif ev.kind == "swakv_pool":
                rm(ev).extra["swakv_pool"] = dict(f)
            elif ev.kind == "pool_end":
                rm(ev).avail_after_pool_gb = f["avail_gb"]
            elif ev.kind == "graph_begin":
                r = rm(ev)
                if f.get("avail_gb") is not None:
                    graph_begin_avail[(r.key(), f.get("name"), f.get("step"))] = f["avail_gb"]
            elif ev.kind == "graph_end":
                r = rm(ev)
                usage = f.get("mem_usage_gb")
                before = graph_begin_avail.get((r.key(), f.get("name"), f.get("step")))
                if usage is None and before is not None and f.get("avail_gb") is not None:
                    usage = round(before - f["avail_gb"], 2)
                if usage is not None:
                    r.graph_gb = round((r.graph_gb or 0.0) + usage, 2)
                if f.get("avail_gb") is not None:
                    r.avail_after_graph_gb = f["avail_gb"]
                if f.get("elapsed_s") is not None:
                    r.graph_s = round((r.graph_s or 0.0) + f["elapsed_s"], 2)
                r.extra.setdefault("graphs", []).append(
                    {k: f.get(k) for k in ("name", "phase", "step", "elapsed_s", "mem_usage_gb", "avail_gb")}
                )
            elif ev.kind == "hicache_alloc":
                r = rm(ev)
                r.extra.setdefault("hicache", []).append(dict(f))
            elif ev.kind == "memory_unbalanced":
                rm(ev).extra["unbalanced"] = dict(f)
            elif ev.kind == "init_end":
                if f.get("mem_usage_gb") is not None:
                    rm(ev).extra["init_mem_usage_gb"] = f["mem_usage_gb"]
            elif ev.kind == "memory_baseline":
                rm(ev).extra["init_mem_usage_gb"] = f["mem_usage_gb"]
        for r in ranks.values():
            if r.kv_dtype is None and r.kv_tokens is not None:  # the rank-0 "Using KV cache dtype" line
                r.kv_dtype = kv_dtype_line
        launch.ranks = sorted(
            ranks.values(),
            key=lambda r: (r.worker != "target", r.dp_rank or 0, r.pp_rank or 0, r.tp_rank or 0, r.ep_rank or 0),
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
        if ready is not None:
            launch.outcome = "ready"
            launch.ready_at = ready.ts
            return
        if not failures:
            launch.outcome = "incomplete"
            if any(e.kind == "summary" for e in evs):
                launch.warnings.append(
                    "startup reached the scheduler summary but no ready line "
                    "(offline engine, benchmark, or the log ends early)"
                )
            return
        launch.outcome = "failed"
        # The most specific explanation wins: a known failure, then an exception text, then the rest.
        rank = {"failure": 0, "exception": 1, "child_failed": 2, "killed": 3}
        best = min(failures, key=lambda e: (rank[e.kind], e.seq))
        launch.error = _error_text(best)

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
        if launch.dp_size is None and dps:
            launch.dp_size = max(dps) + 1

    @staticmethod
    def _version(launch: Launch, evs: list[Event], evidence: list, user_version: str | None) -> None:
        from logparse.grammar.variants import evidence_for_events

        evidence.extend(evidence_for_events(evs, launch))
        rng: tuple[str, str] | None = None
        used: list[str] = []
        for why, r in evidence:
            new = versions.intersect(rng, r)
            if versions.is_empty(new):
                launch.warnings.append(
                    f"version evidence disagrees: {why} says {versions.format_range(r)}, "
                    f"earlier evidence says {versions.format_range(rng)} (a dev build?)"
                )
                continue
            rng = new
            used.append(f"{why}: {versions.format_range(r)}")
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

    @staticmethod
    def _sanity(launch: Launch) -> None:
        """Values that parse but make no sense are flagged, not stored as truth silently."""
        for r in launch.ranks:
            who = f"{r.worker} rank tp{r.tp_rank}" + (f" dp{r.dp_rank}" if r.dp_rank is not None else "")
            for name in (
                "avail_before_load_gb",
                "avail_after_load_gb",
                "avail_after_pool_gb",
                "avail_after_graph_gb",
                "kv_size_gb",
            ):
                v = getattr(r, name)
                if v is not None and (v != v or v < 0 or v > 1e6):
                    launch.warnings.append(f"{who}: {name}={v} is not a plausible memory figure")
            if r.kv_tokens is not None and (r.kv_tokens < 0 or r.kv_tokens > 10**12):
                launch.warnings.append(f"{who}: kv_tokens={r.kv_tokens} is not plausible")
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
        if launch.max_total_num_tokens is not None and not (0 <= launch.max_total_num_tokens <= 10**12):
            launch.warnings.append(f"max_total_num_tokens={launch.max_total_num_tokens} is not plausible")


def stable_launch_id(launch: Launch, evs: list[Event]) -> str:
    """Stable for the same content: the host plus the first startup lines (timestamps included)."""
    h = hashlib.sha256()
    h.update((launch.host or "").encode())
    n = 0
    for ev in evs:
        if ev.kind in RUNTIME_KINDS:
            continue
        h.update(b"\n")
        h.update(ev.text.encode("utf-8", "replace"))
        n += 1
        if n >= 3:
            break
    return h.hexdigest()[:16]


def _error_text(ev: Event) -> str:
    f = ev.fields
    exc = f.get("exception")
    text = ev.text
    if exc and text.startswith(exc):
        return text
    if ev.kind == "killed":
        return "Killed (the process was killed by a signal, often the OOM killer)"
    return text


def _int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return None


def _float(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    return None


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
