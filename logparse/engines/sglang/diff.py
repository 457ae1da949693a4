"""``diff`` of two SGLang launches: why the KV pool moved, by SGLang's formula.

The attribution replays SGLang's formula (:mod:`logparse.engines.sglang.formula`) from A's inputs
to B's, changing one input at a time in a fixed order:

1. ``mem_fraction_static``
2. free memory before the weights (``M_pre``), weights held constant
3. the weights (``M_pre − M_post``; from 0.5.14 with speculative decoding this includes the draft)
4. bytes per token of the target pool (KV dtype, model, TP size)
5. speculative decoding (the draft KV inside the budget from 0.5.14, EAGLE inflation settings)
6. page size
7. the ``--max-total-tokens`` cap
8. Mamba state subtracted from the budget
9. the SGLang formula itself (the era of B instead of A's)

Each step reports the token delta it causes; what the formula does not explain is the
``unexplained`` rest (SGLang internals of another release, or measurement noise).  A diff of an SGLang
launch and another engine's shows SGLang's side of it (:func:`fraction_side`).
"""

from __future__ import annotations

from typing import Any

from logparse import engines
from logparse.budget.model import Budget
from logparse.engines.sglang import eras, versions
from logparse.engines.sglang import formula as fm
from logparse.engines.sglang import formula_inputs as fi
from logparse.launches.model import Launch
from logparse.reports.diff import ranges_overlap

# --------------------------------------------------------------------------- attribution
KNOB_ORDER = (
    ("f", "mem_fraction_static"),
    ("m_pre", "free memory before weights (M_pre)"),
    ("weights", "weights (M_pre − M_post)"),
    ("cell_t", "bytes per token (KV dtype / model / TP)"),
    ("spec", "speculative decoding settings"),
    ("page", "page size"),
    ("cap", "--max-total-tokens cap"),
    ("mamba", "Mamba state"),
)


def _knobs(li: fi.LaunchInputs | None) -> dict[str, Any] | None:
    inp = li.inputs if li is not None else None
    if li is None or inp is None:
        return None
    cell_t = li.bpt.value
    cell_d = li.draft_bpt.value if li.features.draft_in_budget else None
    return {
        "f": inp.f,
        "m_pre": inp.m_pre_gb,
        "weights": inp.m_pre_gb - inp.m_post_gb,
        "cell_t": cell_t,
        "spec": {
            "cell_d": cell_d,
            "steps": inp.spec_steps,
            "topk": inp.spec_topk,
            "nd": inp.spec_draft_tokens,
            "mrr": inp.max_running_requests,
            "ctx": inp.context_len,
            "dp": inp.dp_size,
            "dpa": inp.dp_attention,
        },
        "page": inp.page_size,
        "cap": inp.max_total_tokens,
        "mamba": inp.mamba_gb or 0.0,
    }


def _inputs_of(k: dict[str, Any], feat: eras.Features) -> fm.Inputs:
    s = k["spec"]
    cell = k["cell_t"]
    if cell is not None and feat.draft_in_budget and s.get("cell_d"):
        cell = cell + s["cell_d"]
    return fm.Inputs(
        m_pre_gb=k["m_pre"],
        m_post_gb=k["m_pre"] - k["weights"],
        f=k["f"],
        cell=cell,
        page_size=k["page"] or 1,
        max_total_tokens=k["cap"],
        context_len=s.get("ctx"),
        max_running_requests=s.get("mrr"),
        dp_size=s.get("dp") or 1,
        dp_attention=bool(s.get("dpa")),
        spec_steps=s.get("steps"),
        spec_topk=s.get("topk"),
        spec_draft_tokens=s.get("nd"),
        mamba_gb=k["mamba"],
    )


def _fmt_knob(name: str, v: Any) -> str:
    if v is None:
        return "—"
    if name == "spec":
        bits = []
        if v.get("cell_d"):
            bits.append(f"draft KV {v['cell_d']:,.0f} B/token in budget")
        if v.get("steps") is not None:
            bits.append(f"steps={v['steps']} topk={v['topk']} draft_tokens={v['nd']}")
        return ", ".join(bits) or "none"
    if name == "cell_t":
        return f"{v:,.0f} B/token"
    if name in ("m_pre", "weights", "mamba"):
        return f"{v:.2f} GiB"
    if isinstance(v, float):
        return f"{v:g}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def attribution(a: Launch, b: Launch, ba: Budget, bb: Budget) -> dict[str, Any]:
    """The KV-token change from A to B attributed to each input of SGLang's formula (see the module doc)."""
    la, lb = ba.inputs, bb.inputs
    ka, kb = _knobs(la), _knobs(lb)
    ta, tb = ba.kv_tokens, bb.kv_tokens
    out: dict[str, Any] = {
        "a_tokens": ta,
        "b_tokens": tb,
        "delta_tokens": (tb - ta) if ta is not None and tb is not None else None,
        "steps": [],
        "notes": [],
    }
    if ka is None or kb is None or la is None or lb is None:
        out["supported"] = False
        out["reason"] = "a launch lacks the memory figures or mem_fraction_static the formula needs"
        return out
    reason = _common_cells(ka, kb, la, lb, out["notes"])
    if reason is not None:
        out["supported"] = False
        out["reason"] = reason
        return out
    start, steps, end = _one_input_at_a_time(ka, kb, la.features, lb.features)
    out["predicted_a"] = start
    out["steps"].extend(steps)
    out["predicted_b"] = end
    out["supported"] = True
    if ka["cap"] is not None and kb["cap"] is not None and ta == ka["cap"] and tb == kb["cap"]:
        out["notes"].append(
            f"both pools are set by --max-total-tokens ({ka['cap']:,} -> {kb['cap']:,}): the memory "
            "figures do not change the token count while the cap holds"
        )
    if out["delta_tokens"] is not None and start is not None and end is not None:
        explained = end - start
        # what each side's formula misses (noise, rounding, SGLang internals) does not cancel between A and B
        out["explained_tokens"] = explained
        out["unexplained_tokens"] = out["delta_tokens"] - explained
        ver_changed = (a.version_range or ()) != (b.version_range or ())
        name = engines.label(a.engine)
        out["unexplained_points_at"] = (
            f"the {name} version ({a.engine_version_range} -> {b.engine_version_range}) or measurement noise"
            if ver_changed
            else f"measurement noise or rounding (same {name} version range)"
        )
    return out


