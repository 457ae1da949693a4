"""Every format variant SGLang prints, as data.

Each entry: a name, the release range in which SGLang prints exactly that wording
(from the log catalogue), one sample line written by us in that format, and the
fields the sample must parse to.  ``tests/test_variants.py`` walks the whole table,
so adding a variant is one entry plus its sample.

The table also dates logs: a parsed event's *signature* (kind, wording form, field
names) is looked up here, and the ranges of the matching variants narrow the
launch's release range.  Runtime lines (batch statistics) and uvicorn lines are in
the table for testing but do not date a log (``dates=False``): their shapes overlap
across many releases.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from logparse.grammar import versions

LAST = "0.5.23"


@dataclass(frozen=True)
class Variant:
    name: str
    since: str
    until: str
    sample: str
    expect: dict[str, Any] = field(default_factory=dict)
    kind: str = ""
    dates: bool = True


V = Variant
VARIANTS: list[Variant] = [
    # ---------------------------------------------------------------- prefixes (dated separately)
    V("prefix_none_gpu_id", "0.1.17", "0.2.6", "[gpu_id=1] Init nccl begin.", {"tp_rank": 1}, "init_begin"),
    V("prefix_none_gpu", "0.2.7", "0.2.13", "[gpu=3] Init nccl begin.", {"tp_rank": 3}, "init_begin"),
    V("prefix_time_only", "0.2.14", "0.3.3.post1", "[09:12:44 TP2] Init nccl begin.", {"tp_rank": 2}, "init_begin"),
    V(
        "prefix_date",
        "0.3.4",
        LAST,
        "[2025-04-02 09:12:44 TP5] Load weight begin. avail mem=77.31 GB",
        {"tp_rank": 5, "avail_gb": 77.31},
        "load_begin",
    ),
    V(
        "prefix_date_ms",
        "0.5.6",
        LAST,
        "[2026-03-01 14:03:22.417 TP0] Memory pool end. avail mem=9.12 GB",
        {"ts": "2026-03-01T14:03:22.417", "avail_gb": 9.12},
        "pool_end",
    ),
    V(
        "prefix_dp_minus_one",
        "0.3.6",
        "0.3.6",
        "[2024-12-03 10:00:01 DP-1 TP1] Init torch distributed begin.",
        {"dp_rank": -1, "tp_rank": 1},
        "init_begin",
    ),
    V(
        "prefix_dp_tp_ep",
        "0.4.10",
        LAST,
        "[2025-09-11 23:34:09 DP2 TP2 EP2] Memory pool end. avail mem=10.20 GB",
        {"dp_rank": 2, "tp_rank": 2, "ep_rank": 2},
        "pool_end",
    ),
    V(
        "prefix_pp_before_tp",
        "0.5.5.post1",
        LAST,
        "[2026-01-05 08:00:00 PP1 TP3] Load weight begin. avail mem=70.00 GB",
        {"pp_rank": 1, "tp_rank": 3},
        "load_begin",
    ),
    V(
        "prefix_attn_cp",
        "0.5.9",
        LAST,
        "[2026-02-05 08:00:00 ATTN_CP1 TP1] Init torch distributed begin.",
        {"tp_rank": 1},
        "init_begin",
    ),
    V(
        "prefix_level_file",
        "0.5.8",
        LAST,
        "[2026-03-21 03:30:04] WARNING model_runner.py:812: Load weight begin. avail mem=51.20 GB",
        {"avail_gb": 51.2},
        "load_begin",
    ),
    # Builds and forks of the disaggregation era (disaggregation_mode: 0.4.4.post2+) put another
    # word in the bracket; no release prints it, so it dates nothing (a prefix_ variant).
    V(
        "prefix_bracket_word",
        "0.4.4.post2",
        LAST,
        "[2025-12-02 07:04:51 DisaggregationMode.DECODE TP1] Load weight begin. avail mem=77.10 GB",
        {"tp_rank": 1, "avail_gb": 77.1},
        "load_begin",
    ),
    # 0.1.3-0.1.16 (the router era): "Rank N: " before the message, no timestamp (format "%(message)s").
    V("prefix_rank_colon", "0.1.6", "0.1.16", "Rank 2: load weight begin.", {"tp_rank": 2}, "load_begin"),
    # ---------------------------------------------------------------- 0.1.x (read from those releases' source)
    V(
        "summary_v01_model_mode",
        "0.1.3",
        "0.1.12",
        "Rank 0: max_total_num_token=52418, max_prefill_num_token=8736, context_len=4096, model_mode=[]",
        {
            "tp_rank": 0,
            "max_total_num_tokens": 52418,
            "max_prefill_tokens": 8736,
            "context_len": 4096,
            "model_mode": [],
        },
        "summary",
    ),
    V(
        "summary_v01_trailing_comma",
        "0.1.13",
        "0.1.16",
        "Rank 1: max_total_num_token=96301, max_prefill_num_token=16050, context_len=8192, ",
        {"tp_rank": 1, "max_total_num_tokens": 96301, "max_prefill_tokens": 16050, "context_len": 8192},
        "summary",
    ),
    V("load_begin_lower", "0.1.6", "0.1.16", "Rank 1: load weight begin.", {"tp_rank": 1}, "load_begin"),
    V("load_end_lower", "0.1.6", "0.1.16", "Rank 0: load weight end.", {"tp_rank": 0}, "load_end"),
    # The router era's lines as users paste them: capitalised, "begins"/"ends", "Max_total_num_token".
    # No release prints this wording (0.1.3-0.1.16 wheels print the lowercase one above), so it dates
    # no further than the "Rank N: " prefix does: the router era.
    V("load_begin_v01_paste", "0.1.3", "0.1.16", "Rank 3: Load weight begins.", {"tp_rank": 3}, "load_begin"),
    V("load_end_v01_paste", "0.1.3", "0.1.16", "Rank 2: Load weight ends.", {"tp_rank": 2}, "load_end"),
    V(
        "summary_v01_paste",
        "0.1.3",
        "0.1.16",
        "Rank 1: Max_total_num_token=118204, max_prefill_num_token=16384, context_len=16384, model_mode=[]",
        {"tp_rank": 1, "max_total_num_tokens": 118204, "max_prefill_tokens": 16384, "model_mode": []},
        "summary",
    ),
    # 0.1.x printed the quantization config bare ("%(message)s" format; print() in 0.1.3-0.1.5);
    # pastes capitalise it.  Its shape is too plain to date a log.
    V(
        "quant_config_v01",
        "0.1.3",
        "0.1.16",
        "quant_config: AWQConfig(weight_bits=4, group_size=64, zero_point=True)",
        {"quant_config": "AWQConfig(weight_bits=4, group_size=64, zero_point=True)"},
        "startup_info",
        False,
    ),
    V(
        "quant_config_v01_paste",
        "0.1.3",
        "0.1.16",
        "Quant_config: GPTQConfig(weight_bits=4, group_size=128, desc_act=False)",
        {"quant_config": "GPTQConfig(weight_bits=4, group_size=128, desc_act=False)"},
        "startup_info",
        False,
    ),
    V(
        "optional_modes_v01",
        "0.1.13",
        "0.1.14",
        "disable_radix_cache=False, enable_flashinfer=True, disable_regex_jump_forward=False, disable_disk_cache=False, attention_reduce_in_fp32=False",
        {"enable_flashinfer": True, "attention_reduce_in_fp32": False},
        "startup_info",
    ),
    V(
        "mode_args_enable_flashinfer",
        "0.1.15",
        "0.1.17",
        "server_args: enable_flashinfer=True, attention_reduce_in_fp32=False, disable_radix_cache=False, disable_regex_jump_forward=False, disable_disk_cache=False, ",
        {"enable_flashinfer": True, "disable_disk_cache": False},
        "startup_info",
    ),
    V(
        "mode_args_disable_flashinfer",
        "0.1.18",
        "0.1.22",
        "[gpu_id=0] server_args: disable_flashinfer=False, attention_reduce_in_fp32=False, disable_radix_cache=False, disable_regex_jump_forward=False, disable_disk_cache=False, ",
        {"tp_rank": 0, "disable_flashinfer": False},
        "startup_info",
    ),
    V("set_cuda_device", "0.1.17", "0.1.19", "[gpu_id=1] Set cuda device.", {"tp_rank": 1}, "startup_info"),
    V(
        "init_state_ok",
        "0.1.3",
        "0.1.14",
        "detoken init state: init ok",
        {"process": "detoken"},
        "startup_info",
    ),
    V(
        "init_state_traceback",
        "0.1.3",
        "0.1.14",
        "router init state: Traceback (most recent call last):",
        {"component": "router"},
        "exception_start",
    ),
    V(
        "not_enought_memory",
        "0.1.6",
        "0.1.17",
        "RuntimeError: Not enought memory. Please try to increase --mem-fraction-static.",
        {"exception": "RuntimeError"},
        "failure",
    ),
    V(
        "load_end_no_dtype",
        "0.1.17",
        "0.1.17",
        "[gpu_id=1] Load weight end. type=MixtralForCausalLM, avail mem=51.06 GB",
        {"tp_rank": 1, "model_type": "MixtralForCausalLM", "avail_gb": 51.06},
        "load_end",
    ),
    V(
        "graph_begin_bare",
        "0.1.20",
        "0.1.22",
        "[gpu_id=0] Capture cuda graph begin.",
        {"tp_rank": 0, "name": "cuda graph"},
        "graph_begin",
    ),
    V(
        "summary_gpu_id_trailing_comma",
        "0.1.17",
        "0.1.17",
        "[gpu_id=1] max_total_num_tokens=181240, max_prefill_tokens=30206, context_len=32768, ",
        {"tp_rank": 1, "max_total_num_tokens": 181240, "context_len": 32768},
        "summary",
    ),
    V(
        "summary_gpu_id_no_max_running",
        "0.1.18",
        "0.1.22",
        "[gpu_id=0] max_total_num_tokens=412907, max_prefill_tokens=68817, context_len=4096",
        {"tp_rank": 0, "max_total_num_tokens": 412907, "max_prefill_tokens": 68817},
        "summary",
    ),
    V(
        "init_failed_router",
        "0.1.15",
        "0.1.21",
        "Initialization failed. router_init_state: Traceback (most recent call last):",
        {},
        "failure",
    ),
    # ---------------------------------------------------------------- distributed init
    V("init_nccl_begin", "0.1.17", "0.3.3", "[10:00:00 TP0] Init nccl begin.", {}, "init_begin"),
    V(
        "init_dist_begin",
        "0.3.3.post1",
        "0.5.20",
        "[2025-01-02 10:00:00 TP0] Init torch distributed begin.",
        {},
        "init_begin",
    ),
    V(
        "init_dist_end",
        "0.4.3.post3",
        "0.5.8.post1",
        "[2025-01-02 10:00:01 TP0] Init torch distributed ends. mem usage=0.47 GB",
        {"mem_usage_gb": 0.47},
        "init_end",
    ),
    V(
        "init_dist_end_elapsed",
        "0.5.9",
        "0.5.20",
        "[2026-01-02 10:00:01 TP1] Init torch distributed ends. elapsed=1.84 s, mem usage=0.52 GB",
        {"elapsed_s": 1.84, "mem_usage_gb": 0.52},
        "init_end",
    ),
    V("init_parallel_begin", "0.5.21", LAST, "[2026-08-02 10:00:00 TP0] Init parallel begin.", {}, "init_begin"),
    V(
        "init_parallel_end",
        "0.5.21",
        LAST,
        "[2026-08-02 10:00:02 TP0] Init parallel ends. elapsed=2.05 s",
        {"elapsed_s": 2.05},
        "init_end",
    ),
    V(
        "memory_baseline",
        "0.5.21",
        LAST,
        "[2026-08-02 10:00:02 TP0] Memory baseline taken. mem usage=0.61 GB",
        {"mem_usage_gb": 0.61},
        "memory_baseline",
    ),
    V(
        "nccl_warmup",
        "0.5.10",
        "0.5.15.post1",
        "[2026-03-02 10:00:02 TP0] NCCL/RCCL warmup completed in 0.842s (tp_size=4, pp_size=1, ep_size=1)",
        {"seconds": 0.842, "tp_size": 4},
        "comm_warmup",
    ),
    V(
        "nccl_warmup_hccl",
        "0.5.16",
        LAST,
        "[2026-06-02 10:00:02 TP0] NCCL/RCCL/HCCL warmup completed in 0.511s (tp_size=8, pp_size=1, ep_size=8)",
        {"seconds": 0.511, "ep_size": 8},
        "comm_warmup",
    ),
    V(
        "lm_head_warmup",
        "0.5.18",
        LAST,
        "[2026-06-02 10:00:03 TP0] TP LM-head PyNCCL all-to-all warmup completed in 0.120s (tp_size=8, bytes_per_peer=65536)",
        {"seconds": 0.12, "bytes_per_peer": 65536},
        "comm_warmup",
    ),
    V(
        "unbalanced_plain",
        "0.1.17",
        "0.4.3.post4",
        "[2024-06-02 10:00:03 TP3] The memory capacity is unbalanced. Some GPUs may be occupied by other processes.",
        {},
        "memory_unbalanced",
    ),
    V(
        "unbalanced_detail",
        "0.4.4",
        LAST,
        "[2025-06-02 10:00:03 TP3] The memory capacity is unbalanced. Some GPUs may be occupied by other processes. "
        "min_per_gpu_memory=61.25, local_gpu_memory=78.9, local_gpu_memory * 0.9=71.01",
        {"min_per_gpu_memory": 61.25, "local_gpu_memory": 78.9},
        "memory_unbalanced",
    ),
    # ---------------------------------------------------------------- weights
    V(
        "load_begin",
        "0.1.17",
        LAST,
        "[2025-01-02 10:00:04 TP0] Load weight begin. avail mem=78.42 GB",
        {"avail_gb": 78.42},
        "load_begin",
    ),
    V(
        "load_end_dtype",
        "0.1.18",
        "0.4.3.post2",
        "[2024-10-02 10:00:09 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.37 GB",
        {"model_type": "LlamaForCausalLM", "dtype": "torch.bfloat16", "avail_gb": 63.37},
        "load_end",
    ),
    V(
        "load_end_usage",
        "0.4.3.post3",
        "0.5.8.post1",
        "[2025-05-02 10:00:09 TP0] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=64.10 GB, mem usage=14.32 GB.",
        {"avail_gb": 64.1, "mem_usage_gb": 14.32},
        "load_end",
    ),
    V(
        "load_end_elapsed_dtype",
        "0.5.9",
        "0.5.9",
        "[2026-02-12 10:00:09] Load weight end. elapsed=6.31 s, type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=62.88 GB, mem usage=15.54 GB.",
        {"elapsed_s": 6.31, "dtype": "torch.bfloat16", "mem_usage_gb": 15.54},
        "load_end",
    ),
    V(
        "load_end_elapsed",
        "0.5.10",
        LAST,
        "[2026-05-12 10:00:09 TP1] Load weight end. elapsed=41.07 s, type=Qwen3MoeForCausalLM, avail mem=22.64 GB, mem usage=55.80 GB.",
        {"elapsed_s": 41.07, "model_type": "Qwen3MoeForCausalLM", "mem_usage_gb": 55.8},
        "load_end",
    ),
    V(
        "load_end_quant",
        "0.5.10",
        LAST,
        "[2026-05-12 10:00:09 TP0] Load weight end. elapsed=402.11 s, type=DeepseekV3ForCausalLM, quant=fp8, fmt=e4m3, avail mem=21.70 GB, mem usage=72.35 GB.",
        {"quant": {"quant": "fp8", "fmt": "e4m3"}, "avail_gb": 21.7},
        "load_end",
    ),
    V(
        "load_end_overlap",
        "0.5.18",
        LAST,
        "[2026-06-12 10:01:09 TP0] Load weight end. Committed real weights after CUDA graph capture in 3.52 s (capture overlap window 11.03 s, startup overlap total 14.60 s)",
        {"commit_s": 3.52},
        "load_end",
    ),
    # ---------------------------------------------------------------- KV dtype
    V(
        "kv_dtype_line",
        "0.5.3",
        "0.5.12.post1",
        "[2025-11-02 10:00:10] Using KV cache dtype: torch.float8_e4m3fn",
        {"dtype": "torch.float8_e4m3fn"},
        "kv_dtype",
    ),
    V(
        "kv_scales_loaded",
        "0.4.1.post6",
        LAST,
        "[2025-11-02 10:00:10 TP0] Loaded KV cache scaling factors from /models/scales/kv.json",
        {},
        "kv_scales",
    ),
    V(
        "kv_fp8_no_scales_long",
        "0.4.1.post6",
        "0.5.19",
        "[2025-11-02 10:00:10 TP0] Using FP8 KV cache but no scaling factors provided. Defaulting to scaling factors of 1.0. This may lead to less accurate results!",
        {},
        "kv_scales",
    ),
    V(
        "kv_fp8_no_scales_short",
        "0.5.20",
        LAST,
        "[2026-07-02 10:00:10 TP0] Using FP8 KV cache but no scaling factors provided. Defaulting to scaling factors of 1.0.",
        {},
        "kv_scales",
    ),
    # ---------------------------------------------------------------- KV pools
    V(
        "kv_alloc_kv_dot",
        "0.4.1.post6",
        "0.4.3.post2",
        "[2025-01-22 10:00:11 TP0] KV Cache is allocated. K size: 26.95 GB, V size: 26.95 GB.",
        {"k_gb": 26.95, "v_gb": 26.95},
        "kv_alloc",
    ),
    V(
        "kv_alloc_tokens_kv",
        "0.4.3.post3",
        "0.5.12.post1",
        "[2025-05-02 10:00:11 TP0] KV Cache is allocated. #tokens: 441216, K size: 26.94 GB, V size: 26.94 GB",
        {"tokens": 441216, "k_gb": 26.94},
        "kv_alloc",
    ),
    V(
        "kv_alloc_tokens_mla",
        "0.4.5.post3",
        "0.5.12.post1",
        "[2025-05-02 10:00:11 TP3] KV Cache is allocated. #tokens: 301440, KV size: 19.73 GB",
        {"tokens": 301440, "kv_gb": 19.73},
        "kv_alloc",
    ),
    V(
        "kv_alloc_dtype_kv",
        "0.5.13",
        LAST,
        "[2026-04-02 10:00:11 TP0] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 88320, K size: 5.39 GB, V size: 5.39 GB",
        {"dtype": "torch.bfloat16", "tokens": 88320},
        "kv_alloc",
    ),
    V(
        "kv_alloc_dtype_mla",
        "0.5.13",
        LAST,
        "[2026-04-02 10:00:11 TP0] KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 612000, KV size: 20.03 GB",
        {"kv_gb": 20.03},
        "kv_alloc",
    ),
    V(
        "kv_alloc_labelled",
        "0.5.17",
        LAST,
        "[2026-05-22 10:00:11 TP0] SWA KV Cache is allocated. dtype: torch.bfloat16, #tokens: 351232, K size: 2.68 GB, V size: 2.68 GB",
        {"label": "SWA", "tokens": 351232},
        "kv_alloc",
    ),
    V(
        "kv_alloc_va",
        "0.5.18",
        LAST,
        "[2026-06-22 10:00:11 TP0] KV Cache VA upper bound. dtype: torch.bfloat16, #tokens: 500000, K size: 30.52 GB, V size: 30.52 GB",
        {"tokens": 500000},
        "kv_alloc",
    ),
    V(
        "kv_noop",
        "0.5.12",
        LAST,
        "[2026-03-22 10:00:11] KV Cache skipped (no-op pool). Logical #tokens: 65536, physical K/V size: ~4.0 KB placeholder",
        {"tokens": 65536, "placeholder_kb": 4.0},
        "kv_alloc",
    ),
    V(
        "kv_post_capture",
        "0.5.17",
        LAST,
        "[2026-05-22 10:00:40 TP0] Post-capture KV sizing: KV cache allocated. dtype: torch.bfloat16, #tokens: 402112, KV size: 49.08 GB, avail mem=6.12 GB",
        {"tokens": 402112, "kv_gb": 49.08, "avail_gb": 6.12},
        "kv_alloc",
    ),
    V(
        "kv_post_capture_draft",
        "0.5.22",
        LAST,
        "[2026-09-22 10:00:40 TP0] Post-capture KV sizing: draft KV cache allocated. dtype: torch.bfloat16, #tokens: 402112, KV size: 1.53 GB",
        {"kv_gb": 1.53},
        "kv_alloc",
    ),
    V(
        "kv_post_capture_free",
        "0.5.16",
        "0.5.16",
        "[2026-04-22 10:00:40 TP0] Post-capture KV sizing: max_total_num_tokens=402112, free memory=7.31 GB",
        {"free_gb": 7.31},
        "kv_post_capture_info",
    ),
    V(
        "kv_post_capture_swa",
        "0.5.17",
        LAST,
        "[2026-05-22 10:00:40 TP0] Post-capture KV sizing: full_layer_tokens=120000, swa_layer_tokens=96000",
        {"full_tokens": 120000},
        "kv_post_capture_info",
    ),
    V(
        "kv_post_capture_reqs",
        "0.5.16",
        LAST,
        "[2026-05-22 10:00:40 TP0] Post-capture KV sizing: max_running_requests 512 -> 384",
        {},
        "kv_post_capture_info",
    ),
    V(
        "kv_post_capture_headroom",
        "0.5.16",
        LAST,
        "[2026-05-22 10:00:40 TP0] Post-capture KV sizing: decode CUDA graph max_bs=256 < max_running_requests=512; reserving activation headroom",
        {"decode_max_bs": 256},
        "kv_post_capture_info",
    ),
    V(
        "kv_post_capture_canary",
        "0.5.20",
        LAST,
        "[2026-07-22 10:00:40 TP0] Post-capture KV sizing: KV-canary per-forward workspace 0.25 GB",
        {"canary_workspace_gb": 0.25},
        "kv_post_capture_info",
    ),
    V(
        "mamba_alloc_plain",
        "0.5.2",
        "0.5.3.post1",
        "[2025-09-02 10:00:11 TP0] Mamba Cache is allocated. conv_state size: 0.37GB, ssm_state size: 11.25GB ",
        {"conv_gb": 0.37, "ssm_gb": 11.25},
        "mamba_alloc",
    ),
    V(
        "mamba_alloc_size",
        "0.5.3.post2",
        LAST,
        "[2025-11-02 10:00:11 TP0] Mamba Cache is allocated. max_mamba_cache_size: 256, conv_state size: 0.12GB, ssm_state size: 3.75GB ",
        {"max_mamba_cache_size": 256, "ssm_gb": 3.75},
        "mamba_alloc",
    ),
    V(
        "mamba_alloc_spec",
        "0.5.3.post2",
        LAST,
        "[2025-11-02 10:00:11 TP0] Mamba Cache is allocated. max_mamba_cache_size: 256, conv_state size: 0.12GB, ssm_state size: 3.75GB intermediate_ssm_state_cache size: 1.10GB intermediate_conv_window_cache size: 0.04GB ",
        {"intermediate_ssm_gb": 1.1},
        "mamba_alloc",
    ),
    V(
        "swa_tokens_capital",
        "0.4.9.post3",
        "0.5.6.post2",
        "[2025-08-02 10:00:11 TP0] Use Sliding window memory pool. full_layer_tokens=281600, swa_layer_tokens=225280",
        {"full_tokens": 281600, "swa_tokens": 225280},
        "swa_tokens",
    ),
    V(
        "swa_tokens",
        "0.5.7",
        LAST,
        "[2026-01-02 10:00:11 TP0] Use sliding window memory pool. full_layer_tokens=281600, swa_layer_tokens=225280",
        {"full_tokens": 281600},
        "swa_tokens",
    ),
    V(
        "swa_tokens_all",
        "0.5.9",
        LAST,
        "[2026-02-02 10:00:11 TP0] Use sliding window memory pool (all SWA). swa_layer_tokens=500000",
        {"swa_tokens": 500000},
        "swa_tokens",
    ),
    V(
        "swakv_pool",
        "0.5.3.post3",
        LAST,
        "[2026-01-02 10:00:11 TP0] SWAKVPool mem usage: 21.43 GB, swa size: 225280, full size: 281600",
        {"mem_gb": 21.43, "full_size": 281600},
        "swakv_pool",
    ),
    V(
        "swakv_pool_va",
        "0.5.18",
        LAST,
        "[2026-06-02 10:00:11 TP0] SWAKVPool VA upper bound: 30.00 GB, swa size: 225280, full size: 281600",
        {"mem_gb": 30.0},
        "swakv_pool",
    ),
    # DeepSeek-V4 (DSV4PoolConfigurator, model_executor/pool_configurator.py): one summary of the
    # solve (its fields grew with the releases: read from the 0.5.12-0.5.23 wheels), the SWA pool's
    # sizing (0.5.21+), and the sizes of every pool (full = max_total_num_tokens).
    V(
        "dsv4_memory",
        "0.5.12",
        "0.5.14",
        "[2026-03-02 10:00:11 TP0] DSV4 memory calculation: bytes_per_full_token=1234.50, available_bytes=40.00 GB, full_token=34000",
        {"full_token": 34000},
        "dsv4_memory",
    ),
    V(
        "dsv4_memory_c128_state",
        "0.5.15",
        "0.5.19",
        "[2026-04-12 10:00:11 TP0 EP0] DSV4 memory calculation: bytes_per_full_token=1811.25, available_bytes=21.40 GB, c128_state_fixed=0.06 GB, full_token=12672000",
        {"c128_state_fixed": 0.06, "full_token": 12672000},
        "dsv4_memory",
    ),
    V(
        "dsv4_memory_unified",
        "0.5.20",
        "0.5.20",
        "[2026-07-12 10:00:11 TP0 EP0] DSV4 memory calculation: unified=False, unified_fp8=False, bytes_per_full_token=1811.25, available_bytes=21.40 GB, c128_state_fixed=0.06 GB, swa_ring_fixed=0.00 GB, c4_state_fixed=0.03 GB, full_token=12648448",
        {"unified": False, "c4_state_fixed": 0.03},
        "dsv4_memory",
    ),
    V(
        "dsv4_memory_dspark",
        "0.5.21",
        LAST,
        "[2026-08-12 10:00:11 TP0 EP0] DSV4 memory calculation: unified=False, unified_fp8=False, dspark_draft_bf16=False, bytes_per_full_token=1811.25, available_bytes=21.40 GB, c128_state_fixed=0.06 GB, c2_state_fixed=0.00 GB, swa_fixed=0.38 GB, swa_ring_fixed=0.00 GB, c4_state_fixed=0.03 GB, full_token=12418048",
        {"swa_fixed": 0.38, "full_token": 12418048},
        "dsv4_memory",
    ),
    V(
        "dsv4_pools",
        "0.5.12",
        LAST,
        "[2026-08-12 10:00:11 TP0 EP0] DSV4 pool sizes: full=12418048, swa=24576, c4=3104512, c128=97016, c4_state=768, c128_state=0",
        {"full": 12418048, "swa": 24576, "c4": 3104512, "c128": 97016, "c4_state": 768, "c128_state": 0},
        "dsv4_pools",
    ),
    V(
        "dsv4_swa_sizing_cap",
        "0.5.21",
        LAST,
        "[2026-08-12 10:00:11 TP0 EP0] DSV4 SWA sizing: mode=cap, swa_tokens=24576, request_cap+headroom=24576, prefix_tails=32",
        {"mode": "cap", "swa_tokens": 24576, "prefix_tails": 32},
        "dsv4_swa_sizing",
    ),
    V(
        "dsv4_swa_sizing_ratio",
        "0.5.21",
        LAST,
        "[2026-08-12 10:00:11 TP0 EP0] DSV4 SWA sizing: mode=ratio (default), swa_tokens=1241600, swa_full_tokens_ratio=0.1",
        {"mode": "ratio (default)", "swa_full_tokens_ratio": 0.1},
        "dsv4_swa_sizing",
    ),
    # The multimodal reservation (KVCacheConfigurator.mm_runtime_reservation_gb, printed only for
    # multimodal models when SGLANG_VLM_CACHE_SIZE_MB (+ SGLANG_MM_FEATURE_CACHE_MB) > 0): GiB.
    V(
        "mm_reservation",
        "0.5.18",
        LAST,
        "[2026-06-12 10:00:11 TP0] Reserving 0.50 GB of the KV budget for post-sizing multimodal allocations (feature-transport pools + embedding cache).",
        {"reserved_gb": 0.5},
        "mm_reservation",
    ),
    # KVCacheConfigurator.resolve_max_num_reqs: what bounded max_running_requests (warnings).
    V(
        "max_running_capped_mamba",
        "0.5.17",
        LAST,
        "[2026-05-12 10:00:11 TP1] max_running_requests is capped to 9 by the mamba state cache (max_mamba_cache_size=45, 5 state slots per request). To raise it: increase --mamba-full-memory-ratio or --max-mamba-cache-size, or halve the state size with --mamba-ssm-dtype bfloat16.",
        {"tp_rank": 1, "max_running_requests": 9, "max_mamba_cache_size": 45, "slots_per_request": 5},
        "max_running_capped",
    ),
    V(
        "max_running_reduced",
        "0.5.14",
        LAST,
        "[2026-04-12 10:00:11 DP1 TP1] max_running_requests was reduced from the requested 128 to 40 (per dp worker) due to the available KV cache capacity.",
        {"dp_rank": 1, "requested": 128, "max_running_requests": 40},
        "max_running_capped",
    ),
    # The MLX backend's wording (hardware_backend/mlx): Apple silicon, not dated (one backend's file).
    V(
        "max_running_reduced_mlx",
        "0.5.16",
        LAST,
        "[2026-05-12 10:00:11] max_running_requests was reduced from the requested 16 to 6 (per dp worker) due to the available KV cache or auxiliary-state capacity.",
        {"requested": 16, "max_running_requests": 6},
        "max_running_capped",
        False,
    ),
    V(
        "pool_end",
        "0.1.17",
        LAST,
        "[2025-01-02 10:00:12 TP0] Memory pool end. avail mem=9.27 GB",
        {"avail_gb": 9.27},
        "pool_end",
    ),
    V(
        "max_total_tokens_capped",
        "0.2.14",
        LAST,
        "[2025-01-02 10:00:12 TP0] max_total_tokens=500000 is larger than the profiled value 441216. Use the profiled value instead.",
        {"user_limit": 500000, "profiled": 441216},
        "max_total_tokens_capped",
    ),
    # ---------------------------------------------------------------- graph capture
    V(
        "graph_begin_plain",
        "0.1.24",
        "0.4.3.post2",
        "[2024-12-02 10:00:13 TP0] Capture cuda graph begin. This can take up to several minutes.",
        {},
        "graph_begin",
    ),
    V(
        "graph_begin_avail",
        "0.4.3.post3",
        "0.5.13.post1",
        "[2025-05-02 10:00:13 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=8.91 GB",
        {"avail_gb": 8.91, "device": "cuda"},
        "graph_begin",
    ),
    V(
        "graph_begin_cpu",
        "0.5.2",
        "0.5.13.post1",
        "[2025-09-02 10:00:13] Capture cpu graph begin. This can take up to several minutes. avail mem=20.10 GB",
        {"device": "cpu"},
        "graph_begin",
    ),
    V(
        "graph_end_elapsed_only",
        "0.4.0",
        "0.4.3.post2",
        "[2025-01-02 10:00:20 TP0] Capture cuda graph end. Time elapsed: 7.42 s",
        {"elapsed_s": 7.42},
        "graph_end",
    ),
    V(
        "graph_end_avail_usage",
        "0.4.3.post3",
        "0.4.6",
        "[2025-04-02 10:00:20 TP0] Capture cuda graph end. Time elapsed: 9.10 s. avail mem=8.33 GB. mem usage=0.58 GB.",
        {"elapsed_s": 9.1, "avail_gb": 8.33, "mem_usage_gb": 0.58},
        "graph_end",
    ),
    V(
        "graph_end_usage_avail",
        "0.4.6.post1",
        "0.5.13.post1",
        "[2025-07-02 10:00:20 TP0] Capture cuda graph end. Time elapsed: 9.10 s. mem usage=0.58 GB. avail mem=8.33 GB.",
        {"avail_gb": 8.33, "mem_usage_gb": 0.58},
        "graph_end",
    ),
    V(
        "graph_end_cpu",
        "0.5.2",
        "0.5.13.post1",
        "[2025-09-02 10:00:20] Capture cpu graph end. Time elapsed: 3.21 s. mem usage=0.10 GB. avail mem=20.00 GB.",
        {"device": "cpu"},
        "graph_end",
    ),
    V(
        "graph_bs",
        "0.4.6.post2",
        "0.5.13.post1",
        "[2025-07-02 10:00:13 TP0] Capture cuda graph bs [1, 2, 4, 8, 16]",
        {"bs": [1, 2, 4, 8, 16]},
        "graph_bs",
    ),
    V(
        "graph_bs_cpu",
        "0.5.2",
        LAST,
        "[2025-09-02 10:00:13] Capture cpu graph bs [1, 2, 4]",
        {"bs": [1, 2, 4]},
        "graph_bs",
    ),
    V(
        "graph_piecewise_begin",
        "0.5.6",
        "0.5.13.post1",
        "[2025-12-02 10:00:13 TP0] Capture piecewise CUDA graph begin. avail mem=12.50 GB",
        {"phase": "piecewise"},
        "graph_begin",
    ),
    V(
        "graph_piecewise_end",
        "0.5.6",
        "0.5.13.post1",
        "[2025-12-02 10:00:20 TP0] Capture piecewise CUDA graph end. Time elapsed: 30.01 s. mem usage=0.91 GB. avail mem=11.59 GB.",
        {"mem_usage_gb": 0.91},
        "graph_end",
    ),
    V(
        "graph_decode_begin_bs_per_bs",
        "0.5.14",
        "0.5.15.post1",
        "[2026-03-12 10:00:13 TP0] Capture target decode CUDA graph begin. backend=full, num_tokens_per_bs=1, bs=[1, 2, 4, 8], avail mem=12.34 GB",
        {"backend": "full", "bs": [1, 2, 4, 8], "worker": "target"},
        "graph_begin",
    ),
    V(
        "graph_decode_begin_bs",
        "0.5.16",
        "0.5.21",
        "[2026-05-12 10:00:13 TP0] Capture target decode CUDA graph begin. backend=full, num_tokens_per_req=1, bs=[1, 2, 4, 8], avail mem=12.34 GB",
        {"num_tokens_per_req": 1},
        "graph_begin",
    ),
    V(
        "graph_decode_begin",
        "0.5.22",
        LAST,
        "[2026-09-12 10:00:13 TP0] Capture target decode CUDA graph begin. backend=full, num_tokens_per_req=1, avail mem=12.34 GB",
        {"avail_gb": 12.34},
        "graph_begin",
    ),
    V(
        "graph_decode_end",
        "0.5.14",
        "0.5.21",
        "[2026-05-12 10:00:16 TP0] Capture target decode CUDA graph end. elapsed=3.21 s, mem usage=0.45 GB, avail mem=11.89 GB.",
        {"elapsed_s": 3.21, "mem_usage_gb": 0.45},
        "graph_end",
    ),
    V(
        "graph_decode_end_bs",
        "0.5.22",
        LAST,
        "[2026-09-12 10:00:16 TP0] Capture target decode CUDA graph end. bs=[1, 2, 4, 8], elapsed=3.21 s, mem usage=0.45 GB, avail mem=11.89 GB.",
        {"bs": [1, 2, 4, 8], "avail_gb": 11.89},
        "graph_end",
    ),
    V(
        "graph_prefill_begin",
        "0.5.14",
        LAST,
        "[2026-05-12 10:00:16 TP0] Capture target prefill CUDA graph begin. backend=tc_piecewise, num_tokens=[4, 8, 16, 32], avail mem=11.80 GB",
        {"phase": "prefill", "num_tokens": [4, 8, 16, 32]},
        "graph_begin",
    ),
    V(
        "graph_verify_end",
        "0.5.14",
        "0.5.21",
        "[2026-05-12 10:00:30 TP0] Capture target verify CUDA graph end. elapsed=5.40 s, mem usage=0.70 GB, avail mem=10.01 GB.",
        {"phase": "verify"},
        "graph_end",
    ),
    # ---------------------------------------------------------------- speculative decoding
    V(
        "draft_graph_begin_old",
        "0.4.3.post3",
        "0.5.13.post1",
        "[2025-05-02 10:00:21 TP0] Capture draft cuda graph begin. This can take up to several minutes. avail mem=7.90 GB",
        {"worker": "draft"},
        "graph_begin",
    ),
    V(
        "draft_graph_end_avail_only",
        "0.4.3.post3",
        "0.4.4.post1",
        "[2025-03-02 10:00:25 TP0] Capture draft cuda graph end. Time elapsed: 4.01 s. avail mem=7.51 GB",
        {"worker": "draft", "avail_gb": 7.51},
        "graph_end",
    ),
    V(
        "draft_graph_end_avail_usage",
        "0.4.4.post2",
        "0.4.7",
        "[2025-04-02 10:00:25 TP0] Capture draft cuda graph end. Time elapsed: 4.01 s. avail mem=7.51 GB. mem usage=0.39 GB.",
        {"worker": "draft", "mem_usage_gb": 0.39},
        "graph_end",
    ),
    V(
        "draft_graph_end_usage_avail",
        "0.4.7.post1",
        "0.5.13.post1",
        "[2025-07-02 10:00:25 TP0] Capture draft cuda graph end. Time elapsed: 4.01 s. mem usage=0.39 GB. avail mem=7.51 GB.",
        {"worker": "draft", "avail_gb": 7.51},
        "graph_end",
    ),
    V(
        "draft_extend_begin_old",
        "0.4.7",
        "0.5.12.post1",
        "[2025-07-02 10:00:26 TP0] Capture draft extend cuda graph begin. This can take up to several minutes. avail mem=7.51 GB",
        {"phase": "extend", "worker": "draft"},
        "graph_begin",
    ),
    V(
        "draft_extend_end_old",
        "0.4.7.post1",
        "0.5.13.post1",
        "[2025-07-02 10:00:29 TP0] Capture draft extend cuda graph end. Time elapsed: 2.50 s. mem usage=0.20 GB. avail mem=7.31 GB.",
        {"phase": "extend", "mem_usage_gb": 0.2},
        "graph_end",
    ),
    V(
        "draft_extend_end_avail_first",
        "0.4.7",
        "0.4.7",
        "[2025-06-02 10:00:29 TP0] Capture draft extend cuda graph end. Time elapsed: 2.50 s. avail mem=7.31 GB. mem usage=0.20 GB.",
        {"phase": "extend", "avail_gb": 7.31},
        "graph_end",
    ),
    V(
        "draft_extend_step_begin",
        "0.5.7",
        "0.5.13.post1",
        "[2026-01-02 10:00:26 TP0] Capture draft extend cuda graph begin (step 2). This can take up to several minutes. avail mem=7.51 GB",
        {"step": 2},
        "graph_begin",
    ),
    V(
        "draft_extend_step_begin_new",
        "0.5.14",
        LAST,
        "[2026-03-12 10:00:26 TP0] Capture draft extend CUDA graph begin. step=1, avail mem=7.51 GB",
        {"step": 1},
        "graph_begin",
    ),
    V(
        "draft_extend_step_end_new",
        "0.5.14",
        LAST,
        "[2026-03-12 10:00:28 TP0] Capture draft extend CUDA graph end. step=1, elapsed=1.90 s, mem usage=0.11 GB, avail mem=7.40 GB.",
        {"step": 1, "mem_usage_gb": 0.11},
        "graph_end",
    ),
    V(
        "draft_decode_begin_new",
        "0.5.16",
        LAST,
        "[2026-05-12 10:00:26 TP0] Capture draft decode CUDA graph begin. backend=full, num_tokens_per_req=4, bs=[1, 2, 4], avail mem=7.51 GB",
        {"worker": "draft", "num_tokens_per_req": 4},
        "graph_begin",
    ),
    V(
        "draft_decode_end_new",
        "0.5.14",
        LAST,
        "[2026-05-12 10:00:28 TP0] Capture draft decode CUDA graph end. elapsed=2.20 s, mem usage=0.30 GB, avail mem=7.21 GB.",
        {"worker": "draft", "elapsed_s": 2.2},
        "graph_end",
    ),
    V(
        "single_cg_begin",
        "0.5.16",
        LAST,
        "[2026-05-12 10:00:30 TP0] Capture single-CG draft extend begin. This can take several minutes. avail mem=7.21 GB",
        {"worker": "draft"},
        "graph_begin",
    ),
    V(
        "frozen_kv_begin",
        "0.5.12",
        LAST,
        "[2026-03-12 10:00:30 TP0] Capture Frozen-KV MTP draft cuda graph begin.",
        {"worker": "draft"},
        "graph_begin",
    ),
    V(
        "uno_tree_end",
        "0.5.20",
        LAST,
        "[2026-07-12 10:00:31 TP0] Capture UNO tree draft CUDA graph end. elapsed=1.00 s, mem usage=0.05 GB, avail mem=7.16 GB.",
        {"worker": "draft"},
        "graph_end",
    ),
    V(
        "draft_load_format",
        "0.5.3.post2",
        LAST,
        "[2025-11-02 10:00:20 TP0] Using draft model load_format: 'auto'",
        {"load_format": "auto"},
        "draft_load_format",
    ),
    # ---------------------------------------------------------------- scheduler summary
    V(
        "summary_gpu_id",
        "0.1.24",
        "0.2.6",
        "[gpu_id=0] max_total_num_tokens=185000, max_prefill_tokens=16384, max_running_requests=2047, context_len=8192",
        {"max_total_num_tokens": 185000, "context_len": 8192},
        "summary",
    ),
    V(
        "summary_basic",
        "0.2.14",
        "0.4.1.post7",
        "[2024-09-02 10:00:30 TP0] max_total_num_tokens=441216, max_prefill_tokens=16384, max_running_requests=4097, context_len=131072",
        {"max_prefill_tokens": 16384},
        "summary",
    ),
    V(
        "summary_chunked",
        "0.4.2",
        "0.4.6.post5",
        "[2025-03-02 10:00:30 TP0] max_total_num_tokens=441216, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=4097, context_len=131072",
        {"chunked_prefill_size": 8192},
        "summary",
    ),
    V(
        "summary_gpu_mem",
        "0.4.7",
        LAST,
        "[2025-07-02 10:00:30 TP0] max_total_num_tokens=441216, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=4096, context_len=131072, available_gpu_mem=8.29 GB",
        {"available_mem_gb": 8.29, "available_mem_kind": "gpu"},
        "summary",
    ),
    V(
        "summary_cpu_mem",
        "0.5.2",
        LAST,
        "[2025-09-02 10:00:30] max_total_num_tokens=20000, chunked_prefill_size=4096, max_prefill_tokens=16384, max_running_requests=4096, context_len=2048, available_cpu_mem=19.80 GB",
        {"available_mem_kind": "cpu"},
        "summary",
    ),
    V("summary_bare", "0.2.0", LAST, "max_total_num_tokens=20000", {"max_total_num_tokens": 20000}, "summary"),
    # ---------------------------------------------------------------- HiCache host pools (decimal GB)
    V(
        "hicache_alloc",
        "0.4.1.post5",
        "0.5.16",
        "[2025-07-02 10:00:31 TP0] Allocating 45.04 GB host memory for hierarchical KV cache.",
        {"host_gb": 45.04},
        "hicache_alloc",
    ),
    V(
        "hicache_pool",
        "0.5.17",
        LAST,
        "[2026-05-02 10:00:31 TP0] Allocating kv hierarchical KV host pool: 640000 tokens, 45.04 GB host memory.",
        {"tokens": 640000, "host_gb": 45.04},
        "hicache_alloc",
    ),
    V(
        "hicache_pool_packed",
        "0.5.18",
        LAST,
        "[2026-06-02 10:00:31 TP0] Allocating kv hierarchical KV host pool: 640000 tokens, 46.00 GB host memory, packed MTP KV layers: target_layers=61, draft_layers=1, total_layers=62.",
        {"tokens": 640000},
        "hicache_alloc",
    ),
    V(
        "hicache_mamba",
        "0.5.10",
        LAST,
        "[2026-03-02 10:00:31 TP0] Allocating 3.20 GB host memory for hierarchical Mamba cache (layout=layer_first).",
        {"host_gb": 3.2, "label": "mamba"},
        "hicache_alloc",
    ),
    V(
        "hicache_not_enough",
        "0.4.1.post5",
        LAST,
        "[2025-07-02 10:00:31 TP0] Not enough host memory available. Requesting 540.00 GB but only have 410.25 GB free. Please reduce the size of the hierarchical cache.",
        {"requested_gb": 540.0, "available_gb": 410.25},
        "hicache_not_enough",
    ),
    # ---------------------------------------------------------------- runtime (not used for dating)
    V(
        "decode_batch_dot",
        "0.2.14",
        "0.4.3.post2",
        "[2024-09-02 10:01:00 TP0] Decode batch. #running-req: 12, #token: 8124, token usage: 0.02, gen throughput (token/s): 512.33, #queue-req: 0",
        {"running_req": 12, "token": 8124, "token_usage": 0.02, "queue_req": 0},
        "decode_batch",
        False,
    ),
    V(
        "decode_batch_trailing",
        "0.4.3.post3",
        "0.4.5.post3",
        "[2025-03-02 10:01:00 TP0] Decode batch. #running-req: 12, #token: 8124, token usage: 0.02, gen throughput (token/s): 512.33, #queue-req: 0, ",
        {"queue_req": 0},
        "decode_batch",
        False,
    ),
    V(
        "decode_batch_graph",
        "0.4.6.post4",
        "0.5.1.post3",
        "[2025-07-02 10:01:00 TP0] Decode batch. #running-req: 12, #token: 8124, token usage: 0.02, cuda graph: True, gen throughput (token/s): 512.33, #queue-req: 0",
        {"cuda_graph": True},
        "decode_batch",
        False,
    ),
    V(
        "decode_batch_comma",
        "0.5.4.post1",
        LAST,
        "[2026-01-02 10:01:00 TP0] Decode batch, #running-req: 48, #token: 91234, token usage: 0.57, accept len: 2.81, accept rate: 0.70, cuda graph: True, gen throughput (token/s): 2210.40, #queue-req: 3",
        {"running_req": 48, "token_usage": 0.57, "accept_len": 2.81, "queue_req": 3},
        "decode_batch",
        False,
    ),
    V(
        "decode_batch_iter",
        "0.5.4",
        LAST,
        "[2026-01-02 10:01:00 TP0] Decode batch [1520], #running-req: 4, #token: 1200, token usage: 0.01, cuda graph: True, gen throughput (token/s): 300.10, #queue-req: 0",
        {"iteration": 1520},
        "decode_batch",
        False,
    ),
    V(
        "decode_batch_swa",
        "0.4.9.post3",
        LAST,
        "[2026-01-02 10:01:00 TP0] Decode batch, #running-req: 4, #full token: 1200, full token usage: 0.01, #swa token: 900, swa token usage: 0.01, cuda graph: True, gen throughput (token/s): 300.10, #queue-req: 0",
        {"full_token": 1200, "swa_token_usage": 0.01},
        "decode_batch",
        False,
    ),
    V(
        "prefill_batch_hit_rate",
        "0.3.3",
        "0.4.3.post2",
        "[2024-09-02 10:01:00 TP0] Prefill batch. #new-seq: 1, #new-token: 512, #cached-token: 0, cache hit rate: 0.00%, token usage: 0.01, #running-req: 0, #queue-req: 0",
        {"new_token": 512, "cache_hit_rate": 0.0},
        "prefill_batch",
        False,
    ),
    V(
        "prefill_batch_new",
        "0.5.11",
        LAST,
        "[2026-03-02 10:01:00] Prefill batch, #new-seq: 2, #new-token: 1024, #cached-token: 64, token usage: 0.03, #running-req: 1, #queue-req: 0, #pending-token: 0, cuda graph: False, input throughput (token/s): 9120.55",
        {"new_seq": 2, "input_throughput": 9120.55},
        "prefill_batch",
        False,
    ),
    V(
        "retract_old",
        "0.2.14",
        "0.4.6.post5",
        "[2024-09-02 10:02:00 TP0] Decode out of memory happened. #retracted_reqs: 3, #new_token_ratio: 0.4000 -> 0.6500",
        {"retracted_reqs": 3, "new_token_ratio_to": 0.65},
        "retract",
        False,
    ),
    V(
        "retract_kv_full",
        "0.4.7",
        LAST,
        "[2025-07-02 10:02:00 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 2, #new_token_ratio: 0.3000 -> 0.5000",
        {"retracted_reqs": 2},
        "retract",
        False,
    ),
    V(
        "retract_kv_full_gained",
        "0.5.7",
        LAST,
        "[2026-01-02 10:02:00 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 1, #new_tokens_gained: 4096, #new_token_ratio: 0.3000 -> 0.5000",
        {"new_tokens_gained": 4096},
        "retract",
        False,
    ),
    # 0.1.3-0.1.16 runtime statistics (TP rank 0, no "Decode batch"/"Prefill batch" head)
    V(
        "decode_stats_v01",
        "0.1.3",
        "0.1.15",
        "#running-req: 4, #token: 2210, token usage: 0.03, #queue-req: 1",
        {"running_req": 4, "token": 2210, "token_usage": 0.03, "queue_req": 1},
        "decode_batch",
        False,
    ),
    V(
        "decode_stats_v01_throughput",
        "0.1.16",
        "0.1.16",
        "#running-req: 4, #token: 2210, token usage: 0.03, gen throughput (token/s): 187.52, #queue-req: 1",
        {"running_req": 4, "gen_throughput": 187.52},
        "decode_batch",
        False,
    ),
    V(
        "fill_batch_v01",
        "0.1.3",
        "0.1.10",
        "new fill batch. #seq: 2. #cached_token: 37. #new_token: 611. #remaining_req: 1. #running_req: 3",
        {"seq": 2, "new_token": 611, "running_req": 3},
        "prefill_batch",
        False,
    ),
    V(
        "fill_batch_v01_hit_rate",
        "0.1.11",
        "0.1.16",
        "new fill batch. #seq: 1. #cached_token: 128. #new_token: 96. #remaining_req: 0. #running_req: 2. tree_cache_hit_rate: 41.03%.",
        {"cached_token": 128, "tree_cache_hit_rate": 41.03},
        "prefill_batch",
        False,
    ),
    V(
        "retract_abort",
        "0.5.10",
        LAST,
        "[2026-03-02 10:02:00 TP0] retract_decode: aborted last request 7f3a due to OOM",
        {},
        "retract",
        False,
    ),
    # ---------------------------------------------------------------- failures
    V(
        "not_enough_memory",
        "0.1.18",
        LAST,
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
        {},
        "failure",
    ),
    V(
        "not_enough_memory_self_value",
        "0.5.3",
        "0.5.9",
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: self.server_args.mem_fraction_static=0.55",
        {"mem_fraction_static": 0.55},
        "failure",
    ),
    V(
        "not_enough_memory_value",
        "0.5.10",
        LAST,
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.3",
        {"mem_fraction_static": 0.3},
        "failure",
    ),
    V(
        "weights_no_memory",
        "0.5.14",
        LAST,
        "ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.7. Raise --mem-fraction-static above 0.812 (minimum viable = 1 - available/pre = 0.8021). If using speculative decoding, draft weights are now counted.",
        {"mem_fraction_static": 0.7, "suggested_mem_fraction_static": 0.812},
        "failure",
    ),
    V(
        "cuda_oom",
        "0.1.3",
        LAST,
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB. GPU 3 has a total capacity of 79.11 GiB of which 1.02 GiB is free.",
        {"exception": "torch.OutOfMemoryError"},
        "failure",
        False,
    ),
    V(
        "capture_failed",
        "0.1.24",
        LAST,
        "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 512.00 MiB.",
        {},
        "failure",
        False,
    ),
    V(
        "scheduler_exception",
        "0.3.6.post3",
        LAST,
        "[2025-07-02 10:00:20 TP4] Scheduler hit an exception: Traceback (most recent call last):",
        {"component": "Scheduler", "tp_rank": 4},
        "exception_start",
    ),
    # "Exception in X:" + the traceback on the following lines (logger.error), 0.1.x-0.3.2;
    # no prefix up to 0.2.13, "[HH:MM:SS TPn] " from 0.2.14.
    V(
        "exception_in_model_rpc_client",
        "0.1.3",
        "0.1.16",
        "Exception in ModelRpcClient:",
        {"component": "ModelRpcClient"},
        "exception_start",
    ),
    V(
        "exception_in_model_tp_server",
        "0.1.17",
        "0.3.2",
        "[14:20:07 TP1] Exception in ModelTpServer:",
        {"component": "ModelTpServer", "tp_rank": 1},
        "exception_start",
    ),
    V(
        "exception_in_run_tp_server",
        "0.1.21",
        "0.3.2",
        "Exception in run_tp_server:",
        {"component": "run_tp_server"},
        "exception_start",
    ),
    V(
        "exception_in_controller_single",
        "0.1.17",
        "0.3.2",
        "[14:20:07 TP0] Exception in ControllerSingle:",
        {"component": "ControllerSingle", "tp_rank": 0},
        "exception_start",
    ),
    V(
        "exception_in_controller_multi",
        "0.1.22",
        "0.3.2",
        "Exception in ControllerMulti:",
        {"component": "ControllerMulti"},
        "exception_start",
    ),
    # An image a request referred to could not be processed: the server goes on.
    V(
        "exception_in_tokenizer_manager",
        "0.1.3",
        LAST,
        "[2025-03-02 11:40:00] Exception in TokenizerManager:",
        {"component": "TokenizerManager"},
        "exception_start",
    ),
    V(
        "exception_qualified_name",
        "0.1.3",
        LAST,
        "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 196608, Hardware limit: 101376.",
        {"exception": "triton.runtime.errors.OutOfResources"},
        "exception",
        False,
    ),
    V("traceback_bare", "0.1.3", LAST, "Traceback (most recent call last):", {}, "exception_start", False),
    V(
        "exception_other",
        "0.1.3",
        LAST,
        "AssertionError: tp_size 3 does not divide the number of attention heads",
        {"exception": "AssertionError"},
        "exception",
        False,
    ),
    V(
        "sigquit_typo",
        "0.4.1.post6",
        "0.4.3.post2",
        "[2025-02-02 10:00:21] Received sigquit from a child proces. It usually means the child failed.",
        {},
        "child_failed",
    ),
    V(
        "sigquit",
        "0.4.3.post3",
        LAST,
        "[2025-07-02 10:00:21] Received sigquit from a child process. It usually means the child failed.",
        {},
        "child_failed",
    ),
    V(
        "scheduler_dead",
        "0.4.1.post2",
        "0.5.9",
        "[2025-07-02 10:00:21] Rank 0 scheduler is dead. Please check if there are relevant logs.",
        {"rank": 0},
        "child_failed",
    ),
    V(
        "scheduler_died",
        "0.5.10",
        LAST,
        "RuntimeError: Rank 1 scheduler died during initialization (exit code: -9). If exit code is -9 (SIGKILL), a common cause is the OS OOM killer. Run `dmesg -T | grep -i oom` to check.",
        {"rank": 1, "exit_code": -9},
        "child_failed",
    ),
    V(
        "subprocess_crashed",
        "0.5.10",
        LAST,
        "[2026-03-02 10:00:21] Subprocess scheduler_0 (pid=4242) crashed with exit code -9. Triggering SIGQUIT for cleanup...",
        {"exit_code": -9},
        "child_failed",
    ),
    V(
        "init_failed",
        "0.1.22",
        "0.3.2",
        "Initialization failed. controller_init_state: Traceback (most recent call last):",
        {},
        "failure",
    ),
    V("killed", "0.1.3", LAST, "Killed", {}, "killed", False),
    # ---------------------------------------------------------------- main process
    V("ready", "0.1.18", LAST, "[2025-07-02 10:00:40] The server is fired up and ready to roll!", {}, "ready", False),
    V(
        "uvicorn_started",
        "0.3.4",
        LAST,
        "[2025-07-02 10:00:35] INFO:     Started server process [31337]",
        {"pid": 31337},
        "uvicorn",
        False,
    ),
    V(
        "uvicorn_running_bare",
        "0.1.3",
        "0.3.3.post1",
        "INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)",
        {"url": "http://0.0.0.0:30000"},
        "uvicorn",
        False,
    ),
    # Not in the catalogue; seen in genuine 0.5.19 and 0.5.23 logs, not in 0.5.14: range unknown, does not date.
    V(
        "startup_timings",
        "0.5.19",
        LAST,
        "[2026-08-02 10:00:35] Engine startup timings (s): load_weight=12.20, kv_cache_allocation=1.50, scheduler_e2e=40.00, cuda_graph={prefill=0.00, decode=9.30, target_verify=0.00, draft_prefill=0.00, draft_decode=0.00, draft_extend=0.00}, tokenizer_e2e=61.00",
        {"load_weight": 12.2},
        "startup_timings",
        False,
    ),
    V(
        "launch_dp",
        "0.3.6",
        LAST,
        "[2025-07-02 10:00:02] Launch DP1 starting at GPU #4.",
        {"dp_rank": 1, "gpu": 4},
        "launch_dp",
    ),
    V(
        "server_args_dataclass",
        "0.1.24",
        "0.5.18",
        "[2025-07-02 10:00:01] server_args=ServerArgs(model_path='/models/llama', tp_size=2, mem_fraction_static=0.88)",
        {},
        "server_args",
        False,
    ),
    V(
        "server_args_dict",
        "0.5.19",
        LAST,
        "[2026-06-02 10:00:01] server_args={'model_path': '/models/llama', 'tp_size': 2, 'mem_fraction_static': 0.88}",
        {},
        "server_args",
        False,
    ),
]


def signature(kind: str, form: str | None, fields: dict[str, Any]) -> tuple:
    """What identifies a wording: kind, form, which fields are present, and graph names' style."""
    keys = frozenset(k for k in fields if k not in ("exception",))
    name = fields.get("name")
    style = None
    if isinstance(name, str):
        words = name.split()
        style = " ".join(
            "<dev>"
            if w.lower() in ("cuda", "cpu", "npu", "xpu", "musa", "hpu") and w.islower()
            else "<DEV>"
            if w.lower() in ("cuda", "cpu", "npu", "xpu", "musa", "hpu")
            else w
            for w in words
        )
    return (kind, form, keys, style)


