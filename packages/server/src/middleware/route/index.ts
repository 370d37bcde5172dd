/**
 * @module Route metadata: the first middleware of every route puts what the app knows about the route
 * on the context, for the middleware after it and the app-wide ones that look back (the log line, the
 * redaction of the body):
 *
 * - `operationId`: the contract operation the route serves (absent on the panel's static pages and on
 *   a request that matches no route: the log says `unmatched`);
 * - `ipLimitClass`: the per-IP budget the request counts against: the operation's `x-ip-limit-class`
 *   (api, admin, mcp, operator; see PER_IP_BY_CLASS), `inbound` for the inbound webhook routes (their own
 *   per-webhook limit), `unlimited` for the health routes and the panel's pages. Absent: the API's.
 *
 * Nothing is read off the handler functions; each route says it here, once.
 */
import type { MiddlewareHandler } from 'hono';
import type { IpLimitClass } from '../rate-limit/index.ts';

/** The limit class a route counts against: a per-IP budget, the inbound front's own, or none. */
export type RouteLimitClass = IpLimitClass | 'inbound' | 'unlimited';

interface RouteMetadata {
  operationId?: string;
  ipLimitClass: RouteLimitClass;
}

/** Context variables this middleware provides; both absent when no route matched. */
export type RouteVariables = { operationId?: string; ipLimitClass?: RouteLimitClass };

export function routeMetadata(metadata: RouteMetadata): MiddlewareHandler<{ Variables: RouteVariables }> {
  const { operationId, ipLimitClass } = metadata;
  return async function routeMetadata(c, next) {
    if (operationId !== undefined) c.set('operationId', operationId);
    c.set('ipLimitClass', ipLimitClass);
    await next();
  };
}
