/**
 * @module Users of a workspace who sign in to manage it. Key management needs role `owner` or `admin` and
 * two-step verification (TOTP) active.
 */
import type { Clock } from '../../clock.ts';
import { fail } from '../../errors.ts';
import { newId } from '../../random.ts';
import type { TableRow } from '../../../../../generated/db.ts';
import { zAdminSession } from '../../contract.ts';
import type { Db } from '../../store/db.ts';
import { hashPassword } from './password.ts';
import { generateTotpSecret } from './totp.ts';
import type { SecretBox } from '../webhooks/secret-box.ts';

/** The contract's roles (AdminSession.user.role); a stored role is parsed with it. */
export const zRole = zAdminSession.shape.user.shape.role;
export type Role = (typeof zRole.options)[number];

export interface NewUser {
  email: string;
  password: string;
  role: Role;
  /** Turn on two-step verification now; the answer then carries the Base32 secret, once. */
  withTotp: boolean;
  /** Seals the TOTP secret at rest (see ./totp-secret.ts). */
  secretBox: SecretBox;
}

export interface CreatedUser {
  id: string;
  email: string;
  role: Role;
  totpSecret: string | null;
}

const MIN_PASSWORD_LENGTH = 12;

export async function createUser(db: Db, clock: Clock, workspaceId: string, input: NewUser): Promise<CreatedUser> {
  const email = normalizeEmail(input.email);
  if (!/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 254) throw fail('invalid_body', "'email' is not an email address");
  if (input.password.length < MIN_PASSWORD_LENGTH) {
    throw fail('invalid_body', `'password' needs at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  const taken = await db.query(`SELECT 1 FROM users WHERE lower(email) = $1`, [email]);
  if (taken.length > 0) throw fail('invalid_body', "'email' is already in use");
  const id = newId('usr');
  const totpSecret = input.withTotp ? generateTotpSecret() : null;
  await db.query(
    `INSERT INTO users (id, workspace_id, email, password_hash, role, totp_secret, totp_enabled, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [id, workspaceId, email, await hashPassword(input.password), input.role, totpSecret && input.secretBox.seal(totpSecret), input.withTotp, clock.now()],
  );
  return { id, email, role: input.role, totpSecret };
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export interface UserRecord {
  id: string;
  email: string;
  role: Role;
  twoFactorEnabled: boolean;
}

export async function listUsers(db: Db, workspaceId: string): Promise<UserRecord[]> {
  const rows = await db.query<Pick<TableRow<'users'>, 'id' | 'email' | 'role' | 'totp_enabled'>>(
    `SELECT id, email, role, totp_enabled FROM users WHERE workspace_id = $1 ORDER BY created_at, id`,
    [workspaceId],
  );
  return rows.map((r) => ({ id: r.id, email: r.email, role: zRole.parse(r.role), twoFactorEnabled: r.totp_enabled }));
}
