"""vLLM's memory lines, for the line transformer (:mod:`logparse.engines.vllm.line`).

The builders of the weights (§2.2), the memory profile and the KV budget (§2.3), the blocks, tokens
and concurrency (§2.4) and the CUDA graphs (§2.5).  Each returns ``(kind, fields, form)``; every
memory figure is GiB, even where vLLM's text says "GB" (catalogue §5).
"""

from __future__ import annotations

import re
from typing import Any

from logparse.engines.vllm.line_values import as_float, as_int, decimals, tokens_of

#: Bytes in a GiB (a budget report that prints the KV cache in bytes is read in GiB).
GiB = float(1 << 30)
#: ``PIECEWISE=35 (largest=512)``: the graphs of one CUDA-graph mode that the memory profile captures.
_GRAPH_MODE_RE = re.compile(r"\b([A-Z_]+)=([0-9]+) \(largest=([0-9]+)\)")


class MemoryLines:
    """The builders of the memory lines (a mixin of :class:`~logparse.engines.vllm.line.VllmTransformer`)."""

    # ---- weights (§2.2)
    def weights_took(self, c):
        return ("vllm_weights", {"weights_gb": as_float(c[0])}, "took_gb")

    def model_loading(self, c):
        nums = tokens_of(c, "NUMBER")
        unit = tokens_of(c, "GIB_WORD")[0].strip()
        memory = bool(tokens_of(c, "MEMORY_WORD"))
        form = "loading_" + ("gib" if unit == "GiB" else "gb") + ("_memory" if memory else "")
        if unit == "GiB":  # ``%.4f`` up to 0.13.0, ``format_gib`` (at most two decimals) from 0.14.0
            form += ":4d" if decimals(nums[0]) == 4 else ":short"
        return ("vllm_weights", {"weights_gb": as_float(nums[0]), "load_s": as_float(nums[1])}, form)

    def load_time(self, c):
        return ("vllm_load_time", {"load_s": as_float(c[0])}, None)

    def load_start(self, c):
        return ("vllm_load_start", {"model": str(c[0]).rstrip(".").strip()}, None)

    # ---- memory profiling (§2.3)
    def profile_time(self, c):
        return ("vllm_profile", {"profile_s": as_float(c[0])}, "time")

    def profile_debug(self, c):
        n = [as_float(t) for t in tokens_of(c, "NUMBER")]
        consumed = "consumed" in str(tokens_of(c, "DEBUG_TERM")[0])
        f = {"profile_s": n[0], "non_kv_gb": n[1], "activation_gb": n[2], "weights_gb": n[4]}
        f["consumed_gb" if consumed else "non_torch_gb"] = n[3]
        return ("vllm_profile", f, "debug_consumed" if consumed else "debug")

    def profile_free_debug(self, c):
        n = [as_float(t) for t in c]
        return ("vllm_profile", {"free_gb": n[0], "free_now_gb": n[1], "requested_gb": n[2]}, "debug_free")

    def profile_requested_debug(self, c):
        n = tokens_of(c, "NUMBER")
        form = "debug_requested" if decimals(n[1]) <= 2 else "debug_requested_util6"  # %.2f to 0.13.0, %f from 0.14.0
        return (
            "vllm_profile",
            {"free_gb": as_float(n[0]), "utilization": as_float(n[1]), "requested_gb": as_float(n[2])},
            form,
        )

    def profile_after_debug(self, c):
        n = [as_float(t) for t in c]
        return ("vllm_profile", {"free_after_gb": n[0], "free_within_gb": n[1]}, "debug_after")

    def profile_budget(self, c):
        n = [as_float(t) for t in c]
        return ("vllm_profile", {"total_gb": n[0], "utilization": n[1], "requested_gb": n[2]}, "budget")

    def profile_terms(self, c):
        n = [as_float(t) for t in c]
        f = {"weights_gb": n[0], "non_torch_gb": n[1], "activation_gb": n[2], "kv_gb": n[3]}
        return ("vllm_profile", f, "terms")

    def profile_results(self, c):
        n = [as_float(t) for t in tokens_of(c, "NUMBER")]
        typo = str(tokens_of(c, "GIB_TYPO")[0]) == "Gib"
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
        n = decimals(text)
        form = "fixed" if n == 2 and text.endswith("0") else ("rounded" if n < 2 else None)
        return ("vllm_kv_memory", {"kv_gb": as_float(c[0])}, form)

    def kv_memory_specified(self, c):
        n = tokens_of(c, "NUMBER")
        return ("vllm_kv_memory", {"free_gb": as_float(n[0]), "kv_gb": as_float(n[1])}, "specified")

    def usage_weights(self, c):
        n = [as_float(t) for t in c]
        return {"weights_gb": n[0], "activation_gb": n[1], "non_torch_gb": n[2], "graph_gb": n[3]}

    def usage_consumed(self, c):
        n = [as_float(t) for t in c]
        return {"consumed_gb": n[0], "activation_gb": n[1], "graph_gb": n[2]}

    def gib_paren(self, c):
        return ("paren", as_float(c[0]))

    def budget_report(self, c):
        nums = tokens_of(c, "NUMBER")
        ints = tokens_of(c, "INT")
        usage = next(x for x in c if isinstance(x, dict))
        in_bytes = str(tokens_of(c, "IN_USE_UNIT")[0]).strip() == "bytes"
        kv = as_float(nums[-1]) / GiB if in_bytes else as_float(nums[-1])
        f: dict[str, Any] = {
            "free_gb": as_float(nums[0]),
            "total_gb": as_float(nums[1]),
            "utilization": as_float(nums[2]),
            "requested_gb": as_float(nums[3]),
            **usage,
            "kv_bytes_to_requested": as_int(ints[0]),
            "kv_bytes_to_gpu": as_int(ints[1]),
            "kv_gb": round(kv, 2),
        }
        form = "consumed" if "consumed_gb" in usage else ("weights_bytes" if in_bytes else "weights")
        return ("vllm_budget_report", f, form)

    def mm_reserve(self, c):
        n = tokens_of(c, "NUMBER")
        return ("vllm_mm_reserve", {"reserved_gb": as_float(n[0]), "kv_gb": as_float(n[-1])}, None)

    def startup_plan(self, c):
        n = tokens_of(c, "NUMBER")
        f = {
            "kv_bytes": as_int(tokens_of(c, "INT")[0]),
            "kv_gb": as_float(n[0]),
            "baseline_gb": as_float(n[1]),
            "current_gb": as_float(n[2]),
        }
        return ("vllm_startup_plan", f, "applied")

    def startup_plan_fallback(self, c):
        return ("vllm_startup_plan", {"text": str(c[0])}, "fallback")

    def allocator_cleared(self, c):
        # not upstream: a patched build's cleanup of PyTorch's cached blocks before the KV allocation
        return ("vllm_patch_note", {"cleared_gb": as_float(c[0])}, "allocator_cleared")

    def freed_before_sizing(self, c):
        # the same patch: the memory it freed after the profile, and non-torch measured again after it
        n = [as_float(t) for t in c]
        return ("vllm_patch_note", {"freed_gb": n[0], "non_torch_increase_gb": n[1]}, "freed_before_sizing")

    def external_weights(self, c):
        n = [as_float(t) for t in c]
        return ("vllm_external_weights", {"budget_gb": n[0], "external_gb": n[1], "engine_gb": n[2]}, None)

    # ---- blocks, tokens, concurrency (§2.4)
    def blocks(self, c):
        dev = str(c[0])
        f = {"device": dev, "gpu_blocks": as_int(c[1]), "cpu_blocks": as_int(c[2])}
        return ("vllm_blocks", f, dev if dev in ("CUDA", "cuda") else ("gpu" if dev == "GPU" else dev.lower()))

    def blocks_only(self, c):
        dev = str(c[0])
        return (
            "vllm_blocks",
            {"device": dev, "gpu_blocks": as_int(c[1])},
            "v1" if dev == "GPU" else dev.lower() + "_only",
        )

    def cache_config_blocks(self, c):
        # V1's stat logger (loggers.py): the engine's num_gpu_blocks once the KV cache is allocated
        f: dict[str, Any] = {"device": "GPU", "gpu_blocks": as_int(tokens_of(c, "INT")[0])}
        index = tokens_of(c, "ENGINE_INDEX")
        if index:
            f["engine_index"] = as_int(str(index[0]).split()[1].rstrip(":"))
        return ("vllm_blocks", f, "cache_config_info_engine" if index else "cache_config_info")

    def blocks_override(self, c):
        return ("vllm_blocks_override", {"profiled": as_int(c[0]), "override": as_int(c[1])}, None)

    def concurrency(self, c):
        raw = str(c[0])
        form = "commas" if "," in raw else ("plain" if as_int(raw) >= 1000 else "short")
        return ("vllm_concurrency", {"max_model_len": as_int(raw), "max_concurrency": as_float(c[1])}, form)

    def concurrency_tail(self, c):
        return {"max_model_len": as_int(c[0]), "max_concurrency": as_float(c[1])}

    def kv_tokens(self, c):
        pools = str(c[0])
        f: dict[str, Any] = {"pools": pools, "kv_tokens": as_int(c[1])}
        tail = next((x for x in c if isinstance(x, dict)), None)
        if tail is None:
            return ("vllm_kv_tokens", f, "separate" if pools == "GPU" else "separate_" + pools.lower())
        f.update(tail)
        form = {"GPU": "combined", "GPU + host": "combined_host"}.get(pools, "combined_device")
        return ("vllm_kv_tokens", f, form)

    def kv_context_parallel(self, c):
        return ("vllm_kv_note", {"text": str(c[0])}, "context_parallel")

    def kv_padding(self, c):
        return ("vllm_kv_note", {"padding_layers": as_int(c[0]), "waste_pct": as_float(c[1])}, "padding")

    def kv_hybrid_disabled(self, c):
        return ("vllm_kv_note", {}, "hybrid_disabled")

    def autofit_fits(self, c):
        return ("vllm_autofit", {"max_model_len": as_int(c[0])}, "fits")

    def autofit_reduced(self, c):
        return ("vllm_autofit", {"from_len": as_int(c[0]), "max_model_len": as_int(c[1])}, "reduced")

    # ---- CUDA graphs (§2.5)
    def graph_tail_plain(self, c):
        return {}

    def graph_tail_gib(self, c):
        return {"graph_gb": as_float(c[0])}

    def graph_end(self, c):
        f = {"graph_s": as_float(c[0]), **c[1]}
        return ("vllm_graph", f, "gib" if "graph_gb" in f else "secs")

    def graph_estimate(self, c):
        return ("vllm_graph_estimate", {"graph_estimate_gb": as_float(c[0])}, None)

    def graph_pool(self, c):
        n = [as_float(t) for t in c]
        f = {"actual_gb": n[0], "estimated_gb": n[1], "diff_gb": n[2], "diff_pct": n[3]}
        return ("vllm_graph_pool", f, None)

    def _advice(self, c, form: str, applied: bool):
        n = [as_float(t) for t in c]
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
