-- Account recovery: an owner, an admin or the operator resets a person's password and/or two-step
-- verification with a single-use link (like an invitation); only the token's hash is stored.
CREATE TABLE account_resets (
  id            text PRIMARY KEY,
  user_id       text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- The workspace whose admin made it; NULL when the operator did.
  workspace_id  text REFERENCES workspaces (id) ON DELETE CASCADE,
  kind          text NOT NULL CHECK (kind IN ('password', 'totp', 'both')),
  token_hash    text NOT NULL UNIQUE,            -- sha256 of service_rst_…
  created_by    text REFERENCES users (id) ON DELETE SET NULL,
  created_at    timestamptz NOT NULL,
  expires_at    timestamptz NOT NULL,
  used_at       timestamptz,                     -- redeemed, replaced by a newer reset, or burnt by wrong passwords
  failed_attempts integer NOT NULL DEFAULT 0       -- wrong current passwords on a `totp` reset
);
CREATE INDEX account_resets_user ON account_resets (user_id, created_at);

-- The operator's raised per-address ceiling for a workspace's authenticated callers; NULL = the default.
ALTER TABLE workspaces ADD COLUMN ip_rpm_limit integer CHECK (ip_rpm_limit IS NULL OR ip_rpm_limit >= 1);
