/**
 * @module Login (`POST /auth/login`): email, password and (when enabled) a TOTP code open a session on the user's
 * first workspace. Failed attempts are counted per email and source address within 15 minutes (LOGIN_LIMITS); the
 * session's cookie value is random and its CSRF token derived from it (csrf.ts), both stored only as hashes.
 */
import type { Clock } from '../../clock.ts';
import { sha256Hex } from '../../crypto.ts';
import { fail, retryHints } from '../../errors.ts';
import { newId, randomBase62 } from '../../random.ts';
import type { Db } from '../../store/db.ts';
import { bool, columnsOf, date, int, nullable, row, selectRow, selectRows, tableRow, text } from '../../store/rows.ts';
import { type AuditContext, recordAudit, recordAuditForUser } from '../audit/index.ts';
import type { SecretBox } from '../webhooks/secret-box.ts';
import { csrfTokenOf } from './csrf.ts';
import { ssoAdmits } from './sso-rule.ts';
import { DUMMY_HASH, verifyPassword } from './password.ts';
import { matchingStep } from './totp.ts';
import { openTotpSecret } from './totp-secret.ts';
import { normalizeEmail, type Role, type UserWorkspace, userWorkspaces } from './users.ts';

/** 12 hours, the contract's cookie Max-Age. */
export const SESSION_TTL_MS = 12 * 3_600_000;
/**
 * Failed logins within 15 minutes (`too_many_attempts` past them):
 * - 5 for one email from one source address: the guesses of one attacker at one account;
 * - 20 from one source address, whatever the emails: one address trying many accounts;
 * - past 100 for one email from every address together, the email is under attack: this locks nobody
 *   (a lock per email would let anyone lock the owner out from a few addresses), but each address then
 *   gets `underAttack` (1) attempt at that email instead of 5. A clean address, one with no failure at the
 *   email in the window, is still judged: the right password and a fresh TOTP code sign in, and a guesser
 *   needs a new address (an IPv4 address, an IPv6 /64) for every guess, each needing password and code.
 * A TOTP code used a second time is refused but not counted (the password and the code were right). The
 * source is the client address the rate limiter uses (TRUST_PROXY applies; an IPv6 client counts by /64).
 */
export const LOGIN_LIMITS = { emailAndSource: 5, source: 20, email: 100, underAttack: 1 } as const;
const LOGIN_WINDOW_MS = 15 * 60_000;

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
  /** Every workspace of the user, with the role in each. */
  workspaces: UserWorkspace[];
}

/** The user columns sign-in reads (generated/db.ts, from the migrations). */
const userRow = row(columnsOf('users', { id: text, email: text, password_hash: text, totp_secret: nullable(text), totp_enabled: bool }));
type UserRow = ReturnType<typeof userRow>;

/** The failed attempts within the window: of this email from this address, from this address, at this email. */
const tallyRow = row({ pair: int, by_source: int, by_email: int, pair_oldest: nullable(date), source_oldest: nullable(date) });

/** A workspace whose single sign-on rule lets a password sign-in in. */
const admittedWorkspace = tableRow('memberships', { workspace_id: text });

/**
 * @throws too_many_attempts past one of LOGIN_LIMITS within 15 minutes (with Retry-After),
 *   not_authenticated when the email, password or code is wrong
 */
