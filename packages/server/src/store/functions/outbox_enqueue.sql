-- outbox_enqueue: events for the outbox, each with a delivery per active destination subscribed to its type (what
-- domain/events/outbox.ts enqueueEvent writes), in two statements whatever their number: the closing statement's
-- (finish_runs: every event of its batch) and enqueuePrepared's (one). `p` is a jsonb array of objects: `id`,
-- `tenant_id`, `type`, `data`, `body` (the envelope, built by the caller), `now`, and `delivery_ids` (drawn by the
-- caller, given to the event's deliveries in the destinations' order; past those, or without them, random_base62).
DROP FUNCTION IF EXISTS outbox_enqueue(text, text, text, jsonb, text, timestamptz, text[]);
CREATE OR REPLACE FUNCTION outbox_enqueue(p jsonb) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO outbox_events (id, tenant_id, type, data, body, created_at)
  SELECT e.id, e.tenant_id, e.type, e.data, e.body, e.now
    FROM jsonb_to_recordset(p) AS e(id text, tenant_id text, type text, data jsonb, body text, now timestamptz);
  INSERT INTO deliveries (id, event_id, destination_id, status, attempts, next_attempt_at, created_at)
  SELECT COALESCE(e.delivery_ids[d.n], 'dlv_' || random_base62(24)), e.id, d.id, 'pending', 0, e.now, e.now
    FROM ROWS FROM (jsonb_to_recordset(p) AS (id text, tenant_id text, type text, now timestamptz, delivery_ids text[]))
         WITH ORDINALITY AS e(id, tenant_id, type, now, delivery_ids, i)
    CROSS JOIN LATERAL (SELECT w.id, row_number() OVER (ORDER BY w.created_at, w.id)::int AS n FROM webhook_destinations w
                         WHERE w.workspace_id = e.tenant_id AND e.type = ANY (w.events) AND (w.status = 'active' OR w.paused_reason = 'failures')) AS d
   ORDER BY e.i, d.n;
END
$$;
