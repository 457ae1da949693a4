"""``logparse plan``: KV tokens, pool, headroom and the context and concurrency that fit, before a launch.

:func:`make_plan` takes a model config (:mod:`logparse.budget.model_config`), what the user asked
(:class:`~logparse.reports.plan_types.PlanFlags`) and optionally a launch to calibrate on (``--from``),
and returns a :class:`PlanReport`: one :class:`~logparse.reports.plan_types.EnginePlan` per engine
(:meth:`~logparse.engines.base.Engine.plan` of each engine that plans), why the engines differ
when both were asked, and, for ``--target-tokens`` / ``--target-context``, the settings that reach
the target, safest first (:func:`solve`): a higher fraction that still keeps the engine's own
reserve, fp8 KV, fp8 with a higher fraction, more TP, a shorter context.  Nothing outside what the
engine itself would do is offered: a fraction beyond the engine's reserve is named as the reason a
target cannot be reached, not as a way to reach it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from logparse import engines
from logparse.budget.config_check import check_launch
from logparse.budget.model import Budget, launch_budget
from logparse.budget.model_config import ModelConfig, with_gguf
from logparse.budget.model_kv import KvDtypeError
from logparse.budget.refusals import config_refusals, gpu_refusal, kv_fit_refusal, tp_refusal
from logparse.launches.model import Launch
from logparse.reports.plan_memory import GpuMemory, PlanError, history_free, table_memory, with_history
from logparse.reports.plan_types import EnginePlan, PlanFlags, check_bounds

__all__ = ["PlanError", "PlanReport", "make_plan"]

Planner = Callable[[PlanFlags], EnginePlan]


@dataclass
class PlanReport:
    model: str
    config: str
    plans: list[EnginePlan]
    target: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any] | list[dict[str, Any]]:
        """One engine: its plan (with the model); both: the list of the two."""
        docs = [{**p.to_dict(), "model": self.model, "config": self.config} for p in self.plans]
        for d in docs:
            d.pop("terms", None)
            if self.target is not None:
                d["target"] = self.target
        return docs[0] if len(docs) == 1 else docs

    def rows(self) -> list[dict[str, Any]]:
        keys = (
            "engine",
            "release",
            "kv_tokens",
            "kv_pool_gb",
            "headroom_gb",
            "bytes_per_token",
            "fraction",
            "default_fraction",
        )
        out = []
        for p in self.plans:
            lo = p.kv_tokens_range[0] if p.kv_tokens_range else None
            hi = p.kv_tokens_range[-1] if p.kv_tokens_range else None
            out.append({k: getattr(p, k) for k in keys} | {"kv_tokens_lo": lo, "kv_tokens_hi": hi})
        return out


def planning_engines() -> list[engines.Engine]:
    """Every engine that plans, in the order of their plans (:attr:`~logparse.engines.base.Engine.plan_order`)."""
    return sorted((e for e in engines.all() if e.plan_order is not None), key=lambda e: (e.plan_order or 0, e.name))


def _launch_engine(launch: Launch) -> str:
    """The name of the launch's engine (a launch that names none is the default engine's)."""
    return launch.engine or engines.default().name


def engine_of(flags: PlanFlags, launch: Launch | None) -> tuple[PlanFlags, str | None]:
    """The engine to plan: ``--engine``, else the ``--from`` launch's (read from its log), else the
    default engine (assumed, and said so); with the words naming where it came from (None when given)."""
    if flags.engine is not None:
        return flags, None
    own = engines.find(launch.engine) if launch is not None and launch.engine else None
    if launch is not None and own is not None and own.plan_order is not None:
        return flags.with_(engine=own.name), f"engine {own.label}: read from launch {launch.launch_id} (no --engine)"
    first = engines.default()
    others = " or ".join(e.name for e in planning_engines() if e is not first)
    return flags.with_(
        engine=first.name
    ), f"engine {first.label}: assumed (no --engine given; --engine {others} or both for the others)"


def gguf_of_launch(cfg: ModelConfig, launch: Launch | None) -> ModelConfig:
    """A config without quantization, for a launch that served a ``.gguf`` file: priced as that file's type."""
    path = (launch.model_path or "") if launch is not None else ""
    if cfg.quantization is not None or not path.lower().endswith(".gguf"):
        return cfg
    return with_gguf(cfg, os.path.basename(path), None)