@lru_cache(maxsize=1)
def _index() -> dict[tuple, list[Variant]]:
    """Signature -> variants, from parsing every sample (cached on disk next to lark's tables:
    parsing 150 samples costs a quarter of a second on every run otherwise)."""
    import pickle

    by_name = {v.name: v for v in VARIANTS}
    cache = _index_cache_path()
    if cache:
        try:
            with open(cache, "rb") as fh:
                return {sig: [by_name[n] for n in names] for sig, names in pickle.load(fh).items()}
        except (OSError, EOFError, KeyError, pickle.UnpicklingError, ValueError, TypeError):
            pass
    from logparse.grammar.sglang_line import parse_line

    names: dict[tuple, list[str]] = {}
    for v in VARIANTS:
        if not v.dates or v.name.startswith("prefix_"):
            continue
        _, _, (kind, fields, form) = parse_line(v.sample)
        names.setdefault(signature(kind, form, fields), []).append(v.name)
    if cache:
        try:
            tmp = f"{cache}.{os.getpid()}.tmp"
            with open(tmp, "wb") as fh:
                pickle.dump(names, fh)
            os.replace(tmp, cache)
        except OSError:
            pass
    return {sig: [by_name[n] for n in ns] for sig, ns in names.items()}


def _index_cache_path() -> str:
    """Keyed by the variant table and the grammar: a change to either rebuilds the index."""
    import hashlib

    from logparse.grammar.lalr import cache_folder, grammar_text

    digest = hashlib.sha256(
        repr([(v.name, v.sample, v.dates) for v in VARIANTS]).encode() + grammar_text("sglang_line.lark").encode()
    ).hexdigest()[:16]
    return os.path.join(cache_folder(), f"variants-{digest}.pickle")


