"""The launch-level figures of a vLLM launch, from its events (catalogue §9).

* **Version**: printed by every release (``Initializing … engine (vX)``, ``vLLM API server version``,
  the logo); else the release range the wording allows (:mod:`logparse.engines.vllm.variants`).
* **Configuration**: model, ``max_seq_len`` (the effective ``max_model_len``), ``kv_cache_dtype``,
  tp/pp/dp from the engine's config line; ``gpu_memory_utilization`` and ``block_size`` only from the
  arguments (``args: Namespace(…)`` up to 0.8.5.post1, ``non-default args: {…}`` from 0.9.0, where an
  absent key means the release default) or, failing those, from a memory line that prints it.
* **KV capacity**: ``num_gpu_blocks`` (V0, V1 ≤ 0.7.3; the executor already took the minimum),
  ``kv_tokens`` = blocks × block_size there, else the smallest ``GPU KV cache size`` (0.8.0-0.11.0
  print one per worker, each before the minimum); its definition changed at 0.20.1 (§4.8).
* **Outcome**: ready on uvicorn's ``Application startup complete.`` (offline: on ``init engine … took``,
  or, V0, on its last CUDA-graph capture); implied ready on the API server's ``Route:`` lines (logged
  just before uvicorn serves); failed on a startup failure of §2.7, zero GPU blocks (V0 raises on
  them) or a worker's exception, else incomplete.  ``outcome_evidence`` names the line that decided.
"""

from __future__ import annotations

from typing import Any

from logparse.engines.vllm import versions as vv
from logparse.engines.vllm.prefix import split_head
from logparse.grammar.events import Event
from logparse.grammar.pyliteral import (
    LiteralParseError,
    json_safe_notes,
    parse_literal,
    parse_literal_prefix,
    whole_number,
)
from logparse.launches.figures import outcome_evidence
from logparse.launches.model import Launch, RankMemory

#: Block sizes vLLM uses on CUDA (16 by default; some attention backends choose another).
_BLOCK_SIZES = (1, 8, 16, 32, 64, 128, 256, 512, 1024)
#: The engine's GPU block devices (``# GPU blocks`` 0.4.0-0.6.6.post1, ``CUDA``/``cuda`` 0.7.0-0.10.2).
_GPU_BLOCK_DEVICES = ("GPU", "CUDA", "cuda")
#: Failure kinds by how well they explain a failed start (the root cause before its echoes).
_FAILURE_RANK = {"vllm_failure": 0, "exception": 1, "vllm_worker_exception": 2, "vllm_engine_failed": 3, "killed": 4}


def fill_launch(launch: Launch, evs: list[Event]) -> None:
    """Every launch-level vLLM figure, in dependency order (the version decides the defaults)."""
    args = _args(launch, evs)
    _engine_config(launch, evs, args)
    _version(launch, evs)
    _generation(launch, evs)
    _utilization(launch, evs, args)
    _capacity(launch, evs, args)
    _outcome(launch, evs)
    _build_notes(launch, evs)
    if not any(e.kind in ("vllm_version", "vllm_args", "vllm_engine_init") for e in evs):
        launch.warnings.append(
            "the start of this launch is not in the input (no version, arguments or engine init line): "
            "a piece of a log; only the figures its lines show are known"
        )


# --------------------------------------------------------------------------- arguments and config
def _args(launch: Launch, evs: list[Event]) -> dict[str, Any] | None:
    """The arguments line as a dict (``args: Namespace(…)`` or ``non-default args: {…}``)."""
    ev = next((e for e in evs if e.kind == "vllm_args"), None)
    if ev is None:
        return None
    payload = ev.fields.get("payload", "")
    try:
        value = parse_literal(payload)
    except LiteralParseError:
        part = parse_literal_prefix(payload)
        value = part.value if part is not None else None
        launch.warnings.append(f"line {ev.line_no}: the arguments line is not readable to its end (cut when pasted?)")
    if value is None:
        return None
    args, notes = json_safe_notes(value)
    if not isinstance(args, dict):
        return None
    launch.warnings.extend(f"line {ev.line_no}: argument {note}" for note in notes)
    # vLLM's arguments are the launch's server arguments: stored per argument, compared by history and diff
    launch.server_args = args
    launch.server_args_form = "vllm_" + (ev.form or "args")
    return args


