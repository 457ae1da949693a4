"""The deployment of a launch: the same service, restarted.

Launches of one deployment are compared with each other (``history``, ``check``'s previous launch
and median of earlier launches, ``diff`` of the last restart).  A deployment is the engine, the
host, the model and the parallel sizes::

    sglang|gpu-node-1|/models/Qwen2.5-14B-Instruct|tp=1|dp=1|pp=1|ep=1

Unknown parts are ``?`` (the host of a plain file) and unknown sizes count as 1.  The systemd unit
is not part of it: short journal renderings name the syslog identifier instead, so it is not
stable across renderings of the same journal.  A ``deployment`` label given at ingest replaces the
key (two replicas on one host, or a deployment that moved hosts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: Engine of launches that do not say (every launch before a second engine existed).
DEFAULT_ENGINE = "sglang"

#: How each engine is named to a person.
ENGINE_NAMES = {"sglang": "SGLang", "vllm": "vLLM"}


def engine_name(engine: str | None) -> str:
    """The engine as a person names it (``vllm`` -> ``vLLM``); a launch that does not say is SGLang's."""
    e = engine or DEFAULT_ENGINE
    return ENGINE_NAMES.get(e, e)


@dataclass(frozen=True)
class Deployment:
    engine: str
    host: str | None
    model: str | None
    tp: int
    dp: int
    pp: int
    ep: int

    def key(self) -> str:
        return "|".join(
            [
                self.engine,
                self.host or "?",
                self.model or "?",
                f"tp={self.tp}",
                f"dp={self.dp}",
                f"pp={self.pp}",
                f"ep={self.ep}",
            ]
        )

    @classmethod
    def of(cls, launch: Any) -> Deployment:
        model = launch.model_path.rstrip("/") if isinstance(launch.model_path, str) else launch.model_path
        return cls(
            engine=getattr(launch, "engine", None) or DEFAULT_ENGINE,
            host=launch.host,
            model=model or None,
            tp=launch.tp_size or 1,
            dp=launch.dp_size or 1,
            pp=launch.pp_size or 1,
            ep=launch.ep_size or 1,
        )


def deployment_key(launch: Any, labels: dict[str, str] | None = None) -> str:
    """The deployment of a launch: the ``deployment`` label when given, else :meth:`Deployment.key`."""
    label = (labels or {}).get("deployment")
    return label if label else Deployment.of(launch).key()


#: What a label says in place of the model path of a launch whose log does not name it (SGLang 0.1.x
#: printed no ``server_args``): the engine, then this.
NO_MODEL = "(model not in the log)"


def short_label(key: str) -> str:
    """A key shown shorter: host, model path, the sizes that are not 1 (and the engine unless SGLang,
    or when the log names no model: ``SGLang (model not in the log) tp=2``)."""
    parts = key.split("|")
    if len(parts) != 7:
        return key
    engine, host, model, *sizes = parts
    extra = " ".join(x for x in sizes if not x.endswith("=1"))
    where = host + ":" if host != "?" else ""
    if model == "?":
        bits = [where, f"{engine_name(engine)} {NO_MODEL}", extra]
    else:
        bits = [engine if engine != DEFAULT_ENGINE else "", where, model, extra]
    return " ".join(x for x in bits if x)
