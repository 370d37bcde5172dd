/**
 * @module Who am I (`GET /auth/session`, getSession): the session of the cookie read again with its CSRF token, so
 * the panel restores itself after a reload, in a new tab or on a deep link. The token goes only to the cookie's
 * holder, never into a cache.
 */
import { getCookie } from 'hono/cookie';
import { SESSION_COOKIE } from '../domain/sessions/index.ts';
import { fail } from '../errors.ts';
import { keepUnredacted } from '../middleware/redact/index.ts';
import { authOf, type Handler, type Handlers } from './handler.ts';

const getSession: Handler<'getSession'> = async (c, _input, { sessions }) => {
  const auth = authOf(c, 'adminSession');
  // middleware/auth authenticated the session from this very cookie; without one it never gets here.
  const cookie = getCookie(c, SESSION_COOKIE);
  if (!cookie) throw fail('not_authenticated', 'Sign in first.');
  const current = await sessions.current(auth, cookie);
  keepUnredacted(c, current.csrfToken);
  c.header('Cache-Control', 'no-store');
  return {
    status: 200,
    body: {
      user: current.user,
      workspaceId: current.workspaceId,
      workspaces: current.workspaces,
      expiresAt: current.expiresAt.toISOString(),
      csrfToken: current.csrfToken,
    },
  };
};

export const authSessionHandlers = { getSession } satisfies Partial<Handlers>;
