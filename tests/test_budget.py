"""The launch budget (:mod:`logparse.budget.model`): what every surface reads, tested on its own.

The launch below is written by us in SGLang 0.5's format with figures chosen so that every budget
figure can be checked by hand: two ranks, ``mem_fraction_static=0.5``, an 8B-style model whose
cell is 65,536 bytes per token per rank (32 layers × 4 KV heads × 128 × 2 bytes × K and V).
"""

from __future__ import annotations

import dataclasses

import pytest
from helpers import SAMPLES

from logparse.budget.model import launch_budget
from logparse.pipeline import parse_paths, parse_text

SERVER_ARGS = (
    "[2026-05-02 09:00:00] server_args=ServerArgs(model_path='/models/own-8b', tp_size=2, "
    "mem_fraction_static={f}, kv_cache_dtype='auto', page_size=1, chunked_prefill_size=8192)"
)
SETUP = """\
[2026-05-02 09:00:05 TP0] Load weight begin. avail mem=78.50 GB
[2026-05-02 09:00:05 TP1] Load weight begin. avail mem=78.40 GB
[2026-05-02 09:00:30 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=70.90 GB, mem usage=7.60 GB.
[2026-05-02 09:00:31 TP1] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=70.80 GB, mem usage=7.60 GB.
[2026-05-02 09:00:32 TP0] KV Cache is allocated. #tokens: 517734, K size: 15.80 GB, V size: 15.80 GB
[2026-05-02 09:00:32 TP1] KV Cache is allocated. #tokens: 517734, K size: 15.80 GB, V size: 15.80 GB
[2026-05-02 09:00:32 TP0] Memory pool end. avail mem=39.20 GB
[2026-05-02 09:00:32 TP1] Memory pool end. avail mem=39.10 GB
[2026-05-02 09:00:33 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=39.00 GB
[2026-05-02 09:00:33 TP1] Capture cuda graph begin. This can take up to several minutes. avail mem=38.90 GB
"""
CAPTURED = """\
[2026-05-02 09:00:53 TP0] Capture cuda graph end. Time elapsed: 20.00 s. mem usage=1.10 GB. avail mem=37.90 GB.
[2026-05-02 09:00:54 TP1] Capture cuda graph end. Time elapsed: 21.00 s. mem usage=1.30 GB. avail mem=37.60 GB.
[2026-05-02 09:00:55 TP0] max_total_num_tokens=517734, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=2048, context_len=131072, available_gpu_mem=37.90 GB
[2026-05-02 09:00:57] INFO:     Application startup complete.
[2026-05-02 09:00:58] The server is fired up and ready to roll!
"""
OOM = """\
[2026-05-02 09:00:40 TP1] Scheduler hit an exception: Traceback (most recent call last):
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.10 GiB of which 1.20 GiB is free.
"""


def budget_of(text: str):
    (launch,) = parse_text(text).launches
    return launch, launch_budget(launch)


def ready_log(f: float = 0.5) -> str:
    return SERVER_ARGS.format(f=f) + "\n" + SETUP + CAPTURED


def test_the_binding_rank_is_the_one_with_the_least_headroom():
    _, b = budget_of(ready_log())
    assert b.outcome == "ready" and b.setup_complete
    assert [(r.rank, r.headroom_gb) for r in b.ranks] == [("TP0", 37.9), ("TP1", 37.6)]
    assert b.binding_rank == "TP1" and b.headroom_gb == 37.6 and b.lowest_free_gb == 37.6
    assert b.unknown == {}


def test_each_rank_accounts_for_its_memory_step_by_step():
    _, b = budget_of(ready_log())
    tp1 = b.rank("TP1")
    assert (tp1.free_before_weights_gb, tp1.weights_gb, tp1.free_after_weights_gb) == (78.4, 7.6, 70.8)
    assert tp1.kv_pool_gb == 31.6  # K 15.80 + V 15.80
    # what Memory pool end shows beyond the KV pool: 70.80 − 31.60 − 39.10
    assert tp1.other_pools_gb == pytest.approx(0.1)
    assert tp1.graph_gb == 1.3
    # free at capture begin (38.90) is 0.20 below the pool's end (39.10): nothing printed accounts for it
    assert tp1.other_gb == pytest.approx(0.2)
    parts = tp1.weights_gb + tp1.kv_pool_gb + tp1.other_pools_gb + tp1.graph_gb + tp1.other_gb + tp1.headroom_gb
    assert parts == pytest.approx(tp1.free_before_weights_gb)


