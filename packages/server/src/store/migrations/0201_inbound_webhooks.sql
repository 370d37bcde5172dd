-- Inbound webhooks: signed events from external systems that start runs. The uniqueness of
-- (webhook, event id) is what makes ingestion idempotent, under concurrency too.

CREATE TABLE inbound_webhooks (
  id                   text PRIMARY KEY,                     -- whk_…
  workspace_id         text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  slug                 text NOT NULL UNIQUE,                 -- the URL names the webhook, across the service
  -- AES-256-GCM under SECRET_KEY (an HMAC key cannot be a hash); never shared between workspaces.
  secret_encrypted     text NOT NULL,
  algorithm            text NOT NULL CHECK (algorithm IN ('sha256', 'sha512')),
  signature_header     text NOT NULL,
  timestamp_required   boolean NOT NULL,
  requests_per_minute  integer NOT NULL CHECK (requests_per_minute BETWEEN 1 AND 10000),
  template             text,
  agent_slug           text NOT NULL,
  alias                text NOT NULL,
  status               text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'revoked')),
  created_at           timestamptz NOT NULL,
  last_event_at        timestamptz,
  revoked_at           timestamptz
);
CREATE INDEX inbound_webhooks_workspace ON inbound_webhooks (workspace_id, created_at);

-- One row per accepted event: the audit of ingestion and the durable queue of the run it starts.
CREATE TABLE inbound_events (
  id                text PRIMARY KEY,                        -- iev_…
  webhook_id        text NOT NULL REFERENCES inbound_webhooks (id) ON DELETE CASCADE,
  workspace_id      text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  slug              text NOT NULL,
  event_id          text NOT NULL,                           -- from the sender's header, or sha256:<body>
  event_id_source   text NOT NULL,                           -- which header gave it, or 'body'
  received_at       timestamptz NOT NULL,
  source_ip         text,
  body_sha256       text NOT NULL,
  body_bytes        integer NOT NULL,
  signed_at         timestamptz,                             -- the sender's X-SERVICE-Timestamp, when sent
  request_id        text,
  -- The rendered agent input, kept until the run has been handed over.
  agent_input       text,
  agent_slug        text NOT NULL,
  alias             text NOT NULL,
  run_id            text NOT NULL,                           -- chosen at ingestion, answered to the sender
  run_started_at    timestamptz,                             -- null while the run is still to be started
  duplicates        integer NOT NULL DEFAULT 0,              -- repeats of this event id received since
  last_duplicate_at timestamptz,
  UNIQUE (webhook_id, event_id)
);
CREATE INDEX inbound_events_unstarted ON inbound_events (received_at) WHERE run_started_at IS NULL;
CREATE INDEX inbound_events_workspace ON inbound_events (workspace_id, received_at);
