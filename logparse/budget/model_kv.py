"""What a model costs one rank, from its architecture (:mod:`logparse.budget.model_config`): the bytes
of KV cache per token as each engine sizes its pool, the Mamba state per request, and the weights.

SGLang (``get_cell_size_per_token`` / the pool configurators, catalogue §4):

* MHA/GQA: ``H_kv × (d_k + d_v) × L × b`` with ``H_kv = max(1, kv_heads // attn_tp)`` (KV heads are
  split across the attention-TP ranks and replicated when there are fewer heads than ranks;
  ``attn_tp = tp / dp`` under DP attention);
* MLA: ``(kv_lora_rank + qk_rope_head_dim) × L × b``, one latent per layer on every rank (no K/V
  split, no head count), plus DeepSeek-V3.2's indexer keys (fp8 with a float32 scale per 128);
* fp4 KV: half the bytes plus a one-byte scale per 16 elements; fp8: one byte per element;
* hybrid sliding-window pools (the architectures SGLang sizes that way): bytes per full-attention
  token ``full × L_full + ratio × swa × L_swa`` (``--swa-full-tokens-ratio``, 0.8); other windowed
  models get a full pool for every layer;
* Mamba / linear-attention hybrids: only the full-attention layers hold KV; the state is per request;
* EAGLE/STANDALONE from 0.5.14: the target's cell grows by ``× (1 + L_draft / L_target)``.

vLLM (``get_kv_cache_spec`` / ``page_size_bytes``, catalogue §4.8): a layer's page holds
``2 × B × H_kv × d × b`` (MLA: ``B × latent × b``; ``fp8_ds_mla`` 656 bytes a token); layers of
different kinds are grouped in groups of equal size (padded), and the printed token count divides
the blocks by the number of groups, so the bytes behind one printed token are one layer's page per
token × group size × groups.  Uniform models: × L.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from logparse.budget.model_config import ModelConfig
from logparse.engines.sglang import versions

#: Architectures SGLang sizes with a hybrid SWA pool (full + sliding-window pools), and from when.
SGLANG_HYBRID_SWA = {
    "Llama4ForConditionalGeneration": "0.4.9.post3",
    "GptOssForCausalLM": "0.4.9.post3",
    "MiMoV2FlashForCausalLM": "0.5.7",
    "Step3p5ForCausalLM": "0.5.12",
    "Gemma4ForCausalLM": "0.5.16",
    "Gemma4ForConditionalGeneration": "0.5.16",
}
#: SGLang's default --swa-full-tokens-ratio.
SWA_FULL_TOKENS_RATIO = 0.8
#: SGLang's default --mamba-full-memory-ratio (0.5.3.post2+): Mamba state : KV memory.
MAMBA_FULL_MEMORY_RATIO = 0.9
#: Bytes a token and layer of vLLM's fp8 DeepSeek MLA cache (fp8 latent, scales, bf16 rope).
FP8_DS_MLA_BYTES = 656


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


def _pp_share(layers: int, pp: int) -> int:
    """Layers of the largest pipeline stage (the stage that binds)."""
    return math.ceil(layers / max(pp, 1))


# --------------------------------------------------------------------------- SGLang
@dataclass(frozen=True)
class SglangShape:
    """The launch settings that decide SGLang's bytes per token."""

    tp: int = 1
    dp: int = 1
    pp: int = 1
    dp_attention: bool = False
    kv_dtype: str | None = "auto"
    release: str | None = None
    swa_full_tokens_ratio: float = SWA_FULL_TOKENS_RATIO

    @property
    def attn_tp(self) -> int:
        return max(1, self.tp // self.dp) if self.dp_attention and self.dp > 1 else self.tp


def sglang_hybrid_swa(cfg: ModelConfig, release: str | None) -> bool:
    since = SGLANG_HYBRID_SWA.get(cfg.architecture)
    if since is None or not cfg.count("swa"):
        return False
    return release is None or versions.index(release) >= versions.index(since)


def sglang_mla_active(cfg: ModelConfig, release: str | None) -> bool:
    """MLA became SGLang's default in 0.3.1.post2 (``--enable-mla`` before; not in 0.2.x)."""
    if cfg.mla is None:
        return False
    return release is None or versions.index(release) >= versions.index("0.3.1.post2")


def sglang_cell(cfg: ModelConfig, shape: SglangShape) -> Cell:
    """SGLang's bytes per token of the target's KV pool on one rank (before any draft share)."""
    b = kv_element_bytes(shape.kv_dtype, cfg.dtype)
    if sglang_mla_active(cfg, shape.release):
        return _sglang_mla_cell(cfg, shape, b)
    full_layers = _pp_share(
        cfg.count("full") + (0 if sglang_hybrid_swa(cfg, shape.release) else cfg.count("swa")), shape.pp
    )
    h = kv_heads_per_rank(cfg.num_kv_heads, shape.attn_tp)
    d_kv = cfg.head_dim + cfg.v_head_dim
    elem = 1.0 if is_fp4(shape.kv_dtype) else b
    per_full = h * d_kv * elem
    cell = Cell(0, {"full": per_full}, {"full": full_layers})
    cell.terms.append(f"{h} KV heads × ({cfg.head_dim} + {cfg.v_head_dim}) × {full_layers} layers × {_fmt(elem)} B")
    total = per_full * full_layers
    if sglang_hybrid_swa(cfg, shape.release):
        total += _sglang_swa_term(cfg, shape, cell, elem)
    if is_fp4(shape.kv_dtype):
        total = total // 2 + h * d_kv * full_layers // 16
        cell.terms.append("fp4: half of it plus a one-byte scale per 16 elements")
    if cfg.count("linear"):
        cell.notes.append(
            f"{cfg.count('linear')} linear-attention/Mamba layers hold no KV (their state is per request, not per token)"
        )
    if h * shape.attn_tp > cfg.num_kv_heads:
        cell.notes.append(
            f"{cfg.num_kv_heads} KV heads on {shape.attn_tp} attention-TP ranks: each rank keeps a copy of one"
        )
    cell.value = int(total)
    return cell


def _sglang_swa_term(cfg: ModelConfig, shape: SglangShape, cell: Cell, elem: float) -> float:
    h_swa = kv_heads_per_rank(cfg.swa_kv_heads or cfg.num_kv_heads, shape.attn_tp)
    d_swa = 2 * (cfg.swa_head_dim or cfg.head_dim)
    swa_layers = _pp_share(cfg.count("swa"), shape.pp)
    r = shape.swa_full_tokens_ratio
    cell.per_layer["swa"], cell.layers["swa"] = h_swa * d_swa * elem, swa_layers
    cell.terms.append(f"{r:g} × {h_swa} × {d_swa} × {swa_layers} sliding-window layers × {_fmt(elem)} B")
    cell.notes.append(
        f"hybrid SWA pool: the sliding-window pool holds {r:g} × the full pool's tokens (--swa-full-tokens-ratio)"
    )
    return r * h_swa * d_swa * elem * swa_layers


def _sglang_mla_cell(cfg: ModelConfig, shape: SglangShape, b: float) -> Cell:
    assert cfg.mla is not None
    layers = _pp_share(cfg.count("full") or cfg.layers, shape.pp)
    latent = cfg.mla.latent
    elem = 1.0 if is_fp4(shape.kv_dtype) else b
    cell = Cell(0, {"full": latent * elem}, {"full": layers})
    cell.terms.append(
        f"MLA ({cfg.mla.kv_lora_rank} + {cfg.mla.qk_rope_head_dim}) × {layers} layers × {_fmt(elem)} B (one latent, every rank)"
    )
    total = latent * layers * elem
    if is_fp4(shape.kv_dtype):
        total = total // 2 + latent // 16 * layers * elem
        cell.terms[-1] += "; fp4: half plus a scale per 16"
    if cfg.mla.index_head_dim:
        d = cfg.mla.index_head_dim
        idx = (d + d // 128 * 4) * layers
        total += idx
        cell.terms.append(f"DSA indexer ({d} + {d // 128 * 4}) × {layers} layers × 1 B")
    cell.value = int(total)
    return cell


def sglang_draft_scaled(target: int, target_layers: int, draft_layers: int) -> int:
    """0.5.14+: EAGLE/STANDALONE's draft KV inside the budget, as SGLang counts it (by layer ratio)."""
    if target_layers <= 0 or draft_layers <= 0:
        return target
    return int(target * (1 + draft_layers / target_layers))


# --------------------------------------------------------------------------- vLLM
@dataclass(frozen=True)
class VllmShape:
    tp: int = 1
    pp: int = 1
    kv_dtype: str | None = "auto"
    block_size: int = 16


def vllm_cell(cfg: ModelConfig, shape: VllmShape) -> Cell:
    """vLLM's bytes of KV pool behind one printed token on one rank (blocks ÷ groups × block size)."""
    b = kv_element_bytes(shape.kv_dtype, cfg.dtype)
    if cfg.mla is not None:
        per = float(FP8_DS_MLA_BYTES) if (shape.kv_dtype or "") == "fp8_ds_mla" else cfg.mla.latent * b
        what = f"MLA {cfg.mla.latent} × {_fmt(b)} B"
    else:
        h = kv_heads_per_rank(cfg.num_kv_heads, shape.tp)
        per = 2 * h * cfg.head_dim * b
        what = f"2 × {h} KV heads × {cfg.head_dim} × {_fmt(b)} B"
    kinds = {k: _pp_share(cfg.count(k), shape.pp) for k in ("full", "swa", "linear") if cfg.count(k)}
    if cfg.mla is not None:
        kinds = {"full": _pp_share(cfg.count("full") or cfg.layers, shape.pp)}
    group, groups = _vllm_groups(kinds)
    cell = Cell(int(per * group * groups), {"full": per}, dict(kinds), group_layers=group, groups=groups)
    cell.swa_groups = math.ceil(kinds["swa"] / group) if kinds.get("swa") and groups > 1 else 0
    if groups == 1:
        cell.terms.append(f"{what} × {group} layers")
    else:
        cell.terms.append(f"{what} × {group} layers a group × {groups} groups")
        padded = group * groups - sum(kinds.values())
        cell.notes.append(
            f"hybrid layers in {groups} groups of {group}"
            + (f" ({padded} padding layers)" if padded else "")
            + ": the printed token count divides the blocks by the groups"
        )
    if "linear" in kinds:
        cell.notes.append("Mamba layers share the block pool (their block size follows the state: approximate)")
    return cell


def _vllm_groups(kinds: dict[str, int]) -> tuple[int, int]:
    """Group size (the smallest kind's layer count) and number of groups (each kind padded up)."""
    counts = [n for n in kinds.values() if n > 0]
    if len(counts) <= 1:
        return (counts[0] if counts else 0), 1
    size = min(counts)
    return size, sum(math.ceil(n / size) for n in counts)


# --------------------------------------------------------------------------- Mamba state
def mamba_state_bytes(cfg: ModelConfig, tp: int, pp: int = 1) -> int:
    """Bytes of recurrent state one request holds on one rank (conv state in the model dtype,
    SSM / delta-rule state in float32), over the rank's linear layers."""
    m = cfg.mamba
    if m is None or not cfg.count("linear"):
        return 0
    conv = (m.conv_kernel - 1) * math.ceil(m.conv_channels / tp) * cfg.dtype_bytes
    ssm = math.ceil(m.state_elements / tp) * 4
    return int((conv + ssm) * _pp_share(cfg.count("linear"), pp))


def _fmt(x: float) -> str:
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
