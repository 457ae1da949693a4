"""``logparse explain``: where a launch's memory went, and why the KV pool has the size it has.

:func:`explain_launch` returns an :class:`Explanation`: the launch's budget
(:func:`logparse.budget.model.launch_budget`, the figures every surface shows), the waterfall of
the binding rank and of every rank, sentences that answer the usual questions, and what-ifs
computed with the same formula: the engine's own (:meth:`~logparse.engines.base.Engine.explain`),
else the plain report of the budget, the ranks and the advice.  Rendering lives in
:mod:`logparse.cli.render_reports`.

Units: device figures are GiB; HiCache host figures are decimal GB (10^9).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from logparse import engines
from logparse.budget.config_check import check_launch, config_of
from logparse.budget.model import Budget, launch_budget
from logparse.budget.model_config import ModelConfig
from logparse.launches.model import Launch
from logparse.reports.advice import Advice, advise

#: Headroom left after startup that the default what-if aims for (GiB).
DEFAULT_MARGIN_GB = 2.0


@dataclass
class Explanation:
    """The explain report of one launch (typed; ``to_dict`` is the ``--json`` document)."""

    launch: dict[str, Any]
    budget: Budget
    waterfall: list[dict[str, Any]]
    ranks: list[dict[str, Any]]
    hicache: dict[str, Any]
    what_if: list[dict[str, Any]]
    sentences: list[str]
    warnings: list[str]
    groups: list[dict[str, Any]] = field(default_factory=list)
    #: the short answer, the engine's reserve and the ranked recommendations (:mod:`logparse.reports.advice`)
    advice: Advice | None = None
    #: the model config's bytes per token against the logged pool (:func:`explain_launch`)
    config_check: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.launch)
        out.update(self.budget.to_dict())
        if self.advice is not None:
            out.update(self.advice.to_dict())
        out.update(
            ranks=self.ranks,
            waterfall=self.waterfall,
            hicache=self.hicache,
            what_if=self.what_if,
            sentences=self.sentences,
            warnings=self.warnings,
        )
        if self.groups:
            out["groups"] = self.groups
        if self.config_check is not None:
            out["config_bytes_per_token"] = self.config_check["bytes_per_token"]
            out["config_consistent"] = self.config_check["consistent"]
            out["config_check"] = self.config_check
        return out

    def rows(self) -> list[dict[str, Any]]:
        """The main rows for csv/table output: the binding rank's budget steps."""
        return [{"rank": self.budget.binding_rank, **step} for step in self.waterfall]


# --------------------------------------------------------------------------- explain
def explain_launch(launch: Launch, margin_gb: float | None = None, cfg: ModelConfig | None = None) -> Explanation:
    """The explain report of one launch.  ``margin_gb``: the headroom (GiB) the fraction what-if and
    recommendation aim for, at the user's request; None keeps the engine's own reserve.  ``cfg``: the
    model's config (``--model-config``), else the one known for the launch (:func:`config_of`):
    its bytes per token are checked against the launch's pool (``config_check``)."""
    b = launch_budget(launch)
    cfg = cfg if cfg is not None else config_of(launch)
    exp = engines.of(launch).explain(launch, b, margin_gb, cfg) or _plain(launch, b, margin_gb, cfg)
    if cfg is not None:
        exp.config_check = check_launch(cfg, launch, b).to_dict()
    return exp


def launch_head(launch: Launch) -> dict[str, Any]:
    """What every engine's explain report says of the launch first: which it is, and how it ended."""
    return {
        "launch_id": launch.launch_id,
        "source": launch.source,
        "outcome": launch.outcome,
        "outcome_evidence": launch.outcome_evidence,
        "error": launch.error,
    }


def _plain(launch: Launch, b: Budget, margin_gb: float | None, cfg: ModelConfig | None) -> Explanation:
    """The report of a launch whose engine has no explanation of its own: the budget, the ranks and
    the advice."""
    head = {
        **launch_head(launch),
        "engine": launch.engine,
        "engine_version": launch.engine_version or launch.engine_version_range,
        "model_path": launch.model_path,
        "tp_size": launch.tp_size,
        "dp_size": launch.dp_size,
    }
    return Explanation(
        launch=head,
        budget=b,
        waterfall=[],
        ranks=[r.to_dict() for r in b.ranks],
        hicache={},
        what_if=[],
        sentences=[],
        warnings=list(launch.warnings),
        advice=advise(launch, b, margin_gb=margin_gb, cfg=cfg),
    )


def unsupported(change: str, reason: str, **kw: Any) -> dict[str, Any]:
    """A what-if that cannot be computed, with the reason."""
    return {
        "change": change,
        "kv_tokens": None,
        "kv_gb": None,
        "headroom_gb": None,
        "supported": False,
        "reason": reason,
        **kw,
    }


def advised_what_if(adv: Advice, kind: str) -> dict[str, Any]:
    """The advice's fraction (or utilization) recommendation as a what-if: one computation for both."""
    rec = next((r for r in adv.recommendations if r.kind == kind), None)
    if rec is None:
        return unsupported(kind.replace("fraction", "mem_fraction_static"), "no such action for this launch")
    if not rec.possible:
        return unsupported(rec.action, rec.reason)
    name = "mem_fraction_static" if kind == "fraction" else "gpu_memory_utilization"
    return {
        "change": rec.action,
        name: rec.value,
        "kv_tokens": rec.kv_tokens,
        "kv_gb": rec.kv_gb,
        "headroom_gb": rec.headroom_gb,
        "supported": True,
        "note": rec.risk.get("why"),
        "below_engine_reserve": rec.below_reserve,
    }
