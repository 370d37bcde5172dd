-- An agent's configuration in a workspace, as an admin set it (PUT /agents/{slug}/configuration): its instructions
-- (null: the department's default, domain/agents/instructions.ts), the model calls a run may make, the tools it may
-- use (null: every connected tool; else tool names or whole integrations) and its approval policy (tool name ->
-- 'required' | 'not_required'). An agent without a row has the defaults. Read through domain/agents/definitions-cache.ts,
-- kept current on every instance by the notification each change sends.
CREATE TABLE agent_definitions (
  workspace_id  text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  agent_slug    text NOT NULL,
  instructions  text CHECK (instructions IS NULL OR char_length(instructions) BETWEEN 1 AND 20000),
  step_limit    integer NOT NULL CHECK (step_limit BETWEEN 1 AND 32),
  tools         jsonb CHECK (tools IS NULL OR jsonb_typeof(tools) = 'array'),
  approvals     jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(approvals) = 'object'),
  updated_at    timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, agent_slug)
);
