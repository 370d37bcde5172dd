-- An invocation's start is one statement for every run that arrives together: start_runs
-- (store/functions/start_runs.sql, one jsonb argument of `start_run_args` objects), which locks each
-- workspace's period and windows once per batch and also writes the request preview. The two functions it
-- replaces go (their text lives nowhere any more): start_run (store/functions/start_run.sql until now, so its
-- row of schema_functions goes too) and its wrapper start_run_previewed (0516).
DROP FUNCTION start_run_previewed(text, text, boolean, timestamptz, timestamptz, text, text, text, text, text, float8, float8,
  integer, integer, float8, float8, float8, text, text, text, timestamptz, integer, text);
DROP FUNCTION start_run(text, text, boolean, timestamptz, timestamptz, text, text, text, text, text, float8, float8,
  integer, integer, float8, float8, float8, text, text, text, timestamptz, integer);
DELETE FROM schema_functions WHERE name = 'start_run';

-- GET /runs's counters (0505) are kept per statement, not per run (store/functions/run_counts.sql declares the
-- new triggers): the row triggers and their functions go. A batch of starts or closes changes a counter row
-- once per class, so the 8 shards per class that spread 0505's per-run upserts are merged into one row.
DROP TRIGGER runs_counted_insert ON runs;
DROP TRIGGER runs_counted_delete ON runs;
DROP TRIGGER runs_counted_update ON runs;
DROP FUNCTION run_counts_track();
DROP FUNCTION run_counts_add(runs, integer);
ALTER TABLE run_counts DROP COLUMN shard;  -- and the primary key that included it
WITH sharded AS (DELETE FROM run_counts RETURNING *)
INSERT INTO run_counts (workspace_id, status, agent_slug, answered_by, alias, source, runs)
SELECT workspace_id, status, agent_slug, answered_by, alias, source, sum(runs) FROM sharded
 GROUP BY workspace_id, status, agent_slug, answered_by, alias, source;
ALTER TABLE run_counts ADD PRIMARY KEY (workspace_id, status, agent_slug, answered_by, alias, source);
