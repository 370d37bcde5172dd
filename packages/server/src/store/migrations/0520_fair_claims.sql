-- Deliveries by destination (worker/deliveries.ts, domain/events/deliveries.ts): the claim takes due deliveries lane
-- by lane, at most a few per destination and per workspace in flight, instead of the oldest due first across all.
-- Two partial indexes keep that claim proportional to the destinations and the deliveries in flight, not to the
-- backlog: a destination's due deliveries in time order (the claim reads its first few), and the deliveries under
-- a claim (locked_until is set by the claim and cleared by every outcome and by a release), counted per
-- destination.
CREATE INDEX deliveries_destination_due ON deliveries (destination_id, next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX deliveries_in_flight ON deliveries (destination_id) WHERE locked_until IS NOT NULL;
-- The inbound hand-over (domain/inbound-webhooks/run-queue.ts) likewise lets workspaces take turns: the workspaces
-- with events waiting, found by skipping through this index, and each one's oldest waiting events.
CREATE INDEX inbound_events_waiting ON inbound_events (workspace_id, received_at, id) WHERE run_started_at IS NULL;
