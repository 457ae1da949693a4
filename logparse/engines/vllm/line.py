"""The vLLM line grammar: one vLLM line to one event.

``grammars/vllm/line.lark`` reads the layers in front of a message (process tags, torch's ``[rankN]:``,
vLLM's ``LEVEL MM-DD HH:MM:SS [file.py:N]``) and the message; :class:`VllmTransformer` turns the
tree into ``(prefix, None, (kind, fields, form))``, the shape :mod:`logparse.engines.sglang.line`
gives, with ``prefix["engine"] == "vllm"``.  Kinds are ``vllm_*``, except the few every engine
shares (``uvicorn``, ``exception``, ``exception_start``).  The ``form`` names the wording: each
wording has its own release range (:mod:`logparse.engines.vllm.variants`).

Units: every memory figure vLLM prints is GiB, even where its text says "GB" (catalogue §5); the
fields end in ``_gb`` and hold GiB.  Token counts are read with or without thousands separators.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import LarkError, VisitError

from logparse.engines.vllm.prefix import LOG_PREFIX_RE, PROC_TAG_RE, RANK_PREFIX_RE
from logparse.grammar.bounds import ForeignDigits, ascii_number
from logparse.grammar.lalr import build_parser, first_line_of

GiB = float(1 << 30)


class VllmLineParseError(ValueError):
    """The line mentions something we track but does not fit any known vLLM variant."""


@lru_cache(maxsize=1)
def line_parser() -> Lark:
    return build_parser("vllm/line", propagate_positions=False)


def _num(tok: Any) -> int | float:
    """A number token (thousands separators allowed) as int or float: ASCII digits only."""
    return ascii_number(str(tok).replace(",", ""))


def _f(tok: Any) -> float:
    """A number token as a float (an int too large for one is ``inf``: out of every bound)."""
    v = _num(tok)
    try:
        return float(v)
    except OverflowError:
        return math.inf if v > 0 else -math.inf


def _i(tok: Any) -> int | float:
    """A number token as an int (a fraction dropped); ``inf`` and ``nan`` stay, for the bounds."""
    v = _num(tok)
    return int(v) if isinstance(v, float) and math.isfinite(v) else v


def _match(rx: re.Pattern, text: str) -> re.Match:
    """The match of a prefix terminal's own pattern (the grammar matched it already; ValueError if not)."""
    m = rx.match(text)
    if m is None:
        raise ValueError(f"prefix {text!r} does not match {rx.pattern}")
    return m


def _decimals(tok: Any) -> int:
    """How many decimals a number was printed with (``61.30`` -> 2, ``61.3`` -> 1, ``61`` -> 0)."""
    text = str(tok)
    return len(text) - text.index(".") - 1 if "." in text else 0


def _toks(c: list, *types: str) -> list[Token]:
    return [t for t in c if isinstance(t, Token) and t.type in types]


# --------------------------------------------------------------------------- the engine config payload
def split_top_level(text: str) -> list[str]:
    """``a=1, b={'x': 1, 'y': 2}, c='p, q'`` -> ``["a=1", "b={'x': 1, 'y': 2}", "c='p, q'"]``."""
    out: list[str] = []
    depth, quote, start = 0, "", 0
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth <= 0:
            out.append(text[start:i].strip())
            start = i + 1
        i += 1
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


def _literal(v: str) -> Any:
    v = v.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        return v[1:-1]
    if v in ("True", "False"):
        return v == "True"
    if v == "None":
        return None
    try:
        return _num(v)
    except ValueError:
        return v


#: Keys of the engine config line kept as event fields (the rest stays in the line's text).
CONFIG_KEYS = (
    "model",
    "dtype",
    "max_seq_len",
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "data_parallel_size",
    "quantization",
    "enforce_eager",
    "kv_cache_dtype",
    "enable_prefix_caching",
    "served_model_name",
)


def config_fields(payload: str) -> dict[str, Any]:
    """The launch-relevant ``key=value`` pairs of ``Initializing … engine (vX) with config: …``."""
    text = payload.rstrip().rstrip(",")
    if text.endswith(")") and text.count("(") < text.count(")"):
        text = text[:-1]  # the explicit form of <= 0.6.4.post1 closes with ")"
    out: dict[str, Any] = {}
    for item in split_top_level(text):
        key, sep, value = item.partition("=")
        key = key.strip()
        if sep and key in CONFIG_KEYS and key not in out:
            out[key] = _literal(value)
    return out


