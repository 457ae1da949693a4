"""What SGLang and vLLM refuse at start: one module every surface asks (advice, what-ifs, ``plan``).

The rules are data (``grammars/refusals.toml``: the engine, the code that raises, the reason, the gist
of its message; the KV cache dtypes each release accepts; the GPU names that stand for two sizes).
Each check returns a :class:`Refusal` (or None), never raises:

* :func:`tp_refusal` — TP must divide the attention heads, and split or evenly replicate the KV heads;
* :func:`context_refusal` — a context above ``max_position_embeddings`` × the rope scaling factor;
* :func:`kv_dtype_refusal` — a ``--kv-cache-dtype`` the release does not accept (``int8``: neither);
* :func:`weights_refusal` — a ``--dtype`` or ``--quantization`` the release does not accept;
* :func:`kv_fit_refusal` — KV memory below one request of the context, for an engine that refuses it (vLLM);
* :func:`gpu_refusal` — a GPU name that stands for two memory sizes (``A100``: 40 or 80 GB);
* :func:`config_refusals` — the config-dependent checks of one plan at once (``plan``'s entry point).

``Refusal.text()`` is the one line a CLI prints (``<engine> refuses this: <message> (<reason>)``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from logparse import engines
from logparse.data import tables
from logparse.grammar.releases import release_key

_FILE = "refusals.toml"


@dataclass(frozen=True)
class Refusal:
    """One refusal: the rule, the engine that refuses, where in its code, why, and its message."""

    rule: str
    engine: str
    reason: str
    message: str
    where: str

    def text(self) -> str:
        """One line: the engine's message first, then why (an ambiguous GPU name: the question)."""
        if self.engine == "logparse":
            return f"{self.message} ({self.reason})"
        return f"{self.engine} refuses this: {self.message} ({self.reason})"

    def to_dict(self) -> dict[str, str]:
        return dict(self.__dict__)


@cache
def _rules() -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in tables.entries(_FILE, "rule")}


def _refusal(rule: str, engine: str, **figures: Any) -> Refusal:
    r = _rules()[rule]
    return Refusal(rule, engine, r["reason"], r["message"].format(**figures), r["where"])


# --------------------------------------------------------------------------- tensor parallelism
def tp_refusal(
    engine: str, tp: int | None, heads: int | None, kv_heads: int | None, *, mla: bool = False
) -> Refusal | None:
    """TP that does not divide the attention heads, or neither divides nor is a multiple of the KV heads
    (MLA has one latent, replicated on every rank: only the heads count)."""
    if not tp or tp <= 1:
        return None
    if heads and heads % tp:
        return _refusal("tp_heads", engine, heads=heads, tp=tp)
    if not mla and kv_heads and kv_heads % tp and tp % kv_heads:
        a, b = (kv_heads, tp) if tp < kv_heads else (tp, kv_heads)
        return _refusal("tp_kv_heads", engine, a=a, b=b, kv_heads=kv_heads, tp=tp)
    return None


def tp_choices(engine: str, heads: int | None, kv_heads: int | None, *, mla: bool = False, most: int = 8) -> list[int]:
    """The TP sizes up to ``most`` the engine accepts for these heads."""
    return [t for t in range(1, most + 1) if tp_refusal(engine, t, heads, kv_heads, mla=mla) is None]


# --------------------------------------------------------------------------- context length
def rope_factor(rope_scaling: dict[str, Any] | None) -> tuple[float, int | None]:
    """(factor, original max positions) the engines multiply ``max_position_embeddings`` by: 1 for
    llama3/longrope/su (their factor is already in the positions), else ``factor``; yarn counts from
    ``original_max_position_embeddings`` when given."""
    if not rope_scaling:
        return 1.0, None
    kind = str(rope_scaling.get("rope_type") or rope_scaling.get("type") or "").lower()
    if kind in ("llama3", "longrope", "su", "default", "mrope"):
        return 1.0, None
    factor = rope_scaling.get("factor")
    original = rope_scaling.get("original_max_position_embeddings")
    return (float(factor) if isinstance(factor, (int, float)) and factor > 0 else 1.0), (
        int(original) if isinstance(original, int) and original > 0 else None
    )


def derived_max_len(max_position: int | None, rope_scaling: dict[str, Any] | None) -> int | None:
    """The longest context the engines derive from the config (None: the config does not say)."""
    if not max_position:
        return None
    factor, original = rope_factor(rope_scaling)
    return int((original or max_position) * factor)