def _engines(flags: PlanFlags, launch: Launch | None) -> list[str]:
    names = [e.name for e in planning_engines()]
    if flags.engine == "both":
        return names
    if flags.engine in names:
        return [flags.engine]
    raise PlanError(f"--engine {flags.engine}: {', '.join(names)} or both")


def _memory(
    cfg: ModelConfig, flags: PlanFlags, engine: str, tp: int, db: str | os.PathLike | None, calibrated: bool
) -> GpuMemory | None:
    mem = table_memory(flags.gpu, flags.gpu_memory_gb, tp)
    if calibrated:
        return mem
    return with_history(mem, history_free(cfg, tp, db)) if engines.get(engine).plan_sized_from_free_memory else mem


def planner(
    cfg: ModelConfig, engine: str, launch: Launch | None, b: Budget | None, db: str | os.PathLike | None
) -> Planner:
    """The plan of one engine as a function of the flags (so the target solver reuses it)."""
    same = launch is not None and _launch_engine(launch) == engine
    planned = engines.get(engine)

    def run(flags: PlanFlags) -> EnginePlan:
        if not same and launch is not None:
            flags = _like_launch(flags, launch, planned.fp8_kv_dtype)
        tp = flags.tp or (launch.tp_size if launch is not None else None) or 1
        mem = _memory(cfg, flags, engine, tp, db, calibrated=same)
        if not same and mem is None and launch is not None and b is not None:
            mem = _memory_like(launch, b, engine, tp)
        try:
            return planned.plan(cfg, flags, mem, launch if same else None, b if same else None)
        except KvDtypeError as exc:
            raise PlanError(f"--kv-cache-dtype: {exc}") from None

    return run


def _like_launch(flags: PlanFlags, launch: Launch, fp8: str | None) -> PlanFlags:
    """The other engine planned for the launch's deployment: its parallel sizes, context and 8-bit KV
    (``fp8``: the planned engine's 8-bit KV dtype)."""
    kv = (launch.kv_cache_dtype or "").lower()
    low = "fp8" in kv or "float8" in kv
    return flags.with_(
        tp=flags.tp or launch.tp_size,
        pp=flags.pp or launch.pp_size,
        context_length=flags.context_length or launch.context_len or launch.context_length or launch.max_model_len,
        kv_cache_dtype=flags.kv_cache_dtype or (fp8 if low else None),
    )


def _memory_like(launch: Launch, b: Budget, engine: str, tp: int) -> GpuMemory | None:
    """The other engine on the launch's GPU: the GPU the launch's free memory points at, or the GPU
    total its log prints (:meth:`~logparse.engines.base.Engine.gpu_total_gb`)."""
    from logparse.budget import gpus

    if b.least_free_before_weights_gb is None:
        return _total_like(launch, tp)
    seen = gpus.closest_gpu(b.least_free_before_weights_gb, launch.tp_size or 1)
    if seen is None:
        return None
    mem = table_memory(seen[0].name, None, tp)
    if mem is None:
        return None
    src = (
        f"the GPU of launch {launch.launch_id}: its {b.least_free_before_weights_gb:.2f} GiB free before the weights fits {seen[0].name}; "
        + mem.source
    )
    return GpuMemory(mem.name, mem.total_gb, mem.free_before_weights_gb, mem.free_error_gb, src)


