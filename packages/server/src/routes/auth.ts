/**
 * @module Admin sign-in: login (sets the `service_session` cookie, answers the csrfToken) and logout.
 */
import type { Context } from 'hono';
import { deleteCookie, setCookie } from 'hono/cookie';
import type { AppEnv } from '../app-env.ts';
import type { Schema } from '../contract.ts';
import { type LoginResult, SESSION_COOKIE, SESSION_TTL_MS } from '../domain/sessions/index.ts';
import { clientIp, clientKey } from '../middleware/rate-limit/index.ts';
import { keepUnredacted } from '../middleware/redact/index.ts';
import { auditOf, authOf, type Handler, type Handlers } from './handler.ts';

// HttpOnly: no script reads it; Secure: never sent over plain HTTP (browsers allow localhost);
// SameSite=Strict: never sent on a cross-site request, the first line against CSRF.
export const COOKIE_OPTIONS = { httpOnly: true, secure: true, sameSite: 'Strict', path: '/' } as const;

const login: Handler<'login'> = async (c, { body }, services) => {
  // Failed logins are counted per email and per source address: the address the rate limiter uses.
  const source = clientKey(clientIp(c, { trustProxy: services.config.trustProxy }));
  const session = await services.sessions.login(body, { source }, auditOf(c, services));
  return { status: 200, body: answerSession(c, session) };
};

/**
 * A new session's answer, for a password sign-in and a single sign-on alike: the cookie set, the body with its
 * csrfToken, and no cache keeps it (as GET /auth/session).
 */
export function answerSession(c: Context<AppEnv>, session: LoginResult): Schema<'AdminSession'> {
  keepUnredacted(c, session.csrfToken);
  setCookie(c, SESSION_COOKIE, session.sessionToken, { ...COOKIE_OPTIONS, maxAge: SESSION_TTL_MS / 1000 });
  c.header('Cache-Control', 'no-store');
  return {
    user: session.user,
    workspaceId: session.workspaceId,
    workspaces: session.workspaces,
    expiresAt: session.expiresAt.toISOString(),
    csrfToken: session.csrfToken,
  };
}

const logout: Handler<'logout'> = async (c, _input, services) => {
  await services.sessions.logout(authOf(c, 'adminSession'), auditOf(c, services));
  deleteCookie(c, SESSION_COOKIE, COOKIE_OPTIONS);
  return { status: 204 };
};

/** The session acts on another workspace of the user's (tenant_forbidden for one they do not belong to). */
const selectWorkspace: Handler<'selectWorkspace'> = async (c, { body }, { sessions }) => {
  return { status: 200, body: await sessions.selectWorkspace(authOf(c, 'adminSession'), body.workspaceId) };
};

export const authHandlers = { login, logout, selectWorkspace } satisfies Partial<Handlers>;
