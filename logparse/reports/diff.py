"""``logparse diff A B``: what changed between two launches, and why the KV pool moved.

The attribution replays SGLang's formula (:mod:`logparse.budget.formula`) from A's inputs
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
``unexplained`` rest (SGLang internals of another release, or measurement noise).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from logparse.budget import formula as fm
from logparse.reports.explain import _phys_key, _sort_key, explain_launch, rank_name

#: server_args that differ between any two starts and mean nothing.
NOISE_ARGS = {
    "random_seed",
    "port",
    "additional_ports",
    "nccl_port",
    "dist_init_addr",
    "gated_launch_port",
    "grpc_port",
    "disaggregation_bootstrap_port",
    "engine_info_bootstrap_port",
    "metrics_port",
    "smg_http_sidecar_port",
    "bootstrap_port",
}


def _noise(key: str) -> bool:
    leaf = key.split(".")[-1]
    return leaf in NOISE_ARGS or leaf.endswith(("_port", "_ports"))


def flatten(d: Any, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(d, dict):
        for k, v in d.items():
            key = f"{prefix}.{k}" if prefix else str(k)
            if isinstance(v, dict) and v:
                out.update(flatten(v, key))
            else:
                out[key] = v
    return out


def args_diff(a, b) -> dict[str, Any]:
    fa, fb = flatten(a.server_args or {}), flatten(b.server_args or {})
    changed, added, removed, ignored = [], [], [], []
    for k in sorted(set(fa) | set(fb)):
        if _noise(k):
            if fa.get(k) != fb.get(k):
                ignored.append(k)
            continue
        if k in fa and k in fb:
            if fa[k] != fb[k]:
                changed.append({"arg": k, "a": fa[k], "b": fb[k]})
        elif k in fb:
            added.append({"arg": k, "b": fb[k]})
        else:
            removed.append({"arg": k, "a": fa[k]})
    version_change = (a.version_range or ()) != (b.version_range or ())
    # a feature switched on: the settings that now take effect (even when equal to A's defaults)
    enabled = []
    for flag, prefix in (
        ("enable_hierarchical_cache", "hicache_"),
        ("speculative_algorithm", "speculative_"),
        ("enable_dp_attention", "dp_"),
        ("enable_lora", "lora_"),
    ):
        va, vb = fa.get(flag), fb.get(flag)
        if va != vb and vb not in (None, False, "", "NONE"):
            settings = {
                k: fb[k] for k in sorted(fb) if k.startswith(prefix) and k != flag and fb[k] not in (None, "", [], {})
            }
            enabled.append({"flag": flag, "value": vb, "settings": settings})
    return {
        "changed": changed,
        "enabled_features": enabled,
        "added": added,
        "removed": removed,
        "ignored_noise": ignored,
        "added_removed_by_version": bool(version_change and (added or removed)),
        "a_has_server_args": a.server_args is not None,
        "b_has_server_args": b.server_args is not None,
    }


def _secs(a: str | None, b: str | None) -> float | None:
    if not a or not b:
        return None
    try:
        return (datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds()
    except ValueError:
        return None


def _delta(a, b) -> dict[str, Any]:
    out: dict[str, Any] = {"a": a, "b": b, "delta": None, "pct": None}
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        d = b - a
        out["delta"] = round(d, 4) if isinstance(d, float) else d
        out["pct"] = round(d / a * 100, 2) if a else None
    return out


RANK_FIELDS = (
    "pre_load_avail_gb",
    "weights_gb",
    "post_load_avail_gb",
    "kv_tokens",
    "actual_kv_gb",
    "avail_after_pool_gb",
    "graph_gb",
    "headroom_gb",
)


def _rank_rows(launch) -> dict[tuple, dict[str, Any]]:
    out: dict[tuple, dict[str, Any]] = {}
    for r in launch.ranks:
        key = _phys_key(r) + (r.worker,)
        total = fm.pool_figures(r)[0]
        out[key] = {
            "rank": rank_name(r),
            "worker": r.worker,
            "pre_load_avail_gb": r.avail_before_load_gb,
            "weights_gb": r.weights_gb,
            "post_load_avail_gb": r.avail_after_load_gb,
            "kv_tokens": r.kv_tokens,
            "actual_kv_gb": total if total is not None else r.kv_size_gb,
            "avail_after_pool_gb": r.avail_after_pool_gb,
            "graph_gb": r.graph_gb,
            "headroom_gb": r.avail_after_graph_gb,
            "load_s": r.load_s,
            "graph_s": r.graph_s,
        }
    return out


def _durations(launch) -> dict[str, Any]:
    tg = [r for r in launch.ranks if r.worker == "target"]
    dr = [r for r in launch.ranks if r.worker != "target"]

    def mx(rs, attr):
        v = [getattr(r, attr) for r in rs if getattr(r, attr) is not None]
        return max(v) if v else None

    out = {
        "startup_s": _secs(launch.started_at, launch.ready_at),
        "load_s": mx(tg, "load_s"),
        "graph_s": mx(tg, "graph_s"),
        "draft_load_s": mx(dr, "load_s"),
        "draft_graph_s": mx(dr, "graph_s"),
    }
    timings = (launch.runtime or {}).get("startup_timings")
    if isinstance(timings, dict):
        for k, v in timings.items():
            if isinstance(v, (int, float)):
                out[f"engine_{k}_s"] = v
    return out


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


def _knobs(li: fm.LaunchInputs) -> dict[str, Any] | None:
    inp = li.inputs
    if inp is None:
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


def _inputs_of(k: dict[str, Any], feat: fm.Features) -> fm.Inputs:
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


def attribute(a, b) -> dict[str, Any]:
    la, lb = fm.best_inputs(a), fm.best_inputs(b)
    ka, kb = _knobs(la), _knobs(lb)
    ta = _actual_tokens(a)
    tb = _actual_tokens(b)
    out: dict[str, Any] = {
        "a_tokens": ta,
        "b_tokens": tb,
        "delta_tokens": (tb - ta) if ta is not None and tb is not None else None,
        "steps": [],
        "notes": [],
    }
    if ka is None or kb is None:
        out["supported"] = False
        out["reason"] = "a launch lacks the memory figures or mem_fraction_static the formula needs"
        return out
    # bytes per token: when one side cannot measure them, assume the other's (same model)
    if ka["cell_t"] is None and kb["cell_t"] is not None:
        ka["cell_t"] = kb["cell_t"]
        out["notes"].append("A's pool is too small to measure bytes per token; B's value is assumed for A")
    elif kb["cell_t"] is None and ka["cell_t"] is not None:
        kb["cell_t"] = ka["cell_t"]
        out["notes"].append("B's pool is too small to measure bytes per token; A's value is assumed for B")
    if ka["cell_t"] is None and kb["cell_t"] is None and (ka["cap"] is None or kb["cap"] is None):
        out["supported"] = False
        out["reason"] = "bytes per token unknown in both launches (no measurable KV pool line)"
        return out
    # bytes per token that agree within the rounding of the printed pools are the same number
    if _overlap(la.bpt, lb.bpt) and ka["cell_t"] is not None and kb["cell_t"] is not None:
        kb["cell_t"] = ka["cell_t"]
    if _overlap(la.draft_bpt, lb.draft_bpt) and ka["spec"].get("cell_d") and kb["spec"].get("cell_d"):
        kb["spec"]["cell_d"] = ka["spec"]["cell_d"]
    fa, fb = la.features, lb.features
    cur = dict(ka)
    cur["spec"] = dict(ka["spec"])
    prev = fm.predict(_inputs_of(cur, fa), fa).tokens
    start = prev
    out["predicted_a"] = start
    for key, label in KNOB_ORDER:
        if cur[key] == kb[key]:
            continue
        before = cur[key]
        cur[key] = kb[key] if key != "spec" else dict(kb["spec"])
        t = fm.predict(_inputs_of(cur, fa), fa).tokens
        out["steps"].append(
            {
                "input": label,
                "key": key,
                "a": _fmt_knob(key, before),
                "b": _fmt_knob(key, kb[key]),
                "delta_tokens": (t - prev) if t is not None and prev is not None else None,
                "tokens_after": t,
            }
        )
        prev = t
    if fa.era.key != fb.era.key or fa.describe() != fb.describe():
        t = fm.predict(_inputs_of(cur, fb), fb).tokens
        out["steps"].append(
            {
                "input": "SGLang sizing formula",
                "key": "era",
                "a": fa.describe(),
                "b": fb.describe(),
                "delta_tokens": (t - prev) if t is not None and prev is not None else None,
                "tokens_after": t,
            }
        )
        prev = t
    out["predicted_b"] = prev
    out["supported"] = True
    if ka["cap"] is not None and kb["cap"] is not None and ta == ka["cap"] and tb == kb["cap"]:
        out["notes"].append(
            f"both pools are set by --max-total-tokens ({ka['cap']:,} → {kb['cap']:,}): the memory "
            "figures do not change the token count while the cap holds"
        )
    if out["delta_tokens"] is not None and start is not None and prev is not None:
        explained = prev - start
        # what each side's formula misses (noise, rounding, SGLang internals) does not cancel between A and B
        out["explained_tokens"] = explained
        out["unexplained_tokens"] = out["delta_tokens"] - explained
        ver_changed = (a.version_range or ()) != (b.version_range or ())
        out["unexplained_points_at"] = (
            f"the SGLang version ({a.sglang_version_range} → {b.sglang_version_range}) or measurement noise"
            if ver_changed
            else "measurement noise or rounding (same SGLang version range)"
        )
    return out


def _overlap(x: fm.BytesPerToken, y: fm.BytesPerToken) -> bool:
    if None in (x.lo, x.hi, y.lo, y.hi):
        return False
    return x.lo <= y.hi and y.lo <= x.hi


def _actual_tokens(launch) -> int | None:
    pr = fm._pool_rank([r for r in launch.ranks if r.worker == "target"])
    if pr is not None and pr.kv_tokens is not None:
        return pr.kv_tokens
    return launch.max_total_num_tokens


# --------------------------------------------------------------------------- diff
def diff_launches(a, b, margin_gb: float = 2.0) -> dict[str, Any]:
    ea, eb = explain_launch(a, margin_gb), explain_launch(b, margin_gb)
    args = args_diff(a, b)
    rows_a, rows_b = _rank_rows(a), _rank_rows(b)
    ranks = []
    for key in sorted(set(rows_a) | set(rows_b), key=lambda k: (k[-1] != "target",) + _sort_key(k[:-1])):
        ra, rb = rows_a.get(key, {}), rows_b.get(key, {})
        row = {"rank": (ra or rb).get("rank"), "worker": key[-1]}
        for f in RANK_FIELDS:
            row[f] = _delta(ra.get(f), rb.get(f))
        ranks.append(row)
    launch_fields = (
        "mem_fraction_static",
        "pre_load_avail_gb",
        "weights_gb",
        "post_load_avail_gb",
        "reserved_gb",
        "rest_gb",
        "bytes_per_token",
        "kv_tokens",
        "actual_kv_gb",
        "predicted_kv_tokens",
        "draft_weights_gb",
        "draft_kv_gb",
        "graph_gb",
        "other_gb",
        "headroom_gb",
    )
    budget = {f: _delta(ea.get(f), eb.get(f)) for f in launch_fields}
    budget["hicache_host_gb"] = _delta(a.hicache_host_gb, b.hicache_host_gb)
    budget["hicache_host_gb"]["unit"] = "decimal GB (host memory)"
    ra, rb = a.runtime or {}, b.runtime or {}
    runtime = {
        k: _delta(ra.get(k), rb.get(k))
        for k in ("peak_token_usage", "peak_tokens", "peak_running_req", "peak_queue_req", "retractions", "batch_lines")
    }
    da, db_ = _durations(a), _durations(b)
    durations = {k: _delta(da.get(k), db_.get(k)) for k in sorted(set(da) | set(db_))}
    attribution = attribute(a, b)
    version = {
        "a": a.sglang_version_range,
        "b": b.sglang_version_range,
        "changed": (a.version_range or ()) != (b.version_range or ()),
        "era_a": ea["era_label"],
        "era_b": eb["era_label"],
    }
    rep: dict[str, Any] = {
        "a": {"launch_id": a.launch_id, "source": a.source, "outcome": a.outcome, "started_at": a.started_at},
        "b": {"launch_id": b.launch_id, "source": b.source, "outcome": b.outcome, "started_at": b.started_at},
        "server_args": args,
        "version": version,
        "budget": budget,
        "ranks": ranks,
        "runtime": runtime,
        "durations": durations,
        "attribution": attribution,
        "hicache": {
            "a": {
                "enabled": bool(a.enable_hierarchical_cache),
                "host_gb": a.hicache_host_gb,
                "host_tokens": (ea.get("hicache") or {}).get("predicted_host_tokens"),
            },
            "b": {
                "enabled": bool(b.enable_hierarchical_cache),
                "host_gb": b.hicache_host_gb,
                "host_tokens": (eb.get("hicache") or {}).get("predicted_host_tokens"),
            },
        },
        "explain_a": _brief(ea),
        "explain_b": _brief(eb),
    }
    rep["identical"] = _identical(a, b, rep)
    rep["summary"] = _summary(rep)
    return rep


def _brief(e: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "era",
        "era_label",
        "mem_fraction_static",
        "pre_load_avail_gb",
        "weights_gb",
        "post_load_avail_gb",
        "reserved_gb",
        "rest_gb",
        "predicted_kv_tokens",
        "kv_tokens",
        "predicted_kv_gb",
        "actual_kv_gb",
        "bytes_per_token",
        "draft_weights_gb",
        "draft_kv_gb",
        "graph_gb",
        "other_gb",
        "headroom_gb",
        "capped_by_max_total_tokens",
        "memory_kind",
        "waterfall",
        "min_rank",
    )
    return {k: e.get(k) for k in keys}


def _identical(a, b, rep) -> bool:
    if a.launch_id and a.launch_id == b.launch_id and a.source == b.source:
        return True
    args = rep["server_args"]
    if args["changed"] or args["added"] or args["removed"] or rep["version"]["changed"]:
        return False
    if a.outcome != b.outcome:
        return False
    for row in rep["ranks"]:
        for f in RANK_FIELDS:
            d = row[f]
            if d["a"] != d["b"]:
                return False
    return True


def _summary(rep: dict[str, Any]) -> list[str]:
    if rep["identical"]:
        return ["identical launches: same arguments, same SGLang version range, same memory figures and KV pool"]
    s = []
    args = rep["server_args"]
    if args["changed"]:
        s.append(
            "arguments changed: "
            + ", ".join(f"{c['arg']} {c['a']!r} → {c['b']!r}" for c in args["changed"][:12])
            + (f" (+{len(args['changed']) - 12} more)" if len(args["changed"]) > 12 else "")
        )
    for feat in args.get("enabled_features", []):
        s.append(
            f"{feat['flag']} → {feat['value']!r}, with " + ", ".join(f"{k}={v!r}" for k, v in feat["settings"].items())
        )
    if args["added"] and not args["added_removed_by_version"]:
        s.append("arguments added: " + ", ".join(f"{c['arg']}={c['b']!r}" for c in args["added"][:12]))
    if args["removed"] and not args["added_removed_by_version"]:
        s.append("arguments removed: " + ", ".join(c["arg"] for c in args["removed"][:12]))
    if args["added_removed_by_version"]:
        s.append(
            f"ServerArgs fields differ with the SGLang version: {len(args['added'])} only in B, "
            f"{len(args['removed'])} only in A"
        )
    v = rep["version"]
    if v["changed"]:
        s.append(
            f"SGLang version: {v['a']} → {v['b']}"
            + (f" ({v['era_a']} → {v['era_b']})" if v["era_a"] != v["era_b"] else "")
        )
    else:
        s.append(f"SGLang version unchanged: {v['a']}")
    kv = rep["budget"]["kv_tokens"]
    if kv["a"] is not None and kv["b"] is not None:
        if kv["delta"]:
            s.append(f"KV pool: {kv['a']:,} → {kv['b']:,} tokens ({kv['delta']:+,}, {kv['pct']:+.2f}%)")
        else:
            s.append(f"KV pool unchanged: {kv['a']:,} tokens")
    hc = rep["hicache"]
    if hc["a"]["enabled"] != hc["b"]["enabled"] or hc["a"]["host_gb"] != hc["b"]["host_gb"]:

        def hp(x):
            if not x["enabled"] and x["host_gb"] is None:
                return "off"
            t = f" ({x['host_tokens']:,} tokens)" if x.get("host_tokens") else ""
            return (f"{x['host_gb']:.2f} GB" if x["host_gb"] is not None else "on (size not logged)") + t

        s.append(
            f"HiCache host pool per rank: {hp(hc['a'])} → {hp(hc['b'])} (decimal GB of host memory); "
            "the GPU pool is " + ("unchanged" if not kv.get("delta") else "changed for other reasons")
        )
    h = rep["budget"]["headroom_gb"]
    if h["a"] is not None and h["b"] is not None and h["delta"]:
        s.append(f"headroom left: {h['a']:.2f} → {h['b']:.2f} GiB ({h['delta']:+.2f})")
    return s


# --------------------------------------------------------------------------- rendering
def _ab_table(console, title: str, items: dict[str, dict[str, Any]]) -> None:
    """A / B / Δ / Δ% rows of the figures that either launch has (nothing when none has any)."""
    from rich.table import Table

    rows = [(k, d) for k, d in items.items() if d["a"] is not None or d["b"] is not None]
    if not rows:
        return
    t = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    for h in ("", "A", "B", "Δ", "Δ%"):
        t.add_column(h, justify="left" if not h else "right")
    for k, d in rows:
        t.add_row(k, *_cell(d))
    console.print(t)


def _cell(d: dict[str, Any], nd: int = 2) -> tuple[str, str, str, str]:
    from logparse.cli.render import fmt_value

    def f(v):
        return fmt_value(v, nd)

    delta = d.get("delta")
    ds = "" if delta in (None, 0, 0.0) else (f"{delta:+,}" if isinstance(delta, int) else f"{delta:+,.{nd}f}")
    pct = d.get("pct")
    ps = "" if pct in (None, 0, 0.0) else f"{pct:+.2f}%"
    return f(d.get("a")), f(d.get("b")), ds, ps


def render_diff(rep: dict[str, Any], console, max_rank_rows: int = 40) -> None:
    from rich.table import Table
    from rich.text import Text

    a, b = rep["a"], rep["b"]
    console.print(Text(f"A: {a['launch_id']} {a['outcome']} {a['source']}", style="bold"))
    console.print(Text(f"B: {b['launch_id']} {b['outcome']} {b['source']}", style="bold"))
    if rep["identical"]:
        console.print(rep["summary"][0])
        return
    for line in rep["summary"]:
        console.print(Text("  • " + line))
    args = rep["server_args"]
    if args["changed"] or args["added"] or args["removed"]:
        t = Table(title="server arguments", title_justify="left", show_edge=False, pad_edge=False)
        t.add_column("arg")
        t.add_column("A")
        t.add_column("B")
        for c in args["changed"]:
            t.add_row(c["arg"], _short(c["a"]), _short(c["b"]))
        lim = 0 if args["added_removed_by_version"] else 15
        for c in args["added"][:lim]:
            t.add_row(c["arg"], Text("(absent)", style="dim"), _short(c["b"]))
        for c in args["removed"][:lim]:
            t.add_row(c["arg"], _short(c["a"]), Text("(absent)", style="dim"))
        more = max(len(args["added"]) - lim, 0) + max(len(args["removed"]) - lim, 0)
        console.print(t)
        if more:
            why = " (ServerArgs fields of one SGLang release only)" if args["added_removed_by_version"] else ""
            console.print(f"  … {more} fields only in one launch{why} (see --json)", style="dim")
    for feat in args.get("enabled_features", []):
        console.print(
            f"  {feat['flag']} → {feat['value']!r}; settings now in effect: "
            + ", ".join(f"{k}={v!r}" for k, v in feat["settings"].items())
        )
    if args["ignored_noise"]:
        console.print(f"  ignored (differ on every start): {', '.join(args['ignored_noise'])}", style="dim")

    t = Table(title="budget (min rank, GiB)", title_justify="left", show_edge=False, pad_edge=False)
    for h in ("", "A", "B", "Δ", "Δ%"):
        t.add_column(h, justify="left" if not h else "right")
    labels = {
        "mem_fraction_static": "mem_fraction_static",
        "pre_load_avail_gb": "free before weights",
        "weights_gb": "weights",
        "post_load_avail_gb": "free after weights",
        "reserved_gb": "held back (1−f)·M_pre",
        "rest_gb": "KV budget",
        "bytes_per_token": "bytes per token",
        "kv_tokens": "KV tokens",
        "actual_kv_gb": "KV pool GiB",
        "predicted_kv_tokens": "predicted tokens",
        "draft_weights_gb": "draft weights",
        "draft_kv_gb": "draft KV",
        "graph_gb": "CUDA graphs",
        "other_gb": "other",
        "headroom_gb": "headroom left",
        "hicache_host_gb": "HiCache host GB (decimal)",
    }
    for k, lab in labels.items():
        d = rep["budget"].get(k)
        if d is None or (d["a"] is None and d["b"] is None):
            continue
        t.add_row(lab, *_cell(d, 3 if k == "mem_fraction_static" else 2))
    console.print(t)

    changed_rows = []
    for row in rep["ranks"]:
        for f in RANK_FIELDS:
            d = row[f]
            if d["a"] != d["b"]:
                changed_rows.append((row["rank"], row["worker"], f, d))
    if changed_rows:
        t = Table(title="per rank and worker (changes only)", title_justify="left", show_edge=False, pad_edge=False)
        for h in ("rank", "worker", "figure", "A", "B", "Δ", "Δ%"):
            t.add_column(h, justify="left" if h in ("rank", "worker", "figure") else "right")
        for rank, worker, f, d in changed_rows[:max_rank_rows]:
            t.add_row(rank, worker, f, *_cell(d))
        console.print(t)
        if len(changed_rows) > max_rank_rows:
            console.print(f"  … {len(changed_rows) - max_rank_rows} more (see --json)", style="dim")
    else:
        console.print("  per-rank memory figures: unchanged on every rank and worker")

    _ab_table(console, "runtime KV pressure", rep["runtime"])
    _ab_table(console, "startup durations (s)", rep["durations"])

    at = rep["attribution"]
    console.print(Text("Attribution of the KV-token change", style="bold"))
    if not at.get("supported"):
        console.print(f"  not computable: {at.get('reason')}")
    else:
        t = Table(show_edge=False, pad_edge=False)
        for h in ("input", "A", "B", "Δ tokens"):
            t.add_column(h, justify="right" if h == "Δ tokens" else "left")
        t.add_row(
            "formula on A's inputs", "", "", f"{at['predicted_a']:,}" if at.get("predicted_a") is not None else "—"
        )
        for st in at["steps"]:
            dt = st["delta_tokens"]
            t.add_row(st["input"], str(st["a"]), str(st["b"]), "—" if dt is None else f"{dt:+,}")
        if at.get("unexplained_tokens") is not None:
            t.add_row("not explained by the formula", "", "", f"{at['unexplained_tokens']:+,}")
            t.add_row(
                Text("logged change", style="bold"),
                f"{at['a_tokens']:,}",
                f"{at['b_tokens']:,}",
                Text(f"{at['delta_tokens']:+,}", style="bold"),
            )
        console.print(t)
        if at.get("unexplained_tokens"):
            console.print(f"  the unexplained part points at {at['unexplained_points_at']}", style="dim")
        for n in at.get("notes", []):
            console.print(f"  note: {n}", style="dim")


def _short(v: Any, n: int = 60) -> str:
    s = repr(v)
    return s if len(s) <= n else s[: n - 1] + "…"
