/**
 * @module Private beta: while the deployment runs in private beta (`PRIVATE_BETA=true`), the public
 * agent API answers `404 not_found`, before authentication, exactly like a route that does not
 * exist. Mounted only on those routes; the default is GA (the middleware then passes through).
 */
import type { MiddlewareHandler } from 'hono';
import { fail } from '../../errors.ts';

export function privateBeta(options: { enabled: boolean }): MiddlewareHandler {
  const { enabled } = options;
  return async function privateBeta(_c, next) {
    if (enabled) throw fail('not_found', 'No such route.');
    await next();
  };
}
