"""SGLang's KV-pool sizing formula, per era (catalogue §4), and its inputs from a launch.

Every era starts from the same budget, in GiB as SGLang's ``get_available_gpu_memory``
returns it (free memory, min-reduced over the ranks that size one pool together)::

    rest = M_post - M_pre * (1 - f)          # f = --mem-fraction-static
    T    = floor(rest * 2^30 / cell)         # cell = bytes per token of the KV pool

``M_pre`` is the free memory measured *before* the weights load, ``M_post`` after them.
So ``(1 - f) * M_pre`` is held back (CUDA graphs, activations, the draft model before
0.5.14...) and everything else left after the weights becomes KV cache.  What differs by
era is what happens around that:

* **Era A** (0.1.3 – 0.5.6.post2, ``ModelRunner.profile_max_num_token``):
  EAGLE headroom: from 0.4.3.post3 the pool is inflated to
  ``T' = T + R*steps*topk + R*draft_tokens + 100`` (R = max_num_reqs) and both target and
  draft use T' (0.4.1.post4 – 0.4.3.post2 inflate the draft pool only);
  ``--max-total-tokens`` cap; page rounding from 0.4.4.
* **Era B** (0.5.7 – 0.5.10.post1, ``model_runner_kv_cache_mixin``): same budget,
  ``int(rest * 2^30) // cell``, no EAGLE inflation; the draft's KV and weights are not in the
  formula (they come out of the held-back share); cap; page rounding.
* **Era C** (0.5.11 – 0.5.23, ``pool_configurator`` / ``KVCacheConfigurator``):
  ``available_bytes = int(rest * 2^30)``; from 0.5.14 EAGLE/STANDALONE put the draft KV inside
  the budget (``cell <- cell * (1 + L_draft / L_target)``) and count the draft weights in
  ``M_post``; page rounding, cap, re-rounding.

Pools that are not plain KV: Mamba state is subtracted from ``rest`` first (its size is in the
log); hybrid SWA pools are sized together, so the bytes per token used here are the bytes of
all pools per full-attention token.

The bytes per token come from the logged pool itself,
``kv_size_gb * 2^30 / (kv_tokens + page_size)`` (the pool has one padding page), which needs
no model config.  Printed figures carry two decimals, so every derived number here has an
uncertainty, which is kept (``lo``/``hi``) and used to say whether a difference is real.

The eras and what each release's formula does are :mod:`logparse.engines.sglang.eras`; the inputs
read from a launch (its ranks, bytes per token, fraction, draft) are
:mod:`logparse.engines.sglang.formula_inputs`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from logparse.budget.pools import ROUND_GB as ROUND_GB
from logparse.budget.pools import BytesPerToken as BytesPerToken
from logparse.budget.pools import GiB as GiB
from logparse.budget.pools import bytes_per_token as bytes_per_token
from logparse.budget.pools import pool_figures as pool_figures
from logparse.budget.pools import resized_after_capture as resized_after_capture
from logparse.engines.sglang.eras import Features


@dataclass
class Inputs:
    """Everything the formula needs, in SGLang's units (GiB, bytes per token)."""

    m_pre_gb: float
    m_post_gb: float
    f: float
    cell: float | None  # bytes per token the formula divides by
    page_size: int = 1
    max_total_tokens: int | None = None
    context_len: int | None = None
    max_running_requests: int | None = None  # the user's --max-running-requests
    dp_size: int = 1
    dp_attention: bool = False
    spec_steps: int | None = None
    spec_topk: int | None = None
    spec_draft_tokens: int | None = None
    mamba_gb: float = 0.0
    #: 0.5.18+: GiB of the KV budget held for multimodal allocations made after sizing (printed when > 0)
    mm_reservation_gb: float = 0.0
    #: post-capture sizing (0.5.16+): GiB the resize after the CUDA-graph capture moved the pool by
    #: (negative: the capture's memory and headrooms came out of it), from the two printed token counts;
    #: a what-if keeps it (the capture costs the same), the prediction checked against the log does not
    capture_delta_gb: float = 0.0
    #: DeepSeek-V4 (0.5.12+): GiB of the pools sized before the full pool (SWA cap, compression states),
    #: from its ``DSV4 memory calculation`` line
    fixed_pools_gb: float = 0.0

    def with_(self, **kw: Any) -> Inputs:
        return replace(self, **kw)


@dataclass
class Prediction:
    reserved_gb: float
    rest_gb: float
    tokens_memory: int | None = None  # from memory alone
    tokens_spec: int | None = None  # after EAGLE inflation (era A)
    tokens: int | None = None  # final pool size
    capped: bool = False  # --max-total-tokens decided the size
    cap_not_binding: bool = False  # the cap was larger than the profiled value
    not_enough: bool = False  # T <= 0: "Not enough memory"
    max_num_reqs: int | None = None
    steps: list[str] = field(default_factory=list)

    def kv_gb(self, cell: float | None, page: int) -> float | None:
        if self.tokens is None or cell is None:
            return None
        return pool_gb(self.tokens, page, cell)


def pool_gb(tokens: int, page: int, cell: float) -> float:
    """Bytes of a pool of ``tokens`` (plus its padding page), in GiB."""
    return (tokens + max(page, 1)) * cell / GiB


