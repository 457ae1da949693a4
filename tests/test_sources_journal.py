"""journalctl renderings of a genuine journal built from our own multi-launch fixture.

The fixture (two launches of ``sglang.service`` in two boots, a second unit interleaved,
a Dec 31 -> Jan 1 crossing) is written to a real ``.journal`` file by
systemd-journal-remote and rendered by the real journalctl in every output mode.  Every
mode must give the same records as the entries say, except for the documented losses.
"""

from __future__ import annotations

import re
import time

import pytest
from journal_fixture import RENDERINGS, Entry, build_journal, render_all, require_tools

from logparse.sources import InputError, journal_source, open_inputs, text_source

HOST = "gpu-node-1"
BOOT_A = "3c9e1f0b5a7d4e2c8b6a9d1e0f2c4b7a"
BOOT_B = "7e6d5c4b3a2910f8e7d6c5b4a3928170"
T0 = 1798761590_000000  # 2026-12-31 23:59:50 UTC: launch 1 runs into the new year

_FIELDS = [
    ("model_path", "'/srv/models/Meta-Llama-3.1-70B-Instruct'"),
    ("tokenizer_path", "'/srv/models/Meta-Llama-3.1-70B-Instruct'"),
    ("tokenizer_mode", "'auto'"),
    ("skip_tokenizer_init", "False"),
    ("load_format", "'auto'"),
    ("trust_remote_code", "False"),
    ("dtype", "'auto'"),
    ("kv_cache_dtype", "'auto'"),
    ("quantization", "None"),
    ("context_length", "None"),
    ("device", "'cuda'"),
    ("served_model_name", "'/srv/models/Meta-Llama-3.1-70B-Instruct'"),
    ("chat_template", "None"),
    ("is_embedding", "False"),
    ("revision", "None"),
    ("host", "'0.0.0.0'"),
    ("port", "30000"),
    ("mem_fraction_static", "0.88"),
    ("max_running_requests", "None"),
    ("max_total_tokens", "None"),
    ("chunked_prefill_size", "8192"),
    ("max_prefill_tokens", "16384"),
    ("schedule_policy", "'fcfs'"),
    ("schedule_conservativeness", "1.0"),
    ("cpu_offload_gb", "0"),
    ("page_size", "1"),
    ("tp_size", "4"),
    ("pp_size", "1"),
    ("stream_interval", "1"),
    ("random_seed", "1034577351"),
    ("watchdog_timeout", "300"),
    ("download_dir", "None"),
    ("base_gpu_id", "0"),
    ("gpu_id_step", "1"),
    ("log_level", "'info'"),
    ("log_level_http", "None"),
    ("log_requests", "False"),
    ("show_time_cost", "False"),
    ("enable_metrics", "True"),
    ("decode_log_interval", "40"),
    ("api_key", "None"),
    ("file_storage_path", "'sglang_storage'"),
    ("enable_cache_report", "False"),
    ("dp_size", "1"),
    ("load_balance_method", "'round_robin'"),
    ("dist_init_addr", "None"),
    ("nnodes", "1"),
    ("node_rank", "0"),
    ("json_model_override_args", "'{}'"),
    ("lora_paths", "None"),
    ("max_loras_per_batch", "8"),
    ("attention_backend", "'flashinfer'"),
    ("sampling_backend", "'flashinfer'"),
    ("grammar_backend", "'xgrammar'"),
    ("speculative_algorithm", "None"),
    ("enable_double_sparsity", "False"),
    ("disable_radix_cache", "False"),
    ("disable_cuda_graph", "False"),
    ("disable_cuda_graph_padding", "False"),
    ("enable_nccl_nvls", "False"),
    ("disable_outlines_disk_cache", "False"),
    ("disable_custom_all_reduce", "False"),
    ("disable_overlap_schedule", "False"),
    ("enable_mixed_chunk", "False"),
    ("enable_dp_attention", "False"),
    ("enable_ep_moe", "False"),
    ("enable_torch_compile", "False"),
    ("torch_compile_max_bs", "32"),
    ("cuda_graph_max_bs", "160"),
    ("cuda_graph_bs", "None"),
    ("torchao_config", "''"),
    ("enable_nan_detection", "False"),
    ("enable_p2p_check", "False"),
    ("triton_attention_reduce_in_fp32", "False"),
    ("triton_attention_num_kv_splits", "8"),
    ("num_continuous_decode_steps", "1"),
    ("delete_ckpt_after_loading", "False"),
    ("enable_memory_saver", "False"),
    ("allow_auto_truncate", "False"),
    ("enable_custom_logit_processor", "False"),
    ("tool_call_parser", "None"),
    ("enable_hierarchical_cache", "False"),
    ("hicache_ratio", "2.0"),
    ("enable_flashinfer_mla", "False"),
    ("flashinfer_mla_disable_ragged", "False"),
    ("warmups", "None"),
    ("debug_tensor_dump_output_folder", "None"),
    ("debug_tensor_dump_input_file", "None"),
    ("debug_tensor_dump_inject", "False"),
    ("disaggregation_mode", "'null'"),
    ("disaggregation_bootstrap_port", "8998"),
    ("disaggregation_transfer_backend", "'mooncake'"),
    ("disaggregation_ib_device", "None"),
]

