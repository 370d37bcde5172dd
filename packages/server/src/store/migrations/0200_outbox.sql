-- Outbound webhooks: destinations, the outbox of workspace events, and one delivery per
-- (event, destination). The worker claims due deliveries with FOR UPDATE SKIP LOCKED, so several
-- instances share the work; an event and its deliveries are written in one transaction with the
-- change that caused them, so a crash can never leave an event without its deliveries.

CREATE TABLE webhook_destinations (
  id                    text PRIMARY KEY,                   -- dst_…
  workspace_id          text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  url                   text NOT NULL,
  events                text[] NOT NULL,                    -- subscribed event types
  -- The signing secret has to be usable for an HMAC, so it is stored encrypted (AES-256-GCM under
  -- the server's SECRET_KEY), never in clear.
  secret_encrypted      text NOT NULL,
  status                text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused')),
  -- Failed attempts in a row across all of this destination's deliveries; a success resets it.
  consecutive_failures  integer NOT NULL DEFAULT 0,
  paused_at             timestamptz,
  -- Why it was paused: 'failures' (the automatic pause rule, "flagged") or 'admin'.
  paused_reason         text CHECK (paused_reason IN ('failures', 'admin')),
  secret_rotated_at     timestamptz,
  created_at            timestamptz NOT NULL
);
CREATE INDEX webhook_destinations_workspace ON webhook_destinations (workspace_id, created_at);

CREATE TABLE outbox_events (
  id            text PRIMARY KEY,                           -- evt_…
  tenant_id     text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  type          text NOT NULL,
  data          jsonb NOT NULL,                             -- already redacted
  -- The exact envelope bytes (UTF-8 JSON) every attempt sends, so retries carry the same body.
  body          text NOT NULL,
  created_at    timestamptz NOT NULL
);
CREATE INDEX outbox_events_tenant ON outbox_events (tenant_id, created_at);

CREATE TABLE deliveries (
  id               text PRIMARY KEY,                        -- dlv_…
  event_id         text NOT NULL REFERENCES outbox_events (id) ON DELETE CASCADE,
  destination_id   text NOT NULL REFERENCES webhook_destinations (id) ON DELETE CASCADE,
  -- pending: waiting for next_attempt_at; delivered: a 2xx came back; failed: given up (replayable).
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz,                             -- set while pending
  -- A claimed delivery is leased until this time; a worker that dies mid-attempt loses its lease
  -- and another worker (or the restarted one) sends it again: at least once.
  locked_until     timestamptz,
  claim_token      text,                                    -- the claim the lease belongs to
  last_status      integer,
  last_error       text,
  last_attempt_at  timestamptz,
  delivered_at     timestamptz,
  created_at       timestamptz NOT NULL,
  UNIQUE (event_id, destination_id)
);
-- The worker's claim: due pending deliveries in time order.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX deliveries_destination_status ON deliveries (destination_id, status);

-- Every attempt, for the admin's view and for the audit.
CREATE TABLE delivery_attempts (
  id             text PRIMARY KEY,
  delivery_id    text NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  attempt        integer NOT NULL,
  result         text NOT NULL CHECK (result IN ('delivered', 'retry', 'give_up')),
  status         integer,
  reason         text,
  attempted_at   timestamptz NOT NULL
);
CREATE INDEX delivery_attempts_delivery ON delivery_attempts (delivery_id, attempt);
