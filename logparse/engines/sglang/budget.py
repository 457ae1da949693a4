"""SGLang's launch budget: its ranks' figures, the pool it allocated, and its sizing formula of the
launch's era replayed (:mod:`logparse.engines.sglang.formula`); see :mod:`logparse.budget.model` for the
figures every engine's budget has.

* **KV tokens** (actual) are the token count of the pool SGLang allocated, read from the rank
  with the largest printed pool of the first pool group (every rank of a group holds the same
  pool; plain data parallelism gives each replica its own), else the scheduler's
  ``max_total_num_tokens`` (releases before 0.4.1.post6 print no KV pool line).
* **Headroom** is the lowest free figure once the memory setup finished (the launch became ready, or
  reached the scheduler's summary line, which SGLang prints after the pools and CUDA graphs).
* **Predicted KV** replays SGLang's sizing formula of the launch's era.
"""

from __future__ import annotations

from logparse.budget.model import (
    OUT_OF_RANGE_WHY,
    Budget,
    bind,
    gb,
    memory_kind,
    physical_ranks,
    pool_gb,
    rank_budget,
    setup_complete,
    timings,
)
from logparse.engines.sglang import formula as fm
from logparse.engines.sglang import formula_inputs as fi
from logparse.engines.sglang import versions
from logparse.launches.figures import printed_out_of_range
from logparse.launches.model import Launch


def sglang_budget(launch: Launch) -> Budget:
    """An SGLang launch's budget (see the module documentation)."""
    done = setup_complete(launch)
    page = _page_size(launch)
    ranks = [
        rank_budget(t, d, setup_complete=done, page_size=page, pools_split=fi.kv_pool_from_pool_end(launch, t))
        for t, d in physical_ranks(launch)
    ]
    b = Budget(launch.launch_id, launch.outcome, memory_kind(launch), done, ranks)
    bind(b)
    timings(b, launch)
    _actual_kv(b, launch)
    _formula(b, launch)
    _pool_from_pool_end(b, launch)
    _unknowns(b, launch)
    return b


def _pool_from_pool_end(b: Budget, launch: Launch) -> None:
    """A release that prints no KV pool size (before 0.4.1.post6): the pool is what the binding rank's
    pools took less the request table (the rank budgets' split), said in the formula notes."""
    binding = b.rank(b.binding_rank)
    if b.kv_pool_gb is not None or binding is None or binding.kv_pool_gb is None or fi.prints_kv_pool_size(launch):
        return
    b.kv_pool_gb = binding.kv_pool_gb
    b.formula_notes.append(
        f"this release prints no KV pool size: the pool is the memory the pools took on {binding.rank} "
        f"('Load weight end' − 'Memory pool end') less ≈{binding.other_pools_gb or 0.0:.2f} GiB of request "
        f"table = {b.kv_pool_gb:.2f} GiB"
    )


def _page_size(launch: Launch) -> int:
    sa = launch.server_args or {}
    page = launch.page_size or sa.get("page_size")
    return page if isinstance(page, int) and not isinstance(page, bool) and page > 0 else 1


def _actual_kv(b: Budget, launch: Launch) -> None:
    groups = fi.groups(launch)
    pool_rank = fi.pool_rank(groups[0].targets) if groups else None
    resize = fi.capture_resize(launch)
    if resize is not None:
        # post-capture sizing: the pool is the last count, the one after the CUDA-graph capture
        resized = pool_rank or next(r for r in groups[0].targets if (r.extra or {}).get("post_capture"))
        b.kv_tokens = resize[1]
        b.kv_tokens_source = (
            f"Post-capture KV sizing line of {resized.label()} (the pool resized after the CUDA-graph capture)"
        )
    elif pool_rank is not None and pool_rank.kv_tokens is not None:
        b.kv_tokens = pool_rank.kv_tokens
        b.kv_tokens_source = f"KV pool line of {pool_rank.label()}"
    elif launch.max_total_num_tokens is not None:
        b.kv_tokens = launch.max_total_num_tokens
        b.kv_tokens_source = "max_total_num_tokens (scheduler summary)"
    elif groups and (counted := [r for r in groups[0].targets if r.kv_tokens is not None]):
        # a pool line whose size is not known (printed out of range): its token count still holds
        least = min(counted, key=lambda r: r.kv_tokens)
        b.kv_tokens = least.kv_tokens
        b.kv_tokens_source = f"KV pool line of {least.label()} (its size is not known)"
    sized = pool_rank or next((r for r in (groups[0].targets if groups else []) if r.kv_size_gb is not None), None)
    b.kv_pool_gb = gb(pool_gb(sized, _page_size(launch)))  # a pool whose token count is not known still has its size