def _engine_config(launch: Launch, evs: list[Event], args: dict[str, Any] | None) -> None:
    cfg = next((e.fields for e in evs if e.kind == "vllm_engine_init"), {})
    a = args or {}
    launch.model_path = _first(cfg.get("model"), _logo_model(evs), a.get("model"), a.get("model_tag"))
    launch.tp_size = whole_number(_first(cfg.get("tensor_parallel_size"), a.get("tensor_parallel_size")))
    launch.pp_size = whole_number(_first(cfg.get("pipeline_parallel_size"), a.get("pipeline_parallel_size")))
    launch.dp_size = whole_number(_first(cfg.get("data_parallel_size"), a.get("data_parallel_size")))
    launch.kv_cache_dtype = _first(cfg.get("kv_cache_dtype"), a.get("kv_cache_dtype"))
    launch.max_model_len = whole_number(_first(cfg.get("max_seq_len"), a.get("max_model_len")))
    for ev in evs:
        if ev.kind == "vllm_max_model_len" or (ev.kind == "vllm_autofit" and ev.form == "reduced"):
            launch.max_model_len = ev.fields["max_model_len"]
    tps = {r.tp_rank for r in launch.ranks if r.tp_rank is not None}
    if launch.tp_size is None and len(tps) > 1:
        launch.tp_size = max(tps) + 1


def _logo_model(evs: list[Event]) -> str | None:
    for e in evs:
        if e.kind == "vllm_logo_model" or (e.kind == "vllm_version" and e.fields.get("model")):
            return e.fields.get("model")
    return None


# --------------------------------------------------------------------------- version and generation
def _version(launch: Launch, evs: list[Event]) -> None:
    from logparse.engines.vllm.variants import evidence_for_events, line_number_evidence

    printed = [e.fields["version"] for e in evs if e.kind in ("vllm_engine_init", "vllm_version")]
    rng, used = _wording_range(launch, evidence_for_events(evs))
    rng = _with_line_numbers(launch, rng, used, line_number_evidence(evs), bool(printed))
    if printed:
        version = printed[0]
        if len(set(printed)) > 1:
            launch.warnings.append(f"the log prints more than one vLLM version: {', '.join(dict.fromkeys(printed))}")
        if rng is not None and vv.is_release(version) and not vv.in_range(version, rng):
            launch.warnings.append(
                f"vLLM prints version {version}, but its lines read like {vv.format_range(rng)} (a dev build or a patched image?)"
            )
        used.insert(0, f"printed version {version}")
        rng = vv.range_of(version)
        launch.engine_version = version
    elif rng is not None and rng[0] == rng[1]:
        launch.engine_version = rng[0]
    launch.version_range = rng
    launch.engine_version_range = vv.format_range(rng)
    launch.version_evidence = used


def _wording_range(launch: Launch, evidence: list[tuple[str, vv.Range]]) -> tuple[vv.Range | None, list[str]]:
    """The releases the wording, prefix and tags of the lines agree on (a piece that contradicts the
    earlier ones is left out, with a warning: a dev build, a patched image or two logs mixed)."""
    rng, used, disagreements = vv.VLLM.narrow(evidence)
    launch.warnings.extend(disagreements)
    return rng, used


def _with_line_numbers(
    launch: Launch, rng: vv.Range | None, used: list[str], numbers: list[tuple[str, vv.Range]], printed: bool
) -> vv.Range | None:
    """Narrow ``rng`` by the ``[file.py:N]`` line numbers, taken together: they date a log only when
    every one of them fits one release range with the wording.  A build between releases (a nightly,
    a patched image) has line numbers of no single release: then they say nothing, in one note."""
    joint = rng
    for _, r in numbers:
        joint = vv.intersect(joint, r)
    if not numbers:
        return rng
    if not vv.is_empty(joint):
        used.extend(f"{why}: {vv.format_range(r)}" for why, r in numbers)
        return joint
    if not printed:
        launch.warnings.append(
            f"the line numbers of {len(numbers)} key line(s) fit no single release with the wording "
            "(a build between releases or a patched image?): dated from the wording only"
        )
    return rng