_MORE_FIELDS = [
    "moe_dp_size",
    "dcp_comm_backend",
    "enable_mfu_metrics",
    "enable_metrics_for_all_schedulers",
    "tokenizer_metrics_custom_labels_header",
    "tokenizer_metrics_allowed_custom_labels",
    "enable_forward_pass_metrics",
    "forward_pass_metrics_worker_id",
    "forward_pass_metrics_ipc_name",
    "export_metrics_to_file",
    "export_metrics_to_file_dir",
    "mm_attention_backend",
    "fp8_gemm_runner_backend",
    "fp4_gemm_runner_backend",
    "bf16_gemm_backend",
    "mamba_backend",
    "cuda_graph_config",
    "cuda_graph_backend_decode",
    "cuda_graph_backend_prefill",
    "cuda_graph_max_bs_decode",
    "cuda_graph_max_bs_prefill",
    "cuda_graph_bs_decode",
    "cuda_graph_bs_prefill",
    "cuda_graph_prefill_max_context",
    "disable_prefill_cuda_graph",
    "disable_decode_cuda_graph",
    "enable_profile_cuda_graph",
    "debug_cuda_graph",
    "enable_symm_mem",
    "enable_fused_moe_sum_all_reduce",
    "enable_torch_symm_mem",
    "uno_lora_path",
    "speculative_draft_model_path",
    "speculative_draft_model_revision",
    "speculative_draft_load_format",
    "speculative_num_steps",
    "speculative_eagle_topk",
    "speculative_num_draft_tokens",
    "speculative_dflash_block_size",
    "speculative_dspark_block_size",
    "speculative_dspark_sps_table_path",
    "speculative_dspark_confidence_sts_path",
    "speculative_dspark_align_verify_tokens_to_graph_tier",
    "speculative_accept_threshold_single",
    "speculative_accept_threshold_acc",
    "speculative_use_rejection_sampling",
    "speculative_token_map",
    "speculative_attention_mode",
    "speculative_draft_attention_backend",
    "speculative_dsa_topk_backend",
    "speculative_draft_kv_cache_dtype",
    "speculative_draft_window_size",
    "speculative_moe_runner_backend",
    "speculative_moe_a2a_backend",
    "speculative_enable_w4a4_mxfp4_megamoe",
    "speculative_draft_model_quantization",
    "speculative_adaptive",
    "speculative_adaptive_config",
    "speculative_ngram_min_bfs_breadth",
    "speculative_ngram_max_bfs_breadth",
    "speculative_ngram_match_type",
    "speculative_ngram_max_trie_depth",
    "speculative_ngram_capacity",
    "speculative_ngram_external_corpus_path",
    "speculative_ngram_external_sam_budget",
    "speculative_ngram_external_corpus_max_tokens",
    "moe_a2a_backend",
    "enable_w4a4_mxfp4_megamoe",
    "moe_runner_backend",
    "flashinfer_mxfp4_moe_precision",
    "enable_eplb",
    "eplb_algorithm",
    "eplb_rebalance_num_iterations",
    "eplb_rebalance_layers_per_chunk",
    "eplb_min_rebalancing_utilization_threshold",
    "moe_dense_tp_size",
    "disable_flashinfer_cutlass_moe_fp4_allgather",
    "max_mamba_cache_size",
    "mamba_ssm_dtype",
    "mamba_max_states_per_path",
    "enable_mamba_cache_stochastic_rounding",
    "mamba_cache_philox_rounds",
    "mamba_full_memory_ratio",
    "mamba_radix_cache_strategy",
    "uses_mamba_radix_cache",
    "mamba_track_interval",
    "enable_int8_mamba_checkpoint",
    "int8_mamba_ckpt_size",
    "hicache_host_memory_mode",
    "hicache_size",
    "hicache_write_policy",
    "hicache_io_backend",
    "hicache_mem_layout",
    "hicache_storage_backend",
    "hicache_storage_prefetch_policy",
    "hicache_storage_backend_extra_config",
    "hicache_storage_prefetch_retry_poll_interval",
    "hicache_storage_prefetch_retry_max_attempts",
    "enable_broadcast_mm_inputs_process",
    "enable_prefix_mm_cache",
    "mm_enable_dp_encoder",
    "mm_process_config",
    "mm_processor_worker_num",
    "mm_io_worker_num",
    "mm_preprocess_cache_size_mb",
    "trust_mm_content_hashes",
    "limit_mm_data_per_request",
    "enable_mm_global_cache",
    "mm_global_cache_backend",
    "mm_feature_transport",
]