def _formula(b: Budget, launch: Launch) -> None:
    """Replay SGLang's sizing formula for the launch's era (group 0: DP0, or every rank)."""
    groups = fi.groups(launch)
    li = fi.best_inputs(launch, groups[0] if groups else None)
    feat, inp = li.features, li.inputs
    b.inputs = li
    b.era, b.era_label, b.assumed_version = feat.era.key, feat.era.label, feat.version
    b.formula, b.formula_features = feat.era.formula, feat.describe()
    b.formula_notes = list(feat.notes) + list(li.notes)
    b.mem_fraction_static = inp.f if inp else launch.mem_fraction_static
    b.mem_fraction_static_source = li.f_source
    b.bytes_per_token = None if li.bpt.value is None else round(li.bpt.value, 1)
    b.bytes_per_token_source = li.bpt.source
    b.draft_bytes_per_token = None if li.draft_bpt.value is None else round(li.draft_bpt.value, 1)
    if inp is None:
        return
    checked = inp.with_(capture_delta_gb=0.0)  # what the log's pre-capture figures are checked against
    pred = fm.predict(checked, feat)
    # the what-ifs' base: after a post-capture resize, the pool as it was resized
    b.prediction = fm.predict(inp, feat) if inp.capture_delta_gb else pred
    b.pre_load_avail_gb, b.pre_load_source = gb(inp.m_pre_gb), li.m_pre_source
    b.post_load_avail_gb, b.post_load_source = gb(inp.m_post_gb), li.m_post_source
    b.reserved_gb, b.rest_gb = gb(pred.reserved_gb), gb(pred.rest_gb)
    b.derivation = list(pred.steps)
    if inp.cell is not None:
        b.predicted_kv_tokens = pred.tokens
    lo, hi = fm.token_interval(checked, feat, li.bpt)
    b.predicted_kv_tokens_lo, b.predicted_kv_tokens_hi = lo, hi
    if pred.tokens is not None and pred.tokens > 0 and li.bpt.value is not None:
        b.predicted_kv_gb = gb(fm.pool_gb(pred.tokens, inp.page_size, li.bpt.value))
    compared = _compared_tokens(b, launch)
    if compared is not None and b.predicted_kv_tokens is not None:
        b.kv_tokens_diff = compared - b.predicted_kv_tokens
        if b.predicted_kv_tokens:
            b.kv_tokens_diff_pct = round(b.kv_tokens_diff / b.predicted_kv_tokens * 100.0, 3)
        b.within_rounding = lo is not None and hi is not None and lo <= compared <= hi
    _cap(b, launch, li, pred)


def _compared_tokens(b: Budget, launch: Launch) -> int | None:
    """The token count the formula's prediction is compared with: the pool, except after post-capture
    sizing, where the formula sizes the reservation made before the capture (and only that is compared)."""
    resize = fi.capture_resize(launch)
    if resize is None:
        return b.kv_tokens
    pre, post = resize
    b.formula_notes.append(
        "post-capture KV sizing (SGLANG_ENABLE_POST_CAPTURE_KV_SIZING): this formula sizes the reservation made "
        "before the CUDA-graph capture"
        + (f" ({pre:,} tokens)" if pre else " (not printed)")
        + f"; after the capture SGLang resized the pool to {post:,} tokens from the memory then free, "
        "less M_pre*(1-f) and its headrooms: the prediction is compared with the reservation"
        + (
            " (0.5.16 prints no size for the resized pool: its GiB are its tokens at the pre-capture line's bytes "
            "per token)"
            if any(fm.resized_after_capture(r) for r in launch.ranks)
            else ""
        )
    )
    return pre


