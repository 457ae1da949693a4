
CREATE OR REPLACE VIEW launch_summary AS
WITH binding AS (
    -- the binding rank's target row as printed (its free memory after the pool and the graphs)
    SELECT rb.launch_id, r.avail_after_pool_gb, r.avail_after_graph_gb, r.kv_dtype, r.k_size_gb, r.v_size_gb
    FROM launch_budget b
    JOIN rank_budget rb ON rb.launch_id = b.launch_id AND rb.rank = b.binding_rank
    JOIN rank_memory r ON r.launch_id = rb.launch_id AND r.worker = 'target'
         AND r.dp_rank IS NOT DISTINCT FROM rb.dp_rank AND r.pp_rank IS NOT DISTINCT FROM rb.pp_rank
         AND r.tp_rank IS NOT DISTINCT FROM rb.tp_rank AND r.ep_rank IS NOT DISTINCT FROM rb.ep_rank
),
rank_agg AS (
    SELECT launch_id, min(kv_tokens) AS min_kv_tokens FROM rank_memory WHERE worker = 'target' GROUP BY launch_id
)
SELECT
    l.launch_id, l.engine, l.deployment, l.host, l.unit, l.pid, l.started_at, l.ready_at, b.startup_s, l.outcome,
    l.error, l.error_kind, l.sglang_version, l.sglang_version_range,
    coalesce(l.engine_version, l.engine_version_range, l.sglang_version, l.sglang_version_range) AS version,
    l.engine_version, l.engine_version_range, l.engine_generation, l.time_zone,
    -- vLLM's figures (None on SGLang launches); kv_tokens' meaning is kv_tokens_definition's
    l.gpu_memory_utilization, l.gpu_memory_utilization_source, l.max_model_len, l.num_gpu_blocks, l.block_size,
    l.kv_tokens_definition, l.max_concurrency, l.max_concurrency_tokens,
    l.model_path, l.tp_size, l.dp_size, l.pp_size, l.ep_size, l.device,
    l.mem_fraction_static, l.kv_cache_dtype, l.page_size, l.context_length, l.chunked_prefill_size,
    l.max_running_requests, l.max_total_tokens, l.speculative_algorithm, l.enable_hierarchical_cache,
    l.max_total_num_tokens, l.max_prefill_tokens, l.max_running_requests_effective, l.context_len,
    l.available_mem_gb, l.available_mem_kind, l.hicache_host_gb, l.hicache_host_tokens,
    -- the launch budget (logparse.budget.model): the binding rank's figures
    b.binding_rank, b.free_before_weights_gb AS avail_before_load_gb, b.weights_gb,
    b.free_after_weights_gb AS avail_after_load_gb, b.load_s,
    g.kv_dtype, b.kv_tokens, b.kv_tokens_source, g.k_size_gb, g.v_size_gb, b.kv_pool_gb, b.kv_pool_gb AS kv_size_gb,
    b.other_pools_gb, g.avail_after_pool_gb, b.graph_gb, g.avail_after_graph_gb, b.graph_s,
    b.draft_weights_gb, b.draft_kv_gb, b.draft_graph_gb, b.other_gb,
    b.headroom_gb, b.headroom_gb AS min_headroom_gb, b.lowest_free_gb, b.unknown ->> 'headroom_gb' AS headroom_unknown,
    b.bytes_per_token AS kv_bytes_per_token, b.predicted_kv_tokens, b.era, b.memory_kind,
    a.min_kv_tokens, l.n_ranks,
    s.peak_running_req, s.peak_token_usage, s.peak_queue_req, s.peak_tokens, s.retractions,
    s.batch_lines, s.first_runtime_at, s.last_runtime_at,
    l.n_warnings, l.n_events, l.labels, l.source_id, l.source, l.ingested_at, l.updated_at
FROM launches l
LEFT JOIN launch_budget b USING (launch_id)
LEFT JOIN binding g USING (launch_id)
LEFT JOIN rank_agg a USING (launch_id)
LEFT JOIN runtime_stats s USING (launch_id)
