"""The launch figures: one table, read by every surface that shows them.

Each row is one figure (or descriptive field) of a launch: its name (the JSON key, the CSV
column, the store's column), its unit, which way is better, the label a table shows, how a cell
is written, and the surfaces it is shown on.  A surface's columns are the figures that name it,
**in the order of this table**: adding a figure to a surface is adding its name to one row.
The table is data, ``grammars/figures.toml`` (one row per figure).

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

The module imports only the table's loader (:mod:`logparse.data.tables`): the lowest stage, read by every other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from logparse.data import tables

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


_ROW_KEYS = frozenset({"name", "unit", "higher_is_better", "label", "fmt", "shown", "of", "importance"})


def _row(entry: dict[str, Any]) -> Figure:
    """A row of ``grammars/figures.toml``; a key it leaves out takes its default: ``higher_is_better``
    neither (None), ``label`` the name, ``of`` the launch record, ``importance`` 2."""
    surfaces = frozenset(entry["shown"])
    unknown = surfaces - set(SURFACES)
    if unknown:
        raise ValueError(f"figure {entry['name']}: unknown surface(s) {sorted(unknown)}")
    if set(entry) - _ROW_KEYS:
        raise ValueError(f"figure {entry['name']}: unknown key(s) {sorted(set(entry) - _ROW_KEYS)}")
    return Figure(
        entry["name"],
        entry["unit"],
        entry.get("higher_is_better"),
        entry.get("label", entry["name"]),
        entry["fmt"],
        surfaces,
        of=entry.get("of", LAUNCH),
        importance=entry.get("importance", 2),
    )


#: Every launch figure, in the order the surfaces show them.
FIGURES: tuple[Figure, ...] = tuple(_row(entry) for entry in tables.entries("figures.toml", "figure"))

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
