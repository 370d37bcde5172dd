-- Integrations become connectors: each is an MCP server (Streamable HTTP) whose tools the workspace's agents may call.
--
-- `url` is the server's URL as the admin gave it (checked by the same guard as webhook destinations). The optional
-- auth header is a name and a value sealed like webhook secrets (AES-256-GCM under SECRET_KEY); both NULL without one.
-- `status`: 'active' (its tools are offered), 'paused' (by an admin), 'failing' (the last check failed), or
-- 'not_connected' for the integrations recorded before connectors had a server (they provide no tools).
-- `tools` caches the server's tools list (`[{name, mcpName, description, readOnly, inputSchema}]`, the name already
-- sanitized, `mcpName` the server's own), refreshed at `tools_refreshed_at`. `last_check_*`: the last connection check.
ALTER TABLE integrations ADD COLUMN url text;
ALTER TABLE integrations ADD COLUMN auth_header_name text;
ALTER TABLE integrations ADD COLUMN auth_header_encrypted text;
ALTER TABLE integrations ADD COLUMN status text NOT NULL DEFAULT 'active'
  CHECK (status IN ('active', 'paused', 'failing', 'not_connected'));
ALTER TABLE integrations ADD COLUMN tools jsonb NOT NULL DEFAULT '[]'::jsonb;
ALTER TABLE integrations ADD COLUMN tools_refreshed_at timestamptz;
ALTER TABLE integrations ADD COLUMN last_check_at timestamptz;
ALTER TABLE integrations ADD COLUMN last_check_ok boolean;
ALTER TABLE integrations ADD COLUMN last_check_error text;
UPDATE integrations SET status = 'not_connected' WHERE url IS NULL;
-- The name is the tool area: one connected server per name in a workspace.
CREATE UNIQUE INDEX integrations_workspace_name ON integrations (workspace_id, integration) WHERE url IS NOT NULL;
