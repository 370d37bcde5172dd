/**
 * @module In-memory sliding-window limiter: the default of a single process. Memory stays
 * bounded: keys whose hits have all left the window are dropped as traffic passes, and at most
 * `maxKeys` keys are kept (the least recently used one goes first).
 */
import { windowResult, type Limiter } from './limiter.ts';

export interface MemoryLimiterOptions {
  /** Epoch milliseconds; inject a fake clock in tests. */
  now?: () => number;
  /** Upper bound on the number of tracked keys (default 100 000). */
  maxKeys?: number;
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
  // Map iteration order is insertion order; re-inserting on every hit keeps it least-recently-used
  // first, so idle keys gather at the front and eviction stops at the first live one.
  const logs = new Map<string, HitLog>();

  function evictIdle(at: number): void {
    for (const [key, log] of logs) {
      const newest = log.hits[log.hits.length - 1];
      if (newest !== undefined && newest > at - log.windowMs) return;
      logs.delete(key);
    }
  }

  return {
    get size() {
      return logs.size;
    },
    async hit(key, limit, windowMs) {
      const at = now();
      evictIdle(at);
      const log = logs.get(key) ?? { hits: [], windowMs };
      logs.delete(key);
      // A hit counts while it is younger than the window: it leaves at exactly hit + windowMs.
      let expired = 0;
      while (expired < log.hits.length && log.hits[expired]! <= at - windowMs) expired += 1;
      if (expired > 0) log.hits.splice(0, expired);
      const allowed = log.hits.length < limit;
      if (allowed) log.hits.push(at);
      log.windowMs = windowMs;
      if (log.hits.length > 0) {
        if (logs.size >= maxKeys) logs.delete(logs.keys().next().value!);
        logs.set(key, log);
      }
      return windowResult(allowed, limit, log.hits.length, log.hits[0] ?? at, at, windowMs);
    },
  };
}
