/**
 * @module Invitations before they are accepted: issued (a new one replaces the open invitation of the same
 * email), listed while pending or expired, resent (a new token, the old one replaced) and revoked, and
 * previewed by the holder of a link. Tokens are random and stored only as hashes; a token that can no longer
 * be used answers `410 expired` with its reason. Accepting is in ./members.ts.
 *
 * Only an owner invites, resends or revokes an invitation with the role `owner`, as only an owner grants that
 * role by a change (./members.ts): otherwise an admin could hand the owner role to an accomplice's address.
 *
 * The rules that let its inviter issue it hold when it is accepted too, read again then
 * (requireInvitationStillAllowed): the inviter is still an owner or admin of the workspace with two-step
 * verification, an owner for an invitation of an owner, and the workspace is in good standing. Otherwise
 * accepting answers `403 forbidden` (or the standing's code) and the invitation stays as it is: an owner or
 * admin may resend it (it is then theirs).
 */
import type { TableRow } from '../../../../../generated/db.ts';
import type { Clock } from '../../clock.ts';
import type { Schema } from '../../contract.ts';
import { sha256Hex } from '../../crypto.ts';
import { fail, type ServiceError } from '../../errors.ts';
import { newId, randomBase62 } from '../../random.ts';
import type { Db, Tx } from '../../store/db.ts';
import { bool, columnsOf, date, nullable, row, selectRow, selectRows, text } from '../../store/rows.ts';
import { type Role, roleColumn, zRole } from './users.ts';
import { type AuditContext, recordAudit } from '../audit/index.ts';
import { requireGoodStanding, STANDING_COLUMNS, standingColumns, standingOf } from '../standing/index.ts';

type Invitation = Schema<'Invitation'>;
type PendingInvitation = Schema<'PendingInvitation'>;
type InvitationPreview = Schema<'InvitationPreview'>;
/** Why a token can no longer be used (InvitationExpiredError's `reason`). */
export type InvitationEnd = Schema<'InvitationExpiredError'>['reason'];

export const INVITATION_TTL_MS = 7 * 86_400_000;
export const INVITATION_TOKEN = /^service_inv_[0-9A-Za-z]{32}$/;
/** The Members screen lists the newest ones; older open invitations stay usable until they expire. */
const LIST_LIMIT = 1000;

type InvitationRow = TableRow<'invitations'>;

/** The columns of `invitations` (`SELECT *`). */
const invitationColumns = columnsOf('invitations', {
  id: text,
  workspace_id: text,
  email: text,
  role: roleColumn,
  token_hash: text,
  invited_by: nullable(text),
  created_at: date,
  expires_at: date,
  accepted_at: nullable(date),
  revoked_at: nullable(date),
  replaced_by: nullable(text),
});

/** Decodes a row of `invitations`. */
export const invitationRow = row(invitationColumns);

/** A role in a workspace, read by a subquery (null: not a member). */
export const memberRoleRow = row({ role: roleColumn });

/**
 * A new invitation, in the caller's transaction; the open invitation of the same email to the workspace (if
 * any) is replaced by it. The token is in the answer and nowhere else.
 */
