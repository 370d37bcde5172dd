-- GET /runs's `total` without counting the runs: how many runs a workspace has per filter class
-- (status, agent addressed, agent that answered, alias, source), kept by triggers on `runs`, so the
-- total of a list filtered by any of those is a sum over a few dozen rows, however many runs there
-- are (domain/runs/store.ts listRunRows). Each class is spread over 8 shards (by run id) so that a
-- workspace's concurrent invocations do not queue on one counter row. A delete caused by the
-- workspace's own deletion leaves the counts to the workspace's cascade.
CREATE TABLE run_counts (
  workspace_id  text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  status        text NOT NULL,
  agent_slug    text NOT NULL,
  answered_by   text NOT NULL,
  alias         text NOT NULL,
  source        text NOT NULL,
  shard         smallint NOT NULL,
  runs          bigint NOT NULL,
  PRIMARY KEY (workspace_id, status, agent_slug, answered_by, alias, source, shard)
);

CREATE FUNCTION run_counts_add(r runs, delta integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO run_counts AS c (workspace_id, status, agent_slug, answered_by, alias, source, shard, runs)
  VALUES (r.workspace_id, r.status, r.agent_slug, r.answered_by, r.alias, r.source, abs(hashtext(r.id)) % 8, delta)
  ON CONFLICT (workspace_id, status, agent_slug, answered_by, alias, source, shard) DO UPDATE SET runs = c.runs + delta;
END $$;

CREATE FUNCTION run_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF EXISTS (SELECT 1 FROM workspaces WHERE id = OLD.workspace_id) THEN
      PERFORM run_counts_add(OLD, -1);
    END IF;
  ELSIF TG_OP = 'INSERT' THEN
    PERFORM run_counts_add(NEW, 1);
  -- Two counter rows: taken in one order (by class), so two runs moving between the same classes
  -- the opposite ways cannot wait on each other.
  ELSIF (OLD.status, OLD.agent_slug, OLD.answered_by, OLD.alias, OLD.source) < (NEW.status, NEW.agent_slug, NEW.answered_by, NEW.alias, NEW.source) THEN
    PERFORM run_counts_add(OLD, -1);
    PERFORM run_counts_add(NEW, 1);
  ELSE
    PERFORM run_counts_add(NEW, 1);
    PERFORM run_counts_add(OLD, -1);
  END IF;
  RETURN NULL;
END $$;

-- Deferred to the end of the writing transaction, so the counter rows are always the last rows it
-- locks: the money path's statements lock the run, the period and the windows first (in that order),
-- and a counter taken in the middle would make two of them wait on each other.
CREATE CONSTRAINT TRIGGER runs_counted_insert AFTER INSERT ON runs DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION run_counts_track();
CREATE CONSTRAINT TRIGGER runs_counted_delete AFTER DELETE ON runs DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION run_counts_track();
CREATE CONSTRAINT TRIGGER runs_counted_update AFTER UPDATE OF status, agent_slug, answered_by, alias, source ON runs
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.agent_slug IS DISTINCT FROM NEW.agent_slug
        OR OLD.answered_by IS DISTINCT FROM NEW.answered_by OR OLD.alias IS DISTINCT FROM NEW.alias
        OR OLD.source IS DISTINCT FROM NEW.source)
  EXECUTE FUNCTION run_counts_track();

INSERT INTO run_counts (workspace_id, status, agent_slug, answered_by, alias, source, shard, runs)
SELECT workspace_id, status, agent_slug, answered_by, alias, source, 0, count(*) FROM runs
 GROUP BY workspace_id, status, agent_slug, answered_by, alias, source;

-- A page filtered by status walks the runs in list order within that status, instead of sorting
-- every run of that status (the old index's prefix, which this one replaces).
CREATE INDEX runs_workspace_status_order ON runs (workspace_id, status, created_at DESC, seq DESC);
DROP INDEX runs_workspace_status;
