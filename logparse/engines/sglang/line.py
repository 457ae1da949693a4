"""The line grammar: one SGLang line to one event.

``grammars/sglang/line.lark`` reads the line prefix (timestamp, rank tags) and the message;
:class:`LineTransformer` turns the tree into ``(prefix, gpu_tag, (kind, fields, form))``.
The ``server_args=`` payload is kept as text here and read by :mod:`logparse.grammar.pyliteral`.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import LarkError, VisitError

from logparse.grammar.bounds import ForeignDigits, ascii_number, has_foreign_digits, read_number
from logparse.grammar.lalr import build_parser, first_line_of
from logparse.grammar.pyliteral import MAX_DEPTH


class LineParseError(ValueError):
    """The line mentions something we track but does not fit any known variant."""


@lru_cache(maxsize=1)
def line_parser() -> Lark:
    return build_parser("sglang/line", propagate_positions=False)


# --------------------------------------------------------------------------- helpers


#: A bracket item shaped like a rank tag with any script's digits (``\\d``): with ASCII ones it is a TAG.
_TAG_LIKE = re.compile(r"(?:DP|PP|ATTN_CP|MOE_DP|TP|EP)-?\d+")


class GiB(float):
    """A device-memory figure as SGLang prints it ("GB" = GiB)."""


class Seconds(float):
    pass


def _first_int(text: str) -> int:
    """The first run of digits in a token the grammar matched with one (0 if, against the grammar, none)."""
    m = re.search(r"\d+", text)
    return int(ascii_number(m.group())) if m else 0


def _num(tok: Any) -> int | float:
    """A number token as int or float: ASCII digits only (:func:`logparse.grammar.bounds.ascii_number`)."""
    return ascii_number(str(tok))


def _float(tok: Any) -> float:
    """A number token as a float (an int too large for one is ``inf``: out of every bound)."""
    v = _num(tok)
    try:
        return float(v)
    except OverflowError:
        return math.inf if v > 0 else -math.inf


def _int(tok: Any) -> int | float:
    """A number token as an int (a fraction dropped); ``inf`` and ``nan`` stay as they are, for the
    bounds to set aside (:mod:`logparse.grammar.bounds`)."""
    v = _num(tok)
    return int(v) if isinstance(v, float) and math.isfinite(v) else v


def field_name(value: str) -> str:
    """``#running-req`` -> ``running_req``; ``gen throughput (token/s)`` -> ``gen_throughput``."""
    value = re.sub(r"\s*\([^)]*\)", "", value)
    return value.strip().lower().replace(".", "").replace("/", "_").replace(" ", "_").replace("#", "").replace("-", "_")


_GRAPH_DEVICES = {"cuda": "cuda", "cpu": "cpu", "npu": "npu", "xpu": "xpu", "musa": "musa", "hpu": "hpu"}


def _graph_name_fields(name: str) -> dict[str, Any]:
    """Split a capture name ("draft extend cuda graph", "target decode CUDA graph") into parts."""
    words = name.split()
    low = [w.lower() for w in words]
    device = None
    for w in low:
        if w in _GRAPH_DEVICES:
            device = _GRAPH_DEVICES[w]
    worker = "draft" if "draft" in low else "target"
    phase = None
    for candidate in ("verify", "extend", "prefill", "decode", "piecewise", "tree"):
        if candidate in low:
            phase = candidate
            break
    return {"name": name, "device": device, "worker": worker, "phase": phase or "decode"}


# --------------------------------------------------------------------------- the line transformer


