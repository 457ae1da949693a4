"""Each launch's change against the previous launch of its deployment, persisted in ``launch_change``.

``history`` shows how every metric moved since the previous launch and what changed in between: the
SGLang version, the server arguments the user set, release defaults that moved, values SGLang
derives itself, fields a release added or removed.  Computed in the ``history`` view on every read
(a window over every launch and an argument diff of every pair), that was most of ``history``'s
time on a store of thousands of launches; here it is computed when its inputs change, for the
deployments a write touched, in the same transaction, by :func:`logparse.store.sequence.refresh`
(a launch added, updated in place, merged away, an older launch ingested later, a store merged).
After migrations every row is recomputed with the current definitions (:func:`logparse.store.db.migrate`).

The values are the view's: the metrics are ``launch_summary``'s (the launch budget's), the previous
launch is ``launch_sequence``'s.
"""

from __future__ import annotations

from logparse.figures import HISTORY_ORDER

#: Metric columns of ``launch_summary`` that ``history`` compares launch to launch (each has a
#: ``*_change`` column): the ``history`` surface of :mod:`logparse.figures`, in the view's order.
#: Memory figures are the launch budget's (:mod:`logparse.budget.model`): the binding rank's.
HISTORY_METRICS = HISTORY_ORDER

#: One row per launch of the deployments in ``{where}``; a launch without a previous one has no change.
_CHANGES_SQL = """
INSERT INTO launch_change BY NAME
WITH ordered AS (
    SELECT q.launch_id, q.deployment, q.prev_launch_id, s.version, p.version AS prev_version,
        p.started_at AS prev_started_at, s.kv_tokens_definition, p.kv_tokens_definition AS prev_kv_tokens_definition,
        {change_cols}
    FROM launch_sequence q
    JOIN launch_summary s USING (launch_id)
    LEFT JOIN launch_summary p ON p.launch_id = q.prev_launch_id
    {where}
),
has_args AS (SELECT DISTINCT launch_id FROM launch_args),
pairs AS (
    SELECT o.launch_id, o.prev_launch_id FROM ordered o
    WHERE o.prev_launch_id IS NOT NULL
      AND o.launch_id IN (SELECT launch_id FROM has_args)
      AND o.prev_launch_id IN (SELECT launch_id FROM has_args)
),
cur AS (
    SELECT p.launch_id, a.name, a.value::VARCHAR AS value, a.origin
    FROM pairs p JOIN launch_args a ON a.launch_id = p.launch_id
),
prev AS (
    SELECT p.launch_id, a.name, a.value::VARCHAR AS value, a.origin
    FROM pairs p JOIN launch_args a ON a.launch_id = p.prev_launch_id
),
diff AS (
    SELECT coalesce(cur.launch_id, prev.launch_id) AS launch_id, coalesce(cur.name, prev.name) AS name,
           prev.value AS old_value, cur.value AS new_value,
           cur.name IS NOT NULL AND prev.name IS NOT NULL AS in_both,
           -- why it differs (logparse.launches.args.change_kind): a release default that moved, a value
           -- SGLang derives itself across an upgrade, or a value the user set
           CASE WHEN cur.origin = 'default' AND prev.origin = 'default' THEN 'default_moved'
                WHEN cur.origin = 'derived' AND prev.origin = 'derived' AND v.version_changed THEN 'derived'
                ELSE 'set' END AS kind
    FROM cur FULL OUTER JOIN prev ON cur.launch_id = prev.launch_id AND cur.name = prev.name
    LEFT JOIN (SELECT launch_id, version IS DISTINCT FROM prev_version AS version_changed FROM ordered) v
           ON v.launch_id = coalesce(cur.launch_id, prev.launch_id)
    WHERE cur.value IS DISTINCT FROM prev.value
      AND coalesce(cur.name, prev.name) NOT IN (SELECT name FROM ignored_args)
),
-- A field printed by one launch only is a field its release added or removed: counted, not listed.
arg_diff AS (
    SELECT launch_id,
           list(name ORDER BY name) FILTER (WHERE in_both AND kind = 'set') AS changed_arg_names,
           string_agg(name, ', ' ORDER BY name) FILTER (WHERE in_both AND kind = 'set') AS changed_args,
           string_agg(name || ': ' || coalesce(old_value, '(absent)') || ' -> ' || coalesce(new_value, '(absent)'),
                      '; ' ORDER BY name) FILTER (WHERE in_both AND kind = 'set') AS arg_changes,
           string_agg(name || ': ' || old_value || ' -> ' || new_value, '; ' ORDER BY name)
               FILTER (WHERE in_both AND kind = 'default_moved') AS defaults_moved,
           string_agg(name || ': ' || old_value || ' -> ' || new_value, '; ' ORDER BY name)
               FILTER (WHERE in_both AND kind = 'derived') AS derived_changes,
           count(*) FILTER (WHERE NOT in_both AND old_value IS NULL) AS fields_added,
           count(*) FILTER (WHERE NOT in_both AND new_value IS NULL) AS fields_removed
    FROM diff GROUP BY launch_id
)
SELECT o.launch_id, o.deployment, o.prev_version, o.prev_started_at, o.prev_kv_tokens_definition, {change_names},
    CASE WHEN o.prev_launch_id IS NULL THEN NULL
         ELSE o.version IS DISTINCT FROM o.prev_version END AS version_changed,
    CASE WHEN o.prev_launch_id IS NOT NULL AND o.version IS DISTINCT FROM o.prev_version
         THEN coalesce(o.prev_version, '?') || ' -> ' || coalesce(o.version, '?') END AS version_change,
    -- vLLM 0.20.1 redefined its token count: across that change kv_tokens is not a capacity change
    CASE WHEN o.prev_launch_id IS NOT NULL AND o.kv_tokens_definition IS NOT NULL
              AND o.prev_kv_tokens_definition IS NOT NULL
              AND o.kv_tokens_definition IS DISTINCT FROM o.prev_kv_tokens_definition
         THEN 'kv_tokens definition ' || o.prev_kv_tokens_definition || ' -> ' || o.kv_tokens_definition
              || ' (vLLM 0.20.1): token counts not comparable; compare kv_pool_gb' END AS kv_tokens_definition_change,
    CASE WHEN o.launch_id IN (SELECT launch_id FROM pairs) THEN d.changed_args IS NOT NULL END AS args_changed,
    d.changed_args, d.changed_arg_names, d.arg_changes, d.defaults_moved, d.derived_changes,
    coalesce(d.fields_added, 0) AS fields_added, coalesce(d.fields_removed, 0) AS fields_removed,
    CASE WHEN d.fields_added > 0 OR d.fields_removed > 0
         THEN '+' || d.fields_added || ' / −' || d.fields_removed || ' ServerArgs fields'
              || CASE WHEN o.version IS DISTINCT FROM o.prev_version
                      THEN ' from the ' || coalesce(o.prev_version, '?') || ' → ' || coalesce(o.version, '?') || ' release change'
                      ELSE '' END END AS release_fields_change
FROM ordered o LEFT JOIN arg_diff d USING (launch_id)
"""


