/**
 * @module Users (one account per email in the deployment) and their memberships: a user belongs to any
 * number of workspaces, with a role in each. Key management needs role `owner` or `admin` and two-step
 * verification (TOTP) active.
 */
import type { Clock } from '../../clock.ts';
import { fail } from '../../errors.ts';
import { newId, randomBase62 } from '../../random.ts';
import { type Schema, zWorkspaceRole } from '../../contract.ts';
import type { Db, Tx } from '../../store/db.ts';
import { bool, columnsOf, oneOf, row, selectRows, text } from '../../store/rows.ts';
import { hashPassword } from './password.ts';
import { generateTotpSecret } from './totp.ts';
import type { SecretBox } from '../webhooks/secret-box.ts';
import { type AuditContext, recordAudit } from '../audit/index.ts';

/** The contract's roles (WorkspaceRole); a stored role is parsed with it. */
export const zRole = zWorkspaceRole;
export type Role = (typeof zRole.options)[number];

/** Reads a stored role (`memberships.role`, whose CHECK lists the contract's roles). */
export const roleColumn = oneOf(zRole.options);

/** A member of a workspace: the account and the role. */
const memberRow = row({ ...columnsOf('users', { id: text, email: text, totp_enabled: bool }), ...columnsOf('memberships', { role: roleColumn }) });

/** A workspace of a user's, with the role there. */
const userWorkspaceRow = row({ ...columnsOf('workspaces', { id: text, name: text }), ...columnsOf('memberships', { role: roleColumn }) });

interface NewUser {
  email: string;
  password: string;
  role: Role;
  /** Turn on two-step verification now; the answer then carries the Base32 secret, once. */
  withTotp: boolean;
  /** The secret to turn it on with, already shown to the person and confirmed (a new one when absent). */
  totpSecret?: string;
  /** Seals the TOTP secret at rest (see ./totp-secret.ts). */
  secretBox: SecretBox;
}

interface CreatedUser {
  id: string;
  email: string;
  role: Role;
  totpSecret: string | null;
}

const MIN_PASSWORD_LENGTH = 12;

export async function createUser(db: Db | Tx, clock: Clock, workspaceId: string, input: NewUser): Promise<CreatedUser> {
  const email = normalizeEmail(input.email);
  if (!/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 254) throw fail('invalid_body', "'email' is not an email address", { param: 'email' });
  if (input.password.length < MIN_PASSWORD_LENGTH) {
    throw fail('invalid_body', `'password' needs at least ${MIN_PASSWORD_LENGTH} characters`, { param: 'password' });
  }
  const taken = await db.query(`SELECT 1 FROM users WHERE lower(email) = $1`, [email]);
  if (taken.length > 0) throw fail('invalid_body', "'email' is already in use", { param: 'email' });
  const id = newId('usr');
  const totpSecret = input.withTotp ? (input.totpSecret ?? generateTotpSecret()) : null;
  await db.query(`INSERT INTO users (id, email, password_hash, totp_secret, totp_enabled, created_at) VALUES ($1, $2, $3, $4, $5, $6)`, [
    id,
    email,
    await hashPassword(input.password),
    totpSecret && input.secretBox.seal(totpSecret),
    input.withTotp,
    clock.now(),
  ]);
  await addMembership(db, clock, { workspaceId, userId: id, role: input.role });
  return { id, email, role: input.role, totpSecret };
}

/** A user the operator adds (command line or operator API): what they are told once. */
export type AddedUser = Schema<'WorkspaceUserCreated'>;

/**
 * Adds a user to the workspace for the operator: role admin, a drawn password (24 characters) and two-step
 * verification on, unless the request says otherwise. The password and TOTP secret are in the answer only; the
 * audit log records `member.added` (with the operator as its actor).
 */
export async function addWorkspaceUser(
  db: Db,
  clock: Clock,
  workspaceId: string,
  request: Schema<'CreateWorkspaceUserRequest'>,
  secretBox: SecretBox,
  audit?: AuditContext,
): Promise<AddedUser> {
  const password = request.password ?? randomBase62(24);
  const role = request.role ?? 'admin';
  const user = await db.transaction(async (tx) => {
    const created = await createUser(tx, clock, workspaceId, { email: request.email, password, role, withTotp: request.totp !== false, secretBox });
    const target = { type: 'member' as const, id: created.id, label: created.email };
    await recordAudit(
      tx,
      audit,
      workspaceId,
      { action: 'member.added', target, details: { role, twoFactorEnabled: created.totpSecret !== null } },
      clock.now(),
    );
    return created;
  });
  return { id: user.id, email: user.email, role: user.role, password, totpSecret: user.totpSecret };
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

type UserRecord = Schema<'WorkspaceUser'>;

export async function listUsers(db: Db, workspaceId: string): Promise<UserRecord[]> {
  const rows = await selectRows(
    db,
    memberRow,
    `SELECT u.id, u.email, m.role, u.totp_enabled FROM memberships m JOIN users u ON u.id = m.user_id
      WHERE m.workspace_id = $1 ORDER BY m.created_at, u.id`,
    [workspaceId],
  );
  return rows.map((r) => ({ id: r.id, email: r.email, role: r.role, twoFactorEnabled: r.totp_enabled }));
}

/** A membership; adding one that exists changes nothing. */
export async function addMembership(db: Db | Tx, clock: Clock, input: { workspaceId: string; userId: string; role: Role }): Promise<void> {
  await db.query(`INSERT INTO memberships (workspace_id, user_id, role, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (workspace_id, user_id) DO NOTHING`, [
    input.workspaceId,
    input.userId,
    input.role,
    clock.now(),
  ]);
}

export type UserWorkspace = Schema<'UserWorkspaces'>[number];

/** The workspaces of a user with the role in each, oldest membership first. */
export async function userWorkspaces(db: Db, userId: string): Promise<UserWorkspace[]> {
  const rows = await selectRows(
    db,
    userWorkspaceRow,
    `SELECT w.id, w.name, m.role FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
      WHERE m.user_id = $1 ORDER BY m.created_at, w.id`,
    [userId],
  );
  return rows.map((r) => ({ id: r.id, name: r.name, role: r.role }));
}

/** Accounts left without any workspace (after a workspace was deleted) are deleted with their sessions. */
export async function deleteUsersWithoutWorkspace(db: Db | Tx): Promise<void> {
  await db.query(`DELETE FROM users u WHERE NOT EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = u.id)`);
}
