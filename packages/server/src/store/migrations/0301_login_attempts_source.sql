-- Failed logins are counted per email and source address together, per source address, and per
-- email (a high backstop), so nobody can lock an admin out from another address.
ALTER TABLE login_attempts ADD COLUMN source text NOT NULL DEFAULT 'unknown';
CREATE INDEX login_attempts_source_time ON login_attempts (source, attempted_at);
