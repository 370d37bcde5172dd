-- run_counts: GET /runs's `total` without counting the runs (migration 0505's table: how many runs a workspace
-- has per class, i.e. status, agent addressed, agent that answered, alias and source; domain/runs/store.ts
-- listRunRows sums them), kept by the triggers on `runs` declared here, per statement rather than per run.
--
-- 1. After each statement that inserts, deletes or updates runs, run_counts_note sums its changes by class
--    from the statement's transition tables (+1 per row in a class after it, -1 per row in one before it; an
--    update that moves no run between classes sums to nothing) and adds them to the transaction's pending
--    changes: a jsonb array in the transaction-local setting `service.run_counts` (undone with the statement,
--    or the savepoint, that made it). No counter row is touched yet.
-- 2. At the end of the transaction (a deferred constraint trigger, fired by any run inserted, deleted or moved
--    between classes), run_counts_flush writes the pending changes, summed by class, in one upsert in class
--    order, and empties them; its other firings in the transaction find nothing to do.
--
-- So a statement that starts or closes a batch of runs updates each of its classes' counter once, and the
-- counter rows are still the last rows a transaction locks (as 0505 required): the money path's statements
-- lock the runs, then the period, then the windows, and a counter locked in the middle (by a close that
-- updates its run before its budget rows) could make two of them wait on each other. Two flushes lock
-- counters in the same (class) order. A change of a workspace being deleted is dropped: its counters go
-- with it (the cascade).
CREATE OR REPLACE FUNCTION run_counts_note() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_changes jsonb;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT jsonb_agg(jsonb_build_array(workspace_id, status, agent_slug, answered_by, alias, source, n)) INTO v_changes
      FROM (SELECT workspace_id, status, agent_slug, answered_by, alias, source, count(*) AS n FROM new_runs
             GROUP BY workspace_id, status, agent_slug, answered_by, alias, source) c;
  ELSIF TG_OP = 'DELETE' THEN
    SELECT jsonb_agg(jsonb_build_array(workspace_id, status, agent_slug, answered_by, alias, source, -n)) INTO v_changes
      FROM (SELECT workspace_id, status, agent_slug, answered_by, alias, source, count(*) AS n FROM old_runs
             GROUP BY workspace_id, status, agent_slug, answered_by, alias, source) c;
  ELSE
    SELECT jsonb_agg(jsonb_build_array(workspace_id, status, agent_slug, answered_by, alias, source, n)) INTO v_changes
      FROM (SELECT workspace_id, status, agent_slug, answered_by, alias, source, sum(d) AS n
              FROM (SELECT workspace_id, status, agent_slug, answered_by, alias, source, 1 AS d FROM new_runs
                    UNION ALL
                    SELECT workspace_id, status, agent_slug, answered_by, alias, source, -1 FROM old_runs) m
             GROUP BY workspace_id, status, agent_slug, answered_by, alias, source
            HAVING sum(d) <> 0) c;
  END IF;
  IF v_changes IS NOT NULL THEN
    PERFORM set_config('service.run_counts', (COALESCE(NULLIF(current_setting('service.run_counts', true), ''), '[]')::jsonb || v_changes)::text, true);
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION run_counts_flush() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_pending text := NULLIF(current_setting('service.run_counts', true), '');
BEGIN
  IF v_pending IS NULL THEN RETURN NULL; END IF;
  PERFORM set_config('service.run_counts', '', true);
  INSERT INTO run_counts AS c (workspace_id, status, agent_slug, answered_by, alias, source, runs)
  SELECT d->>0, d->>1, d->>2, d->>3, d->>4, d->>5, sum((d->>6)::bigint)
    FROM jsonb_array_elements(v_pending::jsonb) AS d
   WHERE EXISTS (SELECT 1 FROM workspaces w WHERE w.id = d->>0)
   GROUP BY 1, 2, 3, 4, 5, 6
  HAVING sum((d->>6)::bigint) <> 0
   ORDER BY 1, 2, 3, 4, 5, 6
  ON CONFLICT (workspace_id, status, agent_slug, answered_by, alias, source) DO UPDATE SET runs = c.runs + EXCLUDED.runs;
  RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS runs_counted_insert ON runs;
CREATE TRIGGER runs_counted_insert AFTER INSERT ON runs REFERENCING NEW TABLE AS new_runs
  FOR EACH STATEMENT EXECUTE FUNCTION run_counts_note();
DROP TRIGGER IF EXISTS runs_counted_delete ON runs;
CREATE TRIGGER runs_counted_delete AFTER DELETE ON runs REFERENCING OLD TABLE AS old_runs
  FOR EACH STATEMENT EXECUTE FUNCTION run_counts_note();
-- Every update (a statement trigger with transition tables takes no column list): one that moves no run
-- between classes sums to nothing.
DROP TRIGGER IF EXISTS runs_counted_update ON runs;
CREATE TRIGGER runs_counted_update AFTER UPDATE ON runs REFERENCING OLD TABLE AS old_runs NEW TABLE AS new_runs
  FOR EACH STATEMENT EXECUTE FUNCTION run_counts_note();

DROP TRIGGER IF EXISTS runs_count_flush_insert ON runs;
CREATE CONSTRAINT TRIGGER runs_count_flush_insert AFTER INSERT ON runs DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION run_counts_flush();
DROP TRIGGER IF EXISTS runs_count_flush_delete ON runs;
CREATE CONSTRAINT TRIGGER runs_count_flush_delete AFTER DELETE ON runs DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION run_counts_flush();
DROP TRIGGER IF EXISTS runs_count_flush_update ON runs;
CREATE CONSTRAINT TRIGGER runs_count_flush_update AFTER UPDATE OF status, agent_slug, answered_by, alias, source ON runs
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.agent_slug IS DISTINCT FROM NEW.agent_slug
        OR OLD.answered_by IS DISTINCT FROM NEW.answered_by OR OLD.alias IS DISTINCT FROM NEW.alias
        OR OLD.source IS DISTINCT FROM NEW.source)
  EXECUTE FUNCTION run_counts_flush();
