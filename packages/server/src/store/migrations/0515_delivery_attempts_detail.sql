-- What the delivery log shows of each attempt besides its outcome: the headers it sent (names as the contract spells them;
-- signatures shortened to 12 characters, never whole, never the secret) and the start of the receiver's answer (at most
-- 2,048 bytes, decoded as UTF-8 with invalid sequences replaced; the worker never keeps more). The body every attempt
-- sent is the event's own (`outbox_events.body`), the same bytes on each attempt, so it is not copied here.

-- NULL when the attempt sent nothing (refused URL, name not resolved in time) and for attempts recorded before.
ALTER TABLE delivery_attempts ADD COLUMN request_headers jsonb;
-- NULL when the receiver did not answer and for attempts recorded before; '' for an empty answer.
ALTER TABLE delivery_attempts ADD COLUMN response_body text;
-- The answer was longer than 2,048 bytes (or did not end within 2 s): `response_body` is its start.
ALTER TABLE delivery_attempts ADD COLUMN response_truncated boolean NOT NULL DEFAULT false;

-- A test event (`ping`, `POST /webhook-destinations/{id}/test-events`): attempted once, even while the destination is
-- paused, never retried, and left out of the destination's health (consecutive failures, last failure, the pause rule).
ALTER TABLE deliveries ADD COLUMN test boolean NOT NULL DEFAULT false;
