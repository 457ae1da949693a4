
CREATE OR REPLACE VIEW history AS
SELECT s.* EXCLUDE ({metrics}),
    q.launch_no, q.prev_launch_id, c.prev_version, c.prev_started_at, c.prev_kv_tokens_definition,
    {metric_cols},
    c.version_changed, c.version_change, c.kv_tokens_definition_change, c.args_changed, c.changed_args,
    c.changed_arg_names, c.arg_changes, c.defaults_moved, c.derived_changes, c.fields_added, c.fields_removed,
    c.release_fields_change
FROM launch_summary s
JOIN launch_sequence q USING (launch_id)
LEFT JOIN launch_change c USING (launch_id)
WHERE q.same_start_as IS NULL