def release_of(launch: Launch) -> str | None:
    """The release whose defaults apply: the printed one, else the range's only release, else None."""
    rng = launch.version_range
    if launch.engine_version:
        return launch.engine_version
    return rng[0] if rng and rng[0] == rng[1] else None


def _same_on_range(launch: Launch, fn) -> Any:
    """``fn(release)`` when it is the same over the launch's whole release range, else None."""
    rel = release_of(launch)
    if rel:
        return fn(rel)
    rng = launch.version_range
    if not rng or vv.is_empty(rng):
        return None
    lo, hi = fn(rng[0]), fn(rng[1])
    return lo if lo == hi else None


def _generation(launch: Launch, evs: list[Event]) -> None:
    init = next((e for e in evs if e.kind == "vllm_engine_init"), None)
    if init is not None and init.fields.get("generation"):
        launch.engine_generation = init.fields["generation"]
        return
    v0 = any(e.kind == "vllm_profile" and e.form in ("time", "budget", "terms") for e in evs) or any(
        e.kind == "vllm_blocks" and "cpu_blocks" in e.fields for e in evs
    )
    v1 = any(e.kind in ("vllm_kv_memory", "vllm_kv_tokens", "vllm_engine_failed") for e in evs)
    if v0 != v1:
        launch.engine_generation = "V0" if v0 else "V1"
    else:
        launch.engine_generation = _same_on_range(launch, vv.default_engine)


# --------------------------------------------------------------------------- gpu_memory_utilization
def _utilization(launch: Launch, evs: list[Event], args: dict[str, Any] | None) -> None:
    """From the arguments (set, or the release default when ``non-default args`` lacks it), else printed."""
    if args is not None and isinstance(args.get("gpu_memory_utilization"), (int, float)):
        value = float(args["gpu_memory_utilization"])
        full = launch.server_args_form == "vllm_namespace"
        default = _same_on_range(launch, vv.default_utilization)
        launch.gpu_memory_utilization = value
        launch.gpu_memory_utilization_source = "default" if full and default == value else "set"
        return
    if args is not None and launch.server_args_form == "vllm_non_default":
        default = _same_on_range(launch, vv.default_utilization)
        if default is not None:
            launch.gpu_memory_utilization, launch.gpu_memory_utilization_source = default, "default"
            return
    for ev in evs:
        u = ev.fields.get("utilization")
        if isinstance(u, (int, float)) and ev.kind in (
            "vllm_profile",
            "vllm_budget_report",
            "vllm_graph_advice",
            "vllm_failure",
        ):
            launch.gpu_memory_utilization, launch.gpu_memory_utilization_source = float(u), "printed"
            return


# --------------------------------------------------------------------------- KV capacity
def _capacity(launch: Launch, evs: list[Event], args: dict[str, Any] | None) -> None:
    block_evs = [e for e in evs if e.kind == "vllm_blocks" and e.fields.get("device") in _GPU_BLOCK_DEVICES]
    blocks = [e.fields["gpu_blocks"] for e in block_evs]
    conc = [c for e in evs if e.kind in ("vllm_concurrency", "vllm_kv_tokens") and (c := _concurrency(e)) is not None]
    if blocks:
        launch.num_gpu_blocks = min(blocks)
    if conc:
        best = min(conc, key=lambda c: c[1])
        launch.max_concurrency_tokens, launch.max_concurrency = best
        if launch.max_model_len is None:
            launch.max_model_len = best[0]
    tokens = [
        e.fields["kv_tokens"]
        for e in evs
        if e.kind == "vllm_kv_tokens" and e.fields.get("pools") in ("GPU", "GPU + host")
    ]
    one_group = not any((e.form or "").startswith("cache_config_info") for e in block_evs)
    launch.block_size = _block_size(launch, args, one_group)
    if tokens:
        launch.kv_tokens = min(tokens)
        launch.kv_tokens_definition = _same_on_range(launch, vv.tokens_definition)
        _groups_check(launch, evs)
    elif launch.num_gpu_blocks is not None:
        block = launch.block_size or DEFAULT_BLOCK_SIZE
        if launch.block_size is None:
            launch.warnings.append(
                f"the block size is not in the log: KV tokens = {launch.num_gpu_blocks:,} GPU blocks × "
                f"{DEFAULT_BLOCK_SIZE} (vLLM's CUDA default; an MLA or hybrid model's backend may use another)"
            )
        launch.kv_tokens = launch.num_gpu_blocks * block
        launch.kv_tokens_definition = vv.BLOCKS_DEFINITION
    _capacity_from_failure(launch, evs)


