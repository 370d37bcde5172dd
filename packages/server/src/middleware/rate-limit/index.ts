/**
 * @module Rate limits: 60 requests/min per client IP and 600/min per workspace, both over a 60 s
 * sliding window, with `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` on
 * every response (errors and 404s included) and `429 rate_limit_exceeded` + `Retry-After` when
 * a limit is exceeded.
 *
 * The counters (memory, Redis) are the storage floor in src/rate-limits/; this folder keeps the
 * Hono middleware. Wiring (src/app.ts), in this order:
 *
 *   const limiter = createRedisLimiter({ redis }) or createMemoryLimiter();   // src/rate-limits/, by the runtime
 *   app.use(requestId());                                   // X-Request-Id first: 429/503 quote it
 *   app.use(redactBody());                                  // sees every rendered body
 *   app.use(rateLimit({ limiter, ...PER_IP, key: byClientIp({ trustProxy }) }));   // before auth
 *   app.use(authenticate(...));
 *   app.use(rateLimit({ limiter, ...PER_WORKSPACE, key: (c) => workspaceKey(c) })); // after auth
 *
 * When both limits apply the headers show the tighter one (fewest remaining). The error mapper
 * must render with `c.json(...)` (or c.body/c.newResponse) so that headers set here with
 * `c.header()` before a throw reach the 429/503 response. The inbound webhook route applies
 * its own per-IP limit with `enforceRateLimit(c, { ..., code: 'rate_limited' })`.
 */
import { fallbackLogger, serializeError, type Logger } from '../../log/index.ts';
import type { Context, MiddlewareHandler } from 'hono';
import { fail } from '../../errors.ts';
import { clientIp, clientKey, type ClientIpOptions } from './client-ip.ts';
import type { Limiter, RateLimitResult } from '../../rate-limits/index.ts';

export { clientIp, clientKey, type ClientIpOptions } from './client-ip.ts';

/** The spec's limits. */
const WINDOW_MS = 60_000;
export const PER_IP = { limit: 60, windowMs: WINDOW_MS } as const;
/**
 * The per-IP budgets of the routes the spec leaves open, each its own bucket so that one never
 * starves another: a client that spent its 60 API requests can still sign in to the panel and fix
 * things, and an MCP client's tool calls do not eat into the API's budget.
 */
export const PER_IP_BY_CLASS = {
  api: { limit: PER_IP.limit, bucket: 'ip' },
  admin: { limit: 120, bucket: 'ip-admin' },
  mcp: { limit: 300, bucket: 'ip-mcp' },
  operator: { limit: 120, bucket: 'ip-operator' },
} as const;
export type IpLimitClass = keyof typeof PER_IP_BY_CLASS;
export const PER_WORKSPACE = { limit: 600, windowMs: WINDOW_MS } as const;

/** Seconds a client is told to wait when the limiter's backend is down. */
const BACKEND_RETRY_AFTER_SEC = 5;

/** The limit shown in the headers: the tightest of those applied to this request so far. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  resetAt: number;
}

/**
 * Context variables this middleware provides; app-env.ts composes them. `deferredRefusal` is a per-IP
 * 429 held back until authentication tells whether the caller's workspace has a raised per-address
 * ceiling (./raised-ip.ts).
 */
export type RateLimitVariables = { rateLimit?: RateLimitState; deferredRefusal?: DeferredRefusal };

/** What the middleware reads besides its own: `requestId` when present (request-id middleware). */
type Variables = RateLimitVariables & { requestId?: string };

/** A refusal not thrown yet: `refuse()` counts it and returns the 429 to throw. */
export interface DeferredRefusal {
  refuse(): Error;
}

/**
 * What to do when the limiter's backend (Redis) fails. `fail-closed` (default) answers
 * `503 service_unavailable`; `fail-open` lets the request through without a limit. Both log.
 */
type BackendErrorPolicy = 'fail-closed' | 'fail-open';

interface EnforceOptions {
  limiter: Limiter;
  limit: number;
  windowMs?: number;
  /** The bucket of this request, e.g. `ip:203.0.113.9`, `wksp:wksp_…`; undefined = not limited. */
  key: string | undefined;
  /** Error code of the 429: `rate_limit_exceeded` for API routes, `rate_limited` for inbound webhooks. */
  code?: 'rate_limit_exceeded' | 'rate_limited';
  onBackendError?: BackendErrorPolicy;
  /** One line per backend failure (tests); the structured `logger` otherwise. */
  log?: (line: string) => void;
  logger?: Logger;
  /** Counts refusals and backend failures (metrics). */
  observer?: { refused?(): void; backendFailed?(): void } | undefined;
}

