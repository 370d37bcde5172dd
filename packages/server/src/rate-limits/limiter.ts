/**
 * @module The limiter contract shared by the in-memory and the Redis implementations: a true
 * sliding window (a log of the admitted hits of the last `windowMs`), not fixed buckets.
 */

/** What one hit answers; the middleware turns it into the X-RateLimit-* headers or a 429. */
export interface RateLimitResult {
  /** Whether this hit was admitted (and counted). Refused hits are not counted, so a client
   *  that keeps retrying is not locked out beyond the window. */
  allowed: boolean;
  limit: number;
  /** Admissions left in the window after this hit. */
  remaining: number;
  /** Epoch seconds at which the oldest counted hit leaves the window, i.e. when `remaining`
   *  next grows. With a sliding window there is no single reset of the whole count. */
  resetAt: number;
  /** Seconds to wait before a retry can be admitted: 0 when allowed, at least 1 otherwise. */
  retryAfterSec: number;
  /** The same wait to the millisecond (the `Retry-After-Ms` header): 0 when allowed, at least 1 otherwise;
   *  a limiter that does not know it leaves it out (`retryAfterSec` is then the wait). */
  retryAfterMs?: number;
}

/** One hit of a request on one key; several go to the backend together ({@link Limiter.hitAll}). */
export interface Hit {
  key: string;
  limit: number;
  windowMs: number;
  /** Whether a refusal here refuses the request (default): the hits after it are then not made. */
  binding?: boolean;
}

export interface Limiter {
  /** Records one hit on `key` if fewer than `limit` hits were admitted in the last `windowMs`. */
  hit(key: string, limit: number, windowMs: number): Promise<RateLimitResult>;
  /**
   * The hits of one request, in order, in one step (Redis: one round trip, one script): each as
   * {@link hit}, until a binding one is refused; those after it are not made (`undefined`).
   */
  hitAll?(hits: readonly Hit[]): Promise<(RateLimitResult | undefined)[]>;
}

/** {@link Limiter.hitAll} where the limiter has it; one hit after the other (same outcome) where not. */
export async function hitAll(limiter: Limiter, hits: readonly Hit[]): Promise<(RateLimitResult | undefined)[]> {
  if (limiter.hitAll) return limiter.hitAll(hits);
  const results: (RateLimitResult | undefined)[] = hits.map(() => undefined);
  for (const [i, hit] of hits.entries()) {
    const result = await limiter.hit(hit.key, hit.limit, hit.windowMs);
    results[i] = result;
    if (!result.allowed && hit.binding !== false) break;
  }
  return results;
}

/** Builds the result from the window's state; both implementations share this arithmetic. */
export function windowResult(allowed: boolean, limit: number, counted: number, oldestMs: number, nowMs: number, windowMs: number): RateLimitResult {
  const freeAtMs = oldestMs + windowMs;
  return {
    allowed,
    limit,
    remaining: Math.max(0, limit - counted),
    resetAt: Math.ceil(freeAtMs / 1000),
    retryAfterSec: allowed ? 0 : Math.max(1, Math.ceil((freeAtMs - nowMs) / 1000)),
    retryAfterMs: allowed ? 0 : Math.max(1, Math.ceil(freeAtMs - nowMs)),
  };
}