def match(kind: str, form: str | None, fields: dict[str, Any]) -> list[Variant]:
    return _index().get(signature(kind, form, fields), [])


def _union(vs: Iterable[Variant]) -> tuple[str, str] | None:
    vs = list(vs)
    if not vs:
        return None
    lo = min(vs, key=lambda v: versions.index(v.since)).since
    hi = max(vs, key=lambda v: versions.index(v.until)).until
    return (lo, hi)


def evidence_for_events(events, launch) -> list[tuple[str, tuple[str, str]]]:
    """Release ranges implied by the wording of a launch's lines (one item per distinct wording)."""
    out: list[tuple[str, tuple[str, str]]] = []
    seen: set = set()
    for ev in events:
        if ev.kind in ("decode_batch", "prefill_batch", "retract", "uvicorn", "server_args"):
            continue
        sig = signature(ev.kind, ev.form, ev.fields)
        if sig in seen:
            continue
        seen.add(sig)
        vs = match(ev.kind, ev.form, ev.fields)
        rng = _union(vs)
        if vs and rng is not None:
            ev.variant = vs[0].name
            out.append((f"'{_short(ev.text)}' ({'/'.join(v.name for v in vs)})", rng))
    # The prefix of the lines: era of SGLang's logging format.
    prefixes = _prefix_evidence(events, launch)
    out.extend(prefixes)
    return out


