-- The workspace's audit log (GET /audit-events): every change a person or a credential made, written in the same
-- transaction as the change (domain/audit). The actor's and target's labels are copied as they were at the change
-- (an email, a key's prefix, a key's name), so the log still reads after the user or the key is gone. `details` holds a
-- few words, never a secret (domain/audit refuses one). Deleted with the workspace; older than AUDIT_RETENTION_DAYS by
-- the worker's sweep.
CREATE TABLE audit_events (
  id text PRIMARY KEY,
  workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  action text NOT NULL,
  actor_type text NOT NULL,
  actor_id text NOT NULL,
  actor_label text NOT NULL,
  target_type text NOT NULL,
  target_id text NOT NULL,
  target_label text,
  address text,
  request_id text,
  details jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL
);

-- The list's order (newest first, then id) per workspace; the filters narrow it.
CREATE INDEX audit_events_workspace_time ON audit_events (workspace_id, created_at DESC, id DESC);
CREATE INDEX audit_events_workspace_action ON audit_events (workspace_id, action, created_at DESC);
CREATE INDEX audit_events_workspace_actor ON audit_events (workspace_id, actor_id, created_at DESC);
CREATE INDEX audit_events_workspace_target ON audit_events (workspace_id, target_id, created_at DESC);
-- The retention sweep: the oldest rows of every workspace.
CREATE INDEX audit_events_created ON audit_events (created_at);
