-- Deliveries by destination (worker/deliveries.ts, domain/events/deliveries.ts): the claim takes due deliveries lane
-- by lane, a few per destination and per workspace, instead of the oldest due first across all. It reads each
-- destination's first due deliveries in time order: this index, so the claim costs a probe per destination, not a
-- read of the backlog.
CREATE INDEX deliveries_destination_due ON deliveries (destination_id, next_attempt_at, id) WHERE status = 'pending';
-- The inbound hand-over (domain/inbound-webhooks/run-queue.ts) likewise lets workspaces take turns: the workspaces
-- with events waiting, found by skipping through this index, and each one's oldest waiting events.
CREATE INDEX inbound_events_waiting ON inbound_events (workspace_id, received_at, id) WHERE run_started_at IS NULL;
