-- outbox_enqueue: events for the outbox, each with a delivery per active destination subscribed to its type (what
-- domain/events/outbox.ts enqueueEvent writes), in one statement whatever their number: the closing statement's
-- (finish_runs: every event of its batch) and enqueuePrepared's (one). `p` is a jsonb array of objects with the
-- keys of `outbox_event_args` (below; generated/db.ts types them as `FunctionArgument<'outbox_event_args'>`).
-- An event no destination takes is not written: the outbox holds what is to be sent, and nothing reads an event but
-- its deliveries (a run's `run.completed` in a workspace without destinations costs no row).
DROP FUNCTION IF EXISTS outbox_enqueue(text, text, text, jsonb, text, timestamptz, text[]);
DROP TYPE IF EXISTS outbox_event_args CASCADE;
CREATE TYPE outbox_event_args AS (
  id text,
  tenant_id text,
  type text,
  data jsonb,
  -- The envelope, built by the caller: the exact bytes every attempt sends.
  body text,
  now timestamptz,
  -- Drawn by the caller, given to the event's deliveries in the destinations' order; past those, or without them,
  -- random_base62.
  delivery_ids text[]
);

-- PL/pgSQL for its kept plan (a SQL function's statement is planned again at every call).
CREATE OR REPLACE FUNCTION outbox_enqueue(p jsonb) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  WITH e AS (
    SELECT e.* FROM ROWS FROM (jsonb_populate_recordset(NULL::outbox_event_args, p))
                    WITH ORDINALITY AS e(id, tenant_id, type, data, body, now, delivery_ids, i)
  ), d AS (
    SELECT e.id AS event_id, e.i, e.now, COALESCE(e.delivery_ids[w.n], 'dlv_' || random_base62(24)) AS id, w.id AS destination_id, w.n
      FROM e
      CROSS JOIN LATERAL (SELECT w.id, row_number() OVER (ORDER BY w.created_at, w.id)::int AS n FROM webhook_destinations w
                           WHERE w.workspace_id = e.tenant_id AND e.type = ANY (w.events) AND (w.status = 'active' OR w.paused_reason = 'failures')) AS w
  ), events AS (
    INSERT INTO outbox_events (id, tenant_id, type, data, body, created_at)
    SELECT e.id, e.tenant_id, e.type, e.data, e.body, e.now FROM e WHERE e.id IN (SELECT d.event_id FROM d) ORDER BY e.i
  )
  -- The deliveries' foreign key is checked at the end of the statement, when their events are written.
  INSERT INTO deliveries (id, event_id, destination_id, status, attempts, next_attempt_at, created_at)
  SELECT d.id, d.event_id, d.destination_id, 'pending', 0, d.now, d.now FROM d ORDER BY d.i, d.n;
END
$$;
