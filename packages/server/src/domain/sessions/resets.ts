/**
 * @module Account recovery: single-use reset links for a person's password and/or two-step
 * verification (TOTP), made by an owner or admin of a workspace (role order below) or by the
 * operator, and redeemed once within 24 hours.
 *
 * Making a reset and redeeming it both end every session of the account. Sessions are not cached by
 * an instance: each request reads its session from the store (SessionService.authenticate), so a
 * deleted session is refused by every instance at its next request, with no notification needed.
 *
 * Role order: an owner resets anyone but themselves; an admin resets admins and members, never an
 * owner; a member resets nobody (the route's admin check). An account is one person across the
 * deployment, so an admin of one workspace may not reset an account that also belongs to another
 * workspace: whoever holds the link could redeem it and sign in there. The operator can.
 *
 * These rules hold when the link is redeemed too, read again then (resetRefusal, one home for both
 * moments): a reset made by a workspace's owner or admin is refused (`403 forbidden`) once its maker is
 * no longer an owner or admin of the workspace with two-step verification, once the account is an owner
 * and its maker is not, once the account left the workspace or belongs to another one; and while the
 * workspace is suspended or its payment pending (its standing's codes). The link is not used up by a
 * refusal: it works again if the rules hold again before it expires. The operator's resets have no maker
 * and no workspace; only their expiry applies.
 */
import type { TableRow } from '../../../../../generated/db.ts';
import type { Clock } from '../../clock.ts';
import { type Schema, zAccountResetKind } from '../../contract.ts';
import { sha256Hex } from '../../crypto.ts';
import { fail } from '../../errors.ts';
import { newId, randomBase62 } from '../../random.ts';
import type { Db, Tx } from '../../store/db.ts';
import { bool, columnsOf, date, int, nullable, oneOf, row, selectRow, tableRow, text } from '../../store/rows.ts';
import type { SecretBox } from '../webhooks/secret-box.ts';
import { hashPassword, verifyPassword } from './password.ts';
import { confirmSetupCode, setupTotpSecret } from './totp-secret.ts';
import { normalizeEmail, type Role, roleColumn, zRole } from './users.ts';
import { type AuditContext, recordAudit, recordAuditForUser } from '../audit/index.ts';
import { requireGoodStanding, STANDING_COLUMNS, standingColumns, standingOf } from '../standing/index.ts';

export type AccountReset = Schema<'AccountReset'>;
export type AccountResetKind = Schema<'AccountResetKind'>;
type AccountResetRedeemed = Schema<'AccountResetRedeemed'>;
type AccountResetPreview = Schema<'AccountResetPreview'>;

/** The columns of `account_resets` (`SELECT *`). */
const resetColumns = columnsOf('account_resets', {
  id: text,
  user_id: text,
  workspace_id: nullable(text),
  kind: oneOf(zAccountResetKind.options),
  token_hash: text,
  created_by: nullable(text),
  created_at: date,
  expires_at: date,
  used_at: nullable(date),
  failed_attempts: int,
});
type TwoStepSetup = Schema<'TwoStepSetup'>;

export const RESET_TTL_MS = 24 * 3_600_000;
/** Wrong current passwords on a `totp` reset before the link is burnt: the link is no password oracle. */
export const RESET_MAX_FAILURES = 5;
const RESET_TOKEN = /^service_rst_[0-9A-Za-z]{32}$/;

/**
 * An owner's or admin's reset of a member of their workspace.
 * @throws member_not_found when the user is not a member; forbidden for oneself, an owner named by an
 *   admin, or an account that also belongs to another workspace
 */