export async function login(
  deps: { db: Db; clock: Clock; secretBox: SecretBox },
  credentials: Credentials,
  from: { source: string } = { source: 'unknown' },
  audit?: AuditContext,
): Promise<LoginResult> {
  const { db } = deps;
  const email = normalizeEmail(credentials.email);
  const { source } = from;
  const now = deps.clock.now();
  const attemptId = await countAttempt(db, email, source, now);
  const verdict = await verifyCredentials(deps, email, credentials, now);
  if ('failure' in verdict) {
    // A code used twice is the right person sending it again: refused, but not a guess.
    if (verdict.failure === 'code_reused') await db.query(`DELETE FROM login_attempts WHERE id = $1`, [attemptId]);
    // In every workspace of the account the email names; one statement whether or not it names one, so the
    // time taken tells nothing about which emails exist.
    const entry = {
      action: 'session.sign_in_failed' as const,
      actor: { type: 'user' as const, id: verdict.userId ?? 'unknown', label: email },
      target: { type: 'session' as const, id: verdict.userId ?? 'unknown', label: email },
      details: { reason: verdict.failure === 'code_reused' ? 'code_reused' : 'credentials' },
    };
    await recordAuditForUser(db, audit, verdict.userId, entry, now);
    throw fail('not_authenticated', 'Email, password or code is incorrect.');
  }
  const user = verdict.user;
  // The session starts on the user's first workspace that a password opens (sso-rule.ts); a user who belongs to none
  // cannot sign in.
  const workspaces = await userWorkspaces(db, user.id);
  if (workspaces.length === 0) throw fail('not_authenticated', 'Email, password or code is incorrect.');
  const admitted = await selectRows(
    db,
    admittedWorkspace,
    `SELECT m.workspace_id FROM memberships m
      WHERE m.user_id = $1 AND ${ssoAdmits({ ssoWorkspace: 'CAST(NULL AS text)', workspace: 'm.workspace_id', role: 'm.role' })}`,
    [user.id],
  );
  const first = workspaces.find((w) => admitted.some((a) => a.workspace_id === w.id));
  await db.query(`DELETE FROM login_attempts WHERE email = $1 AND source = $2`, [email, source]);
  // The password and code were right, so this is no failure to count; but every workspace requires single sign-on.
  if (!first) throw fail('not_authenticated', 'Your workspace requires single sign-on: use "Sign in with SSO".');
  // Housekeeping where it is cheap: this user's ended sessions go when a new one starts.
  await db.query(`DELETE FROM sessions WHERE user_id = $1 AND expires_at <= $2`, [user.id, now]);
  const session = await startSession(db, { id: user.id, email: user.email, workspaceId: first.id }, now, audit);
  return {
    ...session,
    user: { id: user.id, email: user.email, role: first.role, twoFactorEnabled: user.totp_enabled },
    workspaceId: first.id,
    workspaces,
  };
}

/**
 * Writes the attempt before it is judged; it counts as a failure until it succeeds, so concurrent guesses each
 * see the others and no burst gets past the limit. Answers the attempt's id.
 * @throws too_many_attempts past one of LOGIN_LIMITS (the attempt is then not kept)
 */
async function countAttempt(db: Db, email: string, source: string, now: Date): Promise<string> {
  const windowStart = new Date(now.getTime() - LOGIN_WINDOW_MS);
  // Attempts older than the window no longer count; drop them as this email or address comes by.
  await db.query(`DELETE FROM login_attempts WHERE (email = $1 OR source = $2) AND attempted_at <= $3`, [email, source, windowStart]);
  const attemptId = newId('att');
  await db.query(`INSERT INTO login_attempts (id, email, source, attempted_at) VALUES ($1, $2, $3, $4)`, [attemptId, email, source, now]);
  const tally = await selectRow(
    db,
    tallyRow,
    `SELECT count(*) FILTER (WHERE email = $1 AND source = $2)::int AS pair,
            count(*) FILTER (WHERE source = $2)::int AS by_source,
            count(*) FILTER (WHERE email = $1)::int AS by_email,
            min(attempted_at) FILTER (WHERE email = $1 AND source = $2) AS pair_oldest,
            min(attempted_at) FILTER (WHERE source = $2) AS source_oldest
       FROM login_attempts WHERE (email = $1 OR source = $2) AND attempted_at > $3`,
    [email, source, windowStart],
  );
  // The counts include this attempt. Under attack, any earlier attempt of this address at this email
  // refuses it; the per-email count itself never refuses a clean address.
  const underAttack = tally!.by_email > LOGIN_LIMITS.email;
  const perPair = underAttack ? LOGIN_LIMITS.underAttack : LOGIN_LIMITS.emailAndSource;
  const locked = [tally!.pair > perPair ? tally!.pair_oldest : null, tally!.by_source > LOGIN_LIMITS.source ? tally!.source_oldest : null].filter(
    (since): since is Date => since !== null,
  );
  if (locked.length > 0) {
    // A refused attempt is not a guess; it does not extend the lock.
    await db.query(`DELETE FROM login_attempts WHERE id = $1`, [attemptId]);
    const until = Math.max(...locked.map((since) => since.getTime() + LOGIN_WINDOW_MS));
    const hints = retryHints(until - now.getTime(), false);
    // A lock of minutes, lifted by waiting, not by an SDK's loop (X-Should-Retry: false).
    throw fail('too_many_attempts', 'Too many failed logins; wait before trying again.', { retryAfterSec: Number(hints['Retry-After']) }, hints);
  }
  return attemptId;
}