@v_args(inline=False)
class LineTransformer(Transformer):
    """Tree of one line -> ``(prefix_info, kind, fields, form)``."""

    # ---- shared pieces
    def gb(self, c):
        return GiB(_float(c[0]))

    def secs(self, c):
        return Seconds(_float(c[0]))

    def int_list(self, c):
        return [_num(t) for t in c]

    def kvpair(self, c):
        key = str(c[0]).strip()
        raw = str(c[1]).strip()
        value: Any = raw
        if raw in ("True", "False"):
            value = raw == "True"
        else:
            m = re.fullmatch(r"(-?[\d.]+(?:[eE][+-]?\d+)?)(?: GB)?", raw)
            if m:
                value = _num(m.group(1)) if read_number(m.group(1)) is not None or has_foreign_digits(raw) else raw
        return (key, value)

    def kvlist(self, c):
        return dict(c)

    # ---- prefix
    def bracket_prefix(self, c):
        info: dict[str, Any] = {"stamp": None, "tags": []}
        for item in c:
            if isinstance(item, Token) and item.type == "STAMP":
                info["stamp"] = str(item)
            elif isinstance(item, tuple) and item[0] == "tag":
                info["tags"].append(item[1])
            elif isinstance(item, tuple) and item[0] == "word":
                info.setdefault("words", []).append(item[1])
            elif isinstance(item, dict):
                info.update(item)
        return ("prefix", info)

    def tag(self, c):
        return ("tag", str(c[0]))

    def bracket_word(self, c):
        word = str(c[0])
        if _TAG_LIKE.fullmatch(word):  # TP１: a rank tag in another script's digits is no rank
            raise ForeignDigits(word)
        return ("word", word)

    def level_loc(self, c):
        return {"level": str(c[0]).strip(), "pyloc": str(c[1])}

    def rank_prefix(self, c):
        return ("prefix", {"stamp": None, "tags": [f"TP{_num(c[0])}"], "old_rank": True})

    def gpu_tag(self, c):
        return ("gpu", _int(c[0]))

    def start(self, c):
        prefix: dict[str, Any] = {}
        gpu = None
        body = None
        for item in c:
            if isinstance(item, tuple) and item and item[0] == "prefix":
                prefix = item[1]
            elif isinstance(item, tuple) and item and item[0] == "gpu":
                gpu = item[1]
            else:
                body = item
        return prefix, gpu, body

    # ---- message builders: each returns (kind, fields, form)
    def server_args(self, c):
        return ("server_args", {"payload": str(c[0])}, None)

    def init_nccl_begin(self, c):
        return ("init_begin", {}, "nccl")

    def init_dist_begin(self, c):
        return ("init_begin", {}, "torch_distributed")

    def init_dist_end(self, c):
        f = {}
        for v in c:
            if isinstance(v, Seconds):
                f["elapsed_s"] = float(v)
            elif isinstance(v, GiB):
                f["mem_usage_gb"] = float(v)
        return ("init_end", f, "torch_distributed")

    def init_parallel_begin(self, c):
        return ("init_begin", {}, "parallel")

    def init_parallel_end(self, c):
        return ("init_end", {"elapsed_s": float(c[0])}, "parallel")

    def memory_baseline(self, c):
        return ("memory_baseline", {"mem_usage_gb": float(c[0])}, None)

    def comm_warmup(self, c):
        f = {"seconds": _float(c[1])}
        f.update(c[2])
        return ("comm_warmup", f, str(c[0]))

    def lm_head_warmup(self, c):
        f = {"seconds": _float(c[0])}
        f.update(c[1])
        return ("comm_warmup", f, "lm_head")

    def unbalance_detail(self, c):
        return c[0]

    def unbalanced(self, c):
        return ("memory_unbalanced", dict(c[0]) if c else {}, None)

    def load_begin(self, c):
        return ("load_begin", {"avail_gb": float(c[0])}, None)

    def quant_item(self, c):
        return ("quant", str(c[0]), str(c[1]).strip())

    def load_fields(self, c):
        f: dict[str, Any] = {}
        gibs = []
        quant: dict[str, str] = {}
        for v in c:
            if isinstance(v, Seconds):
                f["elapsed_s"] = float(v)
            elif isinstance(v, GiB):
                gibs.append(float(v))
            elif isinstance(v, tuple) and v[0] == "quant":
                quant[v[1]] = v[2]
            elif isinstance(v, Token):
                if v.type == "MODEL_TYPE":
                    f["model_type"] = str(v)
                elif v.type == "DTYPE":
                    f["dtype"] = str(v)
        f["avail_gb"] = gibs[0]
        if len(gibs) > 1:
            f["mem_usage_gb"] = gibs[1]
        if quant:
            f["quant"] = quant
        return f

    def load_end(self, c):
        return ("load_end", c[0], None)

    def load_end_overlap(self, c):
        return (
            "load_end",
            {"commit_s": float(c[0]), "overlap_window_s": float(c[1]), "overlap_total_s": float(c[2])},
            "overlap",
        )

    def kv_dtype(self, c):
        return ("kv_dtype", {"dtype": str(c[0])}, None)

    def kv_scales_loaded(self, c):
        return ("kv_scales", {"path": str(c[0])}, "loaded")

    def kv_fp8_no_scales(self, c):
        return ("kv_scales", {}, "default_1.0")

    def kv_sizes_kv(self, c):
        return {"k_gb": float(c[0]), "v_gb": float(c[1])}

    def kv_sizes_mla(self, c):
        return {"kv_gb": float(c[0])}

    def kv_body(self, c):
        f: dict[str, Any] = {}
        for v in c:
            if isinstance(v, dict):
                f.update(v)
            elif isinstance(v, Token):
                if v.type == "DTYPE":
                    f["dtype"] = str(v)
                elif v.type == "NUMBER":
                    f["tokens"] = _int(v)
        return f

    def _kv(self, c, form):
        f: dict[str, Any] = {}
        for v in c:
            if isinstance(v, Token) and v.type == "KV_LABEL":
                f["label"] = str(v).strip()
            elif isinstance(v, dict):
                f.update(v)
        return ("kv_alloc", f, form)

    def kv_alloc(self, c):
        return self._kv(c, None)

    def kv_alloc_va(self, c):
        return self._kv(c, "va_upper_bound")

    def kv_noop(self, c):
        return ("kv_alloc", {"tokens": _int(c[0]), "placeholder_kb": _float(c[1])}, "noop")

    def kv_post_capture(self, c):
        return (
            "kv_alloc",
            {"dtype": str(c[0]), "tokens": _int(c[1]), "kv_gb": float(c[2]), "avail_gb": float(c[3])},
            "post_capture",
        )

    def kv_post_capture_draft(self, c):
        return (
            "kv_alloc",
            {"dtype": str(c[0]), "tokens": _int(c[1]), "kv_gb": float(c[2]), "worker": "draft"},
            "post_capture_draft",
        )

    def kv_post_capture_free(self, c):
        return ("kv_post_capture_info", {"max_total_num_tokens": _int(c[0]), "free_gb": float(c[1])}, "free")

    def kv_post_capture_swa(self, c):
        return ("kv_post_capture_info", {"full_tokens": _int(c[0]), "swa_tokens": _int(c[1])}, "swa")

    def kv_post_capture_reqs(self, c):
        return (
            "kv_post_capture_info",
            {"max_running_requests_from": _int(c[0]), "max_running_requests_to": _int(c[1])},
            "reqs",
        )

    def kv_post_capture_headroom(self, c):
        return (
            "kv_post_capture_info",
            {"decode_max_bs": _int(c[0]), "max_running_requests": _int(c[1])},
            "headroom",
        )

    def kv_post_capture_canary(self, c):
        return ("kv_post_capture_info", {"canary_workspace_gb": float(c[0])}, "canary")

    def mamba_extra(self, c):
        nums = [_float(t) for t in c if isinstance(t, Token) and t.type == "NUMBER"]
        return {"intermediate_ssm_gb": nums[0], "intermediate_conv_gb": nums[1]}

    def mamba_alloc(self, c):
        nums = [t for t in c if isinstance(t, Token) and t.type == "NUMBER"]
        f: dict[str, Any] = {}
        if len(nums) == 3:
            f["max_mamba_cache_size"] = _int(nums[0])
            nums = nums[1:]
        f["conv_gb"] = _float(nums[0])
        f["ssm_gb"] = _float(nums[1])
        for v in c:
            if isinstance(v, dict):
                f.update(v)
        return ("mamba_alloc", f, None)

    def swa_tokens(self, c):
        form = "capital" if str(c[0]).startswith("Use Sliding") else None
        return ("swa_tokens", {"full_tokens": _int(c[1]), "swa_tokens": _int(c[2])}, form)

    def swa_tokens_all(self, c):
        return ("swa_tokens", {"swa_tokens": _int(c[0])}, "all_swa")

    def swakv_pool(self, c):
        return (
            "swakv_pool",
            {"mem_gb": _float(c[1]), "swa_size": _int(c[2]), "full_size": _int(c[3])},
            "va" if str(c[0]).startswith("VA") else None,
        )

    def dsv4_memory(self, c):
        return ("dsv4_memory", dict(c[0]), None)

    def dsv4_pools(self, c):
        names = ("full", "swa", "c4", "c128", "c4_state", "c128_state")
        return ("dsv4_pools", {n: _int(t) for n, t in zip(names, c)}, None)

    def dsv4_swa_cap(self, c):
        f = {"mode": "cap", "swa_tokens": _int(c[0]), "request_cap_headroom": _int(c[1]), "prefix_tails": _int(c[2])}
        return ("dsv4_swa_sizing", f, "cap")

    def dsv4_swa_ratio(self, c):
        f = {"mode": str(c[0]), "swa_tokens": _int(c[1]), "swa_full_tokens_ratio": _float(c[2])}
        return ("dsv4_swa_sizing", f, "ratio")

    def mm_reservation(self, c):
        return ("mm_reservation", {"reserved_gb": _float(c[0])}, None)

    def max_running_capped(self, c):
        f = {"max_running_requests": _int(c[0]), "max_mamba_cache_size": _int(c[1]), "slots_per_request": _int(c[2])}
        return ("max_running_capped", f, "mamba")

    def max_running_reduced(self, c):
        form = "kv" if str(c[2]) == "KV cache" else "kv_or_aux"  # the second: the MLX backend's wording
        return ("max_running_capped", {"requested": _int(c[0]), "max_running_requests": _int(c[1])}, form)

    def pool_end(self, c):
        return ("pool_end", {"avail_gb": float(c[0])}, None)

    def max_total_tokens_capped(self, c):
        return ("max_total_tokens_capped", {"user_limit": _int(c[0]), "profiled": _int(c[1])}, None)

    # ---- graphs
    def g_backend(self, c):
        return ("backend", str(c[0]))

    def g_tokens_per_req(self, c):
        return ("num_tokens_per_req", _int(c[0]))

    def g_num_tokens(self, c):
        return ("num_tokens", c[0])

    def g_bs(self, c):
        return ("bs", c[0])

    def g_step(self, c):
        return ("step", _int(c[0]))

    def g_elapsed(self, c):
        return ("elapsed_s", float(c[0]))

    def g_usage(self, c):
        return ("mem_usage_gb", float(c[0]))

    def g_avail(self, c):
        return ("avail_gb", float(c[0]))

    def gitems(self, c):
        return dict(c)

    def time_items(self, c):
        items = [v for v in c if isinstance(v, tuple)]
        # The order of "avail mem" and "mem usage" changed between releases: keep it as the form.
        return ("form", "te:" + ",".join("avail" if k == "avail_gb" else "usage" for k, _ in items)), dict(items)

    def graph_begin_tail(self, c):
        f: dict[str, Any] = {}
        form = "kv"
        for v in c:
            if isinstance(v, GiB):
                f["avail_gb"] = float(v)
            elif isinstance(v, dict):
                f.update(v)
        if not any(isinstance(v, dict) for v in c):
            form = "minutes"  # "This can take (up to) several minutes."
        return ("form", form), f

    def graph_end_tail(self, c):
        f: dict[str, Any] = {}
        form = "kv"
        for v in c:
            if isinstance(v, Seconds):
                f["elapsed_s"] = float(v)
                form = "te"
            elif isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], tuple):
                form = v[0][1]
                f.update(v[1])
            elif isinstance(v, dict):
                f.update(v)
        return ("form", form), f

    def _graph(self, c, kind):
        f: dict[str, Any] = {}
        form = None
        for v in c:
            if isinstance(v, Token) and v.type == "GRAPH_NAME":
                f.update(_graph_name_fields(str(v)))
            elif isinstance(v, Token) and v.type == "STEP_PAREN":
                f["step"] = _first_int(str(v))
            elif isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], tuple) and v[0][0] == "form":
                form = v[0][1]
                f.update(v[1])
            elif isinstance(v, dict):
                f.update(v)
        return (kind, f, form)

    def graph_begin(self, c):
        return self._graph(c, "graph_begin")

    def graph_end(self, c):
        return self._graph(c, "graph_end")

    def graph_bs(self, c):
        f = _graph_name_fields(str(c[0]))
        f["bs"] = c[1]
        return ("graph_bs", f, None)

    # ---- summary
    def summary_item(self, c):
        key = str(c[0])
        val = c[1]
        if isinstance(val, Token):
            val = None if str(val) == "None" else _num(val)
        elif isinstance(val, GiB):
            val = float(val)
        return (key, val)

    def summary(self, c):
        f: dict[str, Any] = {"max_total_num_tokens": _int(c[0])}
        for item in c[1:]:
            if isinstance(item, Token):  # BATCH_TRAIL: 0.1.17 ends the line with ", "
                continue
            key, val = item
            if key in ("available_gpu_mem", "available_cpu_mem"):
                f["available_mem_gb"] = val
                f["available_mem_kind"] = key.split("_")[1]
            else:
                f[key] = val
        return ("summary", f, None)

    # ---- hicache (decimal GB)
    def hicache_alloc(self, c):
        return ("hicache_alloc", {"host_gb": _float(c[0]), "label": "kv"}, None)

    def hicache_alloc_other(self, c):
        what = str(c[1])
        label = "mamba" if "Mamba" in what else "other"
        return ("hicache_alloc", {"host_gb": _float(c[0]), "label": label, "what": what}, "other")

    def packed_layers(self, c):
        return c[0]

    def hicache_pool(self, c):
        f = {"label": str(c[0]), "tokens": _int(c[1]), "host_gb": _float(c[2])}
        if len(c) > 3:
            f["packed"] = c[3]
        return ("hicache_alloc", f, "pool")

    def hicache_not_enough(self, c):
        return ("hicache_not_enough", {"requested_gb": _float(c[0]), "available_gb": _float(c[1])}, None)

    def hicache_not_enough_other(self, c):
        return ("hicache_not_enough", {"text": str(c[0])}, "other")

    # ---- runtime
    def b_item(self, c):
        return (str(c[0]).strip(), str(c[1]).strip())

    def b_sub(self, c):
        k, _, v = str(c[0]).partition("=")
        return (k, v)

    def bitems(self, c):
        return [v for v in c if isinstance(v, tuple)]

    def _batch(self, kind, c):
        f: dict[str, Any] = {}
        form_bits = []
        last_key = None
        for v in c:
            if isinstance(v, Token):
                if v.type == "BATCH_ITER":
                    f["iteration"] = _num(str(v).strip()[1:-1])
                elif v.type == "BATCH_SEP":
                    form_bits.append("dot" if str(v).startswith(".") else "comma")
                elif v.type == "MIXED":
                    f["mixed_running_req"] = _first_int(str(v))
                elif v.type == "RETRACT_HEAD":
                    form_bits.append("kv_full" if "KV cache pool" in str(v) else "decode_oom")
            elif isinstance(v, list):
                for key, raw in v:
                    if "=" not in key and raw.startswith(("full=", "swa=")):
                        # 0.4.9 SWA allocator: "#token: full=N, swa=M"
                        sub, _, num = raw.partition("=")
                        f[f"{field_name(key)}_{sub}"] = batch_value(num)
                        last_key = field_name(key)
                    elif key in ("full", "swa") and last_key:
                        f[f"{last_key}_{key}"] = batch_value(raw)
                    else:
                        last_key = field_name(key)
                        f[last_key] = batch_value(raw)
        return (kind, f, "_".join(form_bits) or None)

    def decode_batch(self, c):
        return self._batch("decode_batch", c)

    def prefill_batch(self, c):
        return self._batch("prefill_batch", c)

    def decode_batch_v01(self, c):
        # 0.1.3-0.1.16: "#running-req: 1, #token: 25, token usage: 0.00, #queue-req: 0"
        kind, f, _ = self._batch("decode_batch", [[("#running-req", str(c[0]))], c[1]])
        return (kind, f, "v01")

    def prefill_batch_v01(self, c):
        # 0.1.3-0.1.16: "new fill batch. #seq: 1. #cached_token: 0. ... #running_req: 0[. tree_cache_hit_rate: 0.00%.]"
        f: dict[str, Any] = {}
        for part in str(c[0]).rstrip(".").split(". "):
            key, sep, value = part.partition(": ")
            if sep:
                f[field_name(key)] = batch_value(value)
        return ("prefill_batch", f, "v01")

    def retract(self, c):
        kind, f, form = self._batch("retract", c)
        ratio = f.pop("new_token_ratio", None)
        if isinstance(ratio, str) and "->" in ratio:
            a, _, b = ratio.partition("->")
            f["new_token_ratio_from"] = batch_value(a.strip())
            f["new_token_ratio_to"] = batch_value(b.strip())
        return (kind, f, form)

    def retract_abort(self, c):
        return ("retract", {"aborted": str(c[0])}, "abort")

    def retract_failed(self, c):
        return ("retract", {}, "failed")

    def decode_oom(self, c):
        return ("retract", {}, "decode_oom_error")

    # ---- failures
    def mem_frac_value(self, c):
        return _float(c[1])

    def not_enough_memory(self, c):
        f: dict[str, Any] = {"error": "Not enough memory. Please try to increase --mem-fraction-static."}
        form = "plain"
        for v in c:
            if isinstance(v, float):
                f["mem_fraction_static"] = v
                form = "with_value"
        return ("failure", f, f"not_enough_memory:{form}")

    def weights_no_memory(self, c):
        return (
            "failure",
            {
                "mem_fraction_static": _float(c[0]),
                "suggested_mem_fraction_static": _float(c[1]),
                "minimum_mem_fraction_static": _float(c[2]),
            },
            "weights_no_memory",
        )

    def cuda_oom(self, c):
        return ("failure", {"detail": str(c[0]) if c else ""}, "cuda_oom")

    def capture_failed(self, c):
        return ("failure", {"detail": str(c[1]) if len(c) > 1 else ""}, "capture_failed")

    def not_enought_memory(self, c):
        # 0.1.6-0.1.17 spelled it "enought"
        return (
            "failure",
            {"error": "Not enought memory. Please try to increase --mem-fraction-static."},
            "not_enough_memory:typo",
        )

    def exception_in(self, c):
        # 0.1.x-0.3.2: "Exception in ModelTpServer:" etc., the traceback on the following lines
        # (the component is in the form: each wording has its own release range)
        return ("exception_start", {"component": str(c[0])}, f"exception_in:{c[0]}")

    def component_exception(self, c):
        return ("exception_start", {"component": str(c[0])}, None)

    def traceback_start(self, c):
        return ("exception_start", {"component": None}, "bare")

    def exception_known(self, c):
        exc = str(c[0])
        inner = c[1]
        if isinstance(inner, tuple) and len(inner) == 3:
            kind, f, form = inner
            f = dict(f)
            f["exception"] = exc
            return (kind, f, form)
        return ("exception", {"exception": exc}, None)

    def exception(self, c):
        return ("exception", {"exception": str(c[0]), "detail": str(c[1])}, None)

    def sigquit(self, c):
        return ("child_failed", {}, "sigquit")

    def scheduler_dead(self, c):
        return ("child_failed", {"rank": _int(c[0])}, "scheduler_dead")

    def scheduler_died(self, c):
        return ("child_failed", {"rank": _int(c[0]), "exit_code": _int(c[1])}, "scheduler_died")

    def subprocess_crashed(self, c):
        return (
            "child_failed",
            {"name": str(c[0]), "pid": _int(c[1]), "exit_code": _int(c[2])},
            "subprocess_crashed",
        )

    def child_failed(self, c):
        return ("child_failed", {"detail": str(c[0])}, "child_exit")

    def init_failed(self, c):
        return ("failure", {"detail": str(c[0])}, "init_failed")

    def mamba_no_memory(self, c):
        return ("failure", {"detail": str(c[0])}, "mamba_no_memory")

    def killed(self, c):
        return ("killed", {}, None)

    # ---- 0.1.x
    def load_begin_lower(self, c):
        return ("load_begin", {}, "lower")

    def load_end_lower(self, c):
        return ("load_end", {}, "lower")

    def load_begin_v01_paste(self, c):
        return ("load_begin", {}, "v01_paste")

    def load_end_v01_paste(self, c):
        return ("load_end", {}, "v01_paste")

    def summary_v01_paste(self, c):
        kind, f, _ = self.summary_v01(c)
        return (kind, f, "v01_paste")

    def quant_config(self, c):
        return ("startup_info", {"quant_config": str(c[1]).strip()}, "quant_config")

    def summary_v01(self, c):
        f: dict[str, Any] = {
            "max_total_num_tokens": _num(c[0]),
            "max_prefill_tokens": _num(c[1]),
            "context_len": _num(c[2]),
        }
        for item in c[3:]:
            if isinstance(item, dict):
                f.update(item)
        return ("summary", f, "v01")

    def v01_tail(self, c):
        tok = c[0]
        if isinstance(tok, Token) and tok.type == "MODE_LIST":
            inner = str(tok)[1:-1].strip()
            return {"model_mode": [m.strip().strip("'\"") for m in inner.split(",") if m.strip()]}
        return {}

    def set_device(self, c):
        return ("startup_info", {}, "set_device")

    def mode_args(self, c):
        return ("startup_info", next((x for x in c if isinstance(x, dict)), {}), "mode_args")

    def mode_args_v013(self, c):
        f = {"disable_radix_cache": str(c[0]) == "True", "enable_flashinfer": str(c[1]) == "True"}
        f.update(next((x for x in c if isinstance(x, dict)), {}))
        return ("startup_info", f, "optional_modes")

    def init_state(self, c):
        process = str(c[0]).split()[0]
        state = str(c[1]).strip()
        if state == "init ok":
            return ("startup_info", {"process": process}, "init_state")
        # 0.1.3-0.1.14 print a failed process's traceback after it
        return ("exception_start", {"component": process}, "init_state")

    # ---- main process
    def ready(self, c):
        return ("ready", {}, None)

    def uvicorn_started(self, c):
        return ("started", {"pid": _int(c[0])})

    def uvicorn_running(self, c):
        return ("running", {"url": str(c[0])})

    def uvicorn_startup_complete(self, c):
        return ("startup_complete", {})

    def uvicorn_other(self, c):
        return ("other", {"text": str(c[0])})

    def uvicorn_traceback(self, c):
        return ("traceback", {})

    def uvicorn(self, c):
        level = str(c[0]).strip().rstrip(":")
        form, f = c[1]
        if form == "traceback":  # uvicorn's own "ERROR:    Traceback ...": a multi-line record follows
            return ("exception_start", {"component": "uvicorn"}, "uvicorn")
        f = dict(f)
        f["level"] = level
        return ("uvicorn", f, form)

    def startup_timings(self, c):
        return ("startup_timings", _parse_timings(str(c[0])), None)

    def launch_dp(self, c):
        return ("launch_dp", {"dp_rank": _int(c[0]), "gpu": _int(c[1])}, None)

    def draft_load_format(self, c):
        return ("draft_load_format", {"load_format": str(c[0]).strip("'")}, None)


