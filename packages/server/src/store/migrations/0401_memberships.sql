-- Members and roles: a user (one account per email in the deployment) belongs to any number of
-- workspaces, with a role in each; a session acts on one of them at a time; admins invite people
-- with single-use invitations. Times are written by the application clock.

CREATE TABLE memberships (
  workspace_id  text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  user_id       text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role          text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  created_at    timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX memberships_user ON memberships (user_id, created_at);
INSERT INTO memberships (workspace_id, user_id, role, created_at) SELECT workspace_id, id, role, created_at FROM users;

-- The workspace a session acts on (POST /auth/workspace changes it).
ALTER TABLE sessions ADD COLUMN workspace_id text REFERENCES workspaces (id) ON DELETE CASCADE;
UPDATE sessions s SET workspace_id = u.workspace_id FROM users u WHERE u.id = s.user_id;
ALTER TABLE sessions ALTER COLUMN workspace_id SET NOT NULL;

-- A user no longer belongs to one workspace: memberships say where, and with which role.
ALTER TABLE users DROP COLUMN workspace_id, DROP COLUMN role;

CREATE TABLE invitations (
  id            text PRIMARY KEY,
  workspace_id  text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  email         text NOT NULL,                   -- lower-cased
  role          text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  token_hash    text NOT NULL UNIQUE,            -- sha256 of service_inv_…; the token itself is never stored
  invited_by    text REFERENCES users (id) ON DELETE SET NULL,
  created_at    timestamptz NOT NULL,
  expires_at    timestamptz NOT NULL,
  accepted_at   timestamptz
);
CREATE INDEX invitations_workspace ON invitations (workspace_id, created_at);
