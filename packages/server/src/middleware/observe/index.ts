/**
 * @module One log line and the request metrics per request. The line carries time, level, requestId,
 * operationId, method, status, duration, workspaceId and the client IP, and nothing taken from
 * headers or bodies (no Authorization, cookie, signature or secret can reach the log).
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { Logger } from '../../log/index.ts';
import type { Metrics } from '../../metrics/index.ts';
import type { AdmissionVariables } from '../admission/index.ts';
import type { AuthVariables } from '../auth/index.ts';
import { clientIp } from '../rate-limit/client-ip.ts';
import type { RequestIdVariables } from '../request-id/index.ts';
import type { RouteVariables } from '../route/index.ts';

/** What it reads: the request id, the route's operationId (../route) and the caller's workspace. */
type Env = { Variables: Partial<RequestIdVariables> & RouteVariables & AuthVariables & AdmissionVariables };

interface ObserveOptions {
  logger: Logger;
  metrics?: Metrics | undefined;
  trustProxy: number;
}

/**
 * The operationId of the route that answered, as its first middleware set it (also when a later one
 * refused the request); `unmatched` for an unknown path or another method (bounded label).
 */
function operationOf(c: Context<Env>): string {
  return c.get('operationId') ?? 'unmatched';
}

export function observe(options: ObserveOptions): MiddlewareHandler<Env> {
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
      const auth = c.get('auth');
      const workspaceId = auth && 'workspaceId' in auth ? auth.workspaceId : undefined;
      const line = {
        requestId: c.get('requestId'),
        operationId: operation,
        method: c.req.method,
        status,
        durationMs: Math.round(seconds * 1e4) / 10,
        ...(workspaceId ? { workspaceId } : {}),
        clientIp: clientIp(c, { trustProxy: options.trustProxy }) ?? null,
      };
      // A refusal of admission control's shares is counted and summarised (app.ts), not logged one by one.
      if (!c.get('admissionRefused')) {
        if (status >= 500) logger.error(line, 'request');
        else logger.info(line, 'request');
      }
    }
  };
}