def test_kv_tokens_and_the_formula_of_the_era_agree_by_hand():
    _, b = budget_of(ready_log())
    assert b.kv_tokens == 517_734 and b.kv_tokens_source == "KV pool line of TP0"
    # rest = M_post 70.80 − M_pre 78.40 × (1 − 0.5) = 31.60 GiB; 31.60 × 2^30 / 65,536 = 517,734.4
    assert (b.pre_load_avail_gb, b.post_load_avail_gb, b.mem_fraction_static) == (78.4, 70.8, 0.5)
    assert b.reserved_gb == 39.2 and b.rest_gb == pytest.approx(31.6)
    assert b.bytes_per_token == pytest.approx(65_536, rel=1e-3)
    assert b.predicted_kv_tokens == 517_734 and b.kv_tokens_diff == 0 and b.within_rounding
    assert b.predicted_kv_tokens_lo <= 517_734 <= b.predicted_kv_tokens_hi
    assert b.derivation[0].startswith("rest = M_post 70.80 − M_pre 78.40 × (1 − 0.5)")


def test_a_pool_the_formula_cannot_give_is_not_called_within_rounding():
    """The same pool under a fraction of 0.6 would be 39.44 GiB: the replay must say the log disagrees."""
    _, b = budget_of(ready_log(f=0.6))
    assert b.kv_tokens == 517_734
    assert b.predicted_kv_tokens is not None and b.predicted_kv_tokens > 600_000
    assert b.within_rounding is False and b.kv_tokens_diff == 517_734 - b.predicted_kv_tokens


def test_a_log_cut_before_the_graphs_has_no_headroom_but_keeps_what_was_free():
    _, b = budget_of(SERVER_ARGS.format(f=0.5) + "\n" + SETUP)
    assert not b.setup_complete and b.headroom_gb is None
    assert b.unknown.get("headroom_gb")
    # TP1 after its last finished step (Memory pool end); a capture that began is no step yet
    assert b.lowest_free_gb == 39.1
    assert b.kv_tokens == 517_734  # the pool was allocated: its size is known


def test_a_failed_start_has_no_headroom_and_says_why():
    launch, b = budget_of(SERVER_ARGS.format(f=0.5) + "\n" + SETUP + OOM)
    assert launch.outcome == "failed" and b.outcome == "failed"
    assert b.headroom_gb is None and "fail" in b.unknown["headroom_gb"]


def test_the_budget_is_pure():
    launch, _ = budget_of(ready_log())
    before = dataclasses.asdict(launch)
    first, second = launch_budget(launch), launch_budget(launch)
    assert dataclasses.asdict(launch) == before
    assert dataclasses.asdict(first) == dataclasses.asdict(second)


def test_an_old_release_without_a_pool_line_reads_the_scheduler_summary():
    (launch,) = parse_paths([SAMPLES / "sglang-0.2" / "llama-tp2-0.2.5.log"]).launches
    b = launch_budget(launch)
    assert b.kv_tokens == launch.max_total_num_tokens == 148_253
    assert b.kv_tokens_source == "max_total_num_tokens (scheduler summary)"


def test_a_vllm_budget_reads_the_engine_pool_and_says_how():
    path = SAMPLES / "vllm" / "fail-max-len-docker-0.6.3.log"
    (launch,) = parse_paths([path]).launches
    b = launch_budget(launch)
    assert b.kv_tokens == launch.kv_tokens == 97_664
    assert b.kv_tokens_source.startswith("vLLM # GPU blocks × block_size")
    assert b.headroom_gb is None and "failed" in b.unknown["headroom_gb"]


def test_a_store_written_by_an_earlier_model_gets_this_models_budgets(tmp_path):
    """Migration 13: budgets stored by an earlier budget model are recomputed, so the store's views
    agree with ``explain`` (which computes from the launch) on a store written before."""
    import duckdb

    from logparse.store import Store

    inputs = [SAMPLES / "sglang-0.2", SAMPLES / "kimi-k25", SAMPLES / "vllm"]
    fresh, old = tmp_path / "fresh.duckdb", tmp_path / "old.duckdb"
    Store(fresh).ingest_paths(inputs, progress=False)
    Store(old).ingest_paths(inputs, progress=False)
    con = duckdb.connect(str(old))  # as an earlier model left it: other figures, version 12
    con.execute("UPDATE launch_budget SET kv_pool_gb = 999.0, headroom_gb = -1.0")
    con.execute("UPDATE rank_budget SET kv_pool_gb = 999.0")
    con.execute("DELETE FROM schema_version WHERE version >= 13")
    con.close()
    sql = "SELECT launch_id, kv_tokens, kv_pool_gb, headroom_gb FROM launch_budget ORDER BY launch_id"
    ranks = "SELECT launch_id, rank, kv_pool_gb FROM rank_budget ORDER BY launch_id, rank"
    migrated, expected = Store(old), Store(fresh)
    assert migrated.query(sql).rows() == expected.query(sql).rows()
    assert migrated.query(ranks).rows() == expected.query(ranks).rows()
    assert 999.0 not in {r[2] for r in migrated.query(sql).rows()}
