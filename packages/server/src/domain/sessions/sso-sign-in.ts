/**
 * @module The session a single sign-on opens (domain/sso verified who the person is: their identity provider's ID
 * token, an email it verified, of a domain the workspace allows). The same session a password sign-in opens, on that
 * workspace only (sso-rule.ts). A person of an allowed domain who is not a member becomes one when the workspace makes
 * members at sign-in (just-in-time membership, with its default role, never owner), an account being made for an
 * email the deployment does not know yet (its password unknown to anyone: a reset gives it one); only while the
 * workspace is in good standing, since that adds a member. A member signs in in any standing, as with a password:
 * middleware/auth refuses the writes.
 */
import type { Clock } from '../../clock.ts';
import { fail } from '../../errors.ts';
import { newId, randomBase62 } from '../../random.ts';
import type { Db } from '../../store/db.ts';
import { bool, row, selectRow, text } from '../../store/rows.ts';
import { type AuditContext, recordAudit } from '../audit/index.ts';
import { loadStanding, requireGoodStanding } from '../standing/index.ts';
import { type LoginResult, startSession } from './login.ts';
import { hashPassword } from './password.ts';
import { sessionWorkspaces } from './sso-rule.ts';
import { addMembership, normalizeEmail, type Role, roleColumn, userWorkspaces } from './users.ts';

export interface SsoIdentity {
  workspaceId: string;
  /** The email the identity provider verified. */
  email: string;
  /** The role of a member made at sign-in; null when the workspace makes none. */
  jitRole: Exclude<Role, 'owner'> | null;
}

const accountRow = row({ id: text, email: text, role: roleColumn, totp_enabled: bool });

/**
 * @throws tenant_forbidden when the person is not a member and the workspace makes no members (or is suspended),
 *   payment_not_completed when it would make one while its payment is pending, not_authenticated when it is gone
 */
export async function signInBySso(deps: { db: Db; clock: Clock }, identity: SsoIdentity, audit?: AuditContext): Promise<LoginResult> {
  const { db, clock } = deps;
  const email = normalizeEmail(identity.email);
  const standing = await loadStanding(db, identity.workspaceId);
  const now = clock.now();
  let account = await memberOf(db, email, identity.workspaceId);
  if (!account) {
    if (identity.jitRole === null) throw fail('tenant_forbidden', 'You are not a member of this workspace: ask its owner for an invitation.');
    requireGoodStanding(standing);
    const role = identity.jitRole;
    // Hashed before the transaction (scrypt takes a while); a password nobody knows.
    const unusable = await hashPassword(randomBase62(40));
    await db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO users (id, email, password_hash, totp_secret, totp_enabled, created_at) VALUES ($1, $2, $3, NULL, false, $4)
         ON CONFLICT ((lower(email))) DO NOTHING`,
        [newId('usr'), email, unusable, now],
      );
      const [user] = await tx.query<{ id: string; email: string }>(`SELECT id, email FROM users WHERE lower(email) = $1`, [email]);
      await addMembership(tx, clock, { workspaceId: identity.workspaceId, userId: user!.id, role });
      await recordAudit(
        tx,
        audit,
        identity.workspaceId,
        {
          action: 'member.joined_by_sso',
          actor: { type: 'user', id: user!.id, label: user!.email },
          target: { type: 'member', id: user!.id, label: user!.email },
          details: { role },
        },
        now,
      );
    });
    account = await memberOf(db, email, identity.workspaceId);
    if (!account) throw fail('not_authenticated', 'The membership could not be made; sign in again.');
  }
  const session = await startSession(db, { id: account.id, email: account.email, workspaceId: identity.workspaceId }, now, audit, 'sso');
  return {
    ...session,
    user: { id: account.id, email: account.email, role: account.role, twoFactorEnabled: account.totp_enabled },
    workspaceId: identity.workspaceId,
    workspaces: sessionWorkspaces(await userWorkspaces(db, account.id), identity.workspaceId),
  };
}

async function memberOf(db: Db, email: string, workspaceId: string) {
  return selectRow(
    db,
    accountRow,
    `SELECT u.id, u.email, m.role, u.totp_enabled FROM users u JOIN memberships m ON m.user_id = u.id AND m.workspace_id = $2
      WHERE lower(u.email) = $1`,
    [email, workspaceId],
  );
}
