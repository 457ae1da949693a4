"""``logparse diff A B``: what changed between two launches, and why the KV pool moved.

The arguments, the release, the budget figures side by side (each rank's too), the runtime figures
and the durations are compared alike for every engine.  Why the KV pool moved is the engine's
attribution (:meth:`~logparse.engines.base.Engine.attribution`: SGLang replays its formula one input
at a time); launches of two engines are compared by how each engine sizes its pool
(:mod:`logparse.reports.diff_engines`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from logparse import engines
from logparse.budget.model import Budget, launch_budget
from logparse.launches.args import change_kind, is_ignored, value_text
from logparse.launches.model import Launch
from logparse.reports.diff_engines import compare_engines, engines_differ, tokens_comparable
from logparse.reports.explain import explain_launch


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
    """Changed server arguments, each with its ``kind`` (:func:`logparse.launches.args.change_kind`:
    ``set`` by the user, a release ``default_moved``, or ``derived`` by SGLang across an upgrade)."""
    fa, fb = flatten(a.server_args or {}), flatten(b.server_args or {})
    changed, added, removed, ignored = [], [], [], []
    for k in sorted(set(fa) | set(fb)):
        if is_ignored(k):
            if fa.get(k) != fb.get(k):
                ignored.append(k)
            continue
        if k in fa and k in fb:
            if fa[k] != fb[k]:
                kind = change_kind(k.split(".")[0], fa[k], a.version_range, fb[k], b.version_range, a.engine)
                changed.append({"arg": k, "a": fa[k], "b": fb[k], "kind": kind})
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


def _delta(a, b) -> dict[str, Any]:
    out: dict[str, Any] = {"a": a, "b": b, "delta": None, "pct": None}
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        d = b - a
        out["delta"] = round(d, 4) if isinstance(d, float) else d
        out["pct"] = round(d / a * 100, 2) if a else None
    return out


#: Figures of each rank's budget compared side by side.
RANK_FIELDS = (
    "free_before_weights_gb",
    "weights_gb",
    "free_after_weights_gb",
    "kv_tokens",
    "kv_pool_gb",
    "graph_gb",
    "draft_weights_gb",
    "draft_kv_gb",
    "lowest_free_gb",
    "headroom_gb",
)
#: Launch-level budget figures compared side by side (the binding rank's, the formula's).
BUDGET_FIELDS = (
    "mem_fraction_static",
    "pre_load_avail_gb",
    "weights_gb",
    "post_load_avail_gb",
    "reserved_gb",
    "rest_gb",
    "bytes_per_token",
    "kv_tokens",
    "kv_pool_gb",
    "predicted_kv_tokens",
    "draft_weights_gb",
    "draft_kv_gb",
    "graph_gb",
    "other_gb",
    "headroom_gb",
)
DURATION_FIELDS = ("startup_s", "load_s", "graph_s")


def _within_rounding(budget: dict[str, dict[str, Any]], ba: Budget, bb: Budget) -> None:
    """Figures derived from printed (two-decimal) figures are equal within the log's rounding when
    the intervals the printed figures allow overlap: no change is reported for them, and the common
    interval (``equal_within``) is what both show (``a`` and ``b`` stay each launch's own estimate)."""
    bpt_a = ba.inputs.bpt if ba.inputs else None
    bpt_b = bb.inputs.bpt if bb.inputs else None
    intervals: dict[str, tuple[tuple[float | None, float | None], tuple[float | None, float | None]]] = {
        "bytes_per_token": (
            (bpt_a.lo, bpt_a.hi) if bpt_a else (None, None),
            (bpt_b.lo, bpt_b.hi) if bpt_b else (None, None),
        ),
        "predicted_kv_tokens": (
            (ba.predicted_kv_tokens_lo, ba.predicted_kv_tokens_hi),
            (bb.predicted_kv_tokens_lo, bb.predicted_kv_tokens_hi),
        ),
    }
    for name, ((lo_a, hi_a), (lo_b, hi_b)) in intervals.items():
        d = budget[name]
        if d["a"] == d["b"] or lo_a is None or hi_a is None or lo_b is None or hi_b is None:
            continue
        if not ranges_overlap(lo_a, hi_a, lo_b, hi_b):
            continue
        lo, hi = max(lo_a, lo_b), min(hi_a, hi_b)
        d.update(delta=None, pct=None, within_rounding=True, equal_within=[round(lo), round(hi)])


def _rank_rows(b: Budget) -> dict[tuple, dict[str, Any]]:
    return {rb.key: rb.to_dict() for rb in b.ranks}


def durations(launch: Launch, b: Budget) -> dict[str, Any]:
    """Startup durations: the budget's (slowest target rank), the draft's, and SGLang's own timings."""
    drafts = [r for r in launch.ranks if r.worker != "target"]

    def slowest(attr: str) -> float | None:
        v = [getattr(r, attr) for r in drafts if getattr(r, attr) is not None]
        return max(v) if v else None

    out = {k: getattr(b, k) for k in DURATION_FIELDS}
    out.update(draft_load_s=slowest("load_s"), draft_graph_s=slowest("graph_s"))
    timings = (launch.runtime or {}).get("startup_timings")
    if isinstance(timings, dict):
        for k, v in timings.items():
            if isinstance(v, (int, float)):
                out[f"engine_{k}_s"] = v
    return out


# --------------------------------------------------------------------------- attribution
def attribute(a: Launch, b: Launch, ba: Budget | None = None, bb: Budget | None = None) -> dict[str, Any]:
    """Attribute the KV-token change from A to B: the engine's own attribution of a change between two
    of its launches, none for launches of two engines (each sizes its pool by its own formula)."""
    ba, bb = ba or launch_budget(a), bb or launch_budget(b)
    if engines_differ(a, b):
        return _cross_engine_attribution(ba, bb)
    own = engines.of(a).attribution(a, b, ba, bb)
    return own if own is not None else _no_attribution(a, b, ba, bb)


def _no_attribution(a: Launch, b: Launch, ba: Budget, bb: Budget) -> dict[str, Any]:
    """An engine that does not attribute a KV change: the change in tokens and in GiB, no steps."""
    ta, tb = ba.kv_tokens, bb.kv_tokens
    out: dict[str, Any] = {
        "a_tokens": ta,
        "b_tokens": tb,
        "delta_tokens": (tb - ta) if ta is not None and tb is not None and tokens_comparable(a, b) else None,
        "steps": [],
        "notes": [],
        "supported": False,
        "reason": f"{engines.label(a.engine)} gives no attribution of a KV change to its inputs",
    }
    if ba.kv_pool_gb is not None and bb.kv_pool_gb is not None:
        out["delta_pool_gb"] = round(bb.kv_pool_gb - ba.kv_pool_gb, 2)
    return out


def _cross_engine_attribution(ba: Budget, bb: Budget) -> dict[str, Any]:
    """Two engines: no replay of one formula; each engine's sizing is compared (``Diff.engines``)."""
    out: dict[str, Any] = {
        "a_tokens": ba.kv_tokens,
        "b_tokens": bb.kv_tokens,
        "delta_tokens": None,
        "steps": [],
        "notes": [],
        "supported": False,
        "reason": "the launches are of two engines, each sizing its pool by its own formula (see the engines compared)",
    }
    if ba.kv_pool_gb is not None and bb.kv_pool_gb is not None:
        out["delta_pool_gb"] = round(bb.kv_pool_gb - ba.kv_pool_gb, 2)
    return out


def ranges_overlap(lo_a: float | None, hi_a: float | None, lo_b: float | None, hi_b: float | None) -> bool:
    """Do [lo_a, hi_a] and [lo_b, hi_b] share a value (False when a bound is unknown)?"""
    if lo_a is None or hi_a is None or lo_b is None or hi_b is None:
        return False
    return lo_a <= hi_b and lo_b <= hi_a


# --------------------------------------------------------------------------- diff
@dataclass
class Diff:
    """What changed between two launches (typed; ``to_dict`` is the ``--json`` document)."""

    a: dict[str, Any]
    b: dict[str, Any]
    server_args: dict[str, Any]
    version: dict[str, Any]
    budget: dict[str, dict[str, Any]]
    ranks: list[dict[str, Any]]
    runtime: dict[str, dict[str, Any]]
    durations: dict[str, dict[str, Any]]
    attribution: dict[str, Any]
    hicache: dict[str, Any]
    explain_a: dict[str, Any]
    explain_b: dict[str, Any]
    identical: bool = False
    summary: list[str] | None = None
    #: launches of two engines: each engine's sizing side by side (:mod:`logparse.reports.diff_engines`)
    engines: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def rows(self) -> list[dict[str, Any]]:
        """One row per compared figure (for csv and table output)."""
        out = []
        for section, items in (("budget", self.budget), ("runtime", self.runtime), ("durations", self.durations)):
            for name, d in items.items():
                if d["a"] is not None or d["b"] is not None:
                    out.append({"section": section, "rank": None, "figure": name, **d})
        for row in self.ranks:
            for name in RANK_FIELDS:
                d = row[name]
                if d["a"] != d["b"]:
                    out.append({"section": "rank", "rank": row["rank"], "figure": name, **d})
        for c in self.server_args["changed"]:
            out.append(
                {
                    "section": "server_args",
                    "rank": None,
                    "figure": c["arg"],
                    "a": c["a"],
                    "b": c["b"],
                    "delta": None,
                    "pct": None,
                }
            )
        return out


def _who(launch: Launch) -> dict[str, Any]:
    return {
        "launch_id": launch.launch_id,
        "source": launch.source,
        "outcome": launch.outcome,
        "started_at": launch.started_at,
        "time_zone": launch.time_zone,
        "pid": launch.pid,
        "host": launch.host,
    }


def _rank_order(key: tuple) -> tuple:
    """Ranks in order, an absent index before every present one (DP-1 is a real index, not absent): a total order,
    so the rows come out the same in every run."""
    return tuple((0, 0) if x is None else (1, x) for x in key)


def diff_launches(a: Launch, b: Launch, margin_gb: float = 2.0) -> Diff:
    ea, eb = explain_launch(a, margin_gb), explain_launch(b, margin_gb)
    ba, bb = ea.budget, eb.budget
    rows_a, rows_b = _rank_rows(ba), _rank_rows(bb)
    ranks: list[dict[str, Any]] = []
    for key in sorted(set(rows_a) | set(rows_b), key=_rank_order):
        ra, rb = rows_a.get(key, {}), rows_b.get(key, {})
        ranks.append({"rank": (ra or rb).get("rank"), **{f: _delta(ra.get(f), rb.get(f)) for f in RANK_FIELDS}})
    budget = {f: _delta(getattr(ba, f), getattr(bb, f)) for f in BUDGET_FIELDS}
    _within_rounding(budget, ba, bb)
    if not tokens_comparable(a, b):  # vLLM 0.20.1+ counts requests × max_model_len, not slots
        figures: list[dict[str, Any]] = [budget["kv_tokens"], *(row["kv_tokens"] for row in ranks)]
        for fig in figures:
            fig.update(delta=None, pct=None, not_comparable=True)
    budget["hicache_host_gb"] = {**_delta(a.hicache_host_gb, b.hicache_host_gb), "unit": "decimal GB (host memory)"}
    rta, rtb = a.runtime or {}, b.runtime or {}
    runtime = {
        k: _delta(rta.get(k), rtb.get(k))
        for k in ("peak_token_usage", "peak_tokens", "peak_running_req", "peak_queue_req", "retractions", "batch_lines")
    }
    da, db_ = durations(a, ba), durations(b, bb)
    rep = Diff(
        a=_who(a),
        b=_who(b),
        server_args=args_diff(a, b),
        version={
            "engine": a.engine if a.engine == b.engine else f"{a.engine}/{b.engine}",
            "a": a.engine_version_range or a.sglang_version_range,
            "b": b.engine_version_range or b.sglang_version_range,
            "changed": (a.version_range or ()) != (b.version_range or ()),
            "engines_differ": engines_differ(a, b),
            "era_a": ba.era_label,
            "era_b": bb.era_label,
        },
        budget=budget,
        ranks=ranks,
        runtime=runtime,
        durations={k: _delta(da.get(k), db_.get(k)) for k in sorted(set(da) | set(db_))},
        attribution=attribute(a, b, ba, bb),
        hicache={
            side: {
                "enabled": bool(x.enable_hierarchical_cache),
                "host_gb": x.hicache_host_gb,
                "host_tokens": e.hicache.get("predicted_host_tokens"),
            }
            for side, x, e in (("a", a, ea), ("b", b, eb))
        },
        explain_a=_brief(ea),
        explain_b=_brief(eb),
        engines=compare_engines(a, b, ba, bb),
    )
    rep.identical = _identical(a, b, rep)
    rep.summary = _summary(rep.to_dict())
    return rep


#: What ``explain_a`` / ``explain_b`` keep of each side's explanation: the compared budget figures and a few more.
_BRIEF = (
    "era",
    "era_label",
    *BUDGET_FIELDS,
    "predicted_kv_gb",
    "capped_by_max_total_tokens",
    "memory_kind",
    "binding_rank",
)


def _brief(e) -> dict[str, Any]:
    d = e.budget.to_dict()
    out = {k: d.get(k) for k in _BRIEF}
    out["waterfall"] = e.waterfall
    return out


def _identical(a: Launch, b: Launch, rep: Diff) -> bool:
    if a.launch_id and a.launch_id == b.launch_id and a.source == b.source:
        return True
    args = rep.server_args
    if args["changed"] or args["added"] or args["removed"] or rep.version["changed"]:
        return False
    if a.outcome != b.outcome:
        return False
    return all(row[f]["a"] == row[f]["b"] for row in rep.ranks for f in RANK_FIELDS)


def _brief_value(v: Any, limit: int = 40) -> str:
    """A value as ``history`` prints it (:func:`logparse.launches.args.value_text`), cut at ``limit``."""
    text = value_text(v)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def change_text(arg: str, a: Any, b: Any) -> str:
    """One argument's change in ``history``'s words: ``enable_hierarchical_cache: false -> true``."""
    return f"{arg}: {_brief_value(a)} -> {_brief_value(b)}"


def _engine_label(version: dict[str, Any]) -> str:
    """The engine of the diff as a person names it (``SGLang``; two engines: ``SGLang/vLLM``)."""
    return "/".join(engines.label(e) for e in str(version.get("engine") or "").split("/"))


def _args_name(name: str | None) -> str:
    """What the engine calls its launch arguments (``ServerArgs``)."""
    engine = engines.find(name)
    return (engine or engines.Engine).args_name


def _summary(rep: dict[str, Any]) -> list[str]:
    if rep["identical"]:
        name = _engine_label(rep["version"])
        return [f"identical launches: same arguments, same {name} version range, same memory figures and KV pool"]
    if rep.get("engines"):
        return _engines_summary(rep["engines"]) + _headroom_summary(rep)
    return _args_summary(rep) + _version_summary(rep["version"]) + _pool_summary(rep) + _headroom_summary(rep)


def _engines_summary(eng: dict[str, Any]) -> list[str]:
    a, b = eng["a"], eng["b"]
    head = (
        f"two engines: A is {a['name']} {a['release']}, B is {b['name']} {b['release']}; their arguments are "
        "different sets, so what compares is how each sizes its KV pool"
    )
    return [head, *eng["why"]]


def _settings_text(settings: dict[str, Any]) -> str:
    return ", ".join(f"{k}={_brief_value(v)}" for k, v in settings.items())


def _args_summary(rep: dict[str, Any]) -> list[str]:
    """The changed arguments by kind, each once; a feature switched on carries the settings it brings."""
    s = []
    args = rep["server_args"]
    features = {f["flag"]: f for f in args.get("enabled_features", [])}
    for kind, title in (
        ("set", "arguments changed"),
        ("default_moved", "release defaults moved (the value is each release's default)"),
        ("derived", "derived by SGLang (the default is computed at start)"),
    ):
        items = [c for c in args["changed"] if c.get("kind", "set") == kind]
        if items:
            texts = []
            for c in items[:12]:
                feat = features.pop(c["arg"], None)
                extra = f" (now in effect: {_settings_text(feat['settings'])})" if feat and feat["settings"] else ""
                texts.append(change_text(c["arg"], c["a"], c["b"]) + extra)
            more = f" (+{len(items) - 12} more)" if len(items) > 12 else ""
            s.append(f"{title}: " + "; ".join(texts) + more)
    for feat in features.values():  # switched on by a field only B's release prints
        with_ = f", with {_settings_text(feat['settings'])}" if feat["settings"] else ""
        s.append(f"{feat['flag']}: {_brief_value(feat['value'])}{with_}")
    if args["added_removed_by_version"]:
        s.append(
            f"+{len(args['added'])} / −{len(args['removed'])} "
            + _args_name(rep["version"]["engine"])
            + " fields from the "
            f"{rep['version']['a']} -> {rep['version']['b']} release change"
        )
    else:
        if args["added"]:
            s.append("arguments added: " + "; ".join(f"{c['arg']}: {_brief_value(c['b'])}" for c in args["added"][:12]))
        if args["removed"]:
            s.append("arguments removed: " + ", ".join(c["arg"] for c in args["removed"][:12]))
    return s


def _version_summary(v: dict[str, Any]) -> list[str]:
    engine = _engine_label(v)
    if not v["changed"]:
        return [f"{engine} version unchanged: {v['a']}"]
    eras = f" ({v['era_a']} -> {v['era_b']})" if v["era_a"] != v["era_b"] else ""
    return [f"{engine} version: {v['a']} -> {v['b']}{eras}"]


def _host_pool(x: dict[str, Any]) -> str:
    if not x["enabled"] and x["host_gb"] is None:
        return "off"
    t = f", {x['host_tokens']:,} tokens" if x.get("host_tokens") else ""
    return (f"{x['host_gb']:.2f} GB" if x["host_gb"] is not None else "on (size not logged)") + t


def _pool_summary(rep: dict[str, Any]) -> list[str]:
    s = []
    kv = rep["budget"]["kv_tokens"]
    att = rep.get("attribution") or {}
    if "delta_pool_gb" in att and att.get("delta_tokens") is None:
        # vLLM token counts of two definitions (0.20.1): the pool in GiB is what compares
        pool = rep["budget"]["kv_pool_gb"]
        s.append(
            f"KV pool: {pool['a']:.2f} -> {pool['b']:.2f} GiB ({att['delta_pool_gb']:+.2f}); token counts not comparable"
        )
    elif kv["a"] is not None and kv["b"] is not None:
        if kv["delta"]:
            s.append(f"KV pool: {kv['a']:,} -> {kv['b']:,} tokens ({kv['delta']:+,}, {kv['pct']:+.2f}%)")
        else:
            s.append(f"KV pool unchanged: {kv['a']:,} tokens")
    hc = rep["hicache"]
    if hc["a"]["enabled"] != hc["b"]["enabled"] or hc["a"]["host_gb"] != hc["b"]["host_gb"]:
        s.append(
            f"HiCache host pool per rank: {_host_pool(hc['a'])} -> {_host_pool(hc['b'])} "
            "(decimal GB of host memory, beside the GPU pool, not part of it)"
        )
    return s


def _headroom_summary(rep: dict[str, Any]) -> list[str]:
    h = rep["budget"]["headroom_gb"]
    if h["a"] is not None and h["b"] is not None and h["delta"]:
        return [f"headroom left: {h['a']:.2f} -> {h['b']:.2f} GiB ({h['delta']:+.2f})"]
    return []
