"""Events: what the grammar makes of one SGLang line."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Event:
    #: Event kind, e.g. ``load_end``, ``kv_alloc``, ``graph_end``, ``summary``, ``server_args``.
    kind: str
    #: Typed fields of the event (numbers as int/float, GiB for device memory).
    fields: dict[str, Any] = field(default_factory=dict)
    #: Wording of the variant within its kind (e.g. ``torch_distributed`` for ``init_begin``).
    form: str | None = None
    #: Name of the grammar variant that matched (``logparse.engines.sglang.variants``), for dating.
    variant: str | None = None
    source: str = ""
    line_no: int = 0
    #: Timestamp as ISO 8601 text: SGLang's own (local, naive) when the line has one,
    #: else the outer layer's (UTC).
    ts: str | None = None
    #: The record's own time (journal, docker, kubectl) as ISO 8601 UTC text, when it has one:
    #: part of a launch's identity (:mod:`logparse.launches.identity`).
    record_ts: str | None = None
    #: The UTC offset of ``ts`` in minutes east, when the input says it: 0 for a record time with its
    #: zone, SGLang's or vLLM's own (local) stamp measured against such a record time; None when
    #: the input has no zone (a plain log: the server's local time, zone unknown).
    utc_offset: int | None = None
    dp_rank: int | None = None
    pp_rank: int | None = None
    tp_rank: int | None = None
    ep_rank: int | None = None
    attn_cp_rank: int | None = None
    moe_dp_rank: int | None = None
    #: ``target`` or ``draft`` (speculative decoding), assigned by the launch assembler.
    worker: str | None = None
    #: True when the line carries a rank tag (a scheduler process), False for main-process lines.
    tagged: bool = False
    text: str = ""
    seq: int = 0

    def rank_key(self) -> tuple:
        return (self.dp_rank, self.pp_rank, self.tp_rank, self.ep_rank)

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "line_no": self.line_no,
            "ts": self.ts,
            "kind": self.kind,
            "form": self.form,
            "variant": self.variant,
            "dp_rank": self.dp_rank,
            "pp_rank": self.pp_rank,
            "tp_rank": self.tp_rank,
            "ep_rank": self.ep_rank,
            "worker": self.worker,
            "fields": self.fields,
            "text": self.text,
        }