def _concurrency(ev: Event) -> tuple[int, float] | None:
    f = ev.fields
    if f.get("max_concurrency") is None or f.get("max_model_len") is None:
        return None
    if ev.kind == "vllm_kv_tokens" and f.get("pools") not in ("GPU", "GPU + host"):
        return None
    return (f["max_model_len"], f["max_concurrency"])


#: vLLM's block size on CUDA when nothing else chose one (catalogue §4.9).
DEFAULT_BLOCK_SIZE = 16


def _block_size(launch: Launch, args: dict[str, Any] | None, one_group: bool) -> int | None:
    """From the arguments; else (blocks printed by an engine with one KV group: V0, V1 up to 0.7.3)
    the power of two that ``concurrency × L / blocks`` is.  From 0.9.0 V1's blocks may be a hybrid
    model's, whose requests take blocks in several groups: that ratio is then no block size."""
    b = whole_number((args or {}).get("block_size"))
    if b:
        return b
    blocks, conc, length = launch.num_gpu_blocks, launch.max_concurrency, launch.max_concurrency_tokens
    if not blocks or conc is None or not length or not one_group:
        return None
    raw = conc * length / blocks
    near = min(_BLOCK_SIZES, key=lambda s: abs(s - raw))
    return near if abs(near - raw) <= 0.01 * near else None


def _one_group(blocks: int, block_size: int, tokens: int) -> bool:
    """``blocks × block_size`` is the token count (within 1%): the pool is one KV cache group."""
    return abs(blocks * block_size - tokens) <= 0.01 * max(tokens, 1)


def _groups_check(launch: Launch, evs: list[Event]) -> None:
    """With the engine's blocks (V1's ``cache_config_info``) and a token line, say when the tokens are
    not ``blocks × block_size``: several KV cache groups (a hybrid or sliding-window model, §4.8).
    Then (or with vLLM's padding-layer warning) ``concurrency × max_model_len`` counts requests that
    fit, not slots: a rank's pool over it is no per-token size, so the ranks keep no token count."""
    blocks, size, tokens = launch.num_gpu_blocks, launch.block_size, launch.kv_tokens
    several = bool(blocks and size and tokens is not None and not _one_group(blocks, size, tokens))
    padded = any(e.kind == "vllm_kv_note" and e.form == "padding" for e in evs)
    if (several or padded) and launch.kv_tokens_definition == vv.CONCURRENCY_DEFINITION:
        for rank in launch.ranks:
            rank.kv_tokens = None
    if not several or not blocks or not size or tokens is None:
        return
    launch.warnings.append(
        f"num_gpu_blocks × block_size = {blocks:,} × {size} = {blocks * size:,} is not kv_tokens = {tokens:,}: "
        "the KV cache has several groups (a hybrid or sliding-window model); kv_tokens counts "
        f"{launch.kv_tokens_definition or 'what this release prints'}, not blocks × block_size"
    )