def server_args(ts: str, **override) -> bytes:
    fields = [(k, override.get(k, v)) for k, v in _FIELDS] + [(k, "None") for k in _MORE_FIELDS]
    line = f"[{ts}] server_args=ServerArgs(" + ", ".join(f"{k}={v}" for k, v in fields) + ")"
    return line.encode()


def _at(sec: float) -> int:
    return T0 + round(sec * 1_000_000)


def _e(sec, boot, unit, ident, pid, msg: bytes) -> Entry:
    return Entry(_at(sec), boot, HOST, unit, ident, pid, msg)


SG, EMB = "sglang.service", "embed.service"
TQDM = (
    "Capturing batches (bs=4 avail_mem=10.61 GB):  50%|\u2588\u2588\u2588\u2588\u2588     | 1/2 "
    "[00:00<00:00,  3.10it/s]\rCapturing batches (bs=1 avail_mem=10.55 GB): 100%|"
    "\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588| 2/2 [00:00<00:00,  4.02it/s]"
).encode()

ENTRIES: list[Entry] = [
    # launch 1, boot A, 2026-12-31 23:59:50 ...
    _e(0, BOOT_A, SG, "systemd", 1, b"Started sglang.service - SGLang inference server."),
    _e(
        0.000123,
        BOOT_A,
        SG,
        "python3",
        4242,
        b"/srv/venv/lib/python3.11/site-packages/sglang/launch_server.py:71: UserWarning: 'python -m "
        b"sglang.launch_server' is still supported, but 'sglang serve' is the recommended entrypoint.",
    ),
    _e(0.25, BOOT_A, SG, "python3", 4242, b"  Example: sglang serve --model-path <model> [options]"),
    _e(1, BOOT_A, SG, "python3", 4242, server_args("2026-12-31 23:59:51")),
    _e(2, BOOT_A, EMB, "systemd", 1, b"Started embed.service - SGLang embedding server."),
    _e(
        3,
        BOOT_A,
        EMB,
        "sglang-embed",
        5151,
        b"[2026-12-31 23:59:53] server_args=ServerArgs(model_path='/srv/models/bge-m3', is_embedding=True, "
        b"mem_fraction_static=0.1, port=30010)",
    ),
    _e(5, BOOT_A, SG, "python3", 4242, b"[2026-12-31 23:59:55 TP0] Load weight begin. avail mem=78.50 GB"),
    _e(
        6.5,
        BOOT_A,
        SG,
        "python3",
        4242,
        b"[2026-12-31 23:59:56 TP0] Using model weights from /srv/models/caf\xe9/llama (latin-1 path)",
    ),
    _e(7, BOOT_A, EMB, "sglang-embed", 5151, b"[2026-12-31 23:59:57] Load weight begin. avail mem=78.10 GB"),
    _e(
        9,
        BOOT_A,
        SG,
        "python3",
        4242,
        b"[2026-12-31 23:59:59 TP0] KV Cache is allocated. #tokens: 1031552, K size: 27.55 GB, V size: 27.55 GB",
    ),
    _e(11.75, BOOT_A, SG, "python3", 4242, TQDM),
    _e(
        12,
        BOOT_A,
        SG,
        "python3",
        4242,
        b"[2027-01-01 00:00:02 TP0] Capture cuda graph end. Time elapsed: 1.20 s. mem usage=0.06 GB. "
        b"avail mem=10.55 GB.",
    ),
    _e(
        13, BOOT_A, SG, "python3", 4242, b"[2027-01-01 00:00:03] \x1b[32mINFO\x1b[0m:     Started server process [4242]"
    ),
    _e(14, BOOT_A, EMB, "sglang-embed", 5151, b"[2027-01-01 00:00:04] The server is fired up and ready to roll!"),
    # a native-protocol (multi-line) MESSAGE
    _e(
        15,
        BOOT_A,
        SG,
        "python3",
        4242,
        b"[2027-01-01 00:00:05 TP0] Scheduler watchdog report:\n  running=0 waiting=3 token usage: 0.97",
    ),
    # a traceback as journald stores a service's stderr: one entry per line
    _e(
        16,
        BOOT_A,
        SG,
        "python3",
        4242,
        b"[2027-01-01 00:00:06 TP0] Scheduler hit an exception: Traceback (most recent call last):",
    ),
    _e(
        16,
        BOOT_A,
        SG,
        "python3",
        4242,
        b'  File "/srv/venv/lib/python3.11/site-packages/sglang/srt/managers/scheduler.py", line 2513, '
        b"in run_scheduler_process",
    ),
    _e(16, BOOT_A, SG, "python3", 4242, b"    scheduler.event_loop_overlap()"),
    _e(16, BOOT_A, SG, "python3", 4242, b"RuntimeError: CUDA error: an illegal memory access was encountered"),
    _e(18, BOOT_A, SG, "systemd", 1, b"sglang.service: Main process exited, code=exited, status=1/FAILURE"),
    _e(18, BOOT_A, SG, "systemd", 1, b"sglang.service: Failed with result 'exit-code'."),
    # launch 2, boot B
    _e(600, BOOT_B, SG, "systemd", 1, b"Started sglang.service - SGLang inference server."),
    _e(601, BOOT_B, SG, "python3", 777, server_args("2027-01-01 00:10:01", mem_fraction_static="0.85")),
    _e(603, BOOT_B, SG, "python3", 777, b"[2027-01-01 00:10:03 TP0] Load weight begin. avail mem=78.52 GB"),
    _e(
        605,
        BOOT_B,
        SG,
        "python3",
        777,
        b"[2027-01-01 00:10:05] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)",
    ),
    _e(606, BOOT_B, SG, "python3", 777, b"[2027-01-01 00:10:06] The server is fired up and ready to roll!"),
]

