-- Many workspaces in one deployment: the operator's credential and each workspace's state and
-- ceilings, set by the operator (operator API, `service workspaces …`).
-- Times are written by the application clock (never now()) so tests can move time.

-- `suspended`: its keys, MCP tokens and inbound webhooks answer 403 tenant_forbidden; nothing is deleted.
-- `payment = 'pending'`: the same credentials answer 402 payment_not_completed until the operator records it.
ALTER TABLE workspaces
  ADD COLUMN status      text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  ADD COLUMN payment     text NOT NULL DEFAULT 'completed' CHECK (payment IN ('pending', 'completed')),
  -- Requests per minute of the workspace's credentials; NULL = the default ceiling (600).
  ADD COLUMN rpm_limit   integer CHECK (rpm_limit > 0),
  -- The operator's last change; NULL until the first one.
  ADD COLUMN updated_at  timestamptz;

-- A quota (STU per period) that replaces the plan's; NULL = the plan's quota.
ALTER TABLE workspace_plans ADD COLUMN quota_stu bigint CHECK (quota_stu > 0);

-- The operator's API tokens (service_op_…), stored only as sha256 hashes.
CREATE TABLE operator_tokens (
  id          text PRIMARY KEY,
  token_hash  text NOT NULL UNIQUE,
  created_at  timestamptz NOT NULL
);
