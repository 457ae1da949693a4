
CREATE OR REPLACE VIEW history AS
WITH ordered AS (
    SELECT s.*,
        row_number() OVER w AS launch_no,
        lag(launch_id) OVER w AS prev_launch_id,
        lag(version) OVER w AS prev_version,
        lag(started_at) OVER w AS prev_started_at,
        kv_tokens, kv_tokens - lag(kv_tokens) OVER w AS kv_tokens_change,
    max_total_num_tokens, max_total_num_tokens - lag(max_total_num_tokens) OVER w AS max_total_num_tokens_change,
    avail_before_load_gb, avail_before_load_gb - lag(avail_before_load_gb) OVER w AS avail_before_load_gb_change,
    weights_gb, weights_gb - lag(weights_gb) OVER w AS weights_gb_change,
    avail_after_load_gb, avail_after_load_gb - lag(avail_after_load_gb) OVER w AS avail_after_load_gb_change,
    kv_size_gb, kv_size_gb - lag(kv_size_gb) OVER w AS kv_size_gb_change,
    avail_after_pool_gb, avail_after_pool_gb - lag(avail_after_pool_gb) OVER w AS avail_after_pool_gb_change,
    graph_gb, graph_gb - lag(graph_gb) OVER w AS graph_gb_change,
    avail_after_graph_gb, avail_after_graph_gb - lag(avail_after_graph_gb) OVER w AS avail_after_graph_gb_change,
    headroom_gb, headroom_gb - lag(headroom_gb) OVER w AS headroom_gb_change,
    min_headroom_gb, min_headroom_gb - lag(min_headroom_gb) OVER w AS min_headroom_gb_change,
    available_mem_gb, available_mem_gb - lag(available_mem_gb) OVER w AS available_mem_gb_change,
    kv_bytes_per_token, kv_bytes_per_token - lag(kv_bytes_per_token) OVER w AS kv_bytes_per_token_change,
    max_prefill_tokens, max_prefill_tokens - lag(max_prefill_tokens) OVER w AS max_prefill_tokens_change,
    max_running_requests_effective, max_running_requests_effective - lag(max_running_requests_effective) OVER w AS max_running_requests_effective_change,
    context_len, context_len - lag(context_len) OVER w AS context_len_change,
    mem_fraction_static, mem_fraction_static - lag(mem_fraction_static) OVER w AS mem_fraction_static_change,
    load_s, load_s - lag(load_s) OVER w AS load_s_change,
    graph_s, graph_s - lag(graph_s) OVER w AS graph_s_change,
    peak_running_req, peak_running_req - lag(peak_running_req) OVER w AS peak_running_req_change,
    peak_token_usage, peak_token_usage - lag(peak_token_usage) OVER w AS peak_token_usage_change,
    peak_queue_req, peak_queue_req - lag(peak_queue_req) OVER w AS peak_queue_req_change,
    retractions, retractions - lag(retractions) OVER w AS retractions_change
    FROM launch_summary s
    WINDOW w AS (PARTITION BY deployment ORDER BY started_at NULLS FIRST, ingested_at, launch_id)
),
has_args AS (SELECT DISTINCT launch_id FROM launch_args),
pairs AS (
    SELECT o.launch_id, o.prev_launch_id FROM ordered o
    WHERE o.prev_launch_id IS NOT NULL
      AND o.launch_id IN (SELECT launch_id FROM has_args)
      AND o.prev_launch_id IN (SELECT launch_id FROM has_args)
),
cur AS (
    SELECT p.launch_id, a.name, a.value::VARCHAR AS value FROM pairs p JOIN launch_args a ON a.launch_id = p.launch_id
),
prev AS (
    SELECT p.launch_id, a.name, a.value::VARCHAR AS value FROM pairs p JOIN launch_args a ON a.launch_id = p.prev_launch_id
),
diff AS (
    SELECT coalesce(cur.launch_id, prev.launch_id) AS launch_id, coalesce(cur.name, prev.name) AS name,
           prev.value AS old_value, cur.value AS new_value
    FROM cur FULL OUTER JOIN prev ON cur.launch_id = prev.launch_id AND cur.name = prev.name
    WHERE cur.value IS DISTINCT FROM prev.value
      AND coalesce(cur.name, prev.name) NOT IN (SELECT name FROM ignored_args)
),
arg_diff AS (
    SELECT launch_id,
           list(name ORDER BY name) AS changed_arg_names,
           string_agg(name, ', ' ORDER BY name) AS changed_args,
           string_agg(name || ': ' || coalesce(old_value, '(absent)') || ' -> ' || coalesce(new_value, '(absent)'),
                      '; ' ORDER BY name) AS arg_changes
    FROM diff GROUP BY launch_id
)
SELECT o.*,
    CASE WHEN o.prev_launch_id IS NULL THEN NULL
         ELSE o.version IS DISTINCT FROM o.prev_version END AS version_changed,
    CASE WHEN o.prev_launch_id IS NOT NULL AND o.version IS DISTINCT FROM o.prev_version
         THEN coalesce(o.prev_version, '?') || ' -> ' || coalesce(o.version, '?') END AS version_change,
    CASE WHEN o.launch_id IN (SELECT launch_id FROM pairs) THEN d.launch_id IS NOT NULL END AS args_changed,
    d.changed_args, d.changed_arg_names, d.arg_changes
FROM ordered o LEFT JOIN arg_diff d USING (launch_id)
