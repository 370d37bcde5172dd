-- runs_workspace_order (workspace_id, created_at DESC, seq DESC) serves every read by a workspace's creation times
-- (the runs list and its ranges); runs_workspace_created, with the same leading columns, served none, but each run's
-- insert and each change of its status still wrote an entry into it.
DROP INDEX IF EXISTS runs_workspace_created;
