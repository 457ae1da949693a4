"""A model's architecture, read from its Hugging Face ``config.json`` (and, when present, the
``model.safetensors.index.json`` beside it): what the KV cache and the weights of one rank are made of.

:func:`load_model_config` takes a ``config.json`` (any JSON file holding one) or a model directory
and returns a :class:`ModelConfig`; a file that cannot be read as one raises
:class:`ModelConfigError` with one line that says why.  Multimodal configs nest the language model
(``text_config``, ``llm_config``, ``language_config``, ``thinker_config.text_config``): its
figures are the ones that size the KV cache.

Every layer is classified once (:attr:`ModelConfig.layer_kinds`): ``full`` (attention over every
token: holds KV for each), ``swa`` (sliding-window or chunked-local attention), ``linear`` (Mamba,
gated-delta or other linear attention: a fixed state per request, no KV).  The bytes each engine
keeps per token follow in :mod:`logparse.budget.model_kv`.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace
from typing import Any

#: Keys under which multimodal configs keep the language model's config.
_TEXT_KEYS = ("text_config", "llm_config", "language_config")
#: Architectures whose layers are all both attention and Mamba (parallel hybrid).
_PARALLEL_HYBRID_TYPES = ("falcon_h1",)


class ModelConfigError(ValueError):
    """A model config that cannot be read (the message is one line: where, and why)."""


@dataclass(frozen=True)
class MlaDims:
    """Multi-head latent attention (DeepSeek-V2/V3 style): one compressed latent per token and layer."""

    kv_lora_rank: int
    qk_rope_head_dim: int
    qk_nope_head_dim: int
    v_head_dim: int
    q_lora_rank: int | None
    index_head_dim: int | None = None  # DeepSeek-V3.2's sparse-attention indexer keys (DSA)

    @property
    def latent(self) -> int:
        return self.kv_lora_rank + self.qk_rope_head_dim


@dataclass(frozen=True)
class MambaDims:
    """The recurrent state of one linear-attention (Mamba / gated-delta) layer, before TP splits it."""

    conv_kernel: int
    conv_channels: int  # channels of the causal convolution state
    state_elements: int  # elements of the SSM / delta-rule state (kept in float32)
    kind: str  # "mamba2" | "gated_delta" | "mamba"


@dataclass(frozen=True)
class MoeDims:
    experts: int
    experts_per_token: int
    expert_intermediate: int
    shared_experts: int
    shared_intermediate: int
    dense_layers: int  # leading layers with a dense MLP (first_k_dense_replace)


@dataclass(frozen=True)
class Quantization:
    """How the checkpoint's weights are stored (``quantization_config`` / ``compression_config``)."""

    method: str
    bytes_per_weight: float | None  # of a quantized linear weight, scales included; None: not known
    ignored: tuple[str, ...] = ()  # module patterns kept unquantized
    note: str = ""
    #: GGUF quantizes the embeddings and the output head too (only norms stay 32-bit)
    covers_embeddings: bool = False