def _capacity_from_failure(launch: Launch, evs: list[Event]) -> None:
    """A start that failed on KV capacity still says how much there was (tokens, or GiB)."""
    for ev in evs:
        if ev.kind != "vllm_failure":
            continue
        f = ev.fields
        if launch.kv_tokens is None and f.get("kv_tokens") is not None:
            launch.kv_tokens, launch.kv_tokens_definition = f["kv_tokens"], vv.BLOCKS_DEFINITION
        if launch.max_model_len is None and f.get("max_model_len") is not None:
            launch.max_model_len = f["max_model_len"]
        if f.get("available_gb") is not None and not any(r.kv_size_gb is not None for r in launch.ranks):
            rank = launch.ranks[0] if launch.ranks else RankMemory(tp_rank=0)
            rank.kv_size_gb = f["available_gb"]
            if not launch.ranks:
                launch.ranks.append(rank)


# --------------------------------------------------------------------------- outcome
#: What a worker method that raised was doing (V0's multiprocessing executor, 0.4.2-0.10.2).
_METHOD_KINDS = {
    "initialize_cache": "kv_cache_init",
    "determine_num_available_blocks": "profile",
    "load_model": "weights",
    "init_device": "device",
}


def _failure_rank(ev: Event) -> float | None:
    """How well a line explains a failed start (lower is better), or None when it is no failure.
    Zero GPU blocks is one: V0 (and V1 up to 0.6.6.post1) raise on ``num_gpu_blocks <= 0``."""
    if ev.kind == "vllm_blocks" and ev.fields.get("gpu_blocks") == 0 and ev.fields.get("device") in _GPU_BLOCK_DEVICES:
        return 0.5
    return _FAILURE_RANK.get(ev.kind)


def _is_server(evs: list[Event]) -> bool:
    """The log is an API server's (version or start line, routes, uvicorn), not an offline ``LLM(...)``."""
    return any(
        (e.kind == "vllm_version" and e.form in ("api_server", "server", "logo"))
        or e.kind in ("vllm_server_start", "uvicorn", "vllm_routes")
        for e in evs
    )


def _ready_evidence(launch: Launch, evs: list[Event], server: bool) -> tuple[Event, str, bool] | None:
    """The line that says the launch is up, why, and whether it only implies it (then a failure after
    it still fails the start).  uvicorn's line says it; offline, the end of the engine init does."""
    up = next((e for e in evs if e.kind == "uvicorn" and e.form == "startup_complete"), None)
    if up is not None:
        return up, "uvicorn's 'Application startup complete.'", False
    running = next((e for e in evs if e.kind == "uvicorn" and e.form == "running"), None)
    if running is not None:  # uvicorn binds and says so only after its application startup completed
        return running, "uvicorn's 'Uvicorn running on …' (it prints it after its application startup)", False
    if not server:
        init = next((e for e in evs if e.kind == "vllm_init_engine"), None)
        if init is not None:
            return (
                init,
                "'init engine … took' and no API server in the log: an offline run is up when its engine init ends",
                False,
            )
        graphs = [e for e in evs if e.kind == "vllm_graph"]
        if graphs and launch.engine_generation == "V0":
            why = "'Graph capturing finished' of an offline V0 run (no API server in the log): the capture is its engine's last init step"
            return graphs[-1], why, True
        return None
    routes = [e for e in evs if e.kind == "vllm_routes"]
    listed = [e for e in routes if e.form != "head"]
    if listed:
        head = next((e for e in routes if e.form == "head"), listed[0])
        why = (
            f"the API server listed its routes ({len(listed)} 'Route:' line(s)), which vLLM logs just before "
            "uvicorn serves; the input ends before uvicorn's 'Application startup complete.'"
        )
        return head, why, True
    return None


