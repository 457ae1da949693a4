"""Which of SGLang's flags a launch's release has (its ServerArgs fields, release by release), and the
8-bit KV dtype it accepts: what the advice may offer."""

from __future__ import annotations

from logparse.budget.refusals import kv_dtype_refusal
from logparse.engines.sglang import versions
from logparse.launches.model import Launch


def sglang_has(launch: Launch, field_name: str) -> bool:
    """Does every release the launch may be have the ServerArgs field (the newest when undated)?"""
    rng = launch.version_range
    sets = versions.field_sets()
    if not rng or versions.is_empty(rng):
        return field_name in sets[versions.last()]
    lo, hi = versions.index(rng[0]), versions.index(rng[1])
    return all(field_name in sets[v] for v in versions.releases()[lo : hi + 1])


def sglang_from(launch: Launch, release: str) -> bool:
    """Is every release the launch may be at least ``release``?"""
    rng = launch.version_range
    first = rng[0] if rng and not versions.is_empty(rng) else versions.last()
    return versions.index(first) >= versions.index(release)


def sglang_fp8_dtype(launch: Launch) -> str | None:
    """The 8-bit KV dtype every release the launch may be accepts (e4m3 first), by the engines'
    refusals table (:mod:`logparse.budget.refusals`); None when none does."""
    rng = launch.version_range
    first = rng[0] if rng and not versions.is_empty(rng) else versions.last()
    return next((d for d in ("fp8_e4m3", "fp8_e5m2") if kv_dtype_refusal("sglang", d, first) is None), None)
