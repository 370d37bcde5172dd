-- ingest_inbound_event: one verified inbound event in one statement (domain/inbound-webhooks/ingest.ts):
-- the event row (the UNIQUE (webhook, event id) constraint decides between the first and a repeat), for
-- the first its run (in_progress, executed by the worker's hand-over), for a repeat the audit of the
-- repeat on the first row, and the webhook's last event time, last, so that the webhook's row is locked
-- only at the end of the statement, and moved only forward. Answers `ok` or `duplicate` with the run's id.
CREATE OR REPLACE FUNCTION ingest_inbound_event(
  p_id text, p_webhook_id text, p_workspace_id text, p_slug text, p_event_id text, p_event_id_source text,
  p_received_at timestamptz, p_source_ip text, p_body_sha256 text, p_body_bytes integer, p_signed_at timestamptz,
  p_request_id text, p_agent_input text, p_agent_slug text, p_alias text, p_run_id text,
  OUT o_code text, OUT o_run_id text
)
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO inbound_events (id, webhook_id, workspace_id, slug, event_id, event_id_source, received_at, source_ip,
                              body_sha256, body_bytes, signed_at, request_id, agent_input, agent_slug, alias, run_id)
  VALUES (p_id, p_webhook_id, p_workspace_id, p_slug, p_event_id, p_event_id_source, p_received_at, p_source_ip,
          p_body_sha256, p_body_bytes, p_signed_at, p_request_id, p_agent_input, p_agent_slug, p_alias, p_run_id)
  ON CONFLICT (webhook_id, event_id) DO NOTHING
  RETURNING inbound_events.run_id INTO o_run_id;
  IF o_run_id IS NOT NULL THEN
    -- The run row with its event: the id answered to the sender names a run that exists.
    INSERT INTO runs (id, workspace_id, status, agent_slug, answered_by, alias, source, created_at, updated_at, window_hour, window_day)
    VALUES (p_run_id, p_workspace_id, 'in_progress', p_agent_slug, p_agent_slug, p_alias, 'inbound_webhook', p_received_at, p_received_at,
            date_trunc('hour', p_received_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
            date_trunc('day', p_received_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC');
    o_code := 'ok';
  ELSE
    UPDATE inbound_events e SET duplicates = e.duplicates + 1, last_duplicate_at = p_received_at
     WHERE e.webhook_id = p_webhook_id AND e.event_id = p_event_id
    RETURNING e.run_id INTO o_run_id;
    o_code := 'duplicate';
  END IF;
  UPDATE inbound_webhooks h SET last_event_at = p_received_at
   WHERE h.id = p_webhook_id AND (h.last_event_at IS NULL OR h.last_event_at < p_received_at);
END
$$;
