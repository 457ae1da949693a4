"""vLLM's runtime lines, for the line transformer (:mod:`logparse.engines.vllm.line`).

The builders of the statistics a running engine logs (running, waiting and swapped requests, KV
cache usage, prefix cache hits, preemptions: §2.9) and of its preemption warnings.  Each returns
``(kind, fields, form)``.  The statistics line's words are its spec's
(``grammars/vllm/runtime.toml``, through :mod:`logparse.grammar.runtime_decoder`): the fast stage
proves its common wordings by them, and the Transformer reads every wording's fields by the same
labels, so the two cannot drift apart.
"""

from __future__ import annotations

from typing import Any

from logparse.engines.vllm.line_values import number, tokens_of
from logparse.grammar import runtime_decoder

_NAME = "vllm"
#: The statistics line's family in the spec (its event kind).
STATS = "vllm_stats"
#: V0's label of the waiting queue (``Pending``), which tells its wording (form ``v0``) from V1's.
_V0_QUEUE = runtime_decoder.shape(_NAME, "stats_v0").field("waiting").label


class RuntimeLines:
    """The builders of the runtime lines (a mixin of :class:`~logparse.engines.vllm.line.VllmTransformer`)."""

    # ---- runtime (§2.9)
    def stats(self, c):
        text = "".join(str(t) for t in tokens_of(c, "STATS_HEAD", "REST"))  # the message after the engine index
        f: dict[str, Any] = {}
        for name, rx in runtime_decoder.readers(_NAME, STATS):
            m = rx.search(text)
            if m:
                f[name] = number(m.group(1))
        form = "engine" if tokens_of(c, "ENGINE_INDEX") else ("v0" if _V0_QUEUE in text else "v1")
        return (STATS, f, form)

    def preempted(self, c):
        return ("vllm_preempted", {}, None)
