"""What a model costs one rank, from its architecture (:mod:`logparse.budget.model_config`): the bytes
of KV cache per token as each engine sizes its pool, the Mamba state per request, and the weights.

Each engine's own layout of a token's KV cache (SGLang's ``get_cell_size_per_token``, vLLM's KV cache
spec classes) lives with the engine (``logparse.engines.<engine>.kv``); this module holds what both read:
the bytes of one element per dtype, a cell (the bytes per token and their terms), heads and layers per
rank, the Mamba state per request, the weights per rank.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from logparse.budget.model_config import ModelConfig


class KvDtypeError(ValueError):
    """A KV cache dtype the engines do not have."""


def kv_element_bytes(kv_dtype: str | None, model_dtype: str) -> float:
    """Bytes of one KV element: ``auto`` is the model's dtype; fp8 one byte; fp4 half (scales apart)."""
    d = (kv_dtype or "auto").lower().replace("torch.", "")
    if d in ("auto", "", "none"):
        # the engines load a float32 checkpoint in 16 bits unless told otherwise
        d = model_dtype.lower().replace("torch.", "")
        d = "bfloat16" if d in ("float32", "float") else d
    if d in ("bf16", "bfloat16", "fp16", "float16", "half"):
        return 2.0
    if d in ("fp32", "float32", "float"):
        return 4.0
    if "fp8" in d or "float8" in d or d in ("mxfp8", "int8"):
        return 1.0
    if "fp4" in d or "float4" in d:
        return 0.5
    raise KvDtypeError(f"unknown KV cache dtype {kv_dtype!r} (auto, bf16, fp16, fp8_e4m3, fp8_e5m2, fp4_e2m1)")


def is_fp4(kv_dtype: str | None) -> bool:
    return "fp4" in (kv_dtype or "").lower() or "float4" in (kv_dtype or "").lower()


@dataclass
class Cell:
    """Bytes of KV cache per token on one rank, and how they were counted."""

    value: int
    per_layer: dict[str, float] = field(default_factory=dict)  # layer kind -> bytes a token
    layers: dict[str, int] = field(default_factory=dict)  # layer kind -> layers counted
    terms: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: vLLM: layers per KV-cache group, groups, and how many of them are sliding-window groups
    group_layers: int = 0
    groups: int = 1
    swa_groups: int = 0

    def describe(self) -> str:
        return " + ".join(self.terms) + f" = {self.value:,} B/token"