def _engine_form(prefix: str, payload: str) -> tuple[str, str | None]:
    """The wording of the engine line and the engine it names (V0/V1; None: not said)."""
    if "V0 LLM engine" in prefix:
        return "v0", "V0"
    if "V1 LLM engine" in prefix:
        return "v1", "V1"
    tail = payload.rstrip()
    if "use_cached_outputs=" in tail[-40:]:
        return "an:cached", "V0"
    if tail.endswith(")"):
        return "an:explicit", "V0"
    return "an:v1", "V1"


_STATS_FIELDS = (
    ("running", re.compile(r"Running: (\d+) reqs")),
    ("waiting", re.compile(r"(?:Waiting|Pending): (\d+) reqs")),
    ("swapped", re.compile(r"Swapped: (\d+) reqs")),
    ("kv_usage_pct", re.compile(r"(?:GPU|[A-Z]+) KV cache usage: ([\d.]+)%")),
    ("prefix_hit_pct", re.compile(r"Prefix cache hit rate: ([\d.]+)%")),
    ("preemptions", re.compile(r"Preemptions: (\d+)")),
)
_RANK_ITEM = re.compile(r"\b([A-Z]+) rank (-?\d+)")
_ESTIMATED_LEN = re.compile(r"estimated maximum model length is (-?\d+)")
#: ``Route: /v1/models, Methods: GET, HEAD`` (0.5.4+; a set's repr in 0.5.2-0.5.3.post1) or ``…, Endpoint: name`` (0.16.0+).
_ROUTE_RE = re.compile(r"(?P<path>/\S*), (?P<what>Methods|Endpoint): (?P<value>.+)")
#: ``PIECEWISE=35 (largest=512)``: the graphs of one CUDA-graph mode that the memory profile captures.
_GRAPH_MODE_RE = re.compile(r"\b([A-Z_]+)=([0-9]+) \(largest=([0-9]+)\)")
_PROFILE_NUMBERS = re.compile(r"Initial free memory ([\d.e+-]+)(?: GiB)?, current free memory ([\d.e+-]+)")


