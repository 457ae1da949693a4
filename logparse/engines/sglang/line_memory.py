"""SGLang's memory lines, for the line transformer (:mod:`logparse.engines.sglang.line`).

The builders of what a rank prints about its memory: free memory before and after the weights, the
KV, Mamba, SWA and DeepSeek-V4 pools and their sizing, the end of the memory pools, the CUDA-graph
captures, the scheduler's summary, the HiCache host pools, and the 0.1.x wording of the load and
summary lines.  Each returns ``(kind, fields, form)``; device memory is GiB (SGLang's "GB"),
HiCache's host memory decimal GB.
"""

from __future__ import annotations

from typing import Any

from lark import Token

from logparse.engines.sglang.line_values import GiB, Seconds, as_float, as_int, first_int, graph_name_fields, number


class MemoryLines:
    """The builders of the memory lines (a mixin of :class:`~logparse.engines.sglang.line.LineTransformer`)."""

    # ---- weights and pools
    def memory_baseline(self, c):
        return ("memory_baseline", {"mem_usage_gb": float(c[0])}, None)

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
                    f["tokens"] = as_int(v)
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
        return ("kv_alloc", {"tokens": as_int(c[0]), "placeholder_kb": as_float(c[1])}, "noop")

    def kv_post_capture(self, c):
        return (
            "kv_alloc",
            {"dtype": str(c[0]), "tokens": as_int(c[1]), "kv_gb": float(c[2]), "avail_gb": float(c[3])},
            "post_capture",
        )

    def kv_post_capture_draft(self, c):
        return (
            "kv_alloc",
            {"dtype": str(c[0]), "tokens": as_int(c[1]), "kv_gb": float(c[2]), "worker": "draft"},
            "post_capture_draft",
        )

    def kv_post_capture_free(self, c):
        return ("kv_post_capture_info", {"max_total_num_tokens": as_int(c[0]), "free_gb": float(c[1])}, "free")

    def kv_post_capture_swa(self, c):
        return ("kv_post_capture_info", {"full_tokens": as_int(c[0]), "swa_tokens": as_int(c[1])}, "swa")

    def kv_post_capture_reqs(self, c):
        return (
            "kv_post_capture_info",
            {"max_running_requests_from": as_int(c[0]), "max_running_requests_to": as_int(c[1])},
            "reqs",
        )

    def kv_post_capture_headroom(self, c):
        return (
            "kv_post_capture_info",
            {"decode_max_bs": as_int(c[0]), "max_running_requests": as_int(c[1])},
            "headroom",
        )

    def kv_post_capture_canary(self, c):
        return ("kv_post_capture_info", {"canary_workspace_gb": float(c[0])}, "canary")

    def mamba_extra(self, c):
        nums = [as_float(t) for t in c if isinstance(t, Token) and t.type == "NUMBER"]
        return {"intermediate_ssm_gb": nums[0], "intermediate_conv_gb": nums[1]}

    def mamba_alloc(self, c):
        nums = [t for t in c if isinstance(t, Token) and t.type == "NUMBER"]
        f: dict[str, Any] = {}
        if len(nums) == 3:
            f["max_mamba_cache_size"] = as_int(nums[0])
            nums = nums[1:]
        f["conv_gb"] = as_float(nums[0])
        f["ssm_gb"] = as_float(nums[1])
        for v in c:
            if isinstance(v, dict):
                f.update(v)
        return ("mamba_alloc", f, None)

    def swa_tokens(self, c):
        form = "capital" if str(c[0]).startswith("Use Sliding") else None
        return ("swa_tokens", {"full_tokens": as_int(c[1]), "swa_tokens": as_int(c[2])}, form)

    def swa_tokens_all(self, c):
        return ("swa_tokens", {"swa_tokens": as_int(c[0])}, "all_swa")

    def swakv_pool(self, c):
        return (
            "swakv_pool",
            {"mem_gb": as_float(c[1]), "swa_size": as_int(c[2]), "full_size": as_int(c[3])},
            "va" if str(c[0]).startswith("VA") else None,
        )

    def dsv4_memory(self, c):
        return ("dsv4_memory", dict(c[0]), None)

    def dsv4_pools(self, c):
        names = ("full", "swa", "c4", "c128", "c4_state", "c128_state")
        return ("dsv4_pools", {n: as_int(t) for n, t in zip(names, c)}, None)

    def dsv4_swa_cap(self, c):
        f = {
            "mode": "cap",
            "swa_tokens": as_int(c[0]),
            "request_cap_headroom": as_int(c[1]),
            "prefix_tails": as_int(c[2]),
        }
        return ("dsv4_swa_sizing", f, "cap")

    def dsv4_swa_ratio(self, c):
        f = {"mode": str(c[0]), "swa_tokens": as_int(c[1]), "swa_full_tokens_ratio": as_float(c[2])}
        return ("dsv4_swa_sizing", f, "ratio")

    def mm_reservation(self, c):
        return ("mm_reservation", {"reserved_gb": as_float(c[0])}, None)

    def max_running_capped(self, c):
        f = {
            "max_running_requests": as_int(c[0]),
            "max_mamba_cache_size": as_int(c[1]),
            "slots_per_request": as_int(c[2]),
        }
        return ("max_running_capped", f, "mamba")

    def max_running_reduced(self, c):
        form = "kv" if str(c[2]) == "KV cache" else "kv_or_aux"  # the second: the MLX backend's wording
        return ("max_running_capped", {"requested": as_int(c[0]), "max_running_requests": as_int(c[1])}, form)

    def pool_end(self, c):
        return ("pool_end", {"avail_gb": float(c[0])}, None)

    def max_total_tokens_capped(self, c):
        return ("max_total_tokens_capped", {"user_limit": as_int(c[0]), "profiled": as_int(c[1])}, None)

    # ---- graphs
    def g_backend(self, c):
        return ("backend", str(c[0]))

    def g_tokens_per_req(self, c):
        return ("num_tokens_per_req", as_int(c[0]))

    def g_num_tokens(self, c):
        return ("num_tokens", c[0])

    def g_bs(self, c):
        return ("bs", c[0])

    def g_step(self, c):
        return ("step", as_int(c[0]))

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
                f.update(graph_name_fields(str(v)))
            elif isinstance(v, Token) and v.type == "STEP_PAREN":
                f["step"] = first_int(str(v))
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
        f = graph_name_fields(str(c[0]))
        f["bs"] = c[1]
        return ("graph_bs", f, None)

    # ---- summary
    def summary_item(self, c):
        key = str(c[0])
        val = c[1]
        if isinstance(val, Token):
            val = None if str(val) == "None" else number(val)
        elif isinstance(val, GiB):
            val = float(val)
        return (key, val)

    def summary(self, c):
        f: dict[str, Any] = {"max_total_num_tokens": as_int(c[0])}
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
        return ("hicache_alloc", {"host_gb": as_float(c[0]), "label": "kv"}, None)

    def hicache_alloc_other(self, c):
        what = str(c[1])
        label = "mamba" if "Mamba" in what else "other"
        return ("hicache_alloc", {"host_gb": as_float(c[0]), "label": label, "what": what}, "other")

    def packed_layers(self, c):
        return c[0]

    def hicache_pool(self, c):
        f = {"label": str(c[0]), "tokens": as_int(c[1]), "host_gb": as_float(c[2])}
        if len(c) > 3:
            f["packed"] = c[3]
        return ("hicache_alloc", f, "pool")

    def hicache_not_enough(self, c):
        return ("hicache_not_enough", {"requested_gb": as_float(c[0]), "available_gb": as_float(c[1])}, None)

    def hicache_not_enough_other(self, c):
        return ("hicache_not_enough", {"text": str(c[0])}, "other")

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

    def summary_v01(self, c):
        f: dict[str, Any] = {
            "max_total_num_tokens": number(c[0]),
            "max_prefill_tokens": number(c[1]),
            "context_len": number(c[2]),
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