def kv_heads_per_rank(total: int, attn_tp: int) -> int:
    """KV heads on one attention-TP rank: split, and replicated when fewer than the ranks."""
    return max(1, total // max(attn_tp, 1))


def pp_share(layers: int, pp: int) -> int:
    """Layers of the largest pipeline stage (the stage that binds)."""
    return math.ceil(layers / max(pp, 1))


# --------------------------------------------------------------------------- Mamba state
def mamba_state_bytes(cfg: ModelConfig, tp: int, pp: int = 1) -> int:
    """Bytes of recurrent state one request holds on one rank (conv state in the model dtype,
    SSM / delta-rule state in float32), over the rank's linear layers."""
    m = cfg.mamba
    if m is None or not cfg.count("linear"):
        return 0
    conv = (m.conv_kernel - 1) * math.ceil(m.conv_channels / tp) * cfg.dtype_bytes
    ssm = math.ceil(m.state_elements / tp) * 4
    return int((conv + ssm) * pp_share(cfg.count("linear"), pp))


def fmt_bytes(x: float) -> str:
    return f"{x:g}"


# --------------------------------------------------------------------------- weights
@dataclass
class Weights:
    """The weights one rank holds (GiB), and how that was estimated."""

    gb: float
    source: str
    params: int | None = None
    lo_gb: float | None = None
    hi_gb: float | None = None
    #: False: the checkpoint's weight width is not known (``gb`` counts them 16-bit, only for ratios)
    known: bool = True


def parameter_groups(cfg: ModelConfig) -> dict[str, int]:
    """Parameters per module group (canonical module names, so quantization ignore lists can match)."""
    h, layers = cfg.hidden_size, cfg.layers
    attn = _attention_params(cfg)
    out: dict[str, int] = {"model.embed_tokens": cfg.vocab_size * h}
    if not cfg.tie_word_embeddings:
        out["lm_head"] = cfg.vocab_size * h
    moe = cfg.moe
    dense_layers = layers if moe is None else moe.dense_layers
    out["model.layers.0.self_attn.q_proj"] = attn * layers
    out["model.layers.0.mlp.gate_proj"] = 3 * h * cfg.intermediate_size * dense_layers
    if moe is not None:
        moe_layers = layers - moe.dense_layers
        out["model.layers.9.mlp.experts.0.gate_proj"] = 3 * h * moe.expert_intermediate * moe.experts * moe_layers
        out["model.layers.9.mlp.shared_experts.gate_proj"] = 3 * h * moe.shared_intermediate * moe_layers
        out["model.layers.9.mlp.gate"] = h * moe.experts * moe_layers
    if cfg.mamba is not None:
        m = cfg.mamba
        out["model.layers.0.mixer.in_proj"] = (2 * h * (m.conv_channels + h)) * cfg.count("linear")
    out["model.norm"] = h * (2 * layers + 1)
    if cfg.vision_params:
        out["vision_tower"] = cfg.vision_params
    return out


def _attention_params(cfg: ModelConfig) -> int:
    h = cfg.hidden_size
    if cfg.mla is not None:
        m = cfg.mla
        qk = m.qk_nope_head_dim + m.qk_rope_head_dim
        q = (
            h * m.q_lora_rank + m.q_lora_rank * cfg.num_attention_heads * qk
            if m.q_lora_rank
            else h * cfg.num_attention_heads * qk
        )
        kv = h * m.latent + m.kv_lora_rank * cfg.num_attention_heads * (m.qk_nope_head_dim + m.v_head_dim)
        return q + kv + cfg.num_attention_heads * m.v_head_dim * h
    q = h * cfg.num_attention_heads * cfg.head_dim
    kv = 2 * h * cfg.num_kv_heads * cfg.head_dim
    return q + kv + cfg.num_attention_heads * cfg.head_dim * h


def _ignored(name: str, patterns: tuple[str, ...]) -> bool:
    for p in patterns:
        if p.startswith("re:"):
            if re.search(p[3:], name):
                return True
        elif p and (name == p or name.startswith(p + ".") or p in name):
            return True
    return False


def weights_per_rank(cfg: ModelConfig, tp: int = 1, pp: int = 1) -> Weights:
    """The weights of one rank: the safetensors index's total when there is one, else the parameter
    count × the bytes per weight of the quantization; sharded evenly over TP × PP (norms and vision
    tower replicated, MLA's low-rank projections replicated)."""
    ranks = max(tp, 1) * max(pp, 1)
    groups = parameter_groups(cfg)
    params = sum(groups.values())
    if cfg.weights_total_bytes:
        total = cfg.weights_total_bytes
        if cfg.nextn_layers:
            total -= int(total * cfg.nextn_layers / (cfg.layers + cfg.nextn_layers))
        gb = (total / ranks + _replicated_bytes(cfg) * (1 - 1 / ranks)) / float(1 << 30)
        what = "GGUF file" if (cfg.weights_index or "").lower().endswith(".gguf") else "safetensors index"
        src = f"{what}: {cfg.weights_total_bytes / 1e9:,.1f} GB over {ranks} rank(s)"
        if cfg.nextn_layers:
            src += f", less the {cfg.nextn_layers} MTP layer(s) the draft loads"
        return Weights(gb, src, params, gb * 0.985, gb * 1.015)
    q = cfg.quantization
    dense_b = float(cfg.dtype_bytes)
    total_b = 0.0
    kept = ("model.norm", "vision_tower") if q is not None and q.covers_embeddings else _UNQUANTIZED
    for name, n in groups.items():
        quantized = q is not None and not name.startswith(kept)
        quantized = quantized and not _ignored(name, q.ignored if q else ())
        total_b += n * ((q.bytes_per_weight or dense_b) if quantized and q else dense_b)
    gb = (total_b / ranks + _replicated_bytes(cfg) * (1 - 1 / ranks)) / float(1 << 30)
    src = f"{params / 1e9:,.1f} B parameters" + (f" ({q.note})" if q else f" × {cfg.dtype_bytes} B ({cfg.dtype})")
    known = q is None or q.bytes_per_weight is not None
    return Weights(gb, src + f" over {ranks} rank(s)", params, gb * 0.975, gb * 1.025, known)


def weights_unknown(cfg: ModelConfig) -> str:
    """Why the weights of an uncalibrated plan are not known, and what would make them known."""
    q = cfg.quantization
    return (
        f"weights unknown: {q.note if q else 'no quantization'}; give the model directory with its "
        "model.safetensors.index.json (or the .gguf file itself), or --from a launch of it"
    )


#: Modules a quantization config leaves at the model's dtype: the engines quantize linear layers only, and
#: the output head is a vocabulary-parallel embedding (vLLM's and SGLang's fp8, AWQ, GPTQ, compressed-tensors
#: methods return no quantized method for it); GGUF quantizes the embeddings and the head too.
_UNQUANTIZED = ("model.embed_tokens", "lm_head", "model.norm", "vision_tower")


def _replicated_bytes(cfg: ModelConfig) -> float:
    """Bytes every rank keeps whole: MLA's low-rank input projections, norms, the vision tower."""
    b = cfg.dtype_bytes
    rep = cfg.hidden_size * (2 * cfg.layers + 1) + cfg.vision_params
    if cfg.mla is not None:
        rep += cfg.layers * cfg.hidden_size * ((cfg.mla.q_lora_rank or 0) + cfg.mla.latent)
    return float(rep * b)
