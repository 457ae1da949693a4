"""Does a model config describe a launch?  Its bytes per token (:mod:`logparse.budget.model_kv`, as the
launch's engine and release size the pool, at the launch's TP and KV dtype: the engine's
``config_cell``) against what the logged pool implies (the engine's ``implied_bytes_per_token``:
:attr:`Budget.bytes_per_token` and its rounding range for SGLang; the pool GiB over the token count
for vLLM).

Consistent means the config's figure lies inside the range the printed figures allow.  A mismatch
says what the ratio points at: another KV dtype (× 2 or ½), another TP split of the KV heads, another
layer count, the draft's share (SGLang 0.5.14+), or simply another model.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from logparse import engines
from logparse.budget import model_kv as mk
from logparse.budget.model import Budget
from logparse.budget.model_config import ModelConfig
from logparse.launches.model import Launch

#: Relative gap under which a ratio is read as "this factor".
_NEAR = 0.03


@dataclass
class ConfigCheck:
    config: str
    model: str
    engine: str
    bytes_per_token: int | None
    terms: str
    implied: float | None
    implied_lo: float | None
    implied_hi: float | None
    consistent: bool | None
    verdict: str
    cause: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def launch_kv_dtype(launch: Launch) -> str:
    """The KV dtype the launch ran with: its flag, else what a target rank printed, else ``auto``."""
    if launch.kv_cache_dtype:
        return launch.kv_cache_dtype
    printed = next((r.kv_dtype for r in launch.ranks if r.worker == "target" and r.kv_dtype), None)
    return printed.replace("torch.", "") if printed else "auto"


def check_launch(cfg: ModelConfig, launch: Launch, budget: Budget) -> ConfigCheck:
    """The config's bytes per token against the launch's logged pool (see the module documentation)."""
    eng = engines.of(launch)
    engine = eng.label
    try:
        cell = eng.config_cell(cfg, launch, budget, launch_kv_dtype(launch))
    except mk.KvDtypeError as exc:
        return ConfigCheck(cfg.source, cfg.describe(), engine, None, "", None, None, None, None, f"config: {exc}")
    if cell is None:
        why = f"config: logparse does not know how {engine} sizes its KV pool"
        return ConfigCheck(cfg.source, cfg.describe(), engine, None, "", None, None, None, None, why)
    best, lo, hi, how = eng.implied_bytes_per_token(launch, budget)
    out = ConfigCheck(
        cfg.source, cfg.describe(), engine, cell.value, cell.describe(), _r(best), _r(lo), _r(hi), None, ""
    )
    out.notes = list(cell.notes)
    head = f"config: {cell.value:,} B/token per rank"
    if lo is None or hi is None:
        out.verdict = f"{head}; the log has no pool figure to compare it with ({how})"
        return out
    out.consistent = lo - 0.5 <= cell.value <= hi + 0.5
    implied = f"{best:,.0f}" if best is not None else f"at most {hi:,.0f}"
    tail = "consistent" if out.consistent else "NOT consistent"
    out.verdict = f"{head}; the pool implies {implied}: {tail}"
    if not out.consistent:
        out.cause = mismatch_cause(cfg, launch, cell.value, best if best is not None else (lo + hi) / 2)
        out.verdict += f" ({out.cause})"
    return out


def mismatch_cause(cfg: ModelConfig, launch: Launch, config_bpt: float, implied: float) -> str:
    """What a ratio between the pool's and the config's bytes per token most likely means."""
    ratio = implied / config_bpt if config_bpt else 0.0
    kv = launch_kv_dtype(launch)
    if _near(ratio, 0.5):
        return f"the pool holds half the config's bytes: another KV dtype (8-bit instead of {kv}?) or another model"
    if _near(ratio, 2.0):
        return f"the pool holds twice the config's bytes: another KV dtype (16-bit instead of {kv}?) or another model"
    tp = launch.tp_size or 1
    for other in (1, 2, 4, 8, 16):
        if (
            other != tp
            and cfg.mla is None
            and _near(ratio, max(1, cfg.num_kv_heads // other) / max(1, cfg.num_kv_heads // tp))
        ):
            return (
                f"the KV heads look split over TP {other}, not {tp}: another TP size, or a config with other KV heads"
            )
    if abs(ratio - 1) <= _NEAR:
        return f"{(ratio - 1) * 100:+.1f}% from the config: a variant of the model, or padding the engine added"
    for layers in range(1, 2 * cfg.layers + 1):
        if layers != cfg.layers and abs(ratio - layers / cfg.layers) <= 0.4 / cfg.layers:
            return (
                f"the pool looks like {layers} layers, the config has {cfg.layers}: another model (or another PP split)"
            )
    return "another model, or a variant of this architecture the config does not describe"


def _near(x: float, y: float) -> bool:
    return abs(x - y) <= _NEAR * y


def _r(v: float | None) -> float | None:
    return None if v is None else round(v, 1)


def config_of(launch: Launch) -> ModelConfig | None:
    """The model config known for a launch without ``--model-config``: the one ingest kept for its
    model or met beside its log (``Launch.model_config``), else ``config.json`` at its model path
    when this machine can read it."""
    from pathlib import Path

    from logparse.budget.model_config import ModelConfigError, config_from_document, load_model_config

    if launch.model_config is not None:
        path, raw, index_total = launch.model_config
        try:
            return config_from_document(path, raw, index_total)
        except ModelConfigError:
            return None
    on_disk = Path(launch.model_path or "") / "config.json"
    if not launch.model_path or not on_disk.is_file():
        return None
    try:
        return load_model_config(on_disk)
    except (ModelConfigError, OSError):
        return None
