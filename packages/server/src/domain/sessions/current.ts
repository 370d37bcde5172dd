/**
 * @module Who am I: the live session of a cookie read again (`GET /auth/session`), in the shape login answers, with
 * the session's own CSRF token (csrf.ts), so a reloaded panel, a new tab or a deep link restores itself from the
 * cookie instead of asking for a password and a fresh TOTP code.
 */
import { sessionWorkspaces } from './sso-rule.ts';
import { sha256Hex } from '../../crypto.ts';
import { fail } from '../../errors.ts';
import type { Db } from '../../store/db.ts';
import { bool, columnsOf, date, nullable, row, selectRow, text } from '../../store/rows.ts';
import { csrfTokenOf } from './csrf.ts';
import { type Role, type UserWorkspace, userWorkspaces, zRole } from './users.ts';

export interface CurrentSession {
  csrfToken: string;
  expiresAt: Date;
  user: { id: string; email: string; role: Role; twoFactorEnabled: boolean };
  workspaceId: string;
  workspaces: UserWorkspace[];
}

/** The session as middleware/auth authenticated it from `sessionToken`, the cookie's value. */
export interface Authenticated {
  sessionId: string;
  userId: string;
  workspaceId: string;
  /** The user's role in the session's workspace. */
  role: string;
}

const currentRow = row({
  ...columnsOf('sessions', { expires_at: date, csrf_hash: text, sso_workspace_id: nullable(text) }),
  ...columnsOf('users', { email: text, totp_enabled: bool }),
});

/** @throws not_authenticated when the session ended since it was authenticated (a sign-out elsewhere, a reset) */
export async function currentSession(db: Db, session: Authenticated, sessionToken: string): Promise<CurrentSession> {
  const found = await selectRow(
    db,
    currentRow,
    `SELECT s.expires_at, s.csrf_hash, s.sso_workspace_id, u.email, u.totp_enabled FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.id = $1`,
    [session.sessionId],
  );
  if (!found) throw fail('not_authenticated', 'The session is unknown or has expired; sign in again.');
  const csrfToken = csrfTokenOf(sessionToken);
  const csrfHash = sha256Hex(csrfToken);
  // A session opened before tokens were derived from the cookie holds the hash of a random one, which cannot be
  // answered again: it is bound to the derived token from now on (a page still holding the old token has its writes
  // refused until it reloads).
  if (found.csrf_hash !== csrfHash) await db.query(`UPDATE sessions SET csrf_hash = $2 WHERE id = $1`, [session.sessionId, csrfHash]);
  return {
    csrfToken,
    expiresAt: new Date(found.expires_at),
    user: { id: session.userId, email: found.email, role: zRole.parse(session.role), twoFactorEnabled: found.totp_enabled },
    workspaceId: session.workspaceId,
    workspaces: sessionWorkspaces(await userWorkspaces(db, session.userId), found.sso_workspace_id),
  };
}
