-- Foundation: workspaces, admin users and sessions, API keys, login attempts, MCP tokens.
-- Times are written by the application clock (never now()) so tests can move time.
-- Later areas (runs, usage, webhooks, ...) add their own files with higher numbers.

CREATE TABLE workspaces (
  id          text PRIMARY KEY,
  name        text NOT NULL,
  created_at  timestamptz NOT NULL
);

CREATE TABLE users (
  id              text PRIMARY KEY,
  workspace_id    text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  email           text NOT NULL,
  password_hash   text NOT NULL,               -- scrypt, self-describing (see domain/sessions/password.ts)
  role            text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  -- Base32 TOTP secret. It has to be readable to compute codes, so it cannot be a hash.
  totp_secret     text,
  totp_enabled    boolean NOT NULL DEFAULT false,
  -- Last accepted TOTP time step: a code is accepted once.
  totp_last_step  integer,
  created_at      timestamptz NOT NULL
);
-- Login is by email alone, so an email names one user across all workspaces.
CREATE UNIQUE INDEX users_email_unique ON users (lower(email));

CREATE TABLE sessions (
  id          text PRIMARY KEY,
  user_id     text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  token_hash  text NOT NULL UNIQUE,              -- sha256 of the cookie value
  csrf_hash   text NOT NULL,                     -- sha256 of the csrfToken given at login
  created_at  timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL
);

CREATE TABLE api_keys (
  id            text PRIMARY KEY,
  workspace_id  text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name          text NOT NULL,
  prefix        text NOT NULL,                   -- service_sk_live_ + 6 characters, shown in lists
  secret_hash   text NOT NULL,                   -- sha256 of the full secret; the secret itself is never stored
  scopes        text[] NOT NULL,
  created_at    timestamptz NOT NULL,
  expires_at    timestamptz NOT NULL,
  last_used_at  timestamptz,
  revoked_at    timestamptz,
  replaced_by   text REFERENCES api_keys (id)    -- set when the key was rotated
);
CREATE INDEX api_keys_prefix_active ON api_keys (prefix) WHERE revoked_at IS NULL;
CREATE INDEX api_keys_workspace ON api_keys (workspace_id, created_at);

-- One counter, bumped in the same transaction as every revoke or rotate. Cached key verifications
-- remember the value they were made under and are thrown away as soon as it moves.
CREATE TABLE api_key_revocations (
  id       integer PRIMARY KEY CHECK (id = 1),
  version  integer NOT NULL
);
INSERT INTO api_key_revocations (id, version) VALUES (1, 0);

-- Every login attempt is written before it is judged and deleted when it succeeds; what remains
-- in the last 15 minutes are the failures that count towards too_many_attempts.
CREATE TABLE login_attempts (
  id            text PRIMARY KEY,
  email         text NOT NULL,                   -- lower-cased
  attempted_at  timestamptz NOT NULL
);
CREATE INDEX login_attempts_email_time ON login_attempts (email, attempted_at);

CREATE TABLE mcp_tokens (
  id            text PRIMARY KEY,
  workspace_id  text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  api_key_id    text NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  token_hash    text NOT NULL UNIQUE,            -- sha256 of service_mcp_…
  scopes        text[] NOT NULL,
  created_at    timestamptz NOT NULL,
  expires_at    timestamptz NOT NULL
);
