/**
 * @module Admin sessions: login with email, password and TOTP code (login.ts); what the session cookie proves
 * (authenticate.ts) and its CSRF token; who am I (current.ts); the session's workspace (select-workspace.ts);
 * logout (logout.ts). The cookie's value is random, the CSRF token derived from it (csrf.ts); both are stored
 * only as hashes.
 */
import type { Clock } from '../../clock.ts';
import { constantTimeEqual, sha256Hex } from '../../crypto.ts';
import { fail } from '../../errors.ts';
import type { Db } from '../../store/db.ts';
import type { AuditContext } from '../audit/index.ts';
import type { SecretBox } from '../webhooks/secret-box.ts';
import { type AdminSession, authenticate } from './authenticate.ts';
import { type Authenticated, currentSession } from './current.ts';
import { type Credentials, login, type LoginResult } from './login.ts';
import { logout } from './logout.ts';
import { selectWorkspace } from './select-workspace.ts';
import { signInBySso, type SsoIdentity } from './sso-sign-in.ts';

export { LOGIN_LIMITS, type LoginResult, SESSION_TTL_MS } from './login.ts';

export const SESSION_COOKIE = 'service_session';

export type SessionService = ReturnType<typeof createSessionService>;

export function createSessionService(deps: { db: Db; clock: Clock; secretBox: SecretBox }) {
  const { db } = deps;
  return {
    /**
     * @throws too_many_attempts past one of LOGIN_LIMITS within 15 minutes (with Retry-After),
     *   not_authenticated when the email, password or code is wrong
     */
    login: (credentials: Credentials, from?: { source: string }, audit?: AuditContext): Promise<LoginResult> => login(deps, credentials, from, audit),

    /**
     * The session of a person their workspace's identity provider signed in (domain/sso checked the ID token), a
     * member made first when the workspace makes members at sign-in.
     * @throws tenant_forbidden not a member and none made (or suspended), payment_not_completed (unpaid, none made)
     */
    signInBySso: (identity: SsoIdentity, audit?: AuditContext): Promise<LoginResult> => signInBySso(deps, identity, audit),

    /** @throws not_authenticated when the cookie names no live session */
    authenticate: (sessionToken: string | undefined): Promise<AdminSession> => authenticate(deps, sessionToken),

    /** Who am I (`GET /auth/session`): the authenticated session read again, with its CSRF token. */
    current: (session: Authenticated, sessionToken: string) => currentSession(db, session, sessionToken),

    /**
     * Makes the session act on another workspace of the user's.
     * @throws tenant_forbidden when the user is not a member of it (the session stays as it was)
     */
    selectWorkspace: (session: { sessionId: string; userId: string }, workspaceId: string) => selectWorkspace(db, session, workspaceId),

    logout: (session: { sessionId: string; workspaceId: string }, audit?: AuditContext): Promise<void> => logout(deps, session, audit),
  };
}

/** Admin rights for key management: role owner or admin, with two-step verification active. */
export function requireAdmin(session: AdminSession): void {
  if (session.role === 'member' || !session.totpEnabled) {
    throw fail('role_forbidden', 'Key management needs an owner or admin with two-step verification active.');
  }
}

/**
 * Cookie-authenticated writes must echo the login's csrfToken in `X-CSRF-Token`. A missing or wrong
 * token is `403 forbidden`: not a role problem (the session's holder may do this), but a request not
 * proven to come from them.
 */
export function requireCsrf(session: AdminSession, header: string | undefined): void {
  if (!header || !constantTimeEqual(sha256Hex(header), session.csrfHash)) {
    throw fail('forbidden', 'Send the X-CSRF-Token header with the csrfToken given at login.');
  }
}
