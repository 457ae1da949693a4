"""The launch figures: one table, read by every surface that shows them.

Each row is one figure (or descriptive field) of a launch: its name (the JSON key, the CSV
column, the store's column), its unit, which way is better, the label a table shows, how a cell
is written, and the surfaces it is shown on.  A surface's columns are the figures that name it,
**in the order of this table**: adding a figure to a surface is adding its name to one row.

Surfaces:

``launches``
    ``logparse launches --format json|csv`` (the columns read from the ``launch_summary`` view).
``launches_table``
    the columns of the human ``launches`` table (its header is the figure's label).
``show``
    the line of arguments and figures under a launch's header (``show``, ``parse``), when set.
``parse_csv``
    ``logparse parse --format csv``: one row per launch (budget figures from the launch's budget).
``history``
    the metrics ``history`` compares launch to launch (a ``*_change`` column each).  Their order
    is the store's ``history`` view's (frozen in the schema): :data:`HISTORY_ORDER`.

The table is plain data (no imports of the package): the lowest stage, read by every other.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Where a figure's value is read: the launch record, its budget, or a column only the store has.
LAUNCH, BUDGET, STORE = "launch", "budget", "store"

SURFACES = ("launches", "launches_table", "show", "parse_csv", "history")


@dataclass(frozen=True)
class Figure:
    name: str
    #: ``tokens``, ``GiB``, ``s``, ``share`` (a fraction of 1), ``count``, or ``""`` (a descriptive field)
    unit: str
    #: True: higher is better; False: lower is better; None: neither (a setting, a description)
    higher_is_better: bool | None
    #: the table header (and the history table's column); defaults to the name
    label: str
    #: how a table cell is written: ``int`` (thousands separators from 10,000), ``gib`` (2 decimals),
    #: ``percent``, ``share`` (``0.88``), ``text``, ``time``, ``ref`` (a launch reference: kept whole),
    #: ``path`` (shortened in the middle on a narrow terminal), ``model`` (a path's last part)
    fmt: str
    surfaces: frozenset[str]
    #: where the value is read (:data:`LAUNCH`, :data:`BUDGET`, :data:`STORE`)
    of: str = LAUNCH
    #: on a narrow terminal, table columns of importance 5 are left out first, then 4, ... 2;
    #: 1 is always shown (:class:`logparse.cli.layout.Col`)
    importance: int = 2


def _row(name: str, unit: str, better: bool | None, label: str, fmt: str, shown: str, **kw) -> Figure:
    surfaces = frozenset(shown.split())
    unknown = surfaces - set(SURFACES)
    if unknown:
        raise ValueError(f"figure {name}: unknown surface(s) {sorted(unknown)}")
    return Figure(name, unit, better, label or name, fmt, surfaces, **kw)


_L, _T, _S, _P, _H = "launches", "launches_table", "show", "parse_csv", "history"

# fmt: off
#: Every launch figure, in the order the surfaces show them.
FIGURES: tuple[Figure, ...] = (
    _row("launch_id", "", None, "launch", "ref", f"{_L} {_T} {_P}", importance=1),
    _row("source", "", None, "", "path", _P),
    _row("host", "", None, "host", "text", f"{_L} {_T} {_P}", importance=3),
    _row("unit", "", None, "", "text", _P),
    _row("pid", "", None, "", "int", _P),
    _row("started_at", "", None, "started", "time", f"{_L} {_T} {_P}", importance=1),
    _row("ready_at", "", None, "", "time", _P),
    # the UTC offset of started_at and ready_at, when the input printed one (logparse.launches.times)
    _row("time_zone", "", None, "", "text", f"{_L} {_P}"),
    _row("outcome", "", None, "outcome", "text", f"{_L} {_T} {_P}", importance=1),
    _row("version", "", None, "version", "text", f"{_L} {_T}", of=STORE, importance=2),
    _row("engine_version_range", "", None, "", "text", _P),
    _row("model_path", "", None, "model", "model", f"{_L} {_T} {_P}", importance=1),
    _row("tp_size", "count", None, "tp", "int", f"{_L} {_T} {_P}", importance=3),
    _row("dp_size", "count", None, "dp", "int", f"{_L} {_T} {_P}", importance=5),
    _row("pp_size", "count", None, "pp", "int", f"{_L} {_P}"),
    _row("ep_size", "count", None, "ep", "int", _P),
    # the table's "mem frac" is SGLang's share of free memory or vLLM's of total memory (the engine's own)
    _row("mem_fraction_static", "share", None, "mem frac", "share", f"{_L} {_T} {_S} {_P} {_H}", importance=4),
    _row("gpu_memory_utilization", "share", None, "", "share", f"{_L} {_S} {_P}"),
    _row("max_model_len", "tokens", None, "", "int", _S),
    _row("num_gpu_blocks", "count", True, "", "int", _S),
    _row("block_size", "tokens", None, "", "int", _S),
    _row("kv_tokens", "tokens", True, "KV tokens", "int", f"{_L} {_T} {_S} {_P} {_H}", of=BUDGET, importance=1),
    _row("kv_tokens_definition", "", None, "", "text", f"{_L} {_S}"),
    _row("max_concurrency", "count", True, "", "gib", _S),
    _row("error_kind", "", None, "", "text", _S),
    _row("kv_cache_dtype", "", None, "", "text", f"{_S} {_P}"),
    _row("max_total_num_tokens", "tokens", True, "", "int", f"{_L} {_P} {_H}"),
    _row("page_size", "tokens", None, "", "int", _S),
    _row("context_length", "tokens", None, "", "int", _S),
    _row("context_len", "tokens", None, "", "int", f"{_P} {_H}"),
    _row("chunked_prefill_size", "tokens", None, "", "int", _S),
    _row("max_running_requests", "count", None, "", "int", _S),
    _row("max_total_tokens", "tokens", None, "", "int", _S),
    _row("speculative_algorithm", "", None, "", "text", _S),
    _row("enable_hierarchical_cache", "", None, "", "text", _S),
    _row("error", "", None, "", "text", _P),
    _row("kv_pool_gb", "GiB", True, "KV GiB", "gib", f"{_L} {_T} {_P} {_H}", of=BUDGET, importance=3),
    _row("weights_gb", "GiB", None, "weights GiB", "gib", f"{_L} {_T} {_P} {_H}", of=BUDGET, importance=4),
    _row("headroom_gb", "GiB", True, "headroom GiB", "gib", f"{_L} {_T} {_P} {_H}", of=BUDGET, importance=2),
    _row("binding_rank", "", None, "", "text", f"{_L} {_P}", of=BUDGET),
    _row("headroom_unknown", "", None, "", "text", _L, of=BUDGET),
    _row("predicted_kv_tokens", "tokens", True, "predicted KV tokens", "int", f"{_L} {_P} {_H}", of=BUDGET),
    _row("peak_token_usage", "share", False, "peak usage", "percent", f"{_L} {_T} {_H}", of=STORE, importance=3),
    _row("retractions", "count", False, "retract", "int", f"{_L} {_T} {_H}", of=STORE, importance=4),
    _row("n_warnings", "count", False, "warn", "int", f"{_L} {_T}", of=STORE, importance=4),
    _row("engine", "", None, "", "text", f"{_L} {_P}"),
    _row("deployment", "", None, "", "text", _L, of=STORE),
    # history metrics that no other surface shows (memory per step, sizes, timings, runtime peaks)
    _row("avail_before_load_gb", "GiB", True, "free before load GiB", "gib", _H, of=BUDGET),
    _row("avail_after_load_gb", "GiB", True, "free after load GiB", "gib", _H, of=BUDGET),
    _row("kv_size_gb", "GiB", True, "KV size GiB", "gib", _H),
    _row("avail_after_pool_gb", "GiB", True, "free after pool GiB", "gib", _H, of=BUDGET),
    _row("graph_gb", "GiB", False, "graphs GiB", "gib", _H, of=BUDGET),
    _row("avail_after_graph_gb", "GiB", True, "free after graphs GiB", "gib", _H, of=BUDGET),
    _row("min_headroom_gb", "GiB", True, "min headroom GiB", "gib", _H, of=BUDGET),
    _row("lowest_free_gb", "GiB", True, "lowest free GiB", "gib", _H, of=BUDGET),
    _row("available_mem_gb", "GiB", True, "available GiB", "gib", _H),
    _row("kv_bytes_per_token", "bytes", False, "KV bytes/token", "int", _H, of=BUDGET),
    _row("max_prefill_tokens", "tokens", True, "", "int", _H),
    _row("max_running_requests_effective", "count", True, "max running requests", "int", _H),
    _row("load_s", "s", False, "load s", "gib", _H),
    _row("graph_s", "s", False, "graphs s", "gib", _H),
    _row("startup_s", "s", False, "startup s", "gib", _H, of=STORE),
    _row("peak_running_req", "count", None, "peak #running-req", "int", _H, of=STORE),
    _row("peak_queue_req", "count", False, "peak #queue-req", "int", _H, of=STORE),
)
# fmt: on

BY_NAME: dict[str, Figure] = {f.name: f for f in FIGURES}


def on(surface: str) -> tuple[Figure, ...]:
    """The figures a surface shows, in its order."""
    if surface not in SURFACES:
        raise ValueError(f"unknown surface {surface!r}; known: {', '.join(SURFACES)}")
    if surface == "history":
        return tuple(BY_NAME[n] for n in HISTORY_ORDER)
    return tuple(f for f in FIGURES if surface in f.surfaces)


def names(surface: str) -> tuple[str, ...]:
    """The names of the figures a surface shows, in its order (a CSV's columns, a JSON's keys)."""
    return tuple(f.name for f in on(surface))


def label(name: str) -> str:
    """A figure's table label (its name when it is not in the table)."""
    f = BY_NAME.get(name)
    return f.label if f else name


#: The order of the ``history`` metrics: that of the store's ``history`` view and ``launch_change``
#: table, whose columns stores written since schema v3 keep (a new metric goes at the end).
HISTORY_ORDER: tuple[str, ...] = (
    "kv_tokens",
    "max_total_num_tokens",
    "predicted_kv_tokens",
    "avail_before_load_gb",
    "weights_gb",
    "avail_after_load_gb",
    "kv_size_gb",
    "kv_pool_gb",
    "avail_after_pool_gb",
    "graph_gb",
    "avail_after_graph_gb",
    "headroom_gb",
    "min_headroom_gb",
    "lowest_free_gb",
    "available_mem_gb",
    "kv_bytes_per_token",
    "max_prefill_tokens",
    "max_running_requests_effective",
    "context_len",
    "mem_fraction_static",
    "load_s",
    "graph_s",
    "startup_s",
    "peak_running_req",
    "peak_token_usage",
    "peak_queue_req",
    "retractions",
)