def context_refusal(
    engine: str, context: int | None, max_position: int | None, rope_scaling: dict[str, Any] | None = None
) -> Refusal | None:
    """A context (``--context-length`` / ``--max-model-len``) above what the config derives."""
    derived = derived_max_len(max_position, rope_scaling)
    if not context or derived is None or context <= derived:
        return None
    what = engines.get(engine).context_flag
    return _refusal("context_above_max_position", engine, what=what, asked=context, derived=derived)


# --------------------------------------------------------------------------- dtypes
def accepted_kv_dtypes(engine: str, release: str | None = None) -> list[str]:
    """The ``--kv-cache-dtype`` values ``release`` accepts (None: the newest release)."""
    out = []
    for row in tables.entries(_FILE, "kv_dtype"):
        if row["engine"] == engine and (release is None or release_key(release) >= release_key(row["from"])):
            out += row["values"]
    return out


def kv_dtype_refusal(engine: str, value: str | None, release: str | None = None) -> Refusal | None:
    """A KV cache dtype the engine's release does not accept (``auto`` and None always pass)."""
    if value is None or value == "auto":
        return None
    choices = accepted_kv_dtypes(engine, release)
    if value in choices:
        return None
    return _refusal("kv_dtype", engine, value=value, choices=", ".join(choices))


def weights_refusal(engine: str, kind: str, value: str | None, release: str | None = None) -> Refusal | None:
    """A ``--dtype`` or ``--quantization`` (``kind``) value the release does not accept; a value the
    table does not list for a release is refused only for the kinds it lists (``dtype``)."""
    if value is None or value == "auto":
        return None
    rows = [w for w in tables.entries(_FILE, "weights") if w["engine"] == engine and w["kind"] == kind]
    ok = [v for w in rows if release is None or release_key(release) >= release_key(w["from"]) for v in w["values"]]
    if value in ok or (kind == "quantization" and value not in {v for w in rows for v in w["values"]}):
        return None  # a quantization method the table does not know is not ours to refuse
    return _refusal("weights", engine, kind=kind, value=value, choices=", ".join(ok))


# --------------------------------------------------------------------------- memory
def kv_fit_refusal(
    engine: str, kv_tokens: int | None, max_len: int | None, bytes_per_token: float | None = None
) -> Refusal | None:
    """An engine that refuses to start when the KV cache holds no request of ``max_len``
    (:meth:`~logparse.engines.base.Engine.refuses_kv_below_one_request`: vLLM, V1's
    ``check_enough_kv_cache_memory``) refuses this launch; SGLang starts and caps requests at the pool."""
    if not engines.get(engine).refuses_kv_below_one_request() or kv_tokens is None or not max_len:
        return None
    if kv_tokens <= 0:
        return _refusal("no_kv_memory", engine)
    if kv_tokens >= max_len:
        return None
    per = bytes_per_token or 0.0
    return _refusal("kv_below_one_request", engine, max_len=max_len, need_gb=max_len * per / 2**30,
                    have_gb=kv_tokens * per / 2**30)  # fmt: skip


# --------------------------------------------------------------------------- GPUs
def gpu_refusal(name: str | None) -> Refusal | None:
    """A GPU name that stands for more than one memory size: asked, not guessed."""
    if not name:
        return None
    key = _gpu_key(name)
    for row in tables.entries(_FILE, "ambiguous_gpu"):
        if key in (_gpu_key(n) for n in row["names"]):
            return _refusal("ambiguous_gpu", "logparse", name=name, choices=" or ".join(row["choices"]))
    return None


def _gpu_key(name: str) -> str:
    return "".join(c for c in name.lower().replace("nvidia", "") if c.isalnum())


# --------------------------------------------------------------------------- a model config at once
def rope_scaling_of(source: str | None) -> dict[str, Any] | None:
    """``rope_scaling`` of a config file (its text config's for a multimodal one); None when absent."""
    if not source:
        return None
    path = Path(source)
    path = path / "config.json" if path.is_dir() else path
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    text = doc.get("text_config") if isinstance(doc.get("text_config"), dict) else doc
    rope = text.get("rope_scaling") or doc.get("rope_scaling")
    return rope if isinstance(rope, dict) else None


def config_refusals(engine: str, cfg: Any, *, tp: int | None = None, context: int | None = None,
                    kv_dtype: str | None = None, release: str | None = None) -> list[Refusal]:  # fmt: skip
    """Every refusal of a launch of ``cfg`` (a :class:`~logparse.budget.model_config.ModelConfig`)."""
    found = [
        tp_refusal(engine, tp, cfg.num_attention_heads, cfg.num_kv_heads, mla=cfg.mla is not None),
        context_refusal(engine, context, cfg.max_position_embeddings, rope_scaling_of(cfg.source)),
        kv_dtype_refusal(engine, kv_dtype, release),
    ]
    return [r for r in found if r is not None]
