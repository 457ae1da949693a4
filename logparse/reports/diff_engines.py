"""A diff of two launches of different engines: how each engine sizes its KV pool, and why they differ.

Two engines take their arguments in different sets (SGLang's ``ServerArgs`` against vLLM's engine
arguments), so listing the fields one has and the other lacks says nothing.  What compares is each
engine's sizing: its fraction is a share of something of its own
(:meth:`~logparse.engines.base.Engine.fraction_side`: SGLang keeps ``(1 − mem_fraction_static)`` of
the free memory before the weights and gives the KV pool what the weights leave of the rest; vLLM
gives the instance ``gpu_memory_utilization`` of the *total* GPU memory and the KV pool is what its
profile leaves of that).  Each side's figures are its launch budget's.
"""

from __future__ import annotations

from typing import Any

from logparse import engines
from logparse.budget.model import Budget
from logparse.launches.model import Launch


def _engine_name(launch: Launch) -> str:
    """The name of the launch's engine (a launch that names none is the default engine's)."""
    return launch.engine or engines.default().name


def engines_differ(a: Launch, b: Launch) -> bool:
    return _engine_name(a) != _engine_name(b)


def counts_slots(launch: Launch) -> bool:
    """Does the launch's KV token count count the pool's token slots (SGLang; vLLM up to 0.20.0)?"""
    return engines.of(launch).kv_tokens_are_slots(launch)


def tokens_comparable(a: Launch, b: Launch) -> bool:
    """Do the two launches' KV token counts count the same thing?"""
    return counts_slots(a) == counts_slots(b) and (counts_slots(a) or a.kv_tokens_definition == b.kv_tokens_definition)


def compare_engines(a: Launch, b: Launch, ba: Budget, bb: Budget) -> dict[str, Any] | None:
    """Each side's engine, release, sizing formula, fraction and pool, and why the pools differ
    (``None`` when both launches are of one engine)."""
    if not engines_differ(a, b):
        return None
    sa, sb = engine_side(a, ba), engine_side(b, bb)
    return {"a": sa, "b": sb, "why": _why(sa, sb)}


def engine_side(launch: Launch, budget: Budget) -> dict[str, Any]:
    engine = _engine_name(launch)
    release = launch.engine_version_range or launch.sglang_version_range
    return {
        "engine": engine,
        "name": engines.label(engine),
        "release": release,
        "era": budget.era_label,
        "formula": budget.formula,
        #: the formula replayed on this launch's figures (empty when its log does not print the terms)
        "derivation": list(budget.derivation),
        "fraction": engines.get(engine).fraction_side(launch, budget),
        "model": launch.model_path,
        "tp_size": launch.tp_size or 1,
        "kv_cache_dtype": launch.kv_cache_dtype,
        "weights_gb": budget.weights_gb,
        "kv_pool_gb": budget.kv_pool_gb,
        "kv_tokens": budget.kv_tokens,
        "kv_tokens_count": engines.get(engine).kv_tokens_count(launch),
        "kv_tokens_are_slots": counts_slots(launch),
    }


def fraction_text(side: dict[str, Any]) -> str:
    """``gpu_memory_utilization 0.92 (the default of vLLM 0.20.2) of the total GPU memory (79.19 GiB)``."""
    fr = side["fraction"]
    value = "not known" if fr["value"] is None else f"{fr['value']:g}"
    if fr["source"] == "default" or (fr["default"] is not None and fr["value"] == fr["default"]):
        how = f"the default of {side['name']} {side['release']}"
    else:
        how = f"set; the default is {fr['default_text']}"
    of = fr["share_of"].split(" (")[0]
    gb = f" ({fr['share_of_gb']:.2f} GiB)" if fr["share_of_gb"] is not None else ""
    return f"{fr['name']} {value} ({how}) of {of}{gb}"


def _gb(v: float | None) -> str:
    return "not known" if v is None else f"{v:.2f} GiB"


def _why(sa: dict[str, Any], sb: dict[str, Any]) -> list[str]:
    """Why the two pools differ, most telling first."""
    out = [
        f"the fractions are shares of different things: {sa['name']}'s {fraction_text(sa)}; "
        f"{sb['name']}'s {fraction_text(sb)}"
    ]
    if sa["model"] != sb["model"]:
        out.append(
            f"different models: {sa['model'] or 'not logged'} ({_gb(sa['weights_gb'])} of weights) and "
            f"{sb['model'] or 'not logged'} ({_gb(sb['weights_gb'])})"
        )
    elif sa["weights_gb"] is not None and sb["weights_gb"] is not None:
        out.append(f"same model; weights {_gb(sa['weights_gb'])} and {_gb(sb['weights_gb'])}")
    if sa["tp_size"] != sb["tp_size"]:
        out.append(f"tensor parallel size {sa['tp_size']} and {sb['tp_size']}: the pool is per GPU")
    if sa["kv_cache_dtype"] != sb["kv_cache_dtype"] and sa["kv_cache_dtype"] and sb["kv_cache_dtype"]:
        out.append(f"KV cache dtype {sa['kv_cache_dtype']} and {sb['kv_cache_dtype']}")
    if sa["kv_pool_gb"] is not None and sb["kv_pool_gb"] is not None:
        d = sb["kv_pool_gb"] - sa["kv_pool_gb"]
        out.append(
            f"KV pool per GPU: {sa['kv_pool_gb']:.2f} GiB ({sa['name']}) and {sb['kv_pool_gb']:.2f} GiB "
            f"({sb['name']}), {d:+.2f} GiB"
        )
    if not (sa["kv_tokens_are_slots"] and sb["kv_tokens_are_slots"]):
        out.append(
            f"the token counts are not comparable: {sa['name']} counts {sa['kv_tokens_count']}, "
            f"{sb['name']} {sb['kv_tokens_count']}; compare the pools in GiB"
        )
    return out
