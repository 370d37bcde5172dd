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
 * When both limits apply the headers show the tighter one (fewest remaining). A request with a
 * credential makes its per-IP hit together with its workspace's, after authentication, in one step
 * of the limiter (Redis: one script call, one round trip): the per-IP limit defers its hit
 * (`deferHit`) onto the context (`pendingHits`), and the next limit that runs makes them all
 * (`hitAll`, in order: a refused per-IP hit refuses the request and its workspace is not counted).
 * A request that no later limit reaches (a failed authentication, a 404) makes its deferred hits on
 * the way out (./raised-ip.ts, and the per-IP middleware itself). The error mapper
 * must render with `c.json(...)` (or c.body/c.newResponse) so that headers set here with
 * `c.header()` before a throw reach the 429/503 response. The inbound webhook route applies
 * its own per-IP limit with `enforceRateLimit(c, { ..., code: 'rate_limited' })`.
 */
import { fallbackLogger, serializeError, type Logger } from '../../log/index.ts';
import type { Context, MiddlewareHandler } from 'hono';
import { fail, retryHints } from '../../errors.ts';
import { clientIp, clientKey, type ClientIpOptions } from './client-ip.ts';
import { hitAll, type Hit, type Limiter, type RateLimitResult } from '../../rate-limits/index.ts';

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
 * Context variables this middleware provides; app-env.ts composes them. `pendingHits` are per-IP hits
 * held back until authentication tells the workspace (made with its hit, in one step) and whether the
 * workspace has a raised per-address ceiling (./raised-ip.ts).
 */
export type RateLimitVariables = { rateLimit?: RateLimitState; pendingHits?: PendingHit[] };

/** What the middleware reads besides its own: `requestId` when present (request-id middleware). */
type Variables = RateLimitVariables & { requestId?: string };

/**
 * What the limits use of a request's context, whatever else the app keeps there (a route's own
 * limit is enforced from contexts typed by that route's front).
 */
type RateLimitContext = Pick<Context, 'header' | 'res'> & {
  get(key: 'rateLimit'): RateLimitState | undefined;
  get(key: 'pendingHits'): PendingHit[] | undefined;
  set(key: 'rateLimit', value: RateLimitState): void;
  get(key: 'requestId'): unknown;
};

/** A hit held back to be made with the later ones of the request (`made` once it was). */
export interface PendingHit {
  hit: Hit;
  options: Omit<EnforceOptions, 'key' | 'limit' | 'windowMs'>;
  /** The headers show this hit's limit alone, not the tighter of it and those before (a raised ceiling). */
  resetsHeaders?: boolean;
  made: boolean;
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
   * When true, the hit is not made here but left on the context (`pendingHits`) for the next limit
   * (after authentication), which makes it together with its own in one step of the limiter: the
   * per-IP limit before authentication defers the hit of a request that carries a credential.
   */
  deferHit?: (c: Context) => boolean;
}

/** Key function of the per-IP limit. */
export function byClientIp(options: ClientIpOptions = {}): (c: Context) => string {
  return (c) => `ip:${clientKey(clientIp(c, options))}`;
}

