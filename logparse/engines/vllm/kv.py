"""vLLM's bytes of KV cache per printed token (``get_kv_cache_spec`` / ``page_size_bytes``, catalogue
§4.8), from a model's config (:mod:`logparse.budget.model_config`): a layer's page holds
``2 × B × H_kv × d × b`` (MLA: ``B × latent × b``; ``fp8_ds_mla`` 656 bytes a token); layers of
different kinds are grouped in groups of equal size (padded), and the printed token count divides
the blocks by the number of groups, so the bytes behind one printed token are one layer's page per
token × group size × groups.  Uniform models: × L.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from logparse.budget.model_config import ModelConfig
from logparse.budget.model_kv import Cell, fmt_bytes, kv_element_bytes, kv_heads_per_rank, pp_share

#: Bytes a token and layer of vLLM's fp8 DeepSeek MLA cache (fp8 latent, scales, bf16 rope).
FP8_DS_MLA_BYTES = 656


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
        what = f"MLA {cfg.mla.latent} × {fmt_bytes(b)} B"
    else:
        h = kv_heads_per_rank(cfg.num_kv_heads, shape.tp)
        per = 2 * h * cfg.head_dim * b
        what = f"2 × {h} KV heads × {cfg.head_dim} × {fmt_bytes(b)} B"
    kinds = {k: pp_share(cfg.count(k), shape.pp) for k in ("full", "swa", "linear") if cfg.count(k)}
    if cfg.mla is not None:
        kinds = {"full": pp_share(cfg.count("full") or cfg.layers, shape.pp)}
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
