-- A burst of inbound events leaves a backlog of runs waiting for their hand-over (in_progress, not started, no lease).
-- Two indexes made every read of the queue or of the leases cost as much as that backlog
-- (domain/inbound-webhooks/run-queue.test.ts):
--
-- inbound_events_unstarted (received_at, of the events whose run waits) served no read since the hand-over claims
-- workspace by workspace through inbound_events_waiting (0520); planned without statistics (PGlite never analyzes),
-- the claim read every waiting event through it, and each ingestion still wrote an entry into it.
DROP INDEX IF EXISTS inbound_events_unstarted;
-- runs_in_progress_lease (lease_until, of every run in progress) held the waiting runs too, under a null lease: the
-- sweeper's read of expired leases (domain/runs/recovery.ts, `ORDER BY lease_until NULLS FIRST`) went through all of
-- them before the first started run. Only started runs hold a lease.
DROP INDEX IF EXISTS runs_in_progress_lease;
CREATE INDEX runs_started_lease ON runs (lease_until NULLS FIRST) WHERE status = 'in_progress' AND started_at IS NOT NULL;