@dataclass(frozen=True)
class ModelConfig:
    source: str
    name: str
    architecture: str
    model_type: str
    dtype: str
    hidden_size: int
    layers: int
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    v_head_dim: int
    vocab_size: int
    intermediate_size: int
    max_position_embeddings: int | None
    tie_word_embeddings: bool
    layer_kinds: tuple[str, ...]
    sliding_window: int | None = None
    swa_kv_heads: int | None = None
    swa_head_dim: int | None = None
    mla: MlaDims | None = None
    mamba: MambaDims | None = None
    moe: MoeDims | None = None
    nextn_layers: int = 0
    quantization: Quantization | None = None
    weights_total_bytes: int | None = None
    weights_index: str | None = None
    vision_params: int = 0
    multimodal: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: fields the config lacks that change the answer, each with what was assumed instead
    missing: tuple[str, ...] = field(default_factory=tuple)

    def count(self, kind: str) -> int:
        return sum(1 for k in self.layer_kinds if k == kind)

    @property
    def dtype_bytes(self) -> int:
        return dtype_bytes(self.dtype)

    def describe(self) -> str:
        """One line: architecture, layers and what kind of attention holds the KV cache."""
        if self.mla is not None:
            attn = f"MLA (kv_lora_rank {self.mla.kv_lora_rank} + qk_rope_head_dim {self.mla.qk_rope_head_dim})"
        else:
            attn = f"{self.num_kv_heads} KV heads × {self.head_dim}"
        parts = [f"{self.architecture}, {self.layers} layers, {attn}"]
        if self.count("swa"):
            parts.append(f"{self.count('swa')} sliding-window layers (window {self.sliding_window})")
        if self.count("linear"):
            parts.append(f"{self.count('linear')} linear-attention/Mamba layers")
        if self.nextn_layers:
            parts.append(f"{self.nextn_layers} MTP layer(s)")
        return ", ".join(parts) + f", {self.dtype}"


_DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "half": 2, "float32": 4, "float": 4, "float64": 8}


def dtype_bytes(dtype: str) -> int:
    return _DTYPE_BYTES.get(dtype.lower().replace("torch.", ""), 2)


# --------------------------------------------------------------------------- reading
def load_model_config(path: str | os.PathLike) -> ModelConfig:
    """The model at ``path``: a ``config.json`` (or a JSON file holding one), a model directory, or a
    ``.gguf`` file beside the ``config.json`` of its model (its weights: the file's size, else its name)."""
    path = os.fspath(path)
    gguf = path if path.lower().endswith(".gguf") else _gguf_in(path)
    if gguf is not None and path == gguf:
        path = os.path.join(os.path.dirname(path) or ".", "config.json")
    cfg = _load(path)
    return with_gguf(cfg, os.path.basename(gguf), _real_size(gguf)) if gguf is not None else cfg


def _load(path: str) -> ModelConfig:
    cfg_path, index_path = _locate(path)
    raw = _read_json(cfg_path)
    index_total = _index_total(index_path) if index_path and isinstance(raw, dict) else None
    return config_from_document(cfg_path, raw, index_total, index_path)


def config_from_document(
    path: str, raw: Any, index_total: int | None = None, index_path: str | None = None
) -> ModelConfig:
    """The model of a config document (``path``: where it was, which names the model;
    ``index_total``: its weights' bytes by the index beside it), as :func:`load_model_config`."""
    if not isinstance(raw, dict):
        raise ModelConfigError(f"{path}: not a model config (a JSON object was expected)")
    try:
        return _build(path, raw, index_total, index_path)
    except (TypeError, ValueError, KeyError) as exc:
        if isinstance(exc, ModelConfigError):
            raise
        raise ModelConfigError(f"{path}: unreadable model config ({type(exc).__name__}: {exc})") from None


def is_model_config(raw: Any) -> bool:
    """Whether a JSON document is a Hugging Face model config (not a log, not a journal entry)."""
    return isinstance(raw, dict) and ("model_type" in raw or "architectures" in raw) and "MESSAGE" not in raw


def model_name_of(cfg_path: str) -> str:
    """The name a config file gives its model (its folder's for ``config.json``, else its own stem)."""
    return _model_name(cfg_path)


def weights_index_total(cfg_path: str) -> int | None:
    """The weights' bytes by the ``model.safetensors.index.json`` beside a ``config.json``, if any."""
    _, index_path = _locate(cfg_path)
    return _index_total(index_path) if index_path else None


def _locate(path: str) -> tuple[str, str | None]:
    if os.path.isdir(path):
        cfg = os.path.join(path, "config.json")
        if not os.path.isfile(cfg):
            raise ModelConfigError(f"{path}: a directory without config.json")
        index = os.path.join(path, "model.safetensors.index.json")
        return cfg, index if os.path.isfile(index) else None
    if not os.path.exists(path):
        raise ModelConfigError(f"{path}: no such file or directory")
    index = os.path.join(os.path.dirname(path) or ".", "model.safetensors.index.json")
    sibling = os.path.basename(path) == "config.json" and os.path.isfile(index)
    return path, index if sibling else None


