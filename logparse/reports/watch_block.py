"""What ``watch`` says about a launch that just became ready or failed (typed; computation only).

Every figure is the launch budget's (:func:`logparse.budget.model.launch_budget`, as stored); the
change against the previous launch of the deployment is ``diff``'s summary and attribution, and
the verdict is ``check``'s with its default thresholds (baseline: that previous launch).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from logparse.budget.model import launch_budget
from logparse.launches.deployment import deployment_key
from logparse.launches.model import Launch
from logparse.reports.check import previous_in_store, run_check
from logparse.reports.diff import diff_launches
from logparse.reports.explain import explain_launch
from logparse.reports.launch_facts import quote
from logparse.store.refs import resolve_launch

#: How many recommendations a block carries (the best ones; ``explain`` has them all).
ADVICE_SHOWN = 3
#: Budget figures a block shows.
FIGURES = ("kv_tokens", "kv_pool_gb", "headroom_gb", "binding_rank", "weights_gb", "startup_s")


@dataclass
class LaunchBlock:
    """One finished launch: who, its budget headline, the change since the previous one, the verdict."""

    launch: dict[str, Any]
    budget: dict[str, Any]
    unknown: dict[str, str]
    previous: dict[str, Any] | None = None
    change: list[str] = field(default_factory=list)
    attribution: list[dict[str, Any]] = field(default_factory=list)
    unexplained_tokens: int | None = None
    check: dict[str, Any] = field(default_factory=dict)
    #: explain's short answer and its best recommendations (:mod:`logparse.reports.advice`)
    answer: list[str] = field(default_factory=list)
    recommendations: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _who(la: Launch) -> dict[str, Any]:
    return {
        "launch_id": la.launch_id,
        "outcome": la.outcome,
        "deployment": deployment_key(la),
        "host": la.host,
        "unit": la.unit,
        "pid": la.pid,
        "model_path": la.model_path,
        "engine": la.engine,
        "sglang_version_range": la.sglang_version_range,
        "engine_version_range": la.engine_version_range or la.sglang_version_range,
        "started_at": la.started_at,
        "ready_at": la.ready_at,
        "time_zone": la.time_zone,
        "error": quote(la.error, 300) if la.error else None,
        "source": la.source,
    }


def launch_block(launch_id: str, db: str | None) -> LaunchBlock:
    """The block of a stored launch (``db``: the store's path)."""
    la = resolve_launch(launch_id, db)
    b = launch_budget(la)
    block = LaunchBlock(
        launch=_who(la),
        budget={k: getattr(b, k) for k in FIGURES},
        unknown={k: v for k, v in b.unknown.items() if k in FIGURES},
    )
    prev, note = previous_in_store(la, db)
    if prev is not None:
        d = diff_launches(prev, la)
        block.previous = {
            "launch_id": prev.launch_id,
            "started_at": prev.started_at,
            "time_zone": prev.time_zone,
            "outcome": prev.outcome,
        }
        block.change = list(d.summary or [])
        att = d.attribution
        if att.get("supported"):
            block.attribution = [s for s in att.get("steps", []) if s.get("delta_tokens")]
            block.unexplained_tokens = att.get("unexplained_tokens")
    ex = explain_launch(la).to_dict()
    block.answer = list(ex.get("answer") or [])
    block.recommendations = [r for r in ex.get("recommendations") or [] if r.get("possible")][:ADVICE_SHOWN]
    rep = run_check(la, prev, baseline_ref="previous launch in the store" if prev else None, db=db, notes=[note])
    block.check = {
        "status": rep.status,
        "regressions": [
            {k: r.get(k) for k in ("metric", "label", "value", "baseline", "change_pct", "note", "likely_cause")}
            for r in rep.results
            if r["status"] == "regression"
        ],
    }
    return block