/**
 * The user when email, password and (if enabled) a fresh TOTP code all check out; or why not, with the account
 * the email names, if any, for the audit log.
 */
async function verifyCredentials(
  deps: { db: Db; secretBox: SecretBox },
  email: string,
  credentials: Credentials,
  now: Date,
): Promise<{ user: UserRow } | { failure: 'wrong' | 'code_reused'; userId: string | null }> {
  const { db } = deps;
  const user = await selectRow(db, userRow, `SELECT id, email, password_hash, totp_secret, totp_enabled FROM users WHERE lower(email) = $1`, [email]);
  // An unknown email still pays for one scrypt, so timing does not reveal which emails exist.
  const passwordOk = await verifyPassword(credentials.password, user?.password_hash ?? DUMMY_HASH);
  if (!user || !passwordOk) return { failure: 'wrong', userId: user?.id ?? null };
  if (!user.totp_enabled) return { user };
  const step = user.totp_secret ? matchingStep(openTotpSecret(deps.secretBox, user.totp_secret), credentials.totpCode, now) : undefined;
  if (step === undefined) return { failure: 'wrong', userId: user.id };
  // Each code works once: the step is claimed atomically, so a replayed code fails.
  const claimed = await db.query(`UPDATE users SET totp_last_step = $2 WHERE id = $1 AND (totp_last_step IS NULL OR totp_last_step < $2) RETURNING id`, [
    user.id,
    step,
  ]);
  return claimed.length > 0 ? { user } : { failure: 'code_reused', userId: user.id };
}

/**
 * Opens the session (its cookie value and CSRF token, stored as hashes) and audits it, in one transaction; `sso` when
 * the workspace's identity provider signed the person in (the session then acts on that workspace only).
 */
export async function startSession(
  db: Db,
  user: { id: string; email: string; workspaceId: string },
  now: Date,
  audit: AuditContext | undefined,
  via: 'password' | 'sso' = 'password',
): Promise<Pick<LoginResult, 'sessionToken' | 'csrfToken' | 'expiresAt'>> {
  const sessionToken = randomBase62(43);
  const csrfToken = csrfTokenOf(sessionToken);
  const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
  const sessionId = newId('ses');
  await db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO sessions (id, user_id, workspace_id, token_hash, csrf_hash, created_at, expires_at, sso_workspace_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [sessionId, user.id, user.workspaceId, sha256Hex(sessionToken), sha256Hex(csrfToken), now, expiresAt, via === 'sso' ? user.workspaceId : null],
    );
    const entry = {
      action: 'session.signed_in' as const,
      actor: { type: 'user' as const, id: user.id, label: user.email },
      target: { type: 'session' as const, id: sessionId, label: user.email },
      ...(via === 'sso' ? { details: { method: 'sso' } } : {}),
    };
    await recordAudit(tx, audit, user.workspaceId, entry, now);
  });
  return { sessionToken, csrfToken, expiresAt };
}
