-- outbox_enqueue: one outbox event and a delivery per active destination subscribed to its type (what
-- domain/events/outbox.ts enqueueEvent writes), for the closing statement (finish_runs). The envelope is
-- built by the caller; delivery ids come from `p_delivery_ids` (drawn by the caller), and only past those
-- from random_base62.
CREATE OR REPLACE FUNCTION outbox_enqueue(p_id text, p_tenant_id text, p_type text, p_data jsonb, p_body text, p_now timestamptz, p_delivery_ids text[])
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO outbox_events (id, tenant_id, type, data, body, created_at) VALUES (p_id, p_tenant_id, p_type, p_data, p_body, p_now);
  INSERT INTO deliveries (id, event_id, destination_id, status, attempts, next_attempt_at, created_at)
  SELECT COALESCE(p_delivery_ids[d.n], 'dlv_' || random_base62(24)), p_id, d.id, 'pending', 0, p_now, p_now
    FROM (SELECT w.id, row_number() OVER (ORDER BY w.created_at, w.id)::int AS n FROM webhook_destinations w
           WHERE w.workspace_id = p_tenant_id AND p_type = ANY (w.events) AND (w.status = 'active' OR w.paused_reason = 'failures')) d;
END
$$;