export async function resetMember(
  db: Db,
  clock: Clock,
  input: { workspaceId: string; actorId: string; actorRole: Role; userId: string; reset: AccountResetKind },
  audit?: AuditContext,
): Promise<AccountReset> {
  return db.transaction(async (tx) => {
    const target = await selectRow(
      tx,
      row({ ...columnsOf('memberships', { role: roleColumn }), ...columnsOf('users', { email: text }), workspaces: int }),
      `SELECT m.role, u.email, (SELECT count(*)::int FROM memberships o WHERE o.user_id = u.id) AS workspaces
         FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.workspace_id = $1 AND m.user_id = $2 FOR UPDATE OF m`,
      [input.workspaceId, input.userId],
    );
    if (!target) throw fail('member_not_found', 'No member of this workspace has this id.');
    const refusal = resetRefusal({
      actorId: input.actorId,
      actorRole: input.actorRole,
      actorTotp: true,
      userId: input.userId,
      targetRole: zRole.parse(target.role),
      workspaces: target.workspaces,
    });
    if (refusal) throw fail('forbidden', refusal);
    const created = await createReset(tx, clock, {
      userId: input.userId,
      email: target.email,
      workspaceId: input.workspaceId,
      createdBy: input.actorId,
      kind: input.reset,
    });
    await recordAudit(tx, audit, input.workspaceId, resetEntry(created), clock.now());
    return created;
  });
}

/** What a workspace's reset depends on, read when it is made and again when it is redeemed. */
interface ResetFacts {
  actorId: string;
  /** The maker's role in the workspace now; null when no longer a member. */
  actorRole: Role | null;
  /** The maker's two-step verification is active (the route's admin check at creation). */
  actorTotp: boolean;
  userId: string;
  /** The account's role in the workspace now; null when no longer a member. */
  targetRole: Role | null;
  /** How many workspaces the account belongs to now. */
  workspaces: number;
}

/** Why a workspace's owner or admin may not reset (or have reset) this account now, or null while they may. */
function resetRefusal(facts: ResetFacts): string | null {
  if (facts.actorRole === null || facts.actorRole === 'member' || !facts.actorTotp) {
    return 'The one who made this reset is no longer an owner or admin of the workspace.';
  }
  if (facts.targetRole === null) return 'This account is no longer a member of the workspace that made the reset.';
  if (facts.userId === facts.actorId) return 'You cannot reset your own account this way.';
  if (facts.targetRole === 'owner' && facts.actorRole !== 'owner') return 'Only an owner can reset an owner.';
  if (facts.workspaces > 1) return 'This account also belongs to another workspace; the operator resets it (service users reset-password).';
  return null;
}

/**
 * A workspace's reset checked again at the moment of use: the rules of resetMember on the roles and memberships
 * as they are now, and the workspace's standing. An operator's reset (no workspace) has no such rules.
 * @throws forbidden when a rule no longer holds, tenant_forbidden or payment_not_completed for the standing
 */
async function requireResetStillAllowed(db: Db | Tx, reset: Pick<TableRow<'account_resets'>, 'workspace_id' | 'created_by' | 'user_id'>): Promise<void> {
  if (reset.workspace_id === null || reset.created_by === null) return;
  const facts = await selectRow(
    db,
    row({ ...standingColumns, actor_role: nullable(roleColumn), actor_totp: nullable(bool), target_role: nullable(roleColumn), workspaces: int }),
    `SELECT ${STANDING_COLUMNS},
            (SELECT role FROM memberships WHERE workspace_id = w.id AND user_id = $2) AS actor_role,
            (SELECT totp_enabled FROM users WHERE id = $2) AS actor_totp,
            (SELECT role FROM memberships WHERE workspace_id = w.id AND user_id = $3) AS target_role,
            (SELECT count(*)::int FROM memberships WHERE user_id = $3) AS workspaces
       FROM workspaces w WHERE w.id = $1`,
    [reset.workspace_id, reset.created_by, reset.user_id],
  );
  if (!facts) throw fail('expired', 'This reset link has expired, was replaced or was already used.');
  const refusal = resetRefusal({
    actorId: reset.created_by,
    actorRole: facts.actor_role === null ? null : zRole.parse(facts.actor_role),
    actorTotp: facts.actor_totp === true,
    userId: reset.user_id,
    targetRole: facts.target_role === null ? null : zRole.parse(facts.target_role),
    workspaces: facts.workspaces,
  });
  if (refusal) throw fail('forbidden', refusal);
  requireGoodStanding(standingOf(facts));
}

