-- The manual kill switch as the panel turns it on: why, and who did (a user id; NULL from the CLI).
ALTER TABLE kill_switches ADD COLUMN reason text;
ALTER TABLE kill_switches ADD COLUMN engaged_by text;