def _common_cells(ka: dict[str, Any], kb: dict[str, Any], la: Any, lb: Any, notes: list[str]) -> str | None:
    """Make the bytes per token of A and B comparable (in place); why the attribution is impossible, if it is.

    When one side cannot measure them, the other's is assumed (same model); values that agree within
    the rounding of the printed pools are the same number."""
    if ka["cell_t"] is None and kb["cell_t"] is not None:
        ka["cell_t"] = kb["cell_t"]
        notes.append("A's pool is too small to measure bytes per token; B's value is assumed for A")
    elif kb["cell_t"] is None and ka["cell_t"] is not None:
        kb["cell_t"] = ka["cell_t"]
        notes.append("B's pool is too small to measure bytes per token; A's value is assumed for B")
    if ka["cell_t"] is None and kb["cell_t"] is None and (ka["cap"] is None or kb["cap"] is None):
        return "bytes per token unknown in both launches (no measurable KV pool line)"
    if _overlap(la.bpt, lb.bpt) and ka["cell_t"] is not None and kb["cell_t"] is not None:
        kb["cell_t"] = ka["cell_t"]
    if _overlap(la.draft_bpt, lb.draft_bpt) and ka["spec"].get("cell_d") and kb["spec"].get("cell_d"):
        kb["spec"]["cell_d"] = ka["spec"]["cell_d"]
    return None


def _one_input_at_a_time(
    ka: dict[str, Any], kb: dict[str, Any], fa: eras.Features, fb: eras.Features
) -> tuple[int | None, list[dict[str, Any]], int | None]:
    """Starting from A's inputs, take B's value of one input after another (in ``KNOB_ORDER``), then
    B's formula: the prediction on A's inputs, one step per change, and the last prediction."""
    cur = dict(ka)
    cur["spec"] = dict(ka["spec"])
    prev = fm.predict(_inputs_of(cur, fa), fa).tokens
    start = prev
    steps: list[dict[str, Any]] = []
    for key, label in KNOB_ORDER:
        if cur[key] == kb[key]:
            continue
        before = cur[key]
        cur[key] = kb[key] if key != "spec" else dict(kb["spec"])
        t = fm.predict(_inputs_of(cur, fa), fa).tokens
        steps.append(_step(label, key, _fmt_knob(key, before), _fmt_knob(key, kb[key]), prev, t))
        prev = t
    if fa.era.key != fb.era.key or fa.describe() != fb.describe():
        t = fm.predict(_inputs_of(cur, fb), fb).tokens
        steps.append(_step("SGLang sizing formula", "era", fa.describe(), fb.describe(), prev, t))
        prev = t
    return start, steps, prev


def _step(label: str, key: str, a: str, b: str, prev: int | None, t: int | None) -> dict[str, Any]:
    return {
        "input": label,
        "key": key,
        "a": a,
        "b": b,
        "delta_tokens": (t - prev) if t is not None and prev is not None else None,
        "tokens_after": t,
    }


def _overlap(x: fm.BytesPerToken, y: fm.BytesPerToken) -> bool:
    return ranges_overlap(x.lo, x.hi, y.lo, y.hi)


# --------------------------------------------------------------------------- beside another engine's launch
def fraction_side(launch: Launch, budget: Budget, share_of: str) -> dict[str, Any]:
    """``mem_fraction_static`` of the launch: its value, source and default for the release and TP, a
    share of the free memory before the weights (``share_of``, in words)."""
    default = versions.default_mem_fraction_static(launch.version_range, launch.tp_size or 1)
    return {
        "name": "mem_fraction_static",
        "value": budget.mem_fraction_static,
        "source": budget.mem_fraction_static_source,
        "default": default,
        "default_text": f"{default:g}" if default is not None else "derived at start from the GPU",
        "share_of": share_of,
        "share_of_gb": budget.pre_load_avail_gb,
    }
