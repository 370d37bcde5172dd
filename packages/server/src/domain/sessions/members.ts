/**
 * @module The members of a workspace: list, change a role, remove; and invitations, single-use and
 * valid 7 days, which a person accepts with a new account or with the password of the one they have
 * (listing, resending, revoking and previewing them: ./invitations.ts).
 * A workspace always keeps an owner: the last one can be neither demoted nor removed.
 *
 * Roles are ordered member < admin < owner, and a change may not reach above the one who makes it
 * (`403 role_forbidden`): only an owner grants the owner role (by a change or an invitation), changes
 * or removes an owner; an admin manages admins and members; nobody raises their own role. Otherwise
 * an admin could make itself owner and then remove the owners (the workspace taken from its owner).
 */
import type { Clock } from '../../clock.ts';
import type { Schema } from '../../contract.ts';
import { sha256Hex } from '../../crypto.ts';
import { fail } from '../../errors.ts';
import type { Db, Tx } from '../../store/db.ts';
import { bool, columnsOf, date, row, selectRow, selectRows, tableRow, text } from '../../store/rows.ts';
import type { SecretBox } from '../webhooks/secret-box.ts';
import {
  INVITATION_TOKEN,
  invitationEnd,
  invitationEnded,
  invitationRow,
  issueInvitation,
  memberRoleRow,
  requireInvitationStillAllowed,
} from './invitations.ts';
import { verifyPassword } from './password.ts';
import { confirmSetupCode, setupTotpSecret } from './totp-secret.ts';
import { addMembership, createUser, normalizeEmail, type Role, roleColumn, zRole } from './users.ts';
import { type AuditContext, recordAudit } from '../audit/index.ts';

type Member = Schema<'Member'>;
type Invitation = Schema<'Invitation'>;
type InvitationAccepted = Schema<'InvitationAccepted'>;
type TwoStepSetup = Schema<'TwoStepSetup'>;

const memberRow = row({
  ...columnsOf('memberships', { user_id: text, role: roleColumn, created_at: date }),
  ...columnsOf('users', { email: text, totp_enabled: bool }),
});
type MemberRow = ReturnType<typeof memberRow>;

const MEMBER_COLUMNS = `m.user_id, m.role, m.created_at, u.email, u.totp_enabled`;

function memberTarget(row: MemberRow) {
  return { type: 'member' as const, id: row.user_id, label: row.email };
}

function toMember(row: MemberRow): Member {
  return { userId: row.user_id, email: row.email, role: zRole.parse(row.role), twoFactorEnabled: row.totp_enabled, joinedAt: row.created_at.toISOString() };
}

export async function listMembers(db: Db, workspaceId: string): Promise<Member[]> {
  const rows = await selectRows(
    db,
    memberRow,
    `SELECT ${MEMBER_COLUMNS} FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.workspace_id = $1 ORDER BY m.created_at, m.user_id`,
    [workspaceId],
  );
  return rows.map(toMember);
}

const RANK: Record<Role, number> = { member: 0, admin: 1, owner: 2 };

/**
 * The workspace's memberships locked for a change: the one of `userId` and the role of `actorId`, read
 * under the same lock, so a concurrent demotion of the actor cannot be overtaken.
 * @throws member_not_found when the user is not a member of the workspace
 */
async function lockMembers(tx: Tx, workspaceId: string, userId: string, actorId: string): Promise<{ target: MemberRow; actor: Role; owners: number }> {
  const rows = await selectRows(
    tx,
    memberRow,
    `SELECT ${MEMBER_COLUMNS} FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.workspace_id = $1 ORDER BY m.user_id FOR UPDATE OF m`,
    [workspaceId],
  );
  const actorRow = rows.find((row) => row.user_id === actorId);
  // Removed (or demoted to member) since the session was checked: no power over anyone.
  if (!actorRow || actorRow.role === 'member') throw fail('role_forbidden', 'Managing members needs an owner or admin with two-step verification active.');
  const target = rows.find((row) => row.user_id === userId);
  if (!target) throw fail('member_not_found', 'No member of this workspace has this id.');
  return { target, actor: zRole.parse(actorRow.role), owners: rows.filter((row) => row.role === 'owner').length };
}

const LAST_OWNER = 'A workspace keeps at least one owner: make another member an owner first.';
const OWNER_ONLY = 'Only an owner may grant the owner role, or change or remove an owner.';
const NOT_SELF = 'Nobody may raise their own role.';

/**
 * The order of roles: `role` is the new role (null for a removal).
 * @throws role_forbidden when the change reaches above the actor
 */
function requireMayManage(actor: Role, actorId: string, target: MemberRow, role: Role | null): void {
  if (role !== null && target.user_id === actorId && RANK[role] > RANK[zRole.parse(target.role)]) throw fail('role_forbidden', NOT_SELF);
  if (actor === 'owner') return;
  if (target.role === 'owner' || role === 'owner') throw fail('role_forbidden', OWNER_ONLY);
}

/** @throws member_not_found, role_forbidden (the order of roles), forbidden when it would leave the workspace without an owner */
export async function updateMember(
  db: Db,
  clock: Clock,
  workspaceId: string,
  actorId: string,
  userId: string,
  role: Role,
  audit?: AuditContext,
): Promise<Member> {
  return db.transaction(async (tx) => {
    const { target, actor, owners } = await lockMembers(tx, workspaceId, userId, actorId);
    requireMayManage(actor, actorId, target, role);
    if (target.role === 'owner' && role !== 'owner' && owners === 1) throw fail('forbidden', LAST_OWNER);
    await tx.query(`UPDATE memberships SET role = $3 WHERE workspace_id = $1 AND user_id = $2`, [workspaceId, userId, role]);
    const details = { from: target.role, to: role };
    await recordAudit(tx, audit, workspaceId, { action: 'member.role_changed', target: memberTarget(target), details }, clock.now());
    return toMember({ ...target, role });
  });
}

