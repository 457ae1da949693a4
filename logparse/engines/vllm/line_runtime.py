"""vLLM's runtime lines, for the line transformer (:mod:`logparse.engines.vllm.line`).

The builders of the statistics a running engine logs (running, waiting and swapped requests, KV
cache usage, prefix cache hits, preemptions: §2.9) and of its preemption warnings.  Each returns
``(kind, fields, form)``.
"""

from __future__ import annotations

import re
from typing import Any

from logparse.engines.vllm.line_values import number, tokens_of

_STATS_FIELDS = (
    ("prompt_throughput", re.compile(r"Avg prompt throughput: ([\d.]+) tokens/s")),
    ("gen_throughput", re.compile(r"Avg generation throughput: ([\d.]+) tokens/s")),
    ("running", re.compile(r"Running: (\d+) reqs")),
    ("waiting", re.compile(r"(?:Waiting|Pending): (\d+) reqs")),
    ("swapped", re.compile(r"Swapped: (\d+) reqs")),
    ("kv_usage_pct", re.compile(r"(?:GPU|[A-Z]+) KV cache usage: ([\d.]+)%")),
    ("prefix_hit_pct", re.compile(r"Prefix cache hit rate: ([\d.]+)%")),
    ("preemptions", re.compile(r"Preemptions: (\d+)")),
)


class RuntimeLines:
    """The builders of the runtime lines (a mixin of :class:`~logparse.engines.vllm.line.VllmTransformer`)."""

    # ---- runtime (§2.9)
    def stats(self, c):
        text = str(c[-1])
        f: dict[str, Any] = {}
        for name, rx in _STATS_FIELDS:
            m = rx.search(text)
            if m:
                f[name] = number(m.group(1))
        form = "engine" if tokens_of(c, "ENGINE_INDEX") else ("v0" if "Pending:" in text else "v1")
        return ("vllm_stats", f, form)

    def preempted(self, c):
        return ("vllm_preempted", {}, None)