def max_num_reqs(inp: Inputs, feat: Features, tokens: int) -> int:
    if inp.max_running_requests:
        user = inp.max_running_requests
        return max(1, user // inp.dp_size) if inp.dp_attention and inp.dp_size > 1 else user
    ctx = inp.context_len or 4096
    est = max(int(tokens / ctx * 512), 2048)
    return min(est, feat.max_reqs_cap) if feat.max_reqs_cap else est


def _budget(inp: Inputs) -> tuple[Prediction, float]:
    """The KV budget (``rest``, GiB) and the step that shows it; the second value is what the pool's
    tokens are sized from (DeepSeek-V4 sizes its fixed pools out of the budget first)."""
    reserved = inp.m_pre_gb * (1.0 - inp.f)
    rest = inp.m_post_gb - reserved - (inp.mamba_gb or 0.0) - (inp.mm_reservation_gb or 0.0)
    p = Prediction(reserved_gb=reserved, rest_gb=rest)
    rest -= inp.fixed_pools_gb or 0.0
    p.steps.append(
        f"rest = M_post {inp.m_post_gb:.2f} − M_pre {inp.m_pre_gb:.2f} × (1 − {inp.f:g}) = "
        f"{inp.m_post_gb:.2f} − {reserved:.2f}"
        + (f" − mamba {inp.mamba_gb:.2f}" if inp.mamba_gb else "")
        + (f" − multimodal reservation {inp.mm_reservation_gb:.2f}" if inp.mm_reservation_gb else "")
        + (f" − fixed DSV4 pools {inp.fixed_pools_gb:.2f}" if inp.fixed_pools_gb else "")
        + f" = {rest:.2f} GiB"
    )
    return p, rest


def predict(inp: Inputs, feat: Features) -> Prediction:
    """Apply one era's formula to ``inp``."""
    p, rest = _budget(inp)
    cap = inp.max_total_tokens
    if inp.cell is None or inp.cell <= 0:
        p.steps.append("bytes per token unknown: no token count can be derived")
        if cap is not None:
            p.tokens = cap
            p.capped = True
        return p
    if inp.capture_delta_gb:
        rest += inp.capture_delta_gb
        p.steps.append(
            f"post-capture sizing: the resize after the CUDA-graph capture moves it by {inp.capture_delta_gb:+.2f} "
            f"GiB (as in this launch) = {rest:.2f} GiB"
        )
    if feat.era.key == "A":
        t = int(rest * GiB // inp.cell) if rest > 0 else math.floor(rest * GiB / inp.cell)
    else:
        t = int(rest * GiB) // max(round(inp.cell), 1) if rest > 0 else math.floor(rest * GiB / inp.cell)
    p.tokens_memory = t
    p.steps.append(f"T = {rest:.4f} GiB × 2^30 / {inp.cell:,.0f} B/token = {t:,}")
    if t <= 0:
        p.not_enough = True
        p.tokens = t
        p.steps.append("T ≤ 0: SGLang stops with 'Not enough memory' (raise --mem-fraction-static)")
        return p
    if feat.eagle_inflation and inp.spec_steps is not None:
        r = max_num_reqs(inp, feat, t)
        p.max_num_reqs = r
        steps, topk, nd = inp.spec_steps or 0, inp.spec_topk or 1, inp.spec_draft_tokens or 0
        t2 = t + r * steps * topk + r * nd + 100
        p.steps.append(f"EAGLE headroom: T' = {t:,} + {r}×{steps}×{topk} + {r}×{nd} + 100 = {t2:,}")
        t = t2
    p.tokens_spec = t
    if cap is not None:
        if cap < t:
            p.steps.append(f"--max-total-tokens {cap:,} caps it (memory allows {t:,})")
            t = cap
            p.capped = True
        else:
            p.cap_not_binding = True
            p.steps.append(
                f"--max-total-tokens {cap:,} is larger than the profiled {t:,}: SGLang uses the profiled value"
            )
    if feat.page_rounding and inp.page_size > 1:
        t2 = t // inp.page_size * inp.page_size
        if t2 != t:
            p.steps.append(f"page rounding ({inp.page_size}): {t:,} → {t2:,}")
        t = t2
    p.tokens = t
    return p


def fraction_for_rest(inp: Inputs, rest_gb: float) -> float:
    """The --mem-fraction-static that gives ``rest_gb`` with the same memory figures."""
    # rest = M_post - M_pre*(1-f) - mamba - mm  =>  f = 1 - (M_post - mamba - mm - rest)/M_pre
    return 1.0 - (inp.m_post_gb - (inp.mamba_gb or 0.0) - (inp.mm_reservation_gb or 0.0) - rest_gb) / inp.m_pre_gb


def token_interval(inp: Inputs, feat: Features, bpt: BytesPerToken) -> tuple[int | None, int | None]:
    """Range of T consistent with the rounding of the printed figures (±0.005 GiB each)."""
    if bpt.lo is None or bpt.hi is None or bpt.hi <= 0:
        return None, None
    extra_cell = (inp.cell - bpt.value) if (inp.cell is not None and bpt.value is not None) else 0.0
    lo_in = inp.with_(m_post_gb=inp.m_post_gb - ROUND_GB, m_pre_gb=inp.m_pre_gb + ROUND_GB, cell=bpt.hi + extra_cell)
    hi_in = inp.with_(
        m_post_gb=inp.m_post_gb + ROUND_GB, m_pre_gb=inp.m_pre_gb - ROUND_GB, cell=max(bpt.lo + extra_cell, 1e-9)
    )
    return predict(lo_in, feat).tokens, predict(hi_in, feat).tokens