export async function issueInvitation(
  tx: Tx,
  clock: Clock,
  input: { workspaceId: string; invitedBy: string; email: string; role: Role },
  audit?: { context: AuditContext | undefined; action: 'member.invited' | 'invitation.resent' },
): Promise<Invitation> {
  const token = `service_inv_${randomBase62(32)}`;
  const id = newId('inv');
  const now = clock.now();
  const expiresAt = new Date(now.getTime() + INVITATION_TTL_MS);
  await tx.query(
    `UPDATE invitations SET revoked_at = $3, replaced_by = $4
      WHERE workspace_id = $1 AND email = $2 AND accepted_at IS NULL AND revoked_at IS NULL`,
    [input.workspaceId, input.email, now, id],
  );
  await tx.query(
    `INSERT INTO invitations (id, workspace_id, email, role, token_hash, invited_by, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [id, input.workspaceId, input.email, input.role, sha256Hex(token), input.invitedBy, now, expiresAt],
  );
  if (audit) {
    const target = { type: 'invitation' as const, id, label: input.email };
    await recordAudit(tx, audit.context, input.workspaceId, { action: audit.action, target, details: { role: input.role } }, now);
  }
  return { id, email: input.email, role: input.role, token, expiresAt: expiresAt.toISOString() };
}

/**
 * An accepted invitation grants its role on its inviter's authority as it is at that moment.
 * @throws forbidden when the inviter is no longer an owner or admin of the workspace with two-step verification,
 *   or no longer an owner for an owner's invitation; tenant_forbidden or payment_not_completed for the standing
 */
export async function requireInvitationStillAllowed(db: Db | Tx, invitation: Pick<InvitationRow, 'workspace_id' | 'invited_by' | 'role'>): Promise<void> {
  const facts = await selectRow(
    db,
    row({ ...standingColumns, inviter_role: nullable(roleColumn), inviter_totp: nullable(bool) }),
    `SELECT ${STANDING_COLUMNS},
            (SELECT role FROM memberships WHERE workspace_id = w.id AND user_id = $2) AS inviter_role,
            (SELECT totp_enabled FROM users WHERE id = $2) AS inviter_totp
       FROM workspaces w WHERE w.id = $1`,
    [invitation.workspace_id, invitation.invited_by],
  );
  if (!facts) throw invitationEnded('revoked');
  const inviter = facts.inviter_role === null ? null : zRole.parse(facts.inviter_role);
  if (inviter === null || inviter === 'member' || facts.inviter_totp !== true) {
    throw fail('forbidden', 'The one who sent this invitation is no longer an owner or admin of the workspace; ask for a new invitation.');
  }
  if (zRole.parse(invitation.role) === 'owner' && inviter !== 'owner') {
    throw fail('forbidden', 'Only an owner may invite an owner, and the one who sent this invitation no longer is; ask for a new invitation.');
  }
  requireGoodStanding(standingOf(facts));
}

/** Why the invitation can no longer be used at `now`, or null while it can. */
export function invitationEnd(row: Pick<InvitationRow, 'accepted_at' | 'revoked_at' | 'replaced_by' | 'expires_at'>, now: Date): InvitationEnd | null {
  if (row.accepted_at) return 'used';
  if (row.revoked_at) return row.replaced_by ? 'replaced' : 'revoked';
  if (row.expires_at <= now) return 'expired';
  return null;
}

const END_MESSAGES: Record<InvitationEnd, string> = {
  expired: 'This invitation has expired or was already used.',
  used: 'This invitation has expired or was already used.',
  revoked: 'This invitation was revoked.',
  replaced: 'This invitation was replaced by a newer one; use the latest link.',
};

/** The `410 expired` of a token that can no longer be used, with its reason. */
export function invitationEnded(reason: InvitationEnd): ServiceError {
  return fail('expired', END_MESSAGES[reason], { reason });
}

/** The invitations of the workspace that were neither accepted, revoked nor replaced, newest first. */
export async function listInvitations(db: Db, clock: Clock, workspaceId: string): Promise<PendingInvitation[]> {
  const rows = await selectRows(
    db,
    row(columnsOf('invitations', { id: text, email: text, role: roleColumn, created_at: date, expires_at: date })),
    `SELECT id, email, role, created_at, expires_at FROM invitations
      WHERE workspace_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL ORDER BY created_at DESC, id LIMIT ${LIST_LIMIT}`,
    [workspaceId],
  );
  const now = clock.now();
  return rows.map((row) => ({
    id: row.id,
    email: row.email,
    role: zRole.parse(row.role),
    status: row.expires_at <= now ? 'expired' : 'pending',
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
  }));
}

interface InvitationAction {
  workspaceId: string;
  actorId: string;
  invitationId: string;
}

/**
 * A new token for a pending or expired invitation: a new invitation of the same email and role, valid 7 days,
 * that replaces it.
 * @throws not_found when the workspace has no such open invitation, role_forbidden for an owner's invitation
 *   resent by someone other than an owner
 */
export async function resendInvitation(db: Db, clock: Clock, input: InvitationAction, audit?: AuditContext): Promise<Invitation> {
  return db.transaction(async (tx) => {
    const invitation = await lockOpenInvitation(tx, input, 'resend');
    const role = zRole.parse(invitation.role);
    if (role === 'owner') await requireOwner(tx, input, 'Only an owner may invite an owner.');
    const member = await tx.query(`SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.workspace_id = $1 AND lower(u.email) = $2`, [
      input.workspaceId,
      invitation.email,
    ]);
    if (member.length > 0) throw fail('not_found', 'This person is a member of this workspace already.');
    const issue = { workspaceId: input.workspaceId, invitedBy: input.actorId, email: invitation.email, role };
    return issueInvitation(tx, clock, issue, { context: audit, action: 'invitation.resent' });
  });
}

/**
 * Revokes an invitation that was not accepted; one already revoked or replaced stays as it is.
 * @throws not_found when the workspace has no such invitation or it was accepted, role_forbidden for an
 *   owner's invitation revoked by someone other than an owner
 */
export async function revokeInvitation(db: Db, clock: Clock, input: InvitationAction, audit?: AuditContext): Promise<void> {
  await db.transaction(async (tx) => {
    const invitation = await lockOpenInvitation(tx, input, 'revoke');
    if (invitation.revoked_at) return;
    if (zRole.parse(invitation.role) === 'owner') await requireOwner(tx, input, 'Only an owner may revoke an invitation of an owner.');
    await tx.query(`UPDATE invitations SET revoked_at = $2 WHERE id = $1`, [invitation.id, clock.now()]);
    const target = { type: 'invitation' as const, id: invitation.id, label: invitation.email };
    await recordAudit(tx, audit, input.workspaceId, { action: 'invitation.revoked', target, details: { role: invitation.role } }, clock.now());
  });
}

/**
 * What a token offers, without using it up.
 * @throws not_found for an unknown token, expired (with the reason) when it can no longer be used, and what
 *   requireInvitationStillAllowed throws (the page says so before asking for a password)
 */
export async function previewInvitation(db: Db, clock: Clock, token: string): Promise<InvitationPreview> {
  if (!INVITATION_TOKEN.test(token)) throw fail('not_found', 'No invitation has this token.');
  const found = await selectRow(
    db,
    row({ ...invitationColumns, workspace_name: text, has_account: bool }),
    `SELECT i.*, w.name AS workspace_name, EXISTS (SELECT 1 FROM users u WHERE lower(u.email) = i.email) AS has_account
       FROM invitations i JOIN workspaces w ON w.id = i.workspace_id WHERE i.token_hash = $1`,
    [sha256Hex(token)],
  );
  if (!found) throw fail('not_found', 'No invitation has this token.');
  const ended = invitationEnd(found, clock.now());
  if (ended) throw invitationEnded(ended);
  await requireInvitationStillAllowed(db, found);
  return {
    workspaceName: found.workspace_name,
    email: found.email,
    role: zRole.parse(found.role),
    expiresAt: found.expires_at.toISOString(),
    hasAccount: found.has_account,
  };
}

/**
 * The workspace's invitation, locked. A resend needs it open (not accepted, revoked or replaced); a revoke
 * needs it not accepted.
 */
async function lockOpenInvitation(tx: Tx, input: InvitationAction, action: 'resend' | 'revoke'): Promise<InvitationRow> {
  const found = await selectRow(tx, invitationRow, `SELECT * FROM invitations WHERE id = $1 AND workspace_id = $2 FOR UPDATE`, [
    input.invitationId,
    input.workspaceId,
  ]);
  if (!found) throw fail('not_found', 'No invitation of this workspace has this id.');
  if (found.accepted_at) throw fail('not_found', 'This invitation was accepted; the person is a member now.');
  if (action === 'resend' && found.revoked_at) throw fail('not_found', 'This invitation was revoked or replaced; invite the person again.');
  return found;
}

/** @throws role_forbidden unless the actor is an owner of the workspace (read in the caller's transaction) */
async function requireOwner(tx: Tx, input: InvitationAction, message: string): Promise<void> {
  const actor = await selectRow(tx, memberRoleRow, `SELECT role FROM memberships WHERE workspace_id = $1 AND user_id = $2`, [input.workspaceId, input.actorId]);
  if (actor?.role !== 'owner') throw fail('role_forbidden', message);
}
