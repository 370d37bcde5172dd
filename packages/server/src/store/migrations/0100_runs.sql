-- Agents, runs and consumption: the workspace's plan and paused agents, runs with their steps,
-- tool calls, drafts and approvals, idempotency keys, conversation turns, the usage ledger with
-- one row per period, and the hour / day budget windows of the spending kill switches.
-- Times are written by the application clock (never now()) so tests can move time.
-- STU totals that can outgrow 2^31 within a month are bigint (read back with ::float8).

-- The plan of a workspace; a workspace without a row is on the default plan (see domain/runs/workspace-agents.ts).
CREATE TABLE workspace_plans (
  workspace_id  text PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
  plan          text NOT NULL CHECK (plan IN ('starter', 'growth', 'enterprise')),
  updated_at    timestamptz NOT NULL
);

-- An agent paused by an operator answers agent_disabled with this reason until resumed.
CREATE TABLE paused_agents (
  workspace_id  text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  agent_slug    text NOT NULL,
  reason        text NOT NULL,
  paused_at     timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, agent_slug)
);

CREATE TABLE runs (
  id               text PRIMARY KEY,                   -- run_…
  workspace_id     text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  status           text NOT NULL CHECK (status IN ('in_progress', 'completed', 'failed', 'canceled')),
  agent_slug       text NOT NULL,                      -- the agent addressed (orchestrator when it routed)
  answered_by      text NOT NULL,                      -- the agent that answered (the routed department)
  alias            text NOT NULL,
  source           text NOT NULL CHECK (source IN ('api', 'inbound_webhook', 'mcp')),
  conversation_id  text,
  content          text,                               -- redacted; set when completed
  failure_reason   text,                               -- redacted; set when failed
  input_tokens     integer NOT NULL DEFAULT 0,
  output_tokens    integer NOT NULL DEFAULT 0,
  stu              integer NOT NULL DEFAULT 0,
  -- STU held on the hour and day windows while the run is in progress (released when it ends).
  reserved_stu     integer NOT NULL DEFAULT 0,
  window_hour      timestamptz NOT NULL,               -- the windows the reservation was taken on
  window_day       timestamptz NOT NULL,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  completed_at     timestamptz
);
CREATE INDEX runs_workspace_created ON runs (workspace_id, created_at DESC, id DESC);
CREATE INDEX runs_workspace_status ON runs (workspace_id, status);

CREATE TABLE run_steps (
  id          text PRIMARY KEY,                        -- stp_…
  run_id      text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  index       integer NOT NULL,
  kind        text NOT NULL CHECK (kind IN ('routing', 'model_call', 'tool_call', 'draft', 'approval')),
  agent_slug  text NOT NULL,
  summary     text NOT NULL,                           -- redacted
  created_at  timestamptz NOT NULL,
  UNIQUE (run_id, index)
);

CREATE TABLE tool_calls (
  id          text PRIMARY KEY,                        -- tc_…
  run_id      text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  step_index  integer NOT NULL,
  name        text NOT NULL,
  arguments   jsonb NOT NULL,                          -- redacted
  result      text,                                    -- redacted; null while pending
  status      text NOT NULL CHECK (status IN ('completed', 'failed', 'pending_approval')),
  created_at  timestamptz NOT NULL
);
CREATE INDEX tool_calls_run ON tool_calls (run_id, step_index);

CREATE TABLE drafts (
  id            text PRIMARY KEY,                      -- drf_…
  workspace_id  text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  run_id        text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  agent_slug    text NOT NULL,
  kind          text NOT NULL,
  subject       text NOT NULL,                         -- redacted
  body          text NOT NULL,                         -- redacted
  created_at    timestamptz NOT NULL
);
CREATE INDEX drafts_workspace ON drafts (workspace_id, created_at);

-- A sensitive action an agent asks a person to approve (decided through POST /approvals/{id}/decision).
CREATE TABLE approvals (
  id            text PRIMARY KEY,                      -- apr_…
  workspace_id  text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  run_id        text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  agent_slug    text NOT NULL,
  action        text NOT NULL,                         -- <area>.<verb>
  summary       text NOT NULL,                         -- redacted
  status        text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected', 'expired')),
  expires_at    timestamptz NOT NULL,
  decided_by    text,
  decided_at    timestamptz,
  created_at    timestamptz NOT NULL
);
CREATE INDEX approvals_workspace ON approvals (workspace_id, created_at);

-- Idempotency-Key of an invocation, per credential: the first request's run answers every retry.
CREATE TABLE idempotency_keys (
  credential_id    text NOT NULL,                      -- the API key (key_…) that sent it
  idempotency_key  text NOT NULL,
  workspace_id     text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  request_hash     text NOT NULL,                      -- sha256 of the operation and its validated body
  run_id           text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  created_at       timestamptz NOT NULL,
  expires_at       timestamptz NOT NULL,
  PRIMARY KEY (credential_id, idempotency_key)
);

-- Turns of a conversation (conversationId), given to the engine before the new messages.
CREATE TABLE conversation_turns (
  workspace_id     text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  conversation_id  text NOT NULL,
  seq              integer NOT NULL,
  role             text NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
  content          text NOT NULL,
  run_id           text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  created_at       timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, conversation_id, seq)
);

-- Consumption of one period (YYYY-MM): the quota and rollover it started with and what was consumed.
CREATE TABLE usage_periods (
  workspace_id  text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  period        text NOT NULL,
  rollover_stu  bigint NOT NULL DEFAULT 0,
  consumed_stu  bigint NOT NULL DEFAULT 0,
  created_at    timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, period)
);

-- One line per charged run: the ledger the period totals are made of.
CREATE TABLE usage_ledger (
  id             text PRIMARY KEY,
  workspace_id   text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  run_id         text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  period         text NOT NULL,
  alias          text NOT NULL,
  input_tokens   integer NOT NULL,
  output_tokens  integer NOT NULL,
  stu            integer NOT NULL,
  created_at     timestamptz NOT NULL
);
CREATE INDEX usage_ledger_workspace_period ON usage_ledger (workspace_id, period);

-- Budget of one UTC hour or day window. Reservations and charges change spent_stu under a row lock
-- (SELECT … FOR UPDATE), so concurrent requests and several instances can never go above the limit.
-- tripped_at: when a run crossed the window's limit; the switch stays active until the window ends.
CREATE TABLE usage_windows (
  workspace_id  text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  scope         text NOT NULL CHECK (scope IN ('hour', 'day')),
  window_start  timestamptz NOT NULL,
  spent_stu     bigint NOT NULL DEFAULT 0,
  tripped_at    timestamptz,
  PRIMARY KEY (workspace_id, scope, window_start)
);

-- The manual kill switch of a workspace: on while the row exists.
CREATE TABLE kill_switches (
  workspace_id  text PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
  manual_since  timestamptz NOT NULL
);
