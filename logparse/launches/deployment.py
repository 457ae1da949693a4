"""The deployment of a launch: the same service, restarted.

Launches of one deployment are compared with each other (``history``, ``check``'s previous launch
and median of earlier launches, ``diff`` of the last restart).  A deployment is the engine, the
host, the model and the parallel sizes::

    sglang|gpu-node-1|/models/Qwen2.5-14B-Instruct|tp=1|dp=1|pp=1|ep=1

Unknown parts are ``?`` (the host of a plain file) and unknown sizes count as 1.  The systemd unit
is not part of it: short journal renderings name the syslog identifier instead, so it is not
stable across renderings of the same journal.  A ``deployment`` label given at ingest replaces the
key (two replicas on one host, or a deployment that moved hosts).

:meth:`Deployment.parts` names each part (:data:`PARTS`) as the key writes it; the metrics label
their series with them (``engine``, ``host``, ``model``, ``tp``, ``dp``, ``pp``, ``ep``), so nothing
ever splits the key string to get a part back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from logparse import engines

#: The name of the engine of launches that do not say (every launch before a second engine existed):
#: the registry's default engine (:func:`logparse.engines.default`).
DEFAULT_ENGINE = engines.default().name


def engine_name(engine: str | None) -> str:
    """The engine as a person names it (``vllm`` -> ``vLLM``): :func:`logparse.engines.label`; a launch
    that does not say is the default engine's."""
    return engines.label(engine)


#: What the key says of a part it does not know (the host of a plain file; a log that names no model).
UNKNOWN = "?"
#: The parallel sizes of a deployment, in key order.
SIZES = ("tp", "dp", "pp", "ep")
#: The parts of a deployment, in key order (:meth:`Deployment.parts`): the labels of every metric series.
PARTS = ("engine", "host", "model", *SIZES)
#: The launch fields (and store columns of ``launches``) a deployment is made of.
FIELDS = ("engine", "host", "model_path", "tp_size", "dp_size", "pp_size", "ep_size")


@dataclass(frozen=True)
class Deployment:
    engine: str
    host: str | None
    model: str | None
    tp: int
    dp: int
    pp: int
    ep: int

    def parts(self) -> dict[str, str]:
        """Each part as the key writes it, by name (:data:`PARTS`): unknown ones ``?``, sizes bare numbers."""
        sizes = {"tp": self.tp, "dp": self.dp, "pp": self.pp, "ep": self.ep}
        named = {"engine": self.engine, "host": self.host or UNKNOWN, "model": self.model or UNKNOWN}
        return named | {k: str(v) for k, v in sizes.items()}

    def key(self) -> str:
        p = self.parts()
        return "|".join([p["engine"], p["host"], p["model"], *(f"{k}={p[k]}" for k in SIZES)])

    @classmethod
    def of(cls, launch: Any) -> Deployment:
        return cls.of_fields({f: getattr(launch, f, None) for f in FIELDS})

    @classmethod
    def of_fields(cls, fields: Mapping[str, Any]) -> Deployment:
        """The deployment of a launch given as its :data:`FIELDS` (a store row of ``launches``)."""
        path = fields.get("model_path")
        model = path.rstrip("/") if isinstance(path, str) else path
        return cls(
            engine=fields.get("engine") or DEFAULT_ENGINE,
            host=fields.get("host"),
            model=model or None,
            tp=fields.get("tp_size") or 1,
            dp=fields.get("dp_size") or 1,
            pp=fields.get("pp_size") or 1,
            ep=fields.get("ep_size") or 1,
        )


def deployment_key(launch: Any, labels: dict[str, str] | None = None) -> str:
    """The deployment of a launch: the ``deployment`` label when given, else :meth:`Deployment.key`."""
    label = (labels or {}).get("deployment")
    return label if label else Deployment.of(launch).key()


#: What a label says in place of the model path of a launch whose log does not name it (SGLang 0.1.x
#: printed no ``server_args``): the engine, then this.
NO_MODEL = "(model not in the log)"


def short_label(key: str) -> str:
    """A key shown shorter: host, model path, the sizes that are not 1 (and the engine unless it is the
    default engine, or when the log names no model: ``SGLang (model not in the log) tp=2``)."""
    parts = key.split("|")
    if len(parts) != 7:
        return key
    engine, host, model, *sizes = parts
    extra = " ".join(x for x in sizes if not x.endswith("=1"))
    where = host + ":" if host != "?" else ""
    if model == "?":
        bits = [where, f"{engine_name(engine)} {NO_MODEL}", extra]
    else:
        bits = [engine if engines.find(engine) is not engines.default() else "", where, model, extra]
    return " ".join(x for x in bits if x)
