/**
 * @module In-memory sliding-window limiter: the default of a single process. Memory stays
 * bounded: keys whose hits have all left the window are swept out as traffic passes (at most
 * once per `sweepIntervalMs`, so a hit stays O(1)), and at most `maxKeys` keys are kept.
 */
import { windowResult, type Limiter, type RateLimitResult } from './limiter.ts';

export interface MemoryLimiterOptions {
  /** Epoch milliseconds; inject a fake clock in tests. */
  now?: () => number;
  /** Upper bound on the number of tracked keys (default 100 000). */
  maxKeys?: number;
  /** Least time between two sweeps of idle keys (default 10 s). */
  sweepIntervalMs?: number;
}

export interface MemoryLimiter extends Limiter {
  /** Number of keys currently tracked (for tests and metrics). */
  readonly size: number;
}

interface HitLog {
  /** Admission times (ms), oldest first. */
  hits: number[];
  windowMs: number;
}

export function createMemoryLimiter(options: MemoryLimiterOptions = {}): MemoryLimiter {
  const now = options.now ?? Date.now;
  const maxKeys = options.maxKeys ?? 100_000;
  const sweepIntervalMs = options.sweepIntervalMs ?? 10_000;
  const logs = new Map<string, HitLog>();
  let lastSweep = -Infinity;

  function sweep(at: number): void {
    lastSweep = at;
    for (const [key, log] of logs) {
      if (log.hits[log.hits.length - 1]! <= at - log.windowMs) logs.delete(key);
    }
  }

  function track(key: string, log: HitLog, at: number): void {
    if (logs.size >= maxKeys) sweep(at);
    // Still full of live keys (many clients at once): drop the longest-tracked one. That
    // client's count restarts, which is the price of a memory bound.
    if (logs.size >= maxKeys) logs.delete(logs.keys().next().value!);
    logs.set(key, log);
  }

  function hit(key: string, limit: number, windowMs: number): RateLimitResult {
    const at = now();
    if (at - lastSweep >= sweepIntervalMs) sweep(at);
    const known = logs.get(key);
    const log = known ?? { hits: [], windowMs };
    // A hit counts while it is younger than the window: it leaves at exactly hit + windowMs.
    let expired = 0;
    while (expired < log.hits.length && log.hits[expired]! <= at - windowMs) expired += 1;
    if (expired > 0) log.hits.splice(0, expired);
    const allowed = log.hits.length < limit;
    if (allowed) log.hits.push(at);
    log.windowMs = windowMs;
    if (log.hits.length === 0) logs.delete(key);
    else if (!known) track(key, log, at);
    return windowResult(allowed, limit, log.hits.length, log.hits[0] ?? at, at, windowMs);
  }

  return {
    get size() {
      return logs.size;
    },
    async hit(key, limit, windowMs) {
      return hit(key, limit, windowMs);
    },
    async hitAll(hits) {
      const results: (RateLimitResult | undefined)[] = hits.map(() => undefined);
      for (const [i, one] of hits.entries()) {
        const result = hit(one.key, one.limit, one.windowMs);
        results[i] = result;
        if (!result.allowed && one.binding !== false) break;
      }
      return results;
    },
  };
}