#: Metrics whose meaning is another column's (a change of that column is not a change of the metric).
_DEFINED_BY = {"kv_tokens": "kv_tokens_definition"}


def _change(m: str) -> str:
    """``m``'s change from the previous launch, or NULL where the two launches define ``m`` differently."""
    d = _DEFINED_BY.get(m)
    if d is None:
        return f"s.{m} - p.{m}"
    return f"CASE WHEN s.{d} IS DISTINCT FROM p.{d} THEN NULL ELSE s.{m} - p.{m} END"


def _changes_sql(where: str) -> str:
    return _CHANGES_SQL.format(
        change_cols=",\n        ".join(f"{_change(m)} AS {m}_change" for m in HISTORY_METRICS),
        change_names=", ".join(f"o.{m}_change" for m in HISTORY_METRICS),
        where=where,
    )


def refresh(con, deployments: list[str] | None) -> None:
    """Recompute ``launch_change`` for these deployments (all when None), inside the caller's
    transaction, after ``launch_sequence`` was refreshed for them."""
    if deployments is None:
        con.execute("DELETE FROM launch_change")
        con.execute(_changes_sql(""))
        return
    if not deployments:
        return
    con.execute("DELETE FROM launch_change WHERE deployment IN (SELECT unnest(?::VARCHAR[]))", [deployments])
    con.execute(_changes_sql("WHERE q.deployment IN (SELECT unnest(?::VARCHAR[]))"), [deployments])