def _short(text: str, n: int = 48) -> str:
    body = text.split("] ", 1)[-1] if text.startswith("[") else text
    return body if len(body) <= n else body[:n] + "…"


_RANK_COLON_RE = re.compile(r"Rank \d+: ")


def _prefix_evidence(events, launch) -> list[tuple[str, tuple[str, str]]]:
    out = []
    texts = [e.text for e in events[:200]]
    if any(_RANK_COLON_RE.match(t) for t in texts):
        out.append(("rank prefix 'Rank N: '", ("0.1.3", "0.1.16")))
    if any(t.startswith("[gpu_id=") for t in texts):
        out.append(("rank inside the message ([gpu_id=N])", ("0.1.17", "0.2.6")))
    elif any(t.startswith("[gpu=") for t in texts):
        out.append(("rank inside the message ([gpu=N])", ("0.2.7", "0.2.13")))
    stamps = [e.ts for e in events if e.ts]
    bracketed = [t for t in texts if t.startswith("[") and not t.startswith("[gpu")]
    if bracketed:
        if all(len(t) > 11 and t[1:5].isdigit() and t[5] == "-" for t in bracketed):
            out.append(("date in the line prefix", ("0.3.4", versions.last())))
        elif all(t[3] == ":" for t in bracketed if len(t) > 3):
            out.append(("time-only line prefix [HH:MM:SS]", ("0.2.14", "0.3.3.post1")))
    if any(t.startswith("[") and len(t) > 24 and t[20] == "." and t[21:24].isdigit() for t in texts):
        out.append(("milliseconds in the line prefix (SGLANG_LOG_MS)", ("0.5.6", versions.last())))
    if any(e.dp_rank == -1 for e in events):
        out.append(("DP-1 rank tag", ("0.3.6", "0.3.6")))
    if any(e.attn_cp_rank is not None or e.moe_dp_rank is not None for e in events):
        out.append(("ATTN_CP/MOE_DP rank tag", ("0.5.9", versions.last())))
    sched = [e for e in events if e.kind in ("load_begin", "load_end", "kv_alloc", "pool_end")]
    if sched and launch.tp_size == 1 and all(not e.tagged for e in sched) and bracketed:
        out.append(("no rank tag on a single-GPU scheduler", ("0.4.6.post2", versions.last())))
    for e in events:
        if e.tagged and e.pp_rank is not None and e.text.startswith("["):
            head = e.text.split("]", 1)[0]
            if " TP" in head and " PP" in head:
                if head.index(" PP") < head.index(" TP"):
                    out.append(("PP tag before TP", ("0.5.5.post1", versions.last())))
                else:
                    out.append(("PP tag after TP", ("0.4.6.post2", "0.5.5")))
            break
    del stamps
    return out