# ---------------------------------------------------------------------------------------
# What each rendering keeps of an entry (verified against journalctl 252)

_ANSI = re.compile(rb"\x1b\[[0-9;]*m")
SHORT_MODES = (
    "short",
    "short-precise",
    "short-iso",
    "short-iso-precise",
    "short-full",
    "short-unix",
    "short-monotonic",
    "with-unit",
    "short.no-hostname",
    "short.all",
)
FULL_META = ("json", "json-seq", "json-pretty", "export", "verbose", "json.all")
PRECISE_TS = ("short-precise", "short-iso-precise", "short-unix") + FULL_META


def _printable(b: bytes, allow_esc: bool) -> bool:
    try:
        s = b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return not any(ord(c) < 32 and c not in "\t\n" and not (allow_esc and c == "\x1b") for c in s)


def _pieces(msg: bytes) -> list[str]:
    parts = msg.split(b"\n")
    if len(parts) > 1 and parts[-1] == b"":
        parts.pop()
    return [p.decode("utf-8", "replace") for p in parts]


def expected(mode: str) -> list[tuple]:
    """(text or None, host, unit, pid, boot, ts) per non-marker record of a rendering."""
    out = []
    shown_boot = None  # short*/verbose: known only after a "-- Boot" marker
    prev = None
    for e in ENTRIES:
        if prev is not None and e.boot != prev:
            shown_boot = e.boot
        prev = e.boot
        msg = e.message
        host = None if mode in ("cat", "short.no-hostname") else e.host
        unit = None if mode == "cat" else e.unit
        pid = None if mode == "cat" else e.pid
        boot = e.boot if mode in FULL_META else None if mode == "cat" else shown_boot
        if mode in ("cat", "short-monotonic"):
            ts = None
        elif mode in PRECISE_TS:
            ts = e.realtime_us / 1e6
        else:
            ts = float(e.realtime_us // 1_000_000)
        texts: list[str | None]
        if mode in SHORT_MODES and mode != "short.all":
            stripped = _ANSI.sub(b"", msg).replace(b"\t", b" " * 8)
            texts = _pieces(stripped) if _printable(stripped, False) else [None]
        elif mode == "verbose":
            texts = _pieces(msg) if _printable(msg, False) else [None]
        elif mode in ("json", "json-seq", "json-pretty") and len(msg) + len("MESSAGE=") >= 4096:
            texts = [None]
        else:
            texts = _pieces(msg)
        for t in texts:
            out.append((t, host, unit, pid, boot, ts))
    return out


def _got(records) -> list[tuple]:
    return [(r.text, r.host, r.unit, r.pid, r.boot, r.ts) for r in records if not r.marker]


def _same(got: list[tuple], want: list[tuple]) -> None:
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g[:5] == w[:5], f"record {i}: {g[:5]!r} != {w[:5]!r}"
        if w[5] is None:
            assert g[5] is None, f"record {i}"
        else:
            assert g[5] == pytest.approx(w[5], abs=1e-6), f"record {i}: ts {g[5]} != {w[5]}"


# ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def journal(tmp_path_factory):
    require_tools()
    d = tmp_path_factory.mktemp("journal")
    path = build_journal(ENTRIES, d)
    renderings = render_all(path, d)
    return path, d, renderings


def test_fixture_is_what_the_tests_say():
    big = [e for e in ENTRIES if len(e.message) >= 4096]
    assert len(big) == 2  # two server_args lines lost by json without --all
    assert any(b"\r" in e.message and b"avail_mem=" in e.message for e in ENTRIES)
    assert any(b"\x1b[32m" in e.message for e in ENTRIES)
    assert any(not _printable(e.message, True) for e in ENTRIES)  # the latin-1 byte


@pytest.mark.parametrize("mode", list(RENDERINGS))
def test_every_rendering_gives_the_entries(journal, mode):
    _, d, _ = journal
    src = next(open_inputs([str(d / f"{mode}.txt")]))
    records = list(src.records())
    _same(_got(records), expected(mode))

    # markers: one "-- Boot" separator in the modes that print it, nothing else
    markers = [r for r in records if r.marker]
    if mode in SHORT_MODES or mode == "verbose":
        assert [m.text for m in markers] == [f"-- Boot {BOOT_B} --"]
    else:
        assert markers == []

    # lost text: a problem naming unit, time and the fix, and one counted warning per kind
    lost = [r for r in records if r.text is None]
    assert len(lost) == sum(1 for w in expected(mode) if w[0] is None)
    for r in lost:
        assert (r.problem and SG in r.problem) or EMB in r.problem
        assert "--all" in r.problem and "export" in r.problem
    if lost:
        assert len(src.warnings) == 1
        assert f"{len(lost)} journal message" in src.warnings[0]
        assert "--all" in src.warnings[0]
    else:
        assert src.warnings == []


@pytest.mark.parametrize("mode", list(RENDERINGS))
def test_format_detected_and_records_accounted(journal, mode):
    _, d, renderings = journal
    src = next(open_inputs([str(d / f"{mode}.txt")]))
    records = list(src.records())
    want = {
        "short": "journal-short",
        "short.all": "journal-short",
        "short.no-hostname": "journal-short",
        "short-precise": "journal-short-precise",
        "short-iso": "journal-short-iso",
        "short-iso-precise": "journal-short-iso-precise",
        "short-full": "journal-short-full",
        "short-unix": "journal-short-unix",
        "short-monotonic": "journal-short-monotonic",
        "with-unit": "journal-with-unit",
        "cat": "plain",
        "json": "journal-json",
        "json.all": "journal-json",
        "json-seq": "journal-json-seq",
        "json-pretty": "journal-json-pretty",
        "export": "journal-export",
        "verbose": "journal-verbose",
    }[mode]
    assert src.fmt == want
    assert {r.fmt for r in records if not r.marker} == {want}
    nlines = renderings[mode].count(b"\n")
    if mode in SHORT_MODES or mode == "cat":
        assert len(records) == nlines  # one record per physical line
        assert [r.line_no for r in records] == list(range(1, nlines + 1))
    else:  # one per entry (+ further lines of a multi-line MESSAGE) + markers
        extra = sum(len(_pieces(e.message)) - 1 for e in ENTRIES)
        assert len(records) == len(ENTRIES) + extra + (1 if mode == "verbose" else 0)
    assert src.bytes_read == len(renderings[mode])


def test_short_modes_year_rollover_and_notes(journal):
    _, d, _ = journal
    for mode in ("short", "short-precise", "short.no-hostname"):
        recs = [r for r in next(open_inputs([str(d / f"{mode}.txt")])).records() if not r.marker]
        years = [time.gmtime(r.ts).tm_year for r in recs]
        assert years[0] == 2026 and years[-1] == 2027
        assert all("year from the SGLang timestamp" in r.notes for r in recs)


def test_multiline_message_continuation_keeps_metadata(journal):
    _, d, _ = journal
    recs = list(next(open_inputs([str(d / "short.txt")])).records())
    i = next(i for i, r in enumerate(recs) if r.text and "watchdog report" in r.text)
    head, cont = recs[i], recs[i + 1]
    assert cont.text == "  running=0 waiting=3 token usage: 0.97"
    assert (cont.host, cont.unit, cont.pid, cont.boot, cont.ts) == (head.host, head.unit, head.pid, head.boot, head.ts)
    assert cont.line_no == head.line_no + 1


def test_json_cursor_and_last_cursor(journal):
    _, d, _ = journal
    src = next(open_inputs([str(d / "json.txt")]))
    recs = list(src.records())
    assert all(r.cursor and r.cursor.startswith("s=") for r in recs)
    assert set(src.last_cursor) == {(HOST, SG), (HOST, EMB)}
    assert src.last_cursor[(HOST, SG)] == recs[-1].cursor


def test_journal_source_reads_the_file(journal):
    path, _, _ = journal
    src = journal_source(file=path)
    assert src.fmt == "journal-export"
    recs = list(src.records())
    _same(_got(recs), expected("export"))
    assert src.warnings == []
    assert src.last_cursor[(HOST, SG)] == recs[-1].cursor
    emb_last = [r for r in recs if r.unit == EMB][-1]
    assert src.last_cursor[(HOST, EMB)] == emb_last.cursor
    assert "journalctl" in src.name and "--all" in src.name

    # filter by unit: -u also matches systemd's own lines about the unit
    emb = list(journal_source(file=path, unit=EMB).records())
    assert {r.unit for r in emb} == {EMB}
    assert [r.text for r in emb] == [t for t, _, u, *_ in expected("export") if u == EMB]

    # resume after a cursor
    k = 9
    rest = list(journal_source(file=path, after_cursor=recs[k].cursor).records())
    assert [r.text for r in rest] == [r.text for r in recs[k + 1 :]]


def test_journal_source_errors(journal, monkeypatch):
    path, _, _ = journal
    with pytest.raises(InputError, match=r"timestamp|since|parse"):
        list(journal_source(file=path, since="not a time at all").records())
    import logparse.sources as sources

    monkeypatch.setattr(sources.shutil, "which", lambda name: None)
    with pytest.raises(InputError, match="journalctl not found: install systemd or pass a saved rendering file"):
        journal_source(file=path)


def test_journal_source_stops_early_without_leaking(journal):
    path, _, _ = journal
    src = journal_source(file=path)
    it = src.records()
    first = next(it)
    assert first.text.startswith("Started sglang.service")
    it.close()  # the journalctl process is terminated, no error raised
    assert src._proc.poll() is not None


def test_json_null_message_without_all_is_a_problem():
    line = (
        f'{{"__CURSOR":"s=1;i=2","__REALTIME_TIMESTAMP":"1798761591000000","_BOOT_ID":"{BOOT_A}",'
        '"_HOSTNAME":"h","_SYSTEMD_UNIT":"sglang.service","_PID":"42","MESSAGE":null}\n'
    )
    src = text_source("j.json", line * 3)
    recs = list(src.records())
    assert [r.text for r in recs] == [None] * 3
    assert "sglang.service" in recs[0].problem and "2026-12-31 23:59:51" in recs[0].problem
    assert "--all" in recs[0].problem
    assert len(src.warnings) == 1 and src.warnings[0].startswith("j.json: 3 journal messages printed as null")


def test_json_message_forms():
    rows = [
        '{"MESSAGE":[91,50,48,50,54,45,49,49,45,50,57,32,48,56,58,48,57,58,49,53,93,32,13,120],"_PID":"9"}',
        '{"MESSAGE":["first value","second\\nvalue"],"_PID":"9"}',
        '{"_PID":"9"}',
        '{ "MESSAGE" : "spaced out, old systemd", "_PID" : "9" }',
    ]
    recs = list(text_source("j", "\n".join(rows) + "\n", "journal-json").records())
    assert [r.text for r in recs] == [
        "[2026-11-29 08:09:15] \rx",
        "first value",
        "second",
        "value",
        "",
        "spaced out, old systemd",
    ]
    assert {r.pid for r in recs} == {9}


def test_json_sse_and_seq():
    obj = '{"MESSAGE":"[2026-11-29 08:09:15] hello","_SYSTEMD_UNIT":"u.service"}'
    sse = text_source("x", f"data: {obj}\n\ndata: {obj}\n\n")
    recs = list(sse.records())
    assert sse.fmt == "journal-json-sse"
    assert [r.text for r in recs if not r.marker] == ["[2026-11-29 08:09:15] hello"] * 2
    assert len(recs) == 4
    seq = text_source("y", f"\x1e{obj}\n\x1e{obj}\n")
    assert seq.fmt == "journal-json-seq"
    assert [r.unit for r in seq.records()] == ["u.service"] * 2


@pytest.mark.parametrize("frame", ["", "\x1e", "data: "])
def test_a_json_line_cut_short_costs_its_line_only(frame):
    """A json / json-seq / json-sse line truncated mid-object (found by the fuzz tests): it is read
    as text with a warning, and the objects after it are read as objects; it opened a json-pretty
    object that swallowed every line after it."""
    obj = '{"MESSAGE":"[2026-11-29 08:09:%02d] hello","_SYSTEMD_UNIT":"u.service","_PID":"9"}'
    sep = "\n\n" if frame == "data: " else "\n"
    rows = [frame + obj % s for s in range(5)]
    rows[1] = rows[1][:40]
    src = text_source("cut", sep.join(rows) + sep)
    recs = [r for r in src.records() if not r.marker and r.text]  # json-sse: its blank lines
    assert [r.unit for r in recs] == ["u.service", None, "u.service", "u.service", "u.service"]
    assert [r.text for r in recs][2:] == [f"[2026-11-29 08:09:{s:02d}] hello" for s in (2, 3, 4)]
    assert any("not valid JSON" in w for w in src.warnings), src.warnings


def test_a_json_pretty_object_is_still_collected_over_its_lines():
    obj = '{\n\t"MESSAGE" : "[2026-11-29 08:09:15] hello",\n\t"_PID" : "9",\n\t"_SYSTEMD_UNIT" : "u.service"\n}\n'
    src = text_source("pretty", obj + obj[:30] + "\n" + obj)
    recs = [r for r in src.records() if not r.marker and r.unit == "u.service"]
    assert [r.text for r in recs] == ["[2026-11-29 08:09:15] hello"] * 2


def test_json_escapes_of_lone_surrogates_become_valid_text():
    """JSON's ``\\ud800`` decodes to a lone surrogate, which no store or terminal takes: in a journal
    field (host, unit, boot) it failed the whole ingest ("cannot encode str as UTF-8"); it is kept
    as the escape, as logparse.text says. A pair that names one character stays that character."""
    obj = '{"MESSAGE":"[2026-11-29 08:09:15] caf\\udce9 \\ud83d\\ude00","_HOSTNAME":"h\\ud800","_SYSTEMD_UNIT":"u\\uDFFF"}'
    (rec,) = list(text_source("j", obj + "\n").records())
    assert (rec.host, rec.unit) == ("h\\ud800", "u\\udfff")
    assert rec.text == "[2026-11-29 08:09:15] caf\\udce9 \U0001f600"
    deep = '{"MESSAGE":"x","_PID":' + "[" * 100_000 + "]" * 100_000 + "}"
    assert [r.text for r in text_source("d", deep + "\n", "journal-json").records()] == [deep]