def _cap(b: Budget, launch: Launch, li: fi.LaunchInputs, pred: fm.Prediction) -> None:
    """Is the pool set by --max-total-tokens?  Works with bounds when bytes per token are unmeasurable."""
    cap, inp, feat = launch.max_total_tokens, li.inputs, li.features
    if cap is None or inp is None:
        return
    hi_cell = li.bpt.hi or None
    if feat.draft_in_budget and li.draft_bpt.hi:
        hi_cell = (hi_cell or 0) + li.draft_bpt.hi
    if hi_cell:
        low = inp.with_(
            max_total_tokens=None,
            cell=hi_cell,
            m_post_gb=inp.m_post_gb - fm.ROUND_GB,
            m_pre_gb=inp.m_pre_gb + fm.ROUND_GB,
        )
        p_lo = fm.predict(low, feat)
        t_min = p_lo.tokens_spec if p_lo.tokens_spec is not None else p_lo.tokens
        b.uncapped_kv_tokens_at_least = t_min
        b.bytes_per_token_at_most = round(hi_cell, 1)
        page = inp.page_size or 1
        cap_rounded = cap // page * page if feat.page_rounding else cap
        if t_min is not None and t_min >= cap and b.kv_tokens in (cap, cap_rounded):
            b.capped_by_max_total_tokens = True
    if pred.capped and inp.cell is not None:
        b.capped_by_max_total_tokens = True
        b.uncapped_kv_tokens = pred.tokens_spec


_FIGURES_OF = ("kv_tokens", "kv_size_gb", "avail_after_pool_gb", "avail_after_graph_gb")


def _reservation_only(launch: Launch) -> str | None:
    """Why a post-capture launch cut before its resize has no pool: it printed only the reservation."""
    va = [p for r in launch.ranks for p in (r.extra or {}).get("pools", []) if p.get("va_upper_bound")]
    if not va:
        return None
    return (
        f"the log ends before the post-capture resize: only the reservation made before the CUDA-graph "
        f"capture (KV Cache VA upper bound, {va[0].get('tokens') or 0:,} tokens) was printed, not the pool"
    )


def _unknowns(b: Budget, launch: Launch) -> None:
    """Why each headline figure is missing, worded once for every surface."""
    u = b.unknown
    aside = {name for name in _FIGURES_OF if printed_out_of_range(launch, name)}
    if b.headroom_gb is None:
        if launch.outcome == "failed":
            u["headroom_gb"] = "the start failed before its memory setup finished"
        elif not b.setup_complete:
            u["headroom_gb"] = "the log ends before the memory setup finished (no summary or ready line)"
        elif aside & {"avail_after_pool_gb", "avail_after_graph_gb"}:
            u["headroom_gb"] = OUT_OF_RANGE_WHY
        else:
            u["headroom_gb"] = "no free-memory figure was printed"
    if b.kv_tokens is None:
        u["kv_tokens"] = (
            "the start failed before the KV pool was allocated"
            if launch.outcome == "failed"
            else OUT_OF_RANGE_WHY
            if "kv_tokens" in aside
            else _reservation_only(launch) or "no KV pool line and no max_total_num_tokens line"
        )
    if b.kv_pool_gb is None:
        if "kv_size_gb" in aside:
            u["kv_pool_gb"] = OUT_OF_RANGE_WHY
        elif b.kv_tokens is None:
            u["kv_pool_gb"] = u["kv_tokens"]
        elif launch.version_range and versions.index(launch.version_range[1]) < versions.index("0.4.1.post6"):
            u["kv_pool_gb"] = "this release prints no KV pool size (before 0.4.1.post6)"
        else:
            u["kv_pool_gb"] = "no KV pool size line in the log"
    if b.predicted_kv_tokens is None:
        if b.inputs is None or b.inputs.inputs is None:
            u["predicted_kv_tokens"] = (
                "the log lacks the figures the formula needs (Load weight begin/end and mem_fraction_static)"
            )
        else:
            u["predicted_kv_tokens"] = "bytes per token unknown (no measurable KV pool line)"
