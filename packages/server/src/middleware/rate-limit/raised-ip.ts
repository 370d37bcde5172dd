/**
 * @module The raised per-address ceiling of a workspace (`service workspaces update --ip-rpm N`):
 * the per-IP limit runs before authentication with the default budget, so a customer whose backend
 * calls from one address would be held to 60 per minute whatever the operator granted. This wraps a
 * route's authentication:
 *
 * - a request that carries a credential was let through with its per-IP hit held back
 *   (`pendingHits`, ./index.ts);
 * - once authenticated, a caller whose workspace has a ceiling above the route's default is judged
 *   against that ceiling alone, in a bucket of its own keyed by workspace and address (the default
 *   bucket is still counted, its refusal ignored), and the headers show that limit (or the
 *   workspace's, when that one binds); all of them are made with the workspace's hit, in one step;
 * - any other caller is judged by the default bucket; a request whose authentication fails makes
 *   its held-back hit at once and answers its 429 if refused: anonymous and failed-auth traffic keeps
 *   the default.
 *
 * With Redis the buckets are shared by every instance, as the default one is.
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { AuthVariables } from '../auth/index.ts';
import type { Logger } from '../../log/index.ts';
import type { Limiter } from '../../rate-limits/index.ts';
import { makePendingHits, type PendingHit, type RateLimitVariables } from './index.ts';

interface RaisedIpOptions {
  limiter: Limiter;
  /** The route's default per-IP limit (its class's), which a raised ceiling must exceed to apply. */
  defaultLimitOf: (c: Context) => number;
  /** The raised bucket of this request, e.g. `ip:wksp_…:203.0.113.9`; undefined = not limited. */
  key: (c: Context, workspaceId: string) => string | undefined;
  logger?: Logger;
  observer?: { refused?(): void; backendFailed?(): void };
}

/** What the wrapper reads and sets: the authentication's result and the limits' variables. */
type RaisedIpEnv = { Variables: AuthVariables & RateLimitVariables & { requestId?: string } };

export function raisedIpCeiling(authenticate: MiddlewareHandler<{ Variables: AuthVariables }>, options: RaisedIpOptions): MiddlewareHandler<RaisedIpEnv> {
  return async function raisedIpCeiling(c, next) {
    let authenticated = false;
    try {
      await authenticate(c, async () => {
        authenticated = true;
        judge(c, options);
        await next();
      });
    } catch (err) {
      // A failed authentication of a refused address answers the 429, not the credential's error.
      if (!authenticated) await makePendingHits(c, { refuse: true });
      throw err;
    }
  };
}

const WINDOW_MS = 60_000;

/** Adds the raised bucket to the held-back hits when the workspace's ceiling is above the default. */
function judge(c: Context<RaisedIpEnv>, options: RaisedIpOptions): void {
  const auth = c.get('auth');
  const ceiling = auth && 'ipRpmLimit' in auth ? auth.ipRpmLimit : null;
  const key = ceiling !== null && auth && 'workspaceId' in auth ? options.key(c, auth.workspaceId) : undefined;
  if (ceiling === null || key === undefined || ceiling <= options.defaultLimitOf(c)) return;
  const pending = c.get('pendingHits') ?? [];
  // The default's count no longer binds this caller: its headers give way to the raised ceiling's.
  for (const hit of pending) if (!hit.made) hit.hit = { ...hit.hit, binding: false };
  if (pending.some((hit) => hit.made)) c.set('rateLimit', undefined);
  const raised: PendingHit = {
    hit: { key, limit: ceiling, windowMs: WINDOW_MS },
    options: { limiter: options.limiter, logger: options.logger, observer: options.observer },
    resetsHeaders: true,
    made: false,
  };
  c.set('pendingHits', [...pending, raised]);
}
