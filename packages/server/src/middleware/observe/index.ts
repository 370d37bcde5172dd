/**
 * @module One log line and the request metrics per request. The line carries time, level, requestId,
 * operationId, method, status, duration, workspaceId and the client IP, and nothing taken from
 * headers or bodies (no Authorization, cookie, signature or secret can reach the log).
 */
import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { AppEnv } from '../../app-env.ts';
import type { Logger } from '../../log/index.ts';
import type { Metrics } from '../../metrics/index.ts';
import { clientIp } from '../rate-limit/client-ip.ts';

export interface ObserveOptions {
  logger: Logger;
  metrics?: Metrics | undefined;
  trustProxy: number;
}

/** The operationId of the route that answered, `unmatched` for an unknown path (bounded label). */
export function operationOf(c: Context): string {
  const set = c.get('operationId') as string | undefined;
  if (set) return set;
  for (const route of matchedRoutes(c)) {
    const id = (route.handler as { operationId?: unknown }).operationId;
    if (typeof id === 'string') return id;
  }
  return 'unmatched';
}

export function observe(options: ObserveOptions): MiddlewareHandler<AppEnv> {
  const { logger, metrics } = options;
  return async function observe(c, next) {
    const started = process.hrtime.bigint();
    metrics?.inFlight.inc();
    try {
      await next();
    } finally {
      metrics?.inFlight.dec();
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const operation = operationOf(c);
      const status = c.res.status;
      metrics?.requests.inc({ operation, status: String(status) });
      metrics?.duration.observe({ operation }, seconds);
      const workspaceId = (c.get('auth') as { workspaceId?: string } | undefined)?.workspaceId;
      const line = {
        requestId: c.get('requestId'),
        operationId: operation,
        method: c.req.method,
        status,
        durationMs: Math.round(seconds * 1e4) / 10,
        ...(workspaceId ? { workspaceId } : {}),
        clientIp: clientIp(c, { trustProxy: options.trustProxy }) ?? null,
      };
      if (status >= 500) logger.error(line, 'request');
      else logger.info(line, 'request');
    }
  };
}