def _total_like(launch: Launch, tp: int) -> GpuMemory | None:
    total = engines.of(launch).gpu_total_gb(launch)
    mem = table_memory(None, total, tp) if total else None
    if mem is None:
        return None
    src = f"the GPU of launch {launch.launch_id}, {total:g} GiB in all by its log; " + mem.source.replace(
        " (--gpu-memory)", ""
    )
    return GpuMemory(mem.name, mem.total_gb, mem.free_before_weights_gb, mem.free_error_gb, src)


def make_plan(
    cfg: ModelConfig, flags: PlanFlags, launch: Launch | None = None, db: str | os.PathLike | None = None
) -> PlanReport:
    """The plan (see the module documentation); :class:`PlanError` when it cannot be made."""
    check_bounds(flags)
    flags, engine_words = engine_of(flags, launch)
    cfg = gguf_of_launch(cfg, launch)
    _refuse(cfg, flags, launch)
    b = launch_budget(launch) if launch is not None else None
    report = PlanReport(cfg.describe(), cfg.source, [])
    for engine in _engines(flags, launch):
        run = planner(cfg, engine, launch, b, db)
        plan = run(flags)
        fit = kv_fit_refusal(engine, plan.kv_tokens, plan.context_length, plan.bytes_per_token)
        plan.not_possible = plan.not_possible or (fit.text() if fit is not None else None)
        plan.assumptions[:0] = [engine_words] if engine_words else []
        plan.notes[:0] = [f"warning: {m}" for m in cfg.missing]
        plan.notes += _other_engine_flags(flags, engine)
        if launch is not None and b is not None and _launch_engine(launch) == engine:
            plan.notes.append("the config against the launch's pool: " + check_launch(cfg, launch, b).verdict)
        if flags.target_tokens or flags.target_context:
            plan.targets, report.target = solve(cfg, flags, plan, run)
        report.plans.append(plan)
    if len(report.plans) == 2:
        why = compare(report.plans[0], report.plans[1])
        for p in report.plans:
            p.differs_because = why
    return report


def _refuse(cfg: ModelConfig, flags: PlanFlags, launch: Launch | None) -> None:
    """What an engine (or an ambiguous GPU name) refuses: a :class:`PlanError` with its reason and message."""
    found = [gpu_refusal(flags.gpu)] + [
        r for e in _engines(flags, launch) for r in config_refusals(
            e, cfg, tp=flags.tp, context=flags.context_length, kv_dtype=flags.kv_cache_dtype, release=flags.release)
    ]  # fmt: skip
    first = next((r for r in found if r is not None), None)
    if first is not None:
        raise PlanError(first.text())


def _other_engine_flags(flags: PlanFlags, engine: str) -> list[str]:
    """The flags given that only another engine has (:attr:`~logparse.engines.base.Engine.plan_flags`),
    and what this engine's plan uses instead."""
    planned = engines.get(engine)
    out = []
    for owner in engines.all():
        for name in owner.plan_flags if owner is not planned else ():
            if getattr(flags, name) is not None:
                out.append(
                    f"--{name.replace('_', '-')} is {owner.label}'s: this plan uses {planned.plan_flag_instead(name)}"
                )
    return out


# --------------------------------------------------------------------------- targets
def _needed(flags: PlanFlags) -> tuple[int, str]:
    if flags.target_tokens:
        return flags.target_tokens, f"{flags.target_tokens:,} KV tokens"
    c = flags.concurrency or 1
    assert flags.target_context is not None
    return (
        flags.target_context * c,
        f"{c} request(s) of {flags.target_context:,} tokens ({flags.target_context * c:,} KV tokens)",
    )


def _option(action: str, flags: dict[str, Any], p: EnginePlan, need: int, cost: str, risk: str) -> dict[str, Any]:
    return {
        "action": action,
        "flags": flags,
        "kv_tokens": p.kv_tokens,
        "kv_tokens_range": p.kv_tokens_range,
        "kv_pool_gb": p.kv_pool_gb,
        "headroom_gb": p.headroom_gb,
        "reaches": bool(p.kv_tokens and p.kv_tokens >= need and not p.not_possible),
        "cost": cost,
        "risk": risk,
    }