def _outcome(launch: Launch, evs: list[Event]) -> None:
    server = _is_server(evs)
    failures = [e for e in evs if _failure_rank(e) is not None]
    ready = _ready_evidence(launch, evs, server)
    if ready is not None:
        ev, why, implied = ready
        if not any(f.seq < ev.seq or (implied and f.seq > ev.seq) for f in failures):
            # uvicorn's lines carry no time: the server was up by the last stamped line before it
            launch.outcome = "ready"
            launch.ready_at = ev.ts or next((e.ts for e in reversed(evs[: ev.seq]) if e.ts), None)
            launch.outcome_evidence = outcome_evidence(ev, why)
            return
    if not failures:
        launch.outcome = "incomplete"
        launch.outcome_evidence = _incomplete_evidence(evs)
        if any(e.kind == "vllm_init_engine" for e in evs):
            launch.warnings.append(
                "the engine finished its init but the server never said it was up (the log ends early?)"
            )
        return
    best = min(failures, key=lambda e: (_failure_rank(e), e.seq))
    launch.outcome = "failed"
    launch.error = message_of(best)
    launch.error_kind = _error_kind(best, evs)
    launch.outcome_evidence = outcome_evidence(best, _failure_why(best, evs))


def _incomplete_evidence(evs: list[Event]) -> str:
    init = next((e for e in evs if e.kind == "vllm_init_engine"), None)
    if init is not None:
        why = "the engine finished its init, then neither uvicorn's ready line nor the API routes nor a failure"
        return outcome_evidence(init, why)
    return "neither a ready nor a failure line in the input"


def _failure_why(ev: Event, evs: list[Event]) -> str:
    if ev.kind == "vllm_blocks":
        why = (
            f"'{message_of(ev)}': no memory was left for the KV cache (vLLM raises 'No available memory for the "
            "cache blocks' on zero blocks)"
        )
        tb = next((e for e in evs if e.seq > ev.seq and e.kind == "exception_start"), None)
        return why + ("; the traceback after it lost its exception line" if tb is not None else "")
    if ev.kind == "vllm_worker_exception" and ev.form == "workerproc_start":
        return "a worker failed to start ('WorkerProc failed to start.': the engine core fails with it)"
    if ev.kind == "vllm_worker_exception":
        f = ev.fields
        return (
            f"worker {f.get('process')} raised in {f.get('method')} (the executor re-raises a worker's exception: "
            "the start failed)"
        )
    label = {"vllm_failure": "vLLM's startup failure", "exception": "an exception before any ready line"}.get(
        ev.kind, "a failure line"
    )
    return f"{label}: {_short(message_of(ev))}"


def _short(text: str, n: int = 100) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _error_kind(ev: Event, evs: list[Event]) -> str:
    if ev.kind == "vllm_failure":
        return (ev.form or "failure").split(":", 1)[0]
    if ev.kind == "vllm_blocks":
        return "no_kv_memory"
    worker = next((e for e in evs if e.kind == "vllm_worker_exception"), None)
    if ev.kind in ("vllm_worker_exception", "exception") and worker is not None:
        # the worker's method says what the start was doing when it raised
        return _METHOD_KINDS.get(worker.fields.get("method", ""), "worker_exception")
    return {"vllm_engine_failed": "engine_failed"}.get(ev.kind, ev.kind)


def message_of(ev: Event) -> str:
    """The message of an event's line, without vLLM's layers in front of it."""
    _, _, _, end = split_head(ev.text)
    return ev.text[end:].strip() or ev.text


def _build_notes(launch: Launch, evs: list[Event]) -> None:
    """What the lines say about the build: the model runner (MRv2 prints ``Using V2 Model Runner``) and
    lines no upstream release prints (a patched image)."""
    if any(e.kind == "vllm_runner" for e in evs):
        launch.runtime["model_runner"] = "V2"
    for ev in evs:
        if ev.kind == "vllm_patch_note" and ev.form == "allocator_cleared":
            launch.warnings.append(
                f"line {ev.line_no}: a patched build (no vLLM release prints this): it cleared "
                f"{ev.fields['cleared_gb']:.2f} GiB of PyTorch's cached memory before allocating the KV cache"
            )
        elif ev.kind == "vllm_patch_note":
            launch.warnings.append(
                f"line {ev.line_no}: a patched build (no vLLM release prints this): it freed "
                f"{ev.fields['freed_gb']:.2f} GiB after the profile and measured non-torch memory again "
                f"({ev.fields['non_torch_increase_gb']:.2f} GiB) before sizing the KV cache, which gains what it freed"
            )


# --------------------------------------------------------------------------- small helpers
def _first(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)
