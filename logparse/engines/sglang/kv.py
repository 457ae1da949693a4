"""SGLang's bytes of KV cache per token (``get_cell_size_per_token`` / the pool configurators,
catalogue §4), from a model's config (:mod:`logparse.budget.model_config`):

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
"""

from __future__ import annotations

from dataclasses import dataclass

from logparse.budget.model_config import ModelConfig
from logparse.budget.model_kv import Cell, fmt_bytes, is_fp4, kv_element_bytes, kv_heads_per_rank, pp_share
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
    full_layers = pp_share(
        cfg.count("full") + (0 if sglang_hybrid_swa(cfg, shape.release) else cfg.count("swa")), shape.pp
    )
    h = kv_heads_per_rank(cfg.num_kv_heads, shape.attn_tp)
    d_kv = cfg.head_dim + cfg.v_head_dim
    elem = 1.0 if is_fp4(shape.kv_dtype) else b
    per_full = h * d_kv * elem
    cell = Cell(0, {"full": per_full}, {"full": full_layers})
    cell.terms.append(
        f"{h} KV heads × ({cfg.head_dim} + {cfg.v_head_dim}) × {full_layers} layers × {fmt_bytes(elem)} B"
    )
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
    swa_layers = pp_share(cfg.count("swa"), shape.pp)
    r = shape.swa_full_tokens_ratio
    cell.per_layer["swa"], cell.layers["swa"] = h_swa * d_swa * elem, swa_layers
    cell.terms.append(f"{r:g} × {h_swa} × {d_swa} × {swa_layers} sliding-window layers × {fmt_bytes(elem)} B")
    cell.notes.append(
        f"hybrid SWA pool: the sliding-window pool holds {r:g} × the full pool's tokens (--swa-full-tokens-ratio)"
    )
    return r * h_swa * d_swa * elem * swa_layers


def _sglang_mla_cell(cfg: ModelConfig, shape: SglangShape, b: float) -> Cell:
    assert cfg.mla is not None
    layers = pp_share(cfg.count("full") or cfg.layers, shape.pp)
    latent = cfg.mla.latent
    elem = 1.0 if is_fp4(shape.kv_dtype) else b
    cell = Cell(0, {"full": latent * elem}, {"full": layers})
    cell.terms.append(
        f"MLA ({cfg.mla.kv_lora_rank} + {cfg.mla.qk_rope_head_dim}) × {layers} layers × {fmt_bytes(elem)} B (one latent, every rank)"
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