/**
 * Removes the membership and the user's sessions in this workspace.
 * @throws member_not_found, role_forbidden (an admin removing an owner), forbidden (last owner)
 */
export async function removeMember(db: Db, clock: Clock, workspaceId: string, actorId: string, userId: string, audit?: AuditContext): Promise<void> {
  await db.transaction(async (tx) => {
    const { target, actor, owners } = await lockMembers(tx, workspaceId, userId, actorId);
    requireMayManage(actor, actorId, target, null);
    if (target.role === 'owner' && owners === 1) throw fail('forbidden', LAST_OWNER);
    await tx.query(`DELETE FROM memberships WHERE workspace_id = $1 AND user_id = $2`, [workspaceId, userId]);
    await tx.query(`DELETE FROM sessions WHERE workspace_id = $1 AND user_id = $2`, [workspaceId, userId]);
    await recordAudit(tx, audit, workspaceId, { action: 'member.removed', target: memberTarget(target), details: { role: target.role } }, clock.now());
  });
}

/**
 * A single-use invitation; the token is in the answer and nowhere else. It replaces the open invitation of
 * the same email (./invitations.ts).
 * @throws role_forbidden when someone other than an owner invites an owner, invalid_body for someone already a member
 */
export async function createInvitation(
  db: Db,
  clock: Clock,
  input: { workspaceId: string; invitedBy: string; email: string; role: Role },
  audit?: AuditContext,
): Promise<Invitation> {
  if (input.role === 'owner') {
    const inviter = await selectRow(db, memberRoleRow, `SELECT role FROM memberships WHERE workspace_id = $1 AND user_id = $2`, [
      input.workspaceId,
      input.invitedBy,
    ]);
    if (inviter?.role !== 'owner') throw fail('role_forbidden', 'Only an owner may invite an owner.');
  }
  const email = normalizeEmail(input.email);
  const member = await db.query(`SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.workspace_id = $1 AND lower(u.email) = $2`, [
    input.workspaceId,
    email,
  ]);
  if (member.length > 0) throw fail('invalid_body', `'email' is already a member of this workspace`, { param: 'email' });
  // The open invitation of the same email, if any, is replaced: one link per person is live.
  return db.transaction((tx) => issueInvitation(tx, clock, { ...input, email }, { context: audit, action: 'member.invited' }));
}

/** Accepting answers the membership, or first, for a new account, the two-step secret to confirm. */
export type AcceptOutcome = { accepted: InvitationAccepted } | { setup: TwoStepSetup };

/**
 * Accepts an invitation once: a new account (with two-step verification) or the existing one of the
 * email, proven by its password. A new account is made only once its first TOTP code is confirmed: without
 * `totpCode` the answer is the secret to set up (setupTotpSecret) and nothing is used up, so a person who
 * leaves before scanning it can come back with the same link.
 * @throws not_found for an unknown token, expired (with the reason) when used, revoked, replaced or past
 *   its 7 days, forbidden (or the standing's code) when its inviter's authority no longer holds
 *   (requireInvitationStillAllowed), not_authenticated for an existing account's wrong password or a wrong code
 */
export async function acceptInvitation(
  db: Db,
  clock: Clock,
  secretBox: SecretBox,
  input: { token: string; password: string; totpCode?: string | undefined },
  audit?: AuditContext,
): Promise<AcceptOutcome> {
  if (!INVITATION_TOKEN.test(input.token)) throw fail('not_found', 'No invitation has this token.');
  return db.transaction(async (tx): Promise<AcceptOutcome> => {
    const now = clock.now();
    const invitation = await selectRow(tx, invitationRow, `SELECT * FROM invitations WHERE token_hash = $1 FOR UPDATE`, [sha256Hex(input.token)]);
    if (!invitation) throw fail('not_found', 'No invitation has this token.');
    const ended = invitationEnd(invitation, now);
    if (ended) throw invitationEnded(ended);
    await requireInvitationStillAllowed(tx, invitation);
    const role = zRole.parse(invitation.role);
    const existing = await selectRow(tx, tableRow('users', { id: text, password_hash: text }), `SELECT id, password_hash FROM users WHERE lower(email) = $1`, [
      invitation.email,
    ]);
    let totpSecret: string | null = null;
    let userId: string;
    if (existing) {
      if (!(await verifyPassword(input.password, existing.password_hash))) throw fail('not_authenticated', 'Email, password or code is incorrect.');
      await addMembership(tx, clock, { workspaceId: invitation.workspace_id, userId: existing.id, role });
      userId = existing.id;
    } else {
      totpSecret = setupTotpSecret(secretBox, input.token);
      if (input.totpCode === undefined) return { setup: { email: invitation.email, totpSecret } };
      confirmSetupCode(totpSecret, input.totpCode, now);
      const created = await createUser(tx, clock, invitation.workspace_id, {
        email: invitation.email,
        password: input.password,
        role,
        withTotp: true,
        totpSecret,
        secretBox,
      });
      userId = created.id;
    }
    await tx.query(`UPDATE invitations SET accepted_at = $2 WHERE id = $1`, [invitation.id, now]);
    // The link is the credential: the actor is the account that accepted it.
    await recordAudit(
      tx,
      audit,
      invitation.workspace_id,
      {
        action: 'invitation.accepted',
        actor: { type: 'user', id: userId, label: invitation.email },
        target: { type: 'invitation', id: invitation.id, label: invitation.email },
        details: { role, newAccount: !existing },
      },
      now,
    );
    return { accepted: { workspaceId: invitation.workspace_id, email: invitation.email, role, totpSecret } };
  });
}
