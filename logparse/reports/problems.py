"""What needs an operator's attention in a deployment's history: one definition for every surface
(the quick start's summary, the HTML report's order).

Read from the ``history`` view's rows of one deployment (launch order), most harmful first:

* ``failed_start``: a launch that failed to start (the latest one failing is the worst: the
  deployment is down);
* ``regression``: ``check`` judged the latest launch against the previous one a regression (on a
  figure other than the KV tokens, which ``kv_drop`` says; only where the check was run: the report);
* ``kv_drop``: the latest launch has fewer KV tokens than the one before it (the counts compare:
  the view leaves the change empty where the two launches count different things);
* ``low_headroom``: the latest launch left less than ``explain``'s default margin
  (:data:`logparse.reports.explain.DEFAULT_MARGIN_GB`) free after startup on its binding rank.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from logparse.launches.deployment import short_label
from logparse.reports.explain import DEFAULT_MARGIN_GB

#: Problem kinds, most harmful first.
KINDS = ("failed_start", "kv_drop", "regression", "low_headroom")


@dataclass(frozen=True)
class Problem:
    kind: str
    deployment: str
    label: str
    launch_id: str
    text: str
    #: the deployment's latest launch (a failure before a good start weighs less)
    latest: bool = True

    def order(self) -> tuple[int, int, str]:
        return (0 if self.latest else 1, KINDS.index(self.kind), self.label)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def deployment_problems(deployment: str, rows: list[dict[str, Any]]) -> list[Problem]:
    """The problems of one deployment, from its ``history`` rows in launch order."""
    if not rows:
        return []
    label, last = short_label(deployment), rows[-1]
    out = [
        Problem(
            "failed_start",
            deployment,
            label,
            r["launch_id"],
            f"launch {r['launch_no']} failed to start" + (f" ({r['error_kind']})" if r.get("error_kind") else ""),
            latest=r is last,
        )
        for r in rows
        if r["outcome"] == "failed"
    ]
    change = last.get("kv_tokens_change")
    if change is not None and change < 0 and last["outcome"] != "failed":
        out.append(
            Problem(
                "kv_drop",
                deployment,
                label,
                last["launch_id"],
                f"KV tokens fell by {-change:,} at the last restart (to {last['kv_tokens']:,})",
            )
        )
    head = last.get("headroom_gb")
    if head is not None and head < DEFAULT_MARGIN_GB and last["outcome"] != "failed":
        out.append(
            Problem(
                "low_headroom",
                deployment,
                label,
                last["launch_id"],
                f"{head:.2f} GiB free after startup (less than {DEFAULT_MARGIN_GB:g} GiB)",
            )
        )
    return out


def check_problems(deployment: str, launch_id: str, check: dict[str, Any], known: list[Problem]) -> list[Problem]:
    """``check``'s regressions of the latest launch (its ``results``), beyond a KV drop already known."""
    if check.get("status") != "regression" or any(p.kind == "failed_start" and p.latest for p in known):
        return []  # (a failed latest start is its own problem: the check's verdict on it says the same)
    dropped = any(p.kind == "kv_drop" for p in known)
    labels = [
        str(r.get("label") or r.get("metric"))
        for r in check.get("results") or []
        if r.get("status") == "regression" and not (dropped and r.get("metric") == "kv_tokens")
    ]
    if not labels:
        return []
    text = "check: regression of " + ", ".join(labels) + " against the previous launch"
    return [Problem("regression", deployment, short_label(deployment), launch_id, text)]


def worst(problems: list[Problem]) -> Problem | None:
    """The most harmful of a deployment's problems (its sort key in the report)."""
    return min(problems, key=lambda p: p.order()) if problems else None
