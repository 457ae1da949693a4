"""Server arguments between two launches: which differences mean something, and who made them.

SGLang prints the final value of every ``ServerArgs`` field; it never says which ones the user set.
Three facts tell the kinds of change apart:

* a field printed by one launch only was added or removed by a release (counted, never listed as a
  change the user made);
* a field the ``ignored`` list names changes on every start (ports, seeds, secrets, logging) and says
  nothing about memory: :data:`IGNORED_ARGS`, plus every ``*_port``/``*_ports`` field;
* a field whose value equals its release's default on each side changed because the release's
  default moved (``default_moved``); a field whose default SGLang derives at start (declared ``None``
  and filled in from the GPU, the model, other arguments: ``mem_fraction_static`` in recent releases)
  that changed across an upgrade is ``derived``; anything else is ``set`` (the user changed it).

Release defaults are the engine's (:meth:`logparse.engines.base.Engine.arg_default`: SGLang's
``grammars/sglang/server_args_defaults.json``, read from each release's own source); a launch's release is
the newest of its version range.
"""

from __future__ import annotations

import json
import math
from typing import Any

from logparse import engines
from logparse.grammar.releases import DERIVED as DERIVED_DEFAULT
from logparse.grammar.releases import MISSING, REQUIRED

#: Arguments whose change between two launches of a deployment is not reported: they differ between
#: otherwise identical launches (random seeds, ports picked at start, per-run file names) or say
#: nothing about memory and capacity.  The store seeds its ``ignored_args`` table from this list (edit
#: it there with ``logparse query --write`` if your fleet has other noise).
IGNORED_ARGS: dict[str, str] = {
    "random_seed": "random per start unless pinned",
    "port": "changes with the deployment's port, not its memory",
    "nccl_port": "picked at start",
    "additional_ports": "picked at start (0.2.x)",
    "dist_init_addr": "address of the rendezvous, picked at start",
    "nccl_init_addr": "address of the rendezvous, picked at start (0.2.x)",
    "host": "bind address of the HTTP server",
    "api_key": "a secret, and not about memory",
    "admin_api_key": "a secret, and not about memory",
    "file_storage_path": "per-run directory",
    "file_storage_pth": "per-run directory (old spelling)",
    "metrics_http_port": "picked at start",
    "disaggregation_bootstrap_port": "picked at start",
    "engine_info_bootstrap_port": "picked at start",
    "log_level": "logging only",
    "log_level_http": "logging only",
    "log_requests": "logging only",
    "log_requests_level": "logging only",
    "decode_log_interval": "logging only",
    "show_time_cost": "logging only",
    "served_model_name": "a display name",
    "tokenizer_path": "follows model_path",
    "download_dir": "local cache location",
}
#: Ports added to the store's list by migration 7 (the ``*_port`` rule of :func:`is_ignored`).
IGNORED_PORTS: dict[str, str] = dict.fromkeys(
    (
        "gated_launch_port",
        "grpc_port",
        "metrics_port",
        "smg_http_sidecar_port",
        "bootstrap_port",
        "encoder_bootstrap_port",
    ),
    "picked at start",
)

#: Origins of a printed value.
DEFAULT, DERIVED, SET, UNKNOWN = "default", "derived", "set", "unknown"


def value_text(value: Any) -> str:
    """A value as the store keeps it (JSON text: no NaN/Infinity, tuples as lists, other objects as
    text) and as ``history`` and ``diff`` print it: ``false``, ``"auto"``, ``0.88``."""
    return json.dumps(_plain(value), ensure_ascii=False, separators=(",", ":"))


def _plain(v: Any) -> Any:
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set)):
        return [_plain(x) for x in v]
    if v is None or isinstance(v, (str, int, bool)):
        return v
    return str(v)


def is_ignored(name: str) -> bool:
    leaf = name.split(".")[-1]
    return leaf in IGNORED_ARGS or leaf.endswith(("_port", "_ports"))


def _same(a: Any, b: Any) -> bool:
    def norm(v: Any) -> str:
        return json.dumps(v, sort_keys=True, default=str)

    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return float(a) == float(b)
    return norm(a) == norm(b)


def origin(field: str, value: Any, version_range: tuple[str, str] | None, engine: str | None = None) -> str:
    """``default``, ``derived``, ``set`` or ``unknown`` (release or field unknown) for a value ``engine``
    printed (None: a launch that names no engine)."""
    if not version_range:
        return UNKNOWN
    try:
        default = engines.get(engine).arg_default(field, version_range[1])
    except ValueError:
        return UNKNOWN
    if default is DERIVED_DEFAULT:
        return DERIVED
    if default is MISSING or default is REQUIRED:
        return SET if default is REQUIRED else UNKNOWN
    return DEFAULT if _same(value, default) else SET


def change_kind(field: str, a: Any, range_a, b: Any, range_b, engine: str | None = None) -> str:
    """Why a field printed by both launches differs: ``set``, ``default_moved`` or ``derived``."""
    oa, ob = origin(field, a, range_a, engine), origin(field, b, range_b, engine)
    if oa == DEFAULT and ob == DEFAULT:
        return "default_moved"
    release_changed = (range_a or ()) != (range_b or ())
    if oa == DERIVED and ob == DERIVED and release_changed:
        return "derived"
    return SET