# --------------------------------------------------------------------------- the line transformer
@v_args(inline=False)
class VllmTransformer(Transformer):
    """Tree of one line -> ``(prefix, None, (kind, fields, form))``."""

    # ---- the layers in front of the message
    def head(self, c):
        info: dict[str, Any] = {"engine": "vllm", "stamp": None, "procs": []}
        for tok in c:
            text = str(tok)
            if tok.type == "PROC_TAG":
                m = _match(PROC_TAG_RE, text)
                info["procs"].append((m.group("name"), int(m.group("pid")), m.group("ip")))
            elif tok.type == "RANK_PREFIX":
                info["rank"] = int(_match(RANK_PREFIX_RE, text).group("rank"))
            elif tok.type == "VLOG":
                m = _match(LOG_PREFIX_RE, text)
                info["stamp"], info["level"] = m.group("stamp"), m.group("level")
                info["loc"] = m.group("loc") or m.group("bare_loc")
                info["bracketed"] = m.group("loc") is not None
        return ("head", info)

    def start(self, c):
        prefix = c[0][1]
        body = c[1] if len(c) > 1 else ("vllm_blank", {}, None)
        return prefix, None, body

    # ---- version, arguments, engine (§2.1)
    def api_server_version(self, c):
        return ("vllm_version", {"version": str(c[0])}, "api_server")

    def server_version(self, c):
        return ("vllm_version", {"version": str(c[0]), "model": str(c[1]).strip()}, "server")

    def batch_version(self, c):
        return ("vllm_version", {"version": str(c[0])}, "batch")

    def grpc_version(self, c):
        return ("vllm_version", {"version": str(c[0])}, "grpc")

    def logo_version(self, c):
        return ("vllm_version", {"version": str(c[1])}, "logo")

    def logo_model(self, c):
        return ("vllm_logo_model", {"model": str(c[-1]).strip()}, None)

    def args_namespace(self, c):
        return ("vllm_args", {"payload": str(c[0])}, "namespace")

    def args_non_default(self, c):
        return ("vllm_args", {"payload": str(c[0])}, "non_default")

    def engine_init(self, c):
        payload = str(c[2])
        form, generation = _engine_form(str(c[0]), payload)
        f: dict[str, Any] = {"version": str(c[1]), "generation": generation}
        f.update(config_fields(payload))
        return ("vllm_engine_init", f, form)

    def engine_process(self, c):
        return ("vllm_engine_process", {"pid": _i(c[0])}, None)

    # ---- weights (§2.2)
    def weights_took(self, c):
        return ("vllm_weights", {"weights_gb": _f(c[0])}, "took_gb")

    def model_loading(self, c):
        nums = _toks(c, "NUMBER")
        unit = _toks(c, "GIB_WORD")[0].strip()
        memory = bool(_toks(c, "MEMORY_WORD"))
        form = "loading_" + ("gib" if unit == "GiB" else "gb") + ("_memory" if memory else "")
        if unit == "GiB":  # ``%.4f`` up to 0.13.0, ``format_gib`` (at most two decimals) from 0.14.0
            form += ":4d" if _decimals(nums[0]) == 4 else ":short"
        return ("vllm_weights", {"weights_gb": _f(nums[0]), "load_s": _f(nums[1])}, form)

    def load_time(self, c):
        return ("vllm_load_time", {"load_s": _f(c[0])}, None)

    def load_start(self, c):
        return ("vllm_load_start", {"model": str(c[0]).rstrip(".").strip()}, None)

    # ---- memory profiling (§2.3)
    def profile_time(self, c):
        return ("vllm_profile", {"profile_s": _f(c[0])}, "time")

    def profile_debug(self, c):
        n = [_f(t) for t in _toks(c, "NUMBER")]
        consumed = "consumed" in str(_toks(c, "DEBUG_TERM")[0])
        f = {"profile_s": n[0], "non_kv_gb": n[1], "activation_gb": n[2], "weights_gb": n[4]}
        f["consumed_gb" if consumed else "non_torch_gb"] = n[3]
        return ("vllm_profile", f, "debug_consumed" if consumed else "debug")

    def profile_free_debug(self, c):
        n = [_f(t) for t in c]
        return ("vllm_profile", {"free_gb": n[0], "free_now_gb": n[1], "requested_gb": n[2]}, "debug_free")

    def profile_requested_debug(self, c):
        n = _toks(c, "NUMBER")
        form = "debug_requested" if _decimals(n[1]) <= 2 else "debug_requested_util6"  # %.2f to 0.13.0, %f from 0.14.0
        return ("vllm_profile", {"free_gb": _f(n[0]), "utilization": _f(n[1]), "requested_gb": _f(n[2])}, form)

    def profile_after_debug(self, c):
        n = [_f(t) for t in c]
        return ("vllm_profile", {"free_after_gb": n[0], "free_within_gb": n[1]}, "debug_after")

    def profile_budget(self, c):
        n = [_f(t) for t in c]
        return ("vllm_profile", {"total_gb": n[0], "utilization": n[1], "requested_gb": n[2]}, "budget")

    def profile_terms(self, c):
        n = [_f(t) for t in c]
        f = {"weights_gb": n[0], "non_torch_gb": n[1], "activation_gb": n[2], "kv_gb": n[3]}
        return ("vllm_profile", f, "terms")

    def profile_results(self, c):
        n = [_f(t) for t in _toks(c, "NUMBER")]
        typo = str(_toks(c, "GIB_TYPO")[0]) == "Gib"
        f = {
            "total_gb": n[0],
            "initial_usage_gb": n[1],
            "torch_peak_gb": n[2],
            "usage_post_profile_gb": n[3],
            "non_torch_gb": n[4],
            "kv_gb": n[5],
            "utilization": n[6],
        }
        return ("vllm_profile", f, "results_gib_typo" if typo else "results")

    def kv_memory(self, c):
        # ``%.2f`` up to 0.13.0 (``61.30``), ``format_gib`` from 0.14.0 (``61.3``); ``61.34`` is either
        text = str(c[0])
        n = _decimals(text)
        form = "fixed" if n == 2 and text.endswith("0") else ("rounded" if n < 2 else None)
        return ("vllm_kv_memory", {"kv_gb": _f(c[0])}, form)

    def kv_memory_specified(self, c):
        n = _toks(c, "NUMBER")
        return ("vllm_kv_memory", {"free_gb": _f(n[0]), "kv_gb": _f(n[1])}, "specified")

    def usage_weights(self, c):
        n = [_f(t) for t in c]
        return {"weights_gb": n[0], "activation_gb": n[1], "non_torch_gb": n[2], "graph_gb": n[3]}

    def usage_consumed(self, c):
        n = [_f(t) for t in c]
        return {"consumed_gb": n[0], "activation_gb": n[1], "graph_gb": n[2]}

    def gib_paren(self, c):
        return ("paren", _f(c[0]))

    def budget_report(self, c):
        nums = _toks(c, "NUMBER")
        ints = _toks(c, "INT")
        usage = next(x for x in c if isinstance(x, dict))
        in_bytes = str(_toks(c, "IN_USE_UNIT")[0]).strip() == "bytes"
        kv = _f(nums[-1]) / GiB if in_bytes else _f(nums[-1])
        f: dict[str, Any] = {
            "free_gb": _f(nums[0]),
            "total_gb": _f(nums[1]),
            "utilization": _f(nums[2]),
            "requested_gb": _f(nums[3]),
            **usage,
            "kv_bytes_to_requested": _i(ints[0]),
            "kv_bytes_to_gpu": _i(ints[1]),
            "kv_gb": round(kv, 2),
        }
        form = "consumed" if "consumed_gb" in usage else ("weights_bytes" if in_bytes else "weights")
        return ("vllm_budget_report", f, form)

    def mm_reserve(self, c):
        n = _toks(c, "NUMBER")
        return ("vllm_mm_reserve", {"reserved_gb": _f(n[0]), "kv_gb": _f(n[-1])}, None)

    def startup_plan(self, c):
        n = _toks(c, "NUMBER")
        f = {"kv_bytes": _i(_toks(c, "INT")[0]), "kv_gb": _f(n[0]), "baseline_gb": _f(n[1]), "current_gb": _f(n[2])}
        return ("vllm_startup_plan", f, "applied")

    def startup_plan_fallback(self, c):
        return ("vllm_startup_plan", {"text": str(c[0])}, "fallback")

    def allocator_cleared(self, c):
        # not upstream: a patched build's cleanup of PyTorch's cached blocks before the KV allocation
        return ("vllm_patch_note", {"cleared_gb": _f(c[0])}, "allocator_cleared")

    def freed_before_sizing(self, c):
        # the same patch: the memory it freed after the profile, and non-torch measured again after it
        n = [_f(t) for t in c]
        return ("vllm_patch_note", {"freed_gb": n[0], "non_torch_increase_gb": n[1]}, "freed_before_sizing")

    def external_weights(self, c):
        n = [_f(t) for t in c]
        return ("vllm_external_weights", {"budget_gb": n[0], "external_gb": n[1], "engine_gb": n[2]}, None)

    # ---- blocks, tokens, concurrency (§2.4)
    def blocks(self, c):
        dev = str(c[0])
        f = {"device": dev, "gpu_blocks": _i(c[1]), "cpu_blocks": _i(c[2])}
        return ("vllm_blocks", f, dev if dev in ("CUDA", "cuda") else ("gpu" if dev == "GPU" else dev.lower()))

    def blocks_only(self, c):
        dev = str(c[0])
        return ("vllm_blocks", {"device": dev, "gpu_blocks": _i(c[1])}, "v1" if dev == "GPU" else dev.lower() + "_only")

    def cache_config_blocks(self, c):
        # V1's stat logger (loggers.py): the engine's num_gpu_blocks once the KV cache is allocated
        f: dict[str, Any] = {"device": "GPU", "gpu_blocks": _i(_toks(c, "INT")[0])}
        index = _toks(c, "ENGINE_INDEX")
        if index:
            f["engine_index"] = _i(str(index[0]).split()[1].rstrip(":"))
        return ("vllm_blocks", f, "cache_config_info_engine" if index else "cache_config_info")

    def blocks_override(self, c):
        return ("vllm_blocks_override", {"profiled": _i(c[0]), "override": _i(c[1])}, None)

    def concurrency(self, c):
        raw = str(c[0])
        form = "commas" if "," in raw else ("plain" if _i(raw) >= 1000 else "short")
        return ("vllm_concurrency", {"max_model_len": _i(raw), "max_concurrency": _f(c[1])}, form)

    def concurrency_tail(self, c):
        return {"max_model_len": _i(c[0]), "max_concurrency": _f(c[1])}

    def kv_tokens(self, c):
        pools = str(c[0])
        f: dict[str, Any] = {"pools": pools, "kv_tokens": _i(c[1])}
        tail = next((x for x in c if isinstance(x, dict)), None)
        if tail is None:
            return ("vllm_kv_tokens", f, "separate" if pools == "GPU" else "separate_" + pools.lower())
        f.update(tail)
        form = {"GPU": "combined", "GPU + host": "combined_host"}.get(pools, "combined_device")
        return ("vllm_kv_tokens", f, form)

    def kv_context_parallel(self, c):
        return ("vllm_kv_note", {"text": str(c[0])}, "context_parallel")

    def kv_padding(self, c):
        return ("vllm_kv_note", {"padding_layers": _i(c[0]), "waste_pct": _f(c[1])}, "padding")

    def kv_hybrid_disabled(self, c):
        return ("vllm_kv_note", {}, "hybrid_disabled")

    def autofit_fits(self, c):
        return ("vllm_autofit", {"max_model_len": _i(c[0])}, "fits")

    def autofit_reduced(self, c):
        return ("vllm_autofit", {"from_len": _i(c[0]), "max_model_len": _i(c[1])}, "reduced")

    # ---- CUDA graphs (§2.5)
    def graph_tail_plain(self, c):
        return {}

    def graph_tail_gib(self, c):
        return {"graph_gb": _f(c[0])}

    def graph_end(self, c):
        f = {"graph_s": _f(c[0]), **c[1]}
        return ("vllm_graph", f, "gib" if "graph_gb" in f else "secs")

    def graph_estimate(self, c):
        return ("vllm_graph_estimate", {"graph_estimate_gb": _f(c[0])}, None)

    def graph_pool(self, c):
        n = [_f(t) for t in c]
        f = {"actual_gb": n[0], "estimated_gb": n[1], "diff_gb": n[2], "diff_pct": n[3]}
        return ("vllm_graph_pool", f, None)

    def _advice(self, c, form: str, applied: bool):
        n = [_f(t) for t in c]
        f: dict[str, Any] = {"utilization": n[0], "estimate_applied": applied}
        if len(n) == 3:
            f["equivalent_utilization"], f["suggested_utilization"] = n[1], n[2]
        else:
            f["suggested_utilization"] = n[1]
        return ("vllm_graph_advice", f, form)

    def graph_advice_optin(self, c):
        return self._advice(c, "optin", True)

    def graph_advice_default(self, c):
        return self._advice(c, "default", True)

    def graph_advice_off(self, c):
        return self._advice(c, "off", False)

    def graph_advice_disabled(self, c):
        return self._advice(c, "disabled", False)

    def graph_profiling(self, c):
        text = str(c[0])
        modes = {m: {"graphs": int(n), "largest": int(big)} for m, n, big in _GRAPH_MODE_RE.findall(text)}
        return ("vllm_graph_note", {"text": text, "modes": modes}, "profiling")

    def graph_notice(self, c):
        head = str(c[0])
        rest = str(c[1]) if len(c) > 1 else ""
        if head.startswith("Capturing cudagraphs"):
            form = "cudagraphs_oom_hint" if "If out-of-memory" in rest else "cudagraphs"
        else:
            form = "model" if head.startswith("Capturing the model") else "extra_memory"
        return ("vllm_graph_note", {}, form)

    # ---- end of engine init (§2.6)
    def compile_split(self, c):
        return {"language_model_compile_s": _f(c[0]), "encoder_compile_s": _f(c[1])}

    def compile_part(self, c):
        f = {"compile_s": _f(c[0])}
        for x in c[1:]:
            if isinstance(x, dict):
                f.update(x)
        return f

    def init_engine(self, c):
        f: dict[str, Any] = {"init_s": _f(c[0])}
        unit = str(c[1]).strip()
        extra = next((x for x in c if isinstance(x, dict)), None)
        if extra:
            f.update(extra)
        form = (
            "seconds"
            if unit == "seconds"
            else ("s_compile_split" if extra and len(extra) > 1 else "s_compile" if extra else "s")
        )
        return ("vllm_init_engine", f, form)

    def dynamo_time(self, c):
        return ("vllm_compile_time", {"dynamo_s": _f(c[0])}, "dynamo")

    def compile_graph_time(self, c):
        form = "range" if _toks(c, "COMPILE_RANGE") else "dynamic_shape"
        return ("vllm_compile_time", {"graph_compile_s": _f(_toks(c, "NUMBER")[0])}, form)

    def warmup_time(self, c):
        return ("vllm_compile_time", {"warmup_s": _f(c[0])}, "warmup")

    def torch_compile(self, c):
        form = "takes" if "takes" in str(c[0]) else "took"
        return ("vllm_torch_compile", {"compile_s": _f(c[1])}, form)

    # ---- configuration lines
    def max_model_len(self, c):
        return ("vllm_max_model_len", {"max_model_len": _i(c[0])}, None)

    def chunked_prefill(self, c):
        return ("vllm_chunked_prefill", {"max_num_batched_tokens": _i(c[0])}, None)

    def rank_assign(self, c):
        items = _RANK_ITEM.findall(str(c[2]))
        f: dict[str, Any] = {"rank": _i(c[0]), "world_size": _i(c[1])}
        for name, value in items:
            f[name.lower() + "_rank"] = _i(value)
        return ("vllm_rank_assign", f, ",".join(name for name, _ in items))

    def v2_runner(self, c):
        return ("vllm_runner", {"runner": "V2"}, "v2")

    # ---- ready (§2.8)
    def server_start(self, c):
        return ("vllm_server_start", {"url": str(c[0])}, "api_on")

    def server_start_indexed(self, c):
        return ("vllm_server_start", {"server_index": _i(c[0]), "url": str(c[1])}, "api_indexed")

    def server_start_plain(self, c):
        return ("vllm_server_start", {"url": str(c[0])}, "server")

    def routes_head(self, c):
        return ("vllm_routes", {}, "head")

    def route(self, c):
        m = _ROUTE_RE.fullmatch(str(c[0]).strip())
        if m is None:
            raise ValueError(f"not a route: {str(c[0])[:40]!r}")
        what, value = m.group("what").lower(), m.group("value")
        form = "route_" + what + ("_set" if value.startswith("{") else "")
        return ("vllm_routes", {"path": m.group("path"), what: value}, form)

    # ---- failures (§2.7)
    def exc_head(self, c):
        return ("exc", str(c[0]))

    def failure_msg(self, c):
        exc = next((x[1] for x in c if isinstance(x, tuple) and x[0] == "exc"), None)
        kind, f, form = next(x for x in c if isinstance(x, tuple) and len(x) == 3)
        if exc:
            f = {**f, "exception": exc}
        return (kind, f, form)

    def _failure(self, form: str, c, **f: Any):
        rest = " ".join(str(t) for t in c if isinstance(t, Token) and t.type == "REST")
        return ("vllm_failure", {**f, "detail": rest.strip()} if rest.strip() else f, form)

    def no_kv_memory(self, c):
        rest = str(c[0]) if c else ""
        variant = "cpu_note" if "CPU backend" in rest else ("docs" if "docs.vllm.ai" in rest else "plain")
        return self._failure("no_kv_memory:" + variant, c)

    def max_len_v0(self, c):
        ints = _toks(c, "INT")
        return self._failure("max_len_exceeds_kv:v0", c, max_model_len=_i(ints[0]), kv_tokens=_i(ints[1]))

    def max_len_v1(self, c):
        nums = _toks(c, "NUMBER")
        unit = str(_toks(c, "GIB_WORD")[0]).strip()
        typo = str(_toks(c, "MODELS")[0]) == "models's"
        variant = "v1_gb" if unit == "GB" else ("v1_gib" if typo else "v1_model")
        f: dict[str, Any] = {
            "max_model_len": _i(_toks(c, "INT")[0]),
            "needed_gb": _f(nums[0]),
            "available_gb": _f(nums[1]),
        }
        rest = " ".join(str(t) for t in _toks(c, "REST"))
        est = _ESTIMATED_LEN.search(rest)
        if est:
            f["estimated_max_model_len"] = _i(est.group(1))
        return self._failure("max_len_exceeds_kv:" + variant, c, **f)

    def free_memory_at_start(self, c):
        n = [_f(t) for t in _toks(c, "NUMBER")]
        device = "device" if str(c[0]).strip() != "Free memory on device (" else "no_device"
        if "external" in str(_toks(c, "LESS_THAN")[0]):
            device = "external"
        f = {"free_gb": n[0], "total_gb": n[1], "utilization": n[2], "requested_gb": n[3]}
        return self._failure("free_memory_at_start:" + device, c, **f)

    def external_weights_too_large(self, c):
        return self._failure("free_memory_at_start:external_weights", c)

    def weights_oom(self, c):
        return self._failure("weights_oom", c)

    def profile_assertion(self, c):
        rest = str(c[0]) if c else ""
        m = _PROFILE_NUMBERS.search(rest)
        if m is None:
            return self._failure("profile_assertion:plain", c)
        variant = "gib" if " GiB" in rest[: m.end() + 4] else "bytes"
        f = {"initial_free": _f(m.group(1)), "current_free": _f(m.group(2))}
        return self._failure("profile_assertion:" + variant, c, **f)

    def engine_failed(self, c):
        rest = str(c[0]) if c else ""
        form = "procs" if "Failed core proc" in rest else "plain"
        return ("vllm_engine_failed", {}, "core_init:" + form)

    def engine_core_failed(self, c):
        return ("vllm_engine_failed", {}, "core_start")

    def mm_reservation_failed(self, c):
        return self._failure("mm_reservation", c, reserved_gb=_f(c[0]))

    def worker_tail_period(self, c):
        return {}

    def worker_tail_colon(self, c):
        # the colon form prints ``<exception>, <traceback>``: the traceback's first line is not the error
        return {"detail": str(c[0]).split(", Traceback (most recent call last)", 1)[0].strip()}

    def worker_exception(self, c):
        # V0's multiprocessing executor (multiproc_worker_utils.py): a worker's method raised; the
        # driver re-raises the exception, so the start fails.  ``logger.exception`` (the traceback on
        # the next lines) or ``logger.error("…: %s, %s", e, tb)`` (the exception in the line)
        f: dict[str, Any] = {"process": str(c[0]), "method": str(c[1]), **c[2]}
        return ("vllm_worker_exception", f, "colon" if "detail" in f else "period")

    def workerproc_failed(self, c):
        # V1's multiprocessing executor: a worker died before it was ready (its traceback follows)
        return ("vllm_worker_exception", {}, "workerproc_start")

    def traceback_start(self, c):
        return ("exception_start", {"component": None}, "vllm")

    def exception(self, c):
        return ("exception", {"exception": str(c[0]), "detail": str(c[1])}, None)

    # ---- runtime (§2.9)
    def stats(self, c):
        text = str(c[-1])
        f: dict[str, Any] = {}
        for name, rx in _STATS_FIELDS:
            m = rx.search(text)
            if m:
                f[name] = _num(m.group(1))
        form = "engine" if _toks(c, "ENGINE_INDEX") else ("v0" if "Pending:" in text else "v1")
        return ("vllm_stats", f, form)

    def preempted(self, c):
        return ("vllm_preempted", {}, None)

    # ---- uvicorn
    def uvicorn_started(self, c):
        return ("started", {"pid": _i(c[0])})

    def uvicorn_running(self, c):
        return ("running", {"url": str(c[0])})

    def uvicorn_startup_complete(self, c):
        return ("startup_complete", {})

    def uvicorn_other(self, c):
        return ("other", {"text": str(c[0])})

    def uvicorn(self, c):
        form, f = c[1]
        return ("uvicorn", {**f, "level": str(c[0]).strip().rstrip(":")}, form)


_TRANSFORMER = VllmTransformer()


def parse_line(text: str) -> tuple[dict[str, Any], None, tuple[str, dict[str, Any], str | None]]:
    """Parse one vLLM line.  Returns ``(prefix, None, (kind, fields, form))``.

    Raises :class:`VllmLineParseError` with a short reason when the line does not fit."""
    try:
        tree = line_parser().parse(text)
    except LarkError as exc:
        raise VllmLineParseError(first_line_of(exc)) from None
    try:
        return _TRANSFORMER.transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, ForeignDigits):
            raise VllmLineParseError(str(exc.orig_exc)) from None
        raise VllmLineParseError(f"transform failed: {exc}") from None
    except (LarkError, IndexError, ValueError, StopIteration, AttributeError) as exc:
        raise VllmLineParseError(f"transform failed: {exc}") from None
