/**
 * @module One log line and the request metrics per request. The line carries time, level, requestId,
 * operationId, method, status, duration, workspaceId and the client IP, and nothing taken from
 * headers or bodies (no Authorization, cookie, signature or secret can reach the log). It also
 * notes when the request arrived (`receivedAt`), from which an invocation's answer tells the time
 * the service added (`X-Service-Overhead-Ms`, {@link serviceOverhead}).
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { Logger } from '../../log/index.ts';
import type { Metrics } from '../../metrics/index.ts';
import type { AdmissionVariables } from '../admission/index.ts';
import type { AuthVariables } from '../auth/index.ts';
import { clientIp } from '../rate-limit/client-ip.ts';
import type { RequestIdVariables } from '../request-id/index.ts';
import type { RouteVariables } from '../route/index.ts';

/** Context variables this middleware provides; app-env.ts composes them. */
export type ObserveVariables = {
  /** When the request arrived (`performance.now()`, milliseconds). */
  receivedAt: number;
};

/** What it reads: the request id, the route's operationId (../route) and the caller's workspace. */
type Env = { Variables: Partial<RequestIdVariables> & RouteVariables & AuthVariables & AdmissionVariables & ObserveVariables };

/** The header an invocation's answer tells the time the service added with (the contract's `X-Service-Overhead-Ms`). */
export const SERVICE_OVERHEAD_HEADER = 'X-Service-Overhead-Ms';

/** What {@link serviceOverhead} uses of a request's context, whatever else the app keeps there. */
interface OverheadContext {
  get(key: 'receivedAt'): number;
  header(name: string, value: string): void;
}

/**
 * Sets `X-Service-Overhead-Ms`: the milliseconds since the request arrived, less `waitedMs` (what the run spent
 * waiting for the model and the tools), with two decimals. Called when the answer's headers are about to be sent.
 */
export function serviceOverhead(c: OverheadContext, waitedMs: number): void {
  const added = performance.now() - c.get('receivedAt') - waitedMs;
  c.header(SERVICE_OVERHEAD_HEADER, Math.max(added, 0).toFixed(2));
}

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
    const started = performance.now();
    c.set('receivedAt', started);
    metrics?.inFlight.inc();
    try {
      await next();
    } finally {
      metrics?.inFlight.dec();
      const seconds = (performance.now() - started) / 1e3;
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
