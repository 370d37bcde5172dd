-- Outbound destinations: the previous signing secret through a rotation's grace period, and the `gone` pause.
--
-- A rotation keeps the secret it replaces, sealed like the current one (AES-256-GCM under SECRET_KEY), until
-- `previous_secret_expires_at` (24 hours after the rotation): until then `webhook-signature` carries a second `v1`
-- signature made with it, so a receiver still holding the old secret verifies. Past the expiry it is never used
-- (the claim reads it only while it is valid) and the next rotation overwrites it.
ALTER TABLE webhook_destinations ADD COLUMN previous_secret_encrypted text;
ALTER TABLE webhook_destinations ADD COLUMN previous_secret_expires_at timestamptz;

-- Why it was paused: 'failures' (the automatic pause rule), 'admin', or 'gone' (the receiver answered 410 Gone).
ALTER TABLE webhook_destinations DROP CONSTRAINT webhook_destinations_paused_reason_check;
ALTER TABLE webhook_destinations ADD CONSTRAINT webhook_destinations_paused_reason_check CHECK (paused_reason IN ('failures', 'admin', 'gone'));
