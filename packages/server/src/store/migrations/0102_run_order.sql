-- Runs are listed newest first. created_at alone ties (same millisecond, or a test's fixed clock), and the
-- random id is no order at all, so a sequence breaks the tie in insertion order.
ALTER TABLE runs ADD COLUMN seq bigserial;
CREATE INDEX runs_workspace_order ON runs (workspace_id, created_at DESC, seq DESC);
