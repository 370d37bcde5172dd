-- Invitations that end before they are accepted: revoked by an owner or admin, or replaced by a newer invitation of the
-- same email (a resend, or inviting the email again). Either way `revoked_at` is set and the token answers `410 expired`;
-- `replaced_by` names the newer invitation (NULL for a revocation), so the answer can say which of the two it was.
ALTER TABLE invitations ADD COLUMN revoked_at timestamptz;
ALTER TABLE invitations ADD COLUMN replaced_by text;

-- The pending invitations of a workspace (the Members screen) and the open one of an email (replaced by a new one).
CREATE INDEX invitations_open ON invitations (workspace_id, email) WHERE accepted_at IS NULL AND revoked_at IS NULL;
