/**
 * @module Admin sessions: login with email, password and TOTP code; the session cookie and its
 * CSRF token; logout. Cookie and CSRF values are random and stored only as hashes.
 */
import type { Clock } from '../../clock.ts';
import { constantTimeEqual, sha256Hex } from '../../crypto.ts';
import { fail } from '../../errors.ts';
import { newId, randomBase62 } from '../../random.ts';
import type { Db } from '../../store/db.ts';
import { DUMMY_HASH, verifyPassword } from './password.ts';
import { matchingStep } from './totp.ts';
import { normalizeEmail, type Role } from './users.ts';

export const SESSION_COOKIE = 'service_session';
/** 12 hours, the contract's cookie Max-Age. */
export const SESSION_TTL_MS = 12 * 3_600_000;
/** 5 failed logins per 15 minutes per email, then `too_many_attempts`. */
export const MAX_FAILED_LOGINS = 5;
export const LOGIN_WINDOW_MS = 15 * 60_000;

export interface Credentials {
  email: string;
  password: string;
  totpCode: string;
}

export interface LoginResult {
  /** Value of the session cookie; never in a body. */
  sessionToken: string;
  csrfToken: string;
  expiresAt: Date;
  user: { id: string; email: string; role: Role; twoFactorEnabled: boolean };
  workspaceId: string;
}

/** What a session cookie proves. */
export interface AdminSession {
  sessionId: string;
  userId: string;
  workspaceId: string;
  role: Role;
  totpEnabled: boolean;
  csrfHash: string;
}

interface UserRow {
  id: string;
  email: string;
  role: Role;
  workspace_id: string;
  password_hash: string;
  totp_secret: string | null;
  totp_enabled: boolean;
}

export type SessionService = ReturnType<typeof createSessionService>;

export function createSessionService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;

  return {
    /**
     * @throws too_many_attempts after 5 failed logins for the email within 15 minutes (with
     *   Retry-After), not_authenticated when the email, password or code is wrong
     */
    async login(credentials: Credentials): Promise<LoginResult> {
      const email = normalizeEmail(credentials.email);
      const now = clock.now();
      // The attempt is written before it is judged, and counts as a failure until it succeeds:
      // concurrent guesses each see the others, so no burst gets past the limit.
      const windowStart = new Date(now.getTime() - LOGIN_WINDOW_MS);
      // Attempts older than the window no longer count; drop them as this email comes by.
      await db.query(`DELETE FROM login_attempts WHERE email = $1 AND attempted_at <= $2`, [email, windowStart]);
      const attemptId = newId('att');
      await db.query(`INSERT INTO login_attempts (id, email, attempted_at) VALUES ($1, $2, $3)`, [attemptId, email, now]);
      const [tally] = await db.query<{ n: number; oldest: Date }>(
        `SELECT count(*)::int AS n, min(attempted_at) AS oldest FROM login_attempts WHERE email = $1 AND attempted_at > $2`,
        [email, windowStart],
      );
      if (tally!.n > MAX_FAILED_LOGINS) {
        // A refused attempt is not a guess; it does not extend the lock.
        await db.query(`DELETE FROM login_attempts WHERE id = $1`, [attemptId]);
        const retryAfterSec = Math.max(1, Math.ceil((tally!.oldest.getTime() + LOGIN_WINDOW_MS - now.getTime()) / 1000));
        throw fail(
          'too_many_attempts',
          'Too many failed logins; wait before trying again.',
          { retryAfterSec },
          { 'Retry-After': String(retryAfterSec) },
        );
      }

      const user = await verifyCredentials(email, credentials, now);
      if (!user) throw fail('not_authenticated', 'Email, password or code is incorrect.');
      await db.query(`DELETE FROM login_attempts WHERE email = $1`, [email]);
      // Housekeeping where it is cheap: this user's ended sessions go when a new one starts.
      await db.query(`DELETE FROM sessions WHERE user_id = $1 AND expires_at <= $2`, [user.id, now]);

      const sessionToken = randomBase62(43);
      const csrfToken = randomBase62(43);
      const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
      await db.query(
        `INSERT INTO sessions (id, user_id, token_hash, csrf_hash, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)`,
        [newId('ses'), user.id, sha256Hex(sessionToken), sha256Hex(csrfToken), now, expiresAt],
      );
      return {
        sessionToken,
        csrfToken,
        expiresAt,
        user: { id: user.id, email: user.email, role: user.role, twoFactorEnabled: user.totp_enabled },
        workspaceId: user.workspace_id,
      };
    },

    /** @throws not_authenticated when the cookie names no live session */
    async authenticate(sessionToken: string | undefined): Promise<AdminSession> {
      if (!sessionToken) throw fail('not_authenticated', 'Sign in first.');
      const [row] = await db.query<{
        id: string;
        user_id: string;
        workspace_id: string;
        role: Role;
        totp_enabled: boolean;
        csrf_hash: string;
      }>(
        `SELECT s.id, s.user_id, s.csrf_hash, u.workspace_id, u.role, u.totp_enabled
         FROM sessions s JOIN users u ON u.id = s.user_id
         WHERE s.token_hash = $1 AND s.expires_at > $2`,
        [sha256Hex(sessionToken), clock.now()],
      );
      if (!row) throw fail('not_authenticated', 'The session is unknown or has expired; sign in again.');
      return {
        sessionId: row.id,
        userId: row.user_id,
        workspaceId: row.workspace_id,
        role: row.role,
        totpEnabled: row.totp_enabled,
        csrfHash: row.csrf_hash,
      };
    },

    async logout(sessionId: string): Promise<void> {
      await db.query(`DELETE FROM sessions WHERE id = $1`, [sessionId]);
    },
  };

  /** The user when email, password and (if enabled) a fresh TOTP code all check out. */
  async function verifyCredentials(email: string, credentials: Credentials, now: Date): Promise<UserRow | undefined> {
    const [user] = await db.query<UserRow>(
      `SELECT id, email, role, workspace_id, password_hash, totp_secret, totp_enabled FROM users WHERE lower(email) = $1`,
      [email],
    );
    // An unknown email still pays for one scrypt, so timing does not reveal which emails exist.
    const passwordOk = await verifyPassword(credentials.password, user?.password_hash ?? DUMMY_HASH);
    if (!user || !passwordOk) return undefined;
    if (!user.totp_enabled) return user;
    const step = user.totp_secret ? matchingStep(user.totp_secret, credentials.totpCode, now) : undefined;
    if (step === undefined) return undefined;
    // Each code works once: the step is claimed atomically, so a replayed code fails.
    const claimed = await db.query(
      `UPDATE users SET totp_last_step = $2 WHERE id = $1 AND (totp_last_step IS NULL OR totp_last_step < $2) RETURNING id`,
      [user.id, step],
    );
    return claimed.length > 0 ? user : undefined;
  }
}

/** Admin rights for key management: role owner or admin, with two-step verification active. */
export function requireAdmin(session: AdminSession): void {
  if (session.role === 'member' || !session.totpEnabled) {
    throw fail('role_forbidden', 'Key management needs an owner or admin with two-step verification active.');
  }
}

/** Cookie-authenticated writes must echo the login's csrfToken in `X-CSRF-Token`. */
export function requireCsrf(session: AdminSession, header: string | undefined): void {
  if (!header || !constantTimeEqual(sha256Hex(header), session.csrfHash)) {
    throw fail('role_forbidden', 'Send the X-CSRF-Token header with the csrfToken given at login.');
  }
}