export function rateLimit(options: RateLimitOptions): MiddlewareHandler<{ Variables: Variables }> {
  const { key, limitOf, deferHit, ...settings } = options;
  return async function rateLimit(c, next) {
    const found = key(c);
    const bucket = typeof found === 'string' || found === undefined ? found : await found;
    const limit = limitOf ? limitOf(c) : settings.limit;
    const hit: Hit | undefined = bucket === undefined ? undefined : { key: bucket, limit, windowMs: settings.windowMs ?? WINDOW_MS };
    if (hit && deferHit?.(c)) {
      const pending: PendingHit = { hit, options: settings, made: false };
      c.set('pendingHits', [...(c.get('pendingHits') ?? []), pending]);
      await next();
      // No later limit made it (a 404, a route without one): counted now, on the way out.
      if (!pending.made) await makePendingHits(c, { refuse: false });
    } else {
      const pending = (c.get('pendingHits') ?? []).filter((p) => !p.made);
      const own: PendingHit[] = hit ? [{ hit, options: settings, made: false }] : [];
      if (pending.length + own.length > 0) await makeHits(c, [...pending, ...own], { refuse: true });
      await next();
    }
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
export async function enforceRateLimit(c: RateLimitContext, options: EnforceOptions): Promise<void> {
  if (options.key === undefined) return;
  const { key, limit, windowMs, ...rest } = options;
  await makeHits(c, [{ hit: { key, limit, windowMs: windowMs ?? WINDOW_MS }, options: rest, made: false }], { refuse: true });
}

/**
 * Makes the hits still pending on the context. `refuse`: throws the 429 of a refused binding hit
 * (a failed authentication answers it rather than its own error); otherwise only counts them.
 */
export async function makePendingHits(c: RateLimitContext, how: { refuse: boolean }): Promise<void> {
  const pending = (c.get('pendingHits') ?? []).filter((p) => !p.made);
  if (pending.length > 0) await makeHits(c, pending, how);
}

/** The hits in one step of the limiter, in order; the headers, then the 429 of the first refused binding hit. */
async function makeHits(c: RateLimitContext, entries: PendingHit[], how: { refuse: boolean }): Promise<void> {
  const { limiter } = entries[0]!.options;
  let results: (RateLimitResult | undefined)[];
  try {
    results = await hitAll(
      limiter,
      entries.map((entry) => entry.hit),
    );
  } catch (err) {
    for (const entry of entries) entry.made = true;
    // Fail closed when any of the limits says so (the default).
    const closed = entries.find((entry) => (entry.options.onBackendError ?? 'fail-closed') === 'fail-closed');
    const policy: BackendErrorPolicy = closed ? 'fail-closed' : 'fail-open';
    const options = closed?.options ?? entries[0]!.options;
    const requestId: unknown = c.get('requestId');
    for (const entry of entries) entry.options.observer?.backendFailed?.();
    const fields = { policy, requestId, error: err instanceof Error ? err.message : String(err) };
    if (options.log) options.log(JSON.stringify({ level: 'error', msg: 'rate limiter backend failed', ...fields }));
    else (options.logger ?? fallbackLogger()).error({ ...fields, error: serializeError(err) }, 'rate limiter backend failed');
    if (policy === 'fail-open') return;
    throw fail(
      'service_unavailable',
      'A backing service is temporarily unavailable.',
      { requestId: typeof requestId === 'string' ? requestId : undefined },
      // Refused before the handler: nothing was done, so the same request may be repeated.
      retryHints(BACKEND_RETRY_AFTER_SEC * 1000, true),
    );
  }
  let refusal: { entry: PendingHit; result: RateLimitResult } | undefined;
  entries.forEach((entry, i) => {
    entry.made = true;
    const result = results[i];
    if (result === undefined) return;
    const current = entry.resetsHeaders ? undefined : c.get('rateLimit');
    c.set('rateLimit', tighter(current, result));
    if (!result.allowed && entry.hit.binding !== false) refusal ??= { entry, result };
  });
  writeHeaders(c);
  if (!refusal || !how.refuse) return;
  refusal.entry.options.observer?.refused?.();
  throw fail(
    refusal.entry.options.code ?? 'rate_limit_exceeded',
    `Too many requests; retry after ${refusal.result.retryAfterSec} s.`,
    { retryAfterSec: refusal.result.retryAfterSec },
    retryHints(refusal.result.retryAfterMs ?? refusal.result.retryAfterSec * 1000, true),
  );
}

function tighter(current: RateLimitState | undefined, next: RateLimitResult): RateLimitState {
  const candidate = { limit: next.limit, remaining: next.remaining, resetAt: next.resetAt };
  if (current === undefined) return candidate;
  if (candidate.remaining !== current.remaining) return candidate.remaining < current.remaining ? candidate : current;
  return candidate.limit < current.limit ? candidate : current;
}

function writeHeaders(c: RateLimitContext): void {
  const state = c.get('rateLimit');
  if (state === undefined) return;
  c.header('X-RateLimit-Limit', String(state.limit));
  c.header('X-RateLimit-Remaining', String(state.remaining));
  c.header('X-RateLimit-Reset', String(state.resetAt));
}