def batch_value(raw: str) -> Any:
    """A value of a batch-statistics line: ``True``/``False``, a number (``0.42%`` -> ``0.42``), else the text."""
    raw = raw.strip()
    if raw in ("True", "False"):
        return raw == "True"
    value = read_number(raw[:-1] if raw.endswith("%") else raw)
    if value is None and has_foreign_digits(raw):
        raise ForeignDigits(raw)  # the line is a near miss, not a number read silently
    return raw if value is None else value


def _parse_timings(text: str) -> dict[str, Any]:
    """``load_weight=0.08, kv_cache_allocation=1.04, cuda_graph={prefill=0.00, decode=0.00}, ...``"""
    out: dict[str, Any] = {}
    key = ""
    buf = ""
    stack: list[tuple[str, dict]] = []
    cur = out
    for ch in text + ",":
        if ch == "{" and len(stack) < MAX_DEPTH:  # deeper: text (a walk of the fields stays shallow)
            stack.append((key, cur))
            new: dict[str, Any] = {}
            cur[key.strip()] = new
            cur = new
            key, buf = "", ""
        elif ch == "}" and stack:
            if key.strip():
                cur[key.strip()] = batch_value(buf)
            _, cur = stack.pop()
            key, buf = "", ""
        elif ch == "=" and not key:
            key = buf
            buf = ""
        elif ch == ",":
            if key.strip():
                cur[key.strip()] = batch_value(buf)
            key, buf = "", ""
        else:
            buf += ch
    return out


_TRANSFORMER = LineTransformer()


def parse_line(text: str) -> tuple[dict[str, Any], int | None, tuple[str, dict[str, Any], str | None]]:
    """Parse one SGLang line.  Returns ``(prefix, gpu_tag, (kind, fields, form))``.

    Raises :class:`LineParseError` with a short reason when the line does not fit.
    """
    try:
        tree = line_parser().parse(text)
    except LarkError as exc:
        raise LineParseError(first_line_of(exc)) from None
    try:
        return _TRANSFORMER.transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, ValueError):  # a number the grammar matched that is none (ForeignDigits)
            raise LineParseError(str(exc.orig_exc)) from None
        raise LineParseError(f"transform failed: {first_line_of(exc)}") from None
    except LarkError as exc:  # a transformer bug surfaces as VisitError: report, never crash
        raise LineParseError(f"transform failed: {first_line_of(exc)}") from None