def _fraction_flag(p: EnginePlan) -> str:
    flag = engines.get(p.engine).fraction_flag
    if flag is None:
        raise PlanError(f"{engines.label(p.engine)}: no fraction flag to solve a target with")
    return flag


def _solve_fraction(run: Planner, flags: PlanFlags, p: EnginePlan, need: int) -> tuple[float | None, EnginePlan | None]:
    """The smallest fraction (3 decimals) that reaches ``need`` tokens, by bisection on the plan itself."""
    name = _fraction_flag(p)
    lo, hi = round((p.fraction or 0.5) * 1000), 999
    top = run(flags.with_(**{name: hi / 1000}))
    if not top.kv_tokens or top.kv_tokens < need:
        return None, top
    best = top
    while lo + 1 < hi:
        mid = (lo + hi) // 2
        m = run(flags.with_(**{name: mid / 1000}))
        if m.kv_tokens and m.kv_tokens >= need and not m.not_possible:
            hi, best = mid, m
        else:
            lo = mid
    return hi / 1000, best


def _fraction_option(
    run: Planner, flags: PlanFlags, p: EnginePlan, need: int, extra: dict[str, Any], label: str
) -> tuple[dict[str, Any] | None, str | None]:
    """Raise the fraction to the target, if that stays within the engine's own reserve."""
    name = _fraction_flag(p)
    f, got = _solve_fraction(run, flags.with_(**extra), p, need)
    bound = p.fraction_keeping_reserve
    if f is None or got is None:
        return None, f"{label}: even {name} 0.999 gives {(got.kv_tokens or 0) if got else 0:,} tokens"
    if bound is not None and f > bound:
        return (
            None,
            f"{label}: it needs {name} {f:g}, above {bound:g}, the most that keeps the engine's own reserve ({p.engine_reserve_gb} GiB)",
        )
    cost = f"{(f - (p.fraction or 0)) * (p.terms.get('base_gb') or 0):.2f} GiB more GPU memory for the KV cache"
    risk = (
        "low: within the engine's own reserve"
        if bound is not None
        else "unknown: the engine's reserve for this GPU is not known"
    )
    flag = {name: f, **extra}
    return _option(f"{label}: {name} {p.fraction:g} → {f:g}", flag, got, need, cost, risk), None


