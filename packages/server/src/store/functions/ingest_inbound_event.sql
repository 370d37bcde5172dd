-- ingest_inbound_event: one verified inbound event in one statement (domain/inbound-webhooks/ingest.ts):
-- the event row (the UNIQUE (webhook, event id) constraint decides between the first and a repeat), for
-- the first its run (in_progress, executed by the worker's hand-over), for a repeat the audit of the
-- repeat on the first row, and the webhook's last event time, last, so that the webhook's row is locked
-- only at the end of the statement, and moved only forward. Answers `ok` or `duplicate` with the run's id.
-- One argument: a jsonb object with the keys of `ingest_inbound_event_args` (generated/db.ts types it as
-- `FunctionArgument<'ingest_inbound_event_args'>`).
DROP TYPE IF EXISTS ingest_inbound_event_args CASCADE;
CREATE TYPE ingest_inbound_event_args AS (
  -- The event row's id.
  id text,
  webhook_id text,
  workspace_id text,
  slug text,
  -- The sender's event id, and the header that carried it (`body`: derived from the body).
  event_id text,
  event_id_source text,
  received_at timestamptz,
  source_ip text,
  body_sha256 text,
  body_bytes integer,
  -- The sender's verified timestamp, when it sent one.
  signed_at timestamptz,
  request_id text,
  -- The rendered agent input, and the agent and alias the webhook runs.
  agent_input text,
  agent_slug text,
  alias text,
  -- The id of the run a first event starts (answered to the sender).
  run_id text
);

CREATE OR REPLACE FUNCTION ingest_inbound_event(p jsonb, OUT o_code text, OUT o_run_id text)
LANGUAGE plpgsql AS $$
DECLARE
  a ingest_inbound_event_args := jsonb_populate_record(NULL::ingest_inbound_event_args, p);
BEGIN
  INSERT INTO inbound_events (id, webhook_id, workspace_id, slug, event_id, event_id_source, received_at, source_ip,
                              body_sha256, body_bytes, signed_at, request_id, agent_input, agent_slug, alias, run_id)
  VALUES (a.id, a.webhook_id, a.workspace_id, a.slug, a.event_id, a.event_id_source, a.received_at, a.source_ip,
          a.body_sha256, a.body_bytes, a.signed_at, a.request_id, a.agent_input, a.agent_slug, a.alias, a.run_id)
  ON CONFLICT (webhook_id, event_id) DO NOTHING
  RETURNING inbound_events.run_id INTO o_run_id;
  IF o_run_id IS NOT NULL THEN
    -- The run row with its event: the id answered to the sender names a run that exists.
    INSERT INTO runs (id, workspace_id, status, agent_slug, answered_by, alias, source, created_at, updated_at, window_hour, window_day)
    VALUES (a.run_id, a.workspace_id, 'in_progress', a.agent_slug, a.agent_slug, a.alias, 'inbound_webhook', a.received_at, a.received_at,
            date_trunc('hour', a.received_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
            date_trunc('day', a.received_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC');
    o_code := 'ok';
  ELSE
    UPDATE inbound_events e SET duplicates = e.duplicates + 1, last_duplicate_at = a.received_at
     WHERE e.webhook_id = a.webhook_id AND e.event_id = a.event_id
    RETURNING e.run_id INTO o_run_id;
    o_code := 'duplicate';
  END IF;
  UPDATE inbound_webhooks h SET last_event_at = a.received_at
   WHERE h.id = a.webhook_id AND (h.last_event_at IS NULL OR h.last_event_at < a.received_at);
END
$$;
