/**
 * @module The raised per-address ceiling of a workspace (`service workspaces update --ip-rpm N`):
 * the per-IP limit runs before authentication with the default budget, so a customer whose backend
 * calls from one address would be held to 60 per minute whatever the operator granted. This wraps a
 * route's authentication:
 *
 * - a request the per-IP limit refused but that carries a credential was let through with its 429
 *   deferred (`deferredRefusal`);
 * - once authenticated, a caller whose workspace has a ceiling above the route's default is judged
 *   against that ceiling alone, in a bucket of its own keyed by workspace and address, and the
 *   headers show that limit (or the workspace's, when that one binds);
 * - any other caller, and any request whose authentication fails, gets the deferred 429: anonymous
 *   and failed-auth traffic keeps the default.
 *
 * With Redis the buckets are shared by every instance, as the default one is.
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { Auth } from '../auth/index.ts';
import type { Logger } from '../../log/index.ts';
import type { Limiter } from '../../rate-limits/index.ts';
import { enforceRateLimit, type RateLimitState, type DeferredRefusal } from './index.ts';

interface RaisedIpOptions {
  limiter: Limiter;
  /** The route's default per-IP limit (its class's), which a raised ceiling must exceed to apply. */
  defaultLimitOf: (c: Context) => number;
  /** The raised bucket of this request, e.g. `ip:wksp_…:203.0.113.9`; undefined = not limited. */
  key: (c: Context, workspaceId: string) => string | undefined;
  logger?: Logger;
  observer?: { refused?(): void; backendFailed?(): void };
}

export function raisedIpCeiling<E extends { Variables: object }>(authenticate: MiddlewareHandler<E>, options: RaisedIpOptions): MiddlewareHandler<E> {
  return async function raisedIpCeiling(c, next) {
    const deferred = (c as unknown as Context).get('deferredRefusal') as DeferredRefusal | undefined;
    let authenticated = false;
    try {
      await authenticate(c, async () => {
        authenticated = true;
        await judge(c as unknown as Context, deferred, options);
        await next();
      });
    } catch (err) {
      // A failed authentication of a refused address answers the 429, not the credential's error.
      if (!authenticated && deferred) throw deferred.refuse();
      throw err;
    }
  };
}

async function judge(c: Context, deferred: DeferredRefusal | undefined, options: RaisedIpOptions): Promise<void> {
  const auth = c.get('auth') as Auth | undefined;
  const ceiling = auth && 'ipRpmLimit' in auth ? auth.ipRpmLimit : null;
  const key = ceiling !== null && auth && 'workspaceId' in auth ? options.key(c, auth.workspaceId) : undefined;
  if (ceiling === null || key === undefined || ceiling <= options.defaultLimitOf(c)) {
    if (deferred) throw deferred.refuse();
    return;
  }
  // The default's count no longer binds this caller: its headers give way to the raised ceiling's.
  c.set('rateLimit', undefined as RateLimitState | undefined);
  await enforceRateLimit(c, { limiter: options.limiter, limit: ceiling, key, logger: options.logger, observer: options.observer });
}