export interface RateLimitOptions extends Omit<EnforceOptions, 'key'> {
  /** Computes the bucket from the request; undefined means this limit does not apply. */
  key: (c: Context) => string | undefined | Promise<string | undefined>;
  /** The limit of this request's bucket when it varies (a workspace's own ceiling); `limit` otherwise. */
  limitOf?: (c: Context) => number;
  /**
   * When true for a refused request, the 429 is left on the context (`deferredRefusal`) instead of
   * thrown: the per-IP limit before authentication defers a request that carries a credential.
   */
  deferRefusal?: (c: Context) => boolean;
}

/** Key function of the per-IP limit. */
export function byClientIp(options: ClientIpOptions = {}): (c: Context) => string {
  return (c) => `ip:${clientKey(clientIp(c, options))}`;
}

export function rateLimit(options: RateLimitOptions): MiddlewareHandler<{ Variables: Variables }> {
  const { key, limitOf, deferRefusal, ...settings } = options;
  return async function rateLimit(c, next) {
    const bucket = key(c);
    const limits = limitOf ? { ...settings, limit: limitOf(c) } : settings;
    const deferred = await enforce(c, typeof bucket === 'string' || bucket === undefined ? bucket : await bucket, limits, deferRefusal?.(c) ?? false);
    if (deferred) c.set('deferredRefusal', deferred);
    await next();
    // Responses built from the context already carry the headers (set before next()); one a
    // handler built by hand, or a tighter limit applied further in, needs them set here.
    const state = c.get('rateLimit');
    if (state !== undefined && c.res.headers.get('X-RateLimit-Remaining') !== String(state.remaining)) {
      writeHeaders(c);
    }
  };
}

/**
 * Counts this request against one limit and sets the headers; throws the 429 (or the 503 of a
 * failed backend) as a ServiceError. Usable from a route (the inbound webhook's own limit).
 */
export async function enforceRateLimit(c: Context, options: EnforceOptions): Promise<void> {
  await enforce(c, options.key, options);
}

async function enforce(c: Context, key: string | undefined, options: Omit<EnforceOptions, 'key'>, defer = false): Promise<DeferredRefusal | undefined> {
  if (key === undefined) return undefined;
  let result: RateLimitResult;
  try {
    result = await options.limiter.hit(key, options.limit, options.windowMs ?? WINDOW_MS);
  } catch (err) {
    const policy = options.onBackendError ?? 'fail-closed';
    const requestId: unknown = c.get('requestId');
    options.observer?.backendFailed?.();
    const fields = { policy, requestId, error: err instanceof Error ? err.message : String(err) };
    if (options.log) options.log(JSON.stringify({ level: 'error', msg: 'rate limiter backend failed', ...fields }));
    else (options.logger ?? fallbackLogger()).error({ ...fields, error: serializeError(err) }, 'rate limiter backend failed');
    if (policy === 'fail-open') return undefined;
    throw fail(
      'service_unavailable',
      'A backing service is temporarily unavailable.',
      { requestId: typeof requestId === 'string' ? requestId : undefined },
      { 'Retry-After': String(BACKEND_RETRY_AFTER_SEC) },
    );
  }
  c.set('rateLimit', tighter(c.get('rateLimit') as RateLimitState | undefined, result));
  writeHeaders(c);
  if (result.allowed) return undefined;
  const refusal: DeferredRefusal = {
    refuse() {
      options.observer?.refused?.();
      return fail(
        options.code ?? 'rate_limit_exceeded',
        `Too many requests; retry after ${result.retryAfterSec} s.`,
        { retryAfterSec: result.retryAfterSec },
        { 'Retry-After': String(result.retryAfterSec) },
      );
    },
  };
  if (defer) return refusal;
  throw refusal.refuse();
}

function tighter(current: RateLimitState | undefined, next: RateLimitResult): RateLimitState {
  const candidate = { limit: next.limit, remaining: next.remaining, resetAt: next.resetAt };
  if (current === undefined) return candidate;
  if (candidate.remaining !== current.remaining) return candidate.remaining < current.remaining ? candidate : current;
  return candidate.limit < current.limit ? candidate : current;
}

function writeHeaders(c: Context): void {
  const state = c.get('rateLimit') as RateLimitState | undefined;
  if (state === undefined) return;
  c.header('X-RateLimit-Limit', String(state.limit));
  c.header('X-RateLimit-Remaining', String(state.remaining));
  c.header('X-RateLimit-Reset', String(state.resetAt));
}