def _read_json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except json.JSONDecodeError as exc:
        raise ModelConfigError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except UnicodeDecodeError:
        raise ModelConfigError(f"{path}: not a text file (a JSON config was expected)") from None
    except OSError as exc:
        raise ModelConfigError(f"{path}: {exc.strerror or exc}") from None


def _index_total(path: str) -> int | None:
    doc = _read_json(path)
    total = (doc.get("metadata") or {}).get("total_size") if isinstance(doc, dict) else None
    if not isinstance(total, (int, float)) or isinstance(total, bool) or total <= 0:
        raise ModelConfigError(f"{path}: no metadata.total_size in the safetensors index")
    return int(total)


def text_config(raw: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The language model's config (nested in multimodal configs), and whether it was nested."""
    for key in _TEXT_KEYS:
        sub = raw.get(key)
        if isinstance(sub, dict) and ("num_hidden_layers" in sub or "hidden_size" in sub):
            return sub, True
    thinker = raw.get("thinker_config")
    if isinstance(thinker, dict) and isinstance(thinker.get("text_config"), dict):
        return thinker["text_config"], True
    return raw, False


def _int(d: dict[str, Any], *names: str, default: int | None = None) -> int | None:
    for n in names:
        v = d.get(n)
        if isinstance(v, bool):
            continue
        if isinstance(v, (int, float)):
            return int(v)
    return default


def _required(d: dict[str, Any], where: str, *names: str) -> int:
    v = _int(d, *names)
    if v is None or v <= 0:
        raise ModelConfigError(f"{where}: no {names[0]} in the model config (is this a language model's config.json?)")
    return v


def _build(cfg_path: str, raw: dict[str, Any], index_total: int | None, index_path: str | None) -> ModelConfig:
    tc, nested = text_config(raw)
    layers = _required(tc, cfg_path, "num_hidden_layers", "n_layer", "num_layers")
    hidden = _required(tc, cfg_path, "hidden_size", "d_model", "n_embd")
    heads = _required(tc, cfg_path, "num_attention_heads", "n_head")
    kv_heads = _int(tc, "num_key_value_heads", "num_kv_heads", "n_head_kv", "multi_query_group_num") or heads
    head_dim = _int(tc, "head_dim") or hidden // heads
    arch = ((raw.get("architectures") or tc.get("architectures") or ["unknown"]) + ["unknown"])[0]
    model_type = str(tc.get("model_type") or raw.get("model_type") or "unknown")
    mla = _mla(tc)
    notes: list[str] = []
    kinds = _layer_kinds(tc, layers, model_type, arch, notes)
    swa_window = _int(tc, "sliding_window", "sliding_window_size", "attention_chunk_size", "window_size")
    return ModelConfig(
        source=cfg_path,
        name=_model_name(cfg_path),
        architecture=str(arch),
        model_type=model_type,
        dtype=str(tc.get("torch_dtype") or tc.get("dtype") or raw.get("torch_dtype") or raw.get("dtype") or "bfloat16"),
        hidden_size=hidden,
        layers=layers,
        num_attention_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=head_dim,
        v_head_dim=(_int(tc, "v_head_dim") or head_dim) if mla is None else head_dim,
        vocab_size=_int(tc, "vocab_size", "padded_vocab_size", default=_int(raw, "vocab_size", default=0)) or 0,
        intermediate_size=_int(tc, "intermediate_size", "ffn_hidden_size", "n_inner", default=4 * hidden) or 4 * hidden,
        max_position_embeddings=_int(tc, "max_position_embeddings", "max_sequence_length", "seq_length"),
        tie_word_embeddings=bool(tc.get("tie_word_embeddings", raw.get("tie_word_embeddings", False))),
        layer_kinds=kinds,
        sliding_window=swa_window if "swa" in kinds else None,
        swa_kv_heads=_int(tc, "swa_num_key_value_heads"),
        swa_head_dim=_int(tc, "swa_head_dim"),
        mla=mla,
        mamba=_mamba(tc, hidden) if "linear" in kinds else None,
        moe=_moe(tc),
        nextn_layers=_int(tc, "num_nextn_predict_layers", "mtp_num_hidden_layers", "num_mtp_layers", default=0) or 0,
        quantization=_quantization(raw, tc),
        weights_total_bytes=index_total,
        weights_index=index_path,
        vision_params=_vision_params(raw) if nested else 0,
        multimodal=nested,
        notes=tuple(notes),
        missing=missing_fields(tc, raw, model_type, mla is not None, hidden, heads),
    )


#: Families whose head_dim is not hidden_size / num_attention_heads in general: without the field the
#: engines' default (that ratio) is likely not the checkpoint's.
_OWN_HEAD_DIM = ("gemma", "qwen3", "mistral", "olmo", "minimax", "glm4")


def missing_fields(
    tc: dict[str, Any], raw: dict[str, Any], model_type: str, mla: bool, hidden: int, heads: int
) -> tuple[str, ...]:
    """The fields a config lacks that change the plan, each with what was assumed instead."""
    out = []
    if _int(tc, "vocab_size", "padded_vocab_size") is None and _int(raw, "vocab_size") is None:
        out.append("vocab_size: not in the config; the embeddings and the output head are left out of the weights")
    if (
        _int(tc, "intermediate_size", "ffn_hidden_size", "n_inner") is None
        and _int(tc, "moe_intermediate_size") is None
    ):
        out.append(f"intermediate_size: not in the config; 4 × hidden_size = {4 * hidden:,} assumed (the weights)")
    if not mla and _int(tc, "num_key_value_heads", "num_kv_heads", "n_head_kv", "multi_query_group_num") is None:
        out.append(f"num_key_value_heads: not in the config; {heads} (one per attention head, MHA) assumed")
    if not mla and _int(tc, "head_dim") is None and model_type.startswith(_OWN_HEAD_DIM):
        out.append(
            f"head_dim: not in the config of a {model_type} model, whose head_dim is its own; "
            f"hidden_size / num_attention_heads = {hidden // heads} assumed (bytes per token scale with it)"
        )
    if _int(tc, "max_position_embeddings", "max_sequence_length", "seq_length") is None:
        out.append("max_position_embeddings: not in the config; the context length is unknown (give --context-length)")
    return tuple(out)


def _model_name(cfg_path: str) -> str:
    """The model's name: its directory's for a ``config.json``, else the file's own (``tiny-llama.json``)."""
    if os.path.basename(cfg_path) == "config.json":
        return os.path.basename(os.path.dirname(os.path.abspath(cfg_path)))
    return os.path.splitext(os.path.basename(cfg_path))[0]


def _mla(tc: dict[str, Any]) -> MlaDims | None:
    rank = _int(tc, "kv_lora_rank")
    if not rank:
        return None
    return MlaDims(
        kv_lora_rank=rank,
        qk_rope_head_dim=_int(tc, "qk_rope_head_dim", default=64) or 64,
        qk_nope_head_dim=_int(tc, "qk_nope_head_dim", default=128) or 128,
        v_head_dim=_int(tc, "v_head_dim", default=128) or 128,
        q_lora_rank=_int(tc, "q_lora_rank"),
        index_head_dim=_int(tc, "index_head_dim"),
    )


def _kind_of(name: str) -> str:
    n = str(name).lower()
    if any(w in n for w in ("linear", "mamba", "ssm", "delta", "conv", "recurrent")):
        return "linear"
    if any(w in n for w in ("sliding", "local", "chunk", "swa")):
        return "swa"
    return "full"


def _layer_kinds(tc: dict[str, Any], layers: int, model_type: str, arch: str, notes: list[str]) -> tuple[str, ...]:
    """Per layer: ``full``, ``swa`` or ``linear`` (from the config's own layer map, else its pattern)."""
    types = tc.get("layer_types")
    if isinstance(types, list) and len(types) == layers:
        return tuple(_kind_of(t) for t in types)
    pattern = tc.get("hybrid_override_pattern")
    if isinstance(pattern, str) and len(pattern) == layers:
        # Nemotron-H: M = Mamba, * = attention, - and E = MLP / MoE (no cache)
        return tuple({"M": "linear", "*": "full"}.get(ch, "none") for ch in pattern)
    period = _int(tc, "attn_layer_period")
    if period:  # Jamba: one attention layer every `period`, at `offset`
        offset = _int(tc, "attn_layer_offset", default=0) or 0
        return tuple("full" if i % period == offset else "linear" for i in range(layers))
    interval = _int(tc, "full_attention_interval")
    if interval:  # Qwen3-Next: linear attention, every interval-th layer full
        return tuple("full" if (i + 1) % interval == 0 else "linear" for i in range(layers))
    if model_type in _PARALLEL_HYBRID_TYPES:
        notes.append("every layer has both attention and Mamba (parallel hybrid)")
        return ("full",) * layers
    return _window_pattern(tc, layers, model_type, arch)


def _window_pattern(tc: dict[str, Any], layers: int, model_type: str, arch: str) -> tuple[str, ...]:
    """Sliding-window layouts the config states only by a pattern (Gemma 2/3, Llama 4)."""
    if model_type == "gemma2":
        return tuple("swa" if i % 2 == 0 else "full" for i in range(layers))
    pattern = _int(tc, "sliding_window_pattern")
    if model_type.startswith("gemma3") or pattern:
        every = pattern or 6
        return tuple("full" if (i + 1) % every == 0 else "swa" for i in range(layers))
    if "Llama4" in arch and _int(tc, "attention_chunk_size"):
        return tuple("full" if (i + 1) % 4 == 0 else "swa" for i in range(layers))
    windowed = (
        _int(tc, "sliding_window") and tc.get("use_sliding_window", True) and model_type in ("mistral", "mixtral")
    )
    return ("swa" if windowed else "full",) * layers


def _mamba(tc: dict[str, Any], hidden: int) -> MambaDims:
    """One linear layer's state: gated delta rule (Qwen3-Next), Mamba-2 (Nemotron-H, Falcon-H1), Mamba-1."""
    k_heads = _int(tc, "linear_num_key_heads")
    if k_heads:
        kd = _int(tc, "linear_key_head_dim", default=128) or 128
        v_heads = _int(tc, "linear_num_value_heads", default=k_heads) or k_heads
        vd = _int(tc, "linear_value_head_dim", default=128) or 128
        kernel = _int(tc, "linear_conv_kernel_dim", default=4) or 4
        return MambaDims(kernel, 2 * k_heads * kd + v_heads * vd, v_heads * kd * vd, "gated_delta")
    state = _int(tc, "ssm_state_size", "mamba_d_state", "state_size", default=128) or 128
    kernel = _int(tc, "conv_kernel", "mamba_d_conv", "d_conv", default=4) or 4
    n_heads = _int(tc, "mamba_num_heads", "mamba_n_heads")
    expand = _int(tc, "mamba_expand", "expand", default=2) or 2
    if n_heads:
        hd = _int(tc, "mamba_head_dim", "mamba_d_head", default=64) or 64
        groups = _int(tc, "n_groups", "mamba_n_groups", default=1) or 1
        inner = n_heads * hd
        return MambaDims(kernel, inner + 2 * groups * state, n_heads * hd * state, "mamba2")
    inner = _int(tc, "mamba_d_inner", "intermediate_size", default=expand * hidden) or expand * hidden
    return MambaDims(kernel, inner, inner * state, "mamba")


def _moe(tc: dict[str, Any]) -> MoeDims | None:
    experts = _int(tc, "n_routed_experts", "num_local_experts", "num_experts", "moe_num_experts")
    if not experts or experts <= 1:
        return None
    inter = _int(tc, "moe_intermediate_size", "expert_intermediate_size", default=None)
    shared = _int(tc, "n_shared_experts", "num_shared_experts", default=0) or 0
    shared_inter = _int(tc, "shared_expert_intermediate_size", default=None)
    base = _int(tc, "intermediate_size", default=0) or 0
    return MoeDims(
        experts=experts,
        experts_per_token=_int(tc, "num_experts_per_tok", "moe_topk", "top_k", default=2) or 2,
        expert_intermediate=inter or base,
        shared_experts=shared if not shared_inter else max(shared, 1),
        shared_intermediate=shared_inter or (inter or base) * shared,
        dense_layers=_int(tc, "first_k_dense_replace", default=0) or 0,
    )


def _vision_params(raw: dict[str, Any]) -> int:
    """A rough parameter count of the vision tower (its transformer blocks) of a multimodal config."""
    vc = raw.get("vision_config")
    if not isinstance(vc, dict):
        return 0
    h = _int(vc, "hidden_size", "embed_dim", "width", default=0) or 0
    n = _int(vc, "num_hidden_layers", "depth", "num_layers", default=0) or 0
    inter = _int(vc, "intermediate_size", "mlp_dim", default=4 * h) or 4 * h
    return n * (4 * h * h + 2 * h * inter)


# --------------------------------------------------------------------------- GGUF
#: Bits per weight of GGUF's quantization types, scales included (llama.cpp's block layouts: Q8_0 is
#: 34 bytes per 32 weights; the K-quant mixes _S/_M/_L keep some tensors at a wider type: their averages).
GGUF_BITS = {
    "F32": 32.0, "F16": 16.0, "BF16": 16.0, "Q8_0": 8.5, "Q6_K": 6.5625, "Q5_1": 6.0, "Q5_0": 5.5,
    "Q5_K_M": 5.69, "Q5_K_S": 5.54, "Q5_K": 5.5, "Q4_1": 5.0, "Q4_0": 4.5, "Q4_K_M": 4.85, "Q4_K_S": 4.58,
    "Q4_K": 4.5, "IQ4_NL": 4.5, "IQ4_XS": 4.25, "Q3_K_L": 4.27, "Q3_K_M": 3.91, "Q3_K_S": 3.5, "Q3_K": 3.44,
    "IQ3_M": 3.66, "IQ3_XS": 3.3, "IQ3_XXS": 3.06, "Q2_K": 2.96, "IQ2_M": 2.7, "IQ2_XS": 2.31, "IQ2_XXS": 2.06,
}  # fmt: skip
_GGUF_TYPE = re.compile(r"(?:^|[-_.])(" + "|".join(sorted(GGUF_BITS, key=len, reverse=True)) + r")(?=[-_.]|$)", re.I)
#: A file smaller than this is a Git LFS pointer or a placeholder, not the weights.
_REAL_FILE_BYTES = 1 << 20


def gguf_type(name: str) -> str | None:
    """The GGUF quantization type a file name says (``Llama-3-8B-Instruct-Q8_0.gguf`` → ``Q8_0``)."""
    m = _GGUF_TYPE.search(os.path.basename(name))
    return m.group(1).upper() if m else None


def with_gguf(cfg: ModelConfig, name: str, size: int | None) -> ModelConfig:
    """The config with its weights as a GGUF file stores them: the file's bytes when it is really there,
    else the bits per weight its name gives, else unknown (and said so)."""
    qt = gguf_type(name)
    bits = GGUF_BITS.get(qt) if qt else None
    if size:
        note = f"GGUF {name}: {size / 1e9:,.2f} GB on disk"
        q = Quantization(f"gguf {qt or '?'}", bits / 8 if bits else None, (), note, covers_embeddings=True)
        return replace(cfg, quantization=q, weights_total_bytes=size, weights_index=name)
    if bits is None:
        q = Quantization("gguf", None, (), f"GGUF {name}: the file name names no quantization type", True)
    else:
        q = Quantization(f"gguf {qt}", bits / 8, (), f"GGUF {qt} ({bits:g} bits per weight, from the file name)", True)
    return replace(cfg, quantization=q)


def _gguf_in(path: str) -> str | None:
    """The ``.gguf`` file of a model directory (the first shard when split), if it holds one."""
    if not os.path.isdir(path):
        return None
    files = sorted(f for f in os.listdir(path) if f.lower().endswith(".gguf"))
    return os.path.join(path, files[0]) if files else None


def _real_size(path: str) -> int | None:
    """The bytes of a GGUF checkpoint (all its shards ``-0000N-of-0000M``), None for pointers or placeholders."""
    folder, base = os.path.dirname(path) or ".", os.path.basename(path)
    m = re.search(r"-0*1-of-(0*[0-9]+)\.gguf$", base, re.I)
    names = [base] if m is None else [f for f in os.listdir(folder) if f.startswith(base[: m.start()])]
    try:
        sizes = [os.path.getsize(os.path.join(folder, f)) for f in names]
    except OSError:
        return None
    return sum(sizes) if sizes and min(sizes) >= _REAL_FILE_BYTES else None


# --------------------------------------------------------------------------- quantization
def _quantization(raw: dict[str, Any], tc: dict[str, Any]) -> Quantization | None:
    q = raw.get("quantization_config") or raw.get("compression_config") or tc.get("quantization_config")
    if not isinstance(q, dict):
        return None
    method = str(q.get("quant_method") or q.get("quant_algo") or q.get("format") or "unknown").lower()
    ignored = tuple(str(x) for x in (q.get("ignore") or q.get("modules_to_not_convert") or []) if x)
    bits, group = _quant_bits(q, method)
    if bits is None:
        return Quantization(method, None, ignored, f"{method}: the config does not say how wide its weights are")
    scale = 2.0 / group if group else 0.0
    note = f"{method}, {bits}-bit weights" + (f", a scale per {group}" if group else "")
    return Quantization(method, bits / 8 + scale, ignored, note)


def _quant_bits(q: dict[str, Any], method: str) -> tuple[int | None, int | None]:
    """(bits of a quantized weight, elements per scale) of a quantization config."""
    groups = q.get("config_groups")
    if isinstance(groups, dict) and groups:  # compressed-tensors
        w = next(iter(groups.values())).get("weights") or {}
        return _int(w, "num_bits"), _int(w, "group_size") or (None if w.get("strategy") != "block" else 128 * 128)
    if method in ("fp8", "fbgemm_fp8", "ptpc_fp8", "w8a8_fp8"):
        block = q.get("weight_block_size")
        return 8, (block[0] * block[1] if isinstance(block, list) and len(block) == 2 else None)
    if method in ("mxfp4",):
        return 4, 32
    if method in ("modelopt_fp4", "nvfp4", "modelopt") or "fp4" in str(q.get("quant_algo", "")).lower():
        return 4, 16
    if method in ("awq", "gptq", "marlin", "gptq_marlin", "awq_marlin", "auto-round", "autoround"):
        return _int(q, "bits", "w_bit", default=4), _int(q, "group_size", "q_group_size", default=128)
    if method in ("bitsandbytes",):
        return (4, 64) if q.get("load_in_4bit") else (8, None)
    if method in ("w8a8_int8", "compressed-tensors", "int8"):
        return 8, None
    return _int(q, "bits", "num_bits"), _int(q, "group_size")
