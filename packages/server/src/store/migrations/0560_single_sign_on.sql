-- A workspace's single sign-on with its OpenID Connect identity provider (domain/sso), set by an owner. The client
-- secret must stay usable to call the token endpoint, so it is sealed (runtime/sealed-secrets.ts), never hashed.
CREATE TABLE sso_settings (
  workspace_id             text PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
  issuer                   text NOT NULL,
  client_id                text NOT NULL,
  client_secret_encrypted  text NOT NULL,
  allowed_domains          text[] NOT NULL,                 -- lower case
  jit_membership           boolean NOT NULL DEFAULT false,
  default_role             text NOT NULL DEFAULT 'member' CHECK (default_role IN ('member', 'admin')),
  sso_required             boolean NOT NULL DEFAULT false,
  created_at               timestamptz NOT NULL,
  updated_at               timestamptz NOT NULL
);
-- The sign-in's lookup by an email's domain.
CREATE INDEX sso_settings_domains ON sso_settings USING gin (allowed_domains);

-- The workspace whose identity provider signed the session in; NULL for a password sign-in. Such a session acts on
-- that workspace only (domain/sessions/sso-rule.ts).
ALTER TABLE sessions ADD COLUMN sso_workspace_id text REFERENCES workspaces (id) ON DELETE CASCADE;
