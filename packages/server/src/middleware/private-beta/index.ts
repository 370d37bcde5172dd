/**
 * @module Private beta: while the deployment runs in private beta (`PRIVATE_BETA=true`), the public
 * agent API answers `404 not_found`, before authentication, exactly like a route that does not
 * exist. Mounted only on those routes; the default is GA (the middleware then passes through).
 *
 * The panel is not the public API: on a route that also takes a session (runs, usage, trying an
 * agent), a request that carries the session cookie and no `Authorization` header goes on to
 * authentication, which refuses a cookie that is not a valid session (`401`). API keys still read
 * the route as absent.
 */
import type { MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { SESSION_COOKIE } from '../../domain/sessions/index.ts';
import { fail } from '../../errors.ts';

export function privateBeta(options: { enabled: boolean; sessionPasses?: boolean }): MiddlewareHandler {
  const { enabled, sessionPasses = false } = options;
  return async function privateBeta(c, next) {
    const panel = sessionPasses && !c.req.header('authorization') && getCookie(c, SESSION_COOKIE) !== undefined;
    if (enabled && !panel) throw fail('not_found', 'No such route.');
    await next();
  };
}
