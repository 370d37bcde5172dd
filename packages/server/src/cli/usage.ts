/**
 * @module Command-line usage errors and help texts.
 */
/** The options every workspace command takes (`agents …`, `plan …`, `kill-switch …`, `webhooks …`, `approvals …`). */
export const WORKSPACE_COMMAND_OPTIONS = {
  'data-dir': { type: 'string' },
  workspace: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The help lines of the flags of a command that can go through a running server's operator API (cli/operator-api.ts). */
export const OPERATOR_API_HELP = `  --url U             a running server (or SERVICE_URL): go through its operator API instead of the store
  --operator-token T  the operator token for --url (or OPERATOR_TOKEN; prefer the variable)`;

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const HELP: Record<string, string> = {
  main: `Agent Invocation Service

Usage: service <command> [options]

Commands:
  init          First start: the first workspace, its owner (with TOTP), a first API key and the operator token
  keys create   Issue an API key
  keys list     List the workspace's API keys
  keys revoke   Revoke an API key at once
  keys rotate   Issue a new key with the same scopes and revoke the old one
  users add     Add a user (admin or member) to the workspace, with TOTP
  users list    List the workspace's users
  users reset-password|reset-totp --email E   The operator's recovery of an account (a last owner): a single-use link
  totp          Print the current TOTP code of a Base32 secret (for scripted logins)
  serve         Run the HTTP(S) server (and the webhook delivery worker)
  webhooks inbound  create|list|pause|resume|revoke                                Inbound webhooks
  webhooks outbound create|list|rotate-secret|pause|resume|ping|test-event|replay  Outbound destinations
  approvals decide  Approve or reject a pending approval
  agents list|pause|resume       List agents, pause one (with a reason) or resume it
  plan show|set                 Show or set the workspace's plan (starter, growth, enterprise)
  kill-switch on|off|status     The manual spending switch, and the hour/day budgets
  workspaces create|list|update|delete   The operator's workspaces (tenants): plan, ceiling, suspension, payment
  operator-token create         Issue another operator token (for the operator API)
  secret-key rotate             Re-seal the secrets at rest under a new SECRET_KEY
  store copy --to URL           Copy the embedded store into an empty PostgreSQL database

Run \`service <command> --help\` for the options of a command.

Environment: DATA_DIR (embedded store, default ./data), DATABASE_URL (PostgreSQL instead of the
embedded store), DATABASE_POOL_SIZE (its connections per process, default 10), DATABASE_LISTEN_URL
(the LISTEN connection's own URL when DATABASE_URL goes through a pooler in transaction mode such as
PgBouncer's; serve refuses to start when its LISTEN would not hear), REDIS_URL (shared rate limits),
PORT, HOST, TLS_CERT, TLS_KEY, TRUST_PROXY,
SECRET_KEY (seals webhook secrets; required with DATABASE_URL), WEBHOOK_ALLOW_HOSTS (hosts/CIDRs
that deliveries may reach although private), WEBHOOK_POLL_MS, WEBHOOK_DELIVERY_TIMEOUT_MS, RUN_LEASE_MS,
STREAM_RESUME_MS, RUN_EVENT_RETENTION_HOURS, AUDIT_RETENTION_DAYS,
CORS_ORIGINS (browser origins allowed to call the API; none by default), OPERATOR_TOKEN (an operator
token the server accepts, at least 32 characters), SERVICE_URL (the running server the \`workspaces\`,
\`keys\`, \`kill-switch\`, \`plan\`, \`agents\`, \`users\`, \`webhooks\` and \`approvals\` commands call), METRICS_PORT, METRICS_HOST, SHUTDOWN_GRACE_MS, HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS,
KEEP_ALIVE_TIMEOUT_MS, LOG_LEVEL, LOG_FORMAT, WORKERS (see docs/operations.md).`,

  init: `Usage: service init [--json] [--email E] [--password P] [--workspace-name N] [--data-dir D]

The deployment's first start: creates the first workspace, its owner with two-step verification (TOTP),
a first API key holding every scope that can be issued, and the operator token (for the operator API and
\`service workspaces --url\`). Prints them once: keep them. (\`service serve\` does the same by itself on an
empty store.)
  --json             print {"workspaceId","apiKey","admin":{"email","password","totpSecret"},"operatorToken"}
  --email E          admin email (default admin@example.com)
  --password P       admin password, at least 12 characters (default: 24 random characters)
  --workspace-name N name of the workspace (default "Default workspace")
  --data-dir D       embedded store directory (default ./data, or DATA_DIR)
Refuses to run when a workspace already exists: add more with \`service workspaces create\`.
With DATABASE_URL, SECRET_KEY must be set (the same key as every instance's): the TOTP secret is sealed with it.`,

  'keys create': `Usage: service keys create --name N --scopes a,b [--expires-in-days D] [--workspace W] [--json] [--url U]

  --name N              label, 1 to 100 characters
  --scopes a,b          comma-separated scopes: orchestrator:invoke, orchestrator:invoke:agent:<slug>,
                        tenant:read, departments:read, usage:read, webhooks:ingest, mcp:tenant, or a
                        resource wildcard such as usage:* (never *:*)
  --expires-in-days D   1 to 730 (default 365)
  --workspace W         the workspace (default: the only one)
  --json                print {"id","secret","prefix","scopes","expiresAt"}
  --data-dir D          embedded store directory (default ./data, or DATA_DIR)
  --url U               a running server (or SERVICE_URL): go through its operator API instead of the store
  --operator-token T    the operator token for --url (or OPERATOR_TOKEN; prefer the variable)
The secret is shown once; only its hash is stored. Without --url the command works on the store, which the
embedded store allows only while the server is stopped.`,

  'keys list': `Usage: service keys list [--workspace W] [--json] [--data-dir D] [--url U]

Lists the workspace's keys, newest first, with their visible prefix and status (never a secret).
  --url U               a running server (or SERVICE_URL): go through its operator API instead of the store
  --operator-token T    the operator token for --url (or OPERATOR_TOKEN; prefer the variable)`,

  'keys revoke': `Usage: service keys revoke <key id> [--workspace W] [--json] [--data-dir D] [--url U]

Revokes the key at once (a soft delete: it stays listed as revoked).
  --url U               a running server (or SERVICE_URL): go through its operator API instead of the store
  --operator-token T    the operator token for --url (or OPERATOR_TOKEN; prefer the variable)`,

  'keys rotate': `Usage: service keys rotate <key id> [--workspace W] [--json] [--data-dir D] [--url U]

Issues a new key with the same name, scopes and lifetime, and revokes the old one at once.
Prints the new secret once.
  --url U               a running server (or SERVICE_URL): go through its operator API instead of the store
  --operator-token T    the operator token for --url (or OPERATOR_TOKEN; prefer the variable)`,

  'users add': `Usage: service users add --email E [--role owner|admin|member] [--password P] [--no-totp] [--workspace W] [--json] [--url U]

Adds a user. Prints the password (24 random characters unless given) and the TOTP secret once.
Key management needs role owner or admin with TOTP; a user added with --no-totp can sign in but
not manage keys.
  --role R            owner, admin or member (default admin)
  --password P        at least 12 characters (default: 24 random ones)
  --json              print {"id","email","role","password","totpSecret"}
  --workspace W       the workspace (default: the only one)
  --data-dir D        embedded store directory when there is no --url (default ./data, or DATA_DIR)
${OPERATOR_API_HELP}
With --url: POST /operator/workspaces/{id}/users, the same output.`,

  'users list': `Usage: service users list [--workspace W] [--json] [--data-dir D] [--url U]

Lists the workspace's users with their role and whether two-step verification is active.
  --json              print {"data":[{"id","email","role","twoFactorEnabled"}]}
  --workspace W       the workspace (default: the only one)
  --data-dir D        embedded store directory when there is no --url (default ./data, or DATA_DIR)
${OPERATOR_API_HELP}
With --url: GET /operator/workspaces/{id}/users, the same output.`,

  totp: `Usage: service totp <base32 secret>

Prints the current 6-digit code (RFC 6238: SHA-1, 30 s steps), as an authenticator app would.
Each code is accepted once at login.`,

  serve: `Usage: service serve [--port P] [--host H] [--data-dir D] [--tls-cert F --tls-key F] [--workers N]

  --port P        port (default 8080, or PORT; 0 picks a free one)
  --host H        address to bind (default 127.0.0.1, or HOST; 0.0.0.0 for every interface)
  --data-dir D    embedded store directory (default ./data, or DATA_DIR); unused with DATABASE_URL
  --tls-cert F    PEM certificate chain; with --tls-key, serves HTTPS with TLS 1.2 minimum
  --tls-key F     PEM private key
  --workers N     server processes behind the port, 1 to 64 (or WORKERS; default: the cores with
                  DATABASE_URL and REDIS_URL, else 1). More than one needs both: the embedded store
                  is one process, and the rate limits must be shared. METRICS_PORT is the first
                  worker's; worker k serves metrics on METRICS_PORT + k - 1.
Without a certificate it serves plain HTTP (for local use or behind a TLS-terminating proxy) and
says so. The embedded store is locked while the server runs; with DATABASE_URL and REDIS_URL
several servers can share the store and the rate limits.`,
};
