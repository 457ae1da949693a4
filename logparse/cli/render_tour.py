"""The text of ``ingest --summary`` (:mod:`logparse.reports.tour`): a few lines, then what to run next.

Plain lines (no table, no colour) that fit an ordinary terminal; what they quote of the store
(model paths) goes through :func:`logparse.text.terminal_text`.  The commands are written with the
program as it was called (``.venv/bin/logparse`` in the README's quick start), so they can be pasted.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from typing import Any

from logparse import engines
from logparse.text import terminal_text

#: Problems listed before "… and N more".
MAX_PROBLEMS = 6


def program() -> str:
    """How to call logparse again: ``logparse`` when that is on the PATH, else the path it was run by."""
    argv0 = sys.argv[0] if sys.argv and sys.argv[0] else "logparse"
    if os.path.basename(argv0) != "logparse":
        return "logparse"
    found = shutil.which("logparse")
    if found and os.path.realpath(found) == os.path.realpath(argv0):
        return "logparse"
    rel = os.path.relpath(argv0)
    return rel if not rel.startswith("..") else argv0


def _kv(v: Any) -> str:
    return "—" if v is None else f"{v:,}"


def tour_lines(tour: dict[str, Any], prog: str = "logparse") -> list[str]:
    if not tour["launches"]:
        return [f"The store holds no launch yet: {prog} ingest a startup log of {engines.labels()} (or --journal)."]
    counts = ", ".join(f"{n} {name}" for name, n in sorted(tour["per_engine"].items(), key=lambda x: -x[1]))
    lines = [f"The store holds {tour['launches']} launches of {tour['deployments']} deployments ({counts})."]
    problems = tour["problems"]
    if problems:
        lines.append(f"Needs attention ({len(problems)}):")
        lines += [f"  {p['label']}: {p['text']}" for p in problems[:MAX_PROBLEMS]]
        if len(problems) > MAX_PROBLEMS:
            lines.append(f"  … and {len(problems) - MAX_PROBLEMS} more: {prog} report --html shows them all, first")
    restarted = tour["restarted"]
    if restarted:
        lines.append(f"Restarted ({len(restarted)} deployments):")
        for r in restarted:
            lines.append(
                f"  {r['label']}: {r['launches']} launches, KV tokens "
                f"{_kv(r['kv_tokens_first'])} -> {_kv(r['kv_tokens_last'])}"
            )
            if r["changed_args"]:
                lines.append(f"    changed: {', '.join(r['changed_args'])}")
    single = tour["deployments"] - len(restarted)
    if single:
        lines.append(f"{single} deployments have one launch each; {prog} history lists every launch.")
    lines.append("Try next:")
    for c in tour["next"]:
        lines += [f"  # {c['why']}", "  " + " ".join([prog, *(shlex.quote(a) for a in c["args"])])]
    return [terminal_text(x) for x in lines]