def solve(
    cfg: ModelConfig, flags: PlanFlags, p: EnginePlan, run: Planner
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The settings that reach the target, safest first; and the target with its verdict."""
    need, what = _needed(flags)
    target: dict[str, Any] = {"need_kv_tokens": need, "what": what}
    if p.kv_tokens and p.kv_tokens >= need and not p.not_possible:
        target["reached"], target["verdict"] = True, f"reached as planned: {p.kv_tokens:,} ≥ {need:,} tokens"
        return [_option("as planned", {}, p, need, "none", "as planned")], target
    options, why_not = _candidates(cfg, flags, p, run, need)
    reaching = [o for o in options if o["reaches"]]
    target["reached"] = bool(reaching)
    if reaching:
        target["verdict"] = f"reached by {len(reaching)} option(s); safest: {reaching[0]['action']}"
    else:
        best = max((o["kv_tokens"] or 0 for o in options), default=p.kv_tokens or 0)
        target["verdict"] = (
            f"cannot be reached: {what} needs {need:,} tokens, the most any safe option gives is {best:,}"
            + ("; " + "; ".join(why_not) if why_not else "")
        )
    if flags.target_context and cfg.max_position_embeddings and flags.target_context > cfg.max_position_embeddings:
        target["note"] = (
            f"{flags.target_context:,} is beyond the model's max_position_embeddings ({cfg.max_position_embeddings:,})"
        )
    return reaching + [o for o in options if not o["reaches"]], target


def _fp8(engine: str) -> str | None:
    return engines.get(engine).fp8_kv_dtype


def _candidates(
    cfg: ModelConfig, flags: PlanFlags, p: EnginePlan, run: Planner, need: int
) -> tuple[list[dict[str, Any]], list[str]]:
    options: list[dict[str, Any]] = []
    why_not: list[str] = []
    o, w = _fraction_option(run, flags, p, need, {}, "fraction")
    options += [o] if o else []
    why_not += [w] if w else []
    low = any(x in (p.kv_cache_dtype or "").lower() for x in ("fp8", "float8", "fp4", "int8"))
    low = low or _fp8(p.engine) is None  # an engine without an 8-bit KV cache: nothing to offer
    if not low:
        f8 = run(flags.with_(kv_cache_dtype=_fp8(p.engine)))
        accuracy = "accuracy: 8-bit KV (usually a small loss; check your evals, and scales for the checkpoint)"
        options.append(
            _option("fp8 KV cache", {"kv_cache_dtype": _fp8(p.engine)}, f8, need, "none in memory", accuracy)
        )
        if not options[-1]["reaches"]:
            o, w = _fraction_option(run, flags, p, need, {"kv_cache_dtype": _fp8(p.engine)}, "fp8 KV and fraction")
            options += [o] if o else []
            why_not += [w] if w else []
    options += _tp_options(cfg, flags, p, run, need, fp8_too=not low)
    if flags.target_context:
        options += _context_option(flags, p)
    return options, why_not


def _tp_options(
    cfg: ModelConfig, flags: PlanFlags, p: EnginePlan, run: Planner, need: int, fp8_too: bool
) -> list[dict[str, Any]]:
    """More TP (KV heads and weights split over more GPUs), alone and with fp8 KV, fewest GPUs first."""
    out: list[dict[str, Any]] = []
    for tp in (p.tp * 2, p.tp * 4):
        if tp > 16 or tp_refusal(p.engine, tp, cfg.num_attention_heads, cfg.num_kv_heads, mla=cfg.mla is not None):
            continue
        extras: list[dict[str, Any]] = [{}] + ([{"kv_cache_dtype": _fp8(p.engine)}] if fp8_too else [])
        for extra in extras:
            try:
                q = run(flags.with_(tp=tp, **extra))
            except PlanError:
                continue
            label = f"tp {p.tp} → {tp}" + (" and fp8 KV cache" if extra else "")
            risk = "low: more GPUs, more all-reduce traffic" + ("; 8-bit KV (accuracy)" if extra else "")
            out.append(_option(label, {"tp": tp, **extra}, q, need, f"{tp // p.tp}× the GPUs per replica", risk))
            if out[-1]["reaches"]:
                return out
    return out


def _context_option(flags: PlanFlags, p: EnginePlan) -> list[dict[str, Any]]:
    c = flags.concurrency or 1
    if not p.kv_tokens or p.kv_tokens < c:
        return []
    fits = p.kv_tokens // c
    return [
        {
            "action": f"--context-length {fits:,} ({c} request(s) at once)",
            "flags": {"context_length": fits},
            "kv_tokens": p.kv_tokens,
            "kv_tokens_range": p.kv_tokens_range,
            "kv_pool_gb": p.kv_pool_gb,
            "headroom_gb": p.headroom_gb,
            "reaches": False,
            "cost": f"requests longer than {fits:,} tokens are refused",
            "risk": "none in memory",
        }
    ]


# --------------------------------------------------------------------------- engines side by side
def compare(a: EnginePlan, b: EnginePlan) -> list[str]:
    """Why two engines' plans give different pools, term by term, as one of the two engines says it
    (:meth:`~logparse.engines.base.Engine.compare_plans`)."""
    return engines.get(a.engine).compare_plans(a, b) or engines.get(b.engine).compare_plans(b, a)