/** The operator's reset of any account, by email. @throws not_found when no account has the email */
export async function resetUserByEmail(db: Db, clock: Clock, input: { email: string; reset: AccountResetKind }, audit?: AuditContext): Promise<AccountReset> {
  return db.transaction(async (tx) => {
    const user = await selectRow(tx, tableRow('users', { id: text, email: text }), `SELECT id, email FROM users WHERE lower(email) = $1 FOR UPDATE`, [
      normalizeEmail(input.email),
    ]);
    if (!user) throw fail('not_found', 'No account has this email.');
    const created = await createReset(tx, clock, { userId: user.id, email: user.email, workspaceId: null, createdBy: null, kind: input.reset });
    // The account is the deployment's: every workspace it belongs to sees the operator's reset.
    await recordAuditForUser(tx, audit, user.id, resetEntry(created), clock.now());
    return created;
  });
}

/** Replaces any live reset of the user, stores the new one's hash and ends every session of the user. */
async function createReset(
  tx: Tx,
  clock: Clock,
  input: { userId: string; email: string; workspaceId: string | null; createdBy: string | null; kind: AccountResetKind },
): Promise<AccountReset> {
  const now = clock.now();
  const token = `service_rst_${randomBase62(32)}`;
  const id = newId('rst');
  const expiresAt = new Date(now.getTime() + RESET_TTL_MS);
  await tx.query(`UPDATE account_resets SET used_at = $2 WHERE user_id = $1 AND used_at IS NULL`, [input.userId, now]);
  await tx.query(
    `INSERT INTO account_resets (id, user_id, workspace_id, kind, token_hash, created_by, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [id, input.userId, input.workspaceId, input.kind, sha256Hex(token), input.createdBy, now, expiresAt],
  );
  await endSessions(tx, input.userId);
  return { id, userId: input.userId, email: input.email, reset: input.kind, token, expiresAt: expiresAt.toISOString() };
}

/** Redeeming answers the renewed account, or first, for a reset of `totp` or `both`, the new secret to confirm. */
export type RedeemOutcome = { redeemed: AccountResetRedeemed } | { setup: TwoStepSetup };

/**
 * Redeems a reset once: a new password (`password`, `both`), a new TOTP secret (`totp`, `both`; a
 * `totp` reset is proven with the current password). A new secret takes effect only once its first code
 * is confirmed: without `totpCode` the answer is the secret (setupTotpSecret) and nothing changes, so the
 * account keeps its old second factor until the new one is proven to be in an authenticator. Ends every
 * session of the account.
 * @throws not_found for an unknown token, expired when used, replaced or past its 24 hours,
 *   forbidden, tenant_forbidden or payment_not_completed when its rules no longer hold (requireResetStillAllowed),
 *   not_authenticated for a wrong current password (the fifth burns the link) or a wrong code (not counted: the
 *   link's holder could ask for the secret again)
 */
export async function redeemAccountReset(
  db: Db,
  clock: Clock,
  secretBox: SecretBox,
  input: { token: string; password: string; totpCode?: string | undefined },
  audit?: AuditContext,
): Promise<RedeemOutcome> {
  if (!RESET_TOKEN.test(input.token)) throw fail('not_found', 'No reset has this token.');
  const verdict = await db.transaction(async (tx): Promise<RedeemOutcome | { wrongPassword: string }> => {
    const now = clock.now();
    const reset = await selectRow(tx, row(resetColumns), `SELECT * FROM account_resets WHERE token_hash = $1 FOR UPDATE`, [sha256Hex(input.token)]);
    if (!reset) throw fail('not_found', 'No reset has this token.');
    if (reset.used_at || reset.expires_at <= now) throw fail('expired', 'This reset link has expired, was replaced or was already used.');
    const kind = zAccountResetKind.parse(reset.kind);
    const user = await selectRow(
      tx,
      tableRow('users', { id: text, email: text, password_hash: text }),
      `SELECT id, email, password_hash FROM users WHERE id = $1 FOR UPDATE`,
      [reset.user_id],
    );
    if (!user) throw fail('expired', 'This reset link has expired, was replaced or was already used.');
    await requireResetStillAllowed(tx, reset);
    if (kind === 'totp' && !(await verifyPassword(input.password, user.password_hash))) return { wrongPassword: reset.id };
    let totpSecret: string | null = null;
    if (kind !== 'password') {
      totpSecret = setupTotpSecret(secretBox, input.token);
      if (input.totpCode === undefined) return { setup: { email: user.email, totpSecret } };
      confirmSetupCode(totpSecret, input.totpCode, now);
    }
    if (kind !== 'totp') await tx.query(`UPDATE users SET password_hash = $2 WHERE id = $1`, [user.id, await hashPassword(input.password)]);
    if (totpSecret !== null) {
      // A new secret starts with no step used: the confirmed code may sign in right after (confirming is no sign-in).
      await tx.query(`UPDATE users SET totp_secret = $2, totp_enabled = true, totp_last_step = NULL WHERE id = $1`, [user.id, secretBox.seal(totpSecret)]);
    }
    await tx.query(`UPDATE account_resets SET used_at = $2 WHERE id = $1`, [reset.id, now]);
    await endSessions(tx, user.id);
    // The link is the credential: the actor is the account it renews, seen by each workspace of the account.
    await recordAuditForUser(
      tx,
      audit,
      user.id,
      {
        action: 'account_reset.redeemed',
        actor: { type: 'user', id: user.id, label: user.email },
        target: { type: 'account_reset', id: reset.id, label: user.email },
        details: { reset: kind },
      },
      now,
    );
    return { redeemed: { email: user.email, reset: kind, totpSecret } };
  });
  if ('wrongPassword' in verdict) {
    // Counted after the read above committed nothing: the link stays usable until the fifth failure.
    await db.query(
      `UPDATE account_resets SET failed_attempts = failed_attempts + 1,
              used_at = CASE WHEN failed_attempts + 1 >= $2 THEN $3 ELSE used_at END WHERE id = $1`,
      [verdict.wrongPassword, RESET_MAX_FAILURES, clock.now()],
    );
    throw fail('not_authenticated', 'Email, password or code is incorrect.');
  }
  return verdict;
}

/**
 * What a reset link renews, without using it up: the page of the link asks for a new password or the current one.
 * @throws not_found for an unknown token, expired when used, replaced or past its 24 hours, and what
 *   requireResetStillAllowed throws (the page says so before asking for anything)
 */
export async function previewAccountReset(db: Db, clock: Clock, token: string): Promise<AccountResetPreview> {
  if (!RESET_TOKEN.test(token)) throw fail('not_found', 'No reset has this token.');
  const found = await selectRow(
    db,
    row({
      ...columnsOf('account_resets', {
        kind: resetColumns.kind,
        used_at: resetColumns.used_at,
        expires_at: resetColumns.expires_at,
        workspace_id: resetColumns.workspace_id,
        created_by: resetColumns.created_by,
        user_id: resetColumns.user_id,
      }),
      ...columnsOf('users', { email: text }),
    }),
    `SELECT r.kind, r.used_at, r.expires_at, r.workspace_id, r.created_by, r.user_id, u.email FROM account_resets r JOIN users u ON u.id = r.user_id WHERE r.token_hash = $1`,
    [sha256Hex(token)],
  );
  if (!found) throw fail('not_found', 'No reset has this token.');
  if (found.used_at || found.expires_at <= clock.now()) throw fail('expired', 'This reset link has expired, was replaced or was already used.');
  await requireResetStillAllowed(db, found);
  return { email: found.email, reset: zAccountResetKind.parse(found.kind), expiresAt: found.expires_at.toISOString() };
}

function resetEntry(created: AccountReset) {
  return {
    action: 'member.reset' as const,
    target: { type: 'member' as const, id: created.userId, label: created.email },
    details: { reset: created.reset, resetId: created.id },
  };
}

/** Every session of the user, in every workspace: they are refused by every instance at their next request. */
async function endSessions(tx: Tx, userId: string): Promise<void> {
  await tx.query(`DELETE FROM sessions WHERE user_id = $1`, [userId]);
}
