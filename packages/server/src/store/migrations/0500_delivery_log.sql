-- The delivery log the panel shows: each attempt says what went wrong (an error kind an admin can act
-- on, beside the HTTP status), how long it took and when the next try is due; a destination keeps its
-- last failure, so "consecutiveFailures: 3" comes with a reason. Written by the delivery worker.

-- NULL on a delivered attempt; otherwise one of: http_status, timeout, dns, tls, connection_refused,
-- connection_reset, network, ssrf_refused, internal (domain/webhooks/failure-kind.ts).
ALTER TABLE delivery_attempts ADD COLUMN error_kind text;
-- Wall time of the attempt, name resolution to response headers, in milliseconds.
ALTER TABLE delivery_attempts ADD COLUMN duration_ms integer;
-- When the delivery is due again after this attempt; NULL when it was delivered or given up.
ALTER TABLE delivery_attempts ADD COLUMN next_attempt_at timestamptz;

ALTER TABLE webhook_destinations ADD COLUMN last_failure_at timestamptz;
ALTER TABLE webhook_destinations ADD COLUMN last_failure_kind text;
ALTER TABLE webhook_destinations ADD COLUMN last_failure_status integer;

-- The destination's delivery log, newest first.
CREATE INDEX deliveries_destination_created ON deliveries (destination_id, created_at DESC, id);
