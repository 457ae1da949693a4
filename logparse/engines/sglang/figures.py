"""The launch-level figures of an SGLang launch, from its events.

* **Arguments**: the ``server_args=`` payload (cut, abridged or wrapped lines keep what they show,
  with a warning) and the launch fields read from it; its form and field set date the release.
* **Sizing**: the scheduler's summary line (``max_total_num_tokens``, ...; per DP rank when they
  differ), the HiCache host pool, and the parallel sizes the rank tags imply when ``server_args`` is
  missing.
* **Outcome**: ready on the ready line (0.1.3-0.1.16, which print none: on uvicorn's start), failed
  on a failure line or a fatal traceback (:data:`FATAL_COMPONENTS`), else incomplete;
  ``outcome_evidence`` names the line that decided.
* **Role and version**: the disaggregation role from the words of the line prefix (else
  ``server_args``); the release range every line's wording allows
  (:mod:`logparse.engines.sglang.variants`), narrowed by the user's ``--sglang-version``.
* **Sanity**: memory figures that parse but make no sense are warned about.

The per-rank memory is folded by :mod:`logparse.engines.sglang.ranks`; the launch assembler
(:mod:`logparse.engines.sglang.assemble`) calls :func:`fill_launch` once a launch's events are in.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from logparse.engines.sglang import versions
from logparse.engines.sglang.prefix import PREFIX_RE, split_items
from logparse.grammar.bounds import shown
from logparse.grammar.events import Event
from logparse.grammar.pyliteral import (
    LiteralParseError,
    ReprRecord,
    is_abridged,
    json_safe_notes,
    parse_literal,
    parse_literal_prefix,
    whole_number,
)
from logparse.launches.figures import outcome_evidence
from logparse.launches.model import Launch

#: Kinds that say the start failed (a launch that reached one is over: the assembler splits on it too).
FAILURE_KINDS = frozenset({"failure", "exception", "child_failed", "killed"})

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
#: Wording printed only by 0.1.3-0.1.16 (the "Rank N:" router era), which has no ready line.
_V01_ROUTER_FORMS = frozenset({"v01", "v01_paste", "lower", "optional_modes", "init_state"})


def fill_launch(launch: Launch, evs: list[Event], runtime: dict[str, Any], version: str | None) -> None:
    """Every launch-level SGLang figure from the launch's events (their workers and the per-rank memory
    already known), in dependency order; ``runtime``: the launch's runtime aggregate
    (``RuntimeAgg.to_dict()``); ``version``: the release the user says it is (``--sglang-version``)."""
    evidence: list[tuple[str, tuple[str, str]]] = []
    _server_args(launch, evs, evidence)
    if not any(e.kind in _OPENING_KINDS for e in evs):
        launch.warnings.append(
            "the start of this launch is not in the input (no server_args, init or load-begin line): "
            "a piece of a log; only the figures its lines show are known"
        )
    _summary(launch, evs)
    _outcome(launch, evs)
    _runtime(launch, evs, runtime)
    _hicache(launch, evs)
    _fill_from_ranks(launch)
    _role(launch, evs)
    _version(launch, evs, evidence, version)
    _sanity(launch)


# --------------------------------------------------------------------------- server_args
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
            launch.warnings.append(f"line {ev.line_no}: server_args field {attr}={shown(arg)} is not a figure: ignored")


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


# --------------------------------------------------------------------------- summary and outcome
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


# --------------------------------------------------------------------------- runtime, HiCache, parallel sizes
def _runtime(launch: Launch, evs: list[Event], runtime: dict[str, Any]) -> None:
    rt = dict(runtime)
    timings = next((e.fields for e in evs if e.kind == "startup_timings"), None)
    if timings:
        rt["startup_timings"] = timings
    launch.runtime.update(rt)


def _hicache(launch: Launch, evs: list[Event]) -> None:
    hc = [
        e
        for e in evs
        if e.kind == "hicache_alloc" and e.fields.get("label") in ("kv", "full") and (e.worker or "target") == "target"
    ]
    if not hc:
        return
    best = min(hc, key=lambda e: ((e.dp_rank or 0), (e.tp_rank or 0), e.seq))
    launch.hicache_host_gb = best.fields.get("host_gb")
    launch.hicache_host_tokens = best.fields.get("tokens")


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


# --------------------------------------------------------------------------- role, version, sanity
#: Words of the line prefix that name a disaggregation role (``DisaggregationMode.DECODE`` -> ``decode``),
#: or say there is none (``""``).
_ROLE_WORDS = {"prefill": "prefill", "decode": "decode", "null": "", "none": ""}


def role_of_word(word: str) -> str | None:
    """``DisaggregationMode.DECODE``/``decode`` -> ``decode``; ``DisaggregationMode.NULL`` -> ``""``
    (no role); a word that names no role -> None."""
    return _ROLE_WORDS.get(word.rsplit(".", 1)[-1].lower())


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
