-- Connectors linked in a workspace; recording one emits integration.connected.
CREATE TABLE integrations (
  id            text PRIMARY KEY,                            -- int_…
  workspace_id  text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  integration   text NOT NULL,
  provider      text NOT NULL,
  connected_by  text NOT NULL,                               -- usr_… of the admin session
  connected_at  timestamptz NOT NULL
);
CREATE INDEX integrations_workspace ON integrations (workspace_id, connected_at);
