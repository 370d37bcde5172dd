/**
 * @module In-memory sliding-window limiter: the default of a single process. Memory stays bounded and a hit
 * stays O(1), however many clients there are. The keys of each window length are kept roughly in the order of
 * their last admitted hit: a key moves to the end when a hit is admitted, at most once a quarter of its window
 * (moving a key costs more than the rest of a hit). So the idle keys lead: each hit drops the leading keys whose
 * hits have all left the window and stops at the first live one (an idle key goes within a window and a quarter
 * of its last hit), and once `maxKeys` keys are tracked a new key takes the place of the key that moved longest
 * ago. (A sweep of every key whenever the map was full of live keys looked at 10,000 keys a hit with 10,000
 * tracked; 100,000 clients within a minute held the event loop for seconds: docs/performance.md, "A full rate
 * limiter held the event loop".)
 */
import { windowResult, type Limiter, type RateLimitResult } from './limiter.ts';

export interface MemoryLimiterOptions {
  /** Epoch milliseconds; inject a fake clock in tests. */
  now?: () => number;
  /** Upper bound on the number of tracked keys (default 100 000). */
  maxKeys?: number;
}

export interface MemoryLimiter extends Limiter {
  /** Number of keys currently tracked (for tests and metrics). */
  readonly size: number;
  /** Tracked keys looked at to drop idle ones or make room, since the limiter was made (tests: O(1) a hit). */
  readonly keysExamined: number;
}

interface HitLog {
  /** Admission times (ms), oldest first. */
  hits: number[];
  /** When the key last moved to the end of its window's order. */
  movedAt: number;
}

export function createMemoryLimiter(options: MemoryLimiterOptions = {}): MemoryLimiter {
  const now = options.now ?? Date.now;
  const maxKeys = options.maxKeys ?? 100_000;
  /** Per window length, its keys' logs, the one that moved longest ago first (a Map keeps the order of insertion). */
  const windows = new Map<number, Map<string, HitLog>>();
  let size = 0;
  let keysExamined = 0;

  /** Drops the leading logs of a window whose hits have all left it; stops at the first live one. */
  function dropIdle(logs: Map<string, HitLog>, windowMs: number, at: number): void {
    for (const [key, { hits }] of logs) {
      keysExamined += 1;
      if (hits[hits.length - 1]! > at - windowMs) return;
      logs.delete(key);
      size -= 1;
    }
  }

  /** Makes room for one more key: idle keys go first (`current`'s were just dropped), then the key that moved longest ago. */
  function makeRoom(current: Map<string, HitLog>, at: number): void {
    for (const [windowMs, logs] of windows) if (logs !== current) dropIdle(logs, windowMs, at);
    if (size < maxKeys) return;
    // Still full of live keys (many clients at once): that client's count restarts, the price of a memory bound.
    let oldest: { logs: Map<string, HitLog>; key: string; at: number } | undefined;
    for (const logs of windows.values()) {
      const first = logs.entries().next();
      if (first.done) continue;
      keysExamined += 1;
      const [key, log] = first.value;
      if (!oldest || log.movedAt < oldest.at) oldest = { logs, key, at: log.movedAt };
    }
    if (oldest) {
      oldest.logs.delete(oldest.key);
      size -= 1;
    }
  }

  function hit(key: string, limit: number, windowMs: number): RateLimitResult {
    const at = now();
    let logs = windows.get(windowMs);
    if (!logs) windows.set(windowMs, (logs = new Map()));
    dropIdle(logs, windowMs, at);
    const known = logs.get(key);
    const log = known ?? { hits: [], movedAt: at };
    const { hits } = log;
    // A hit counts while it is younger than the window: it leaves at exactly hit + windowMs.
    let expired = 0;
    while (expired < hits.length && hits[expired]! <= at - windowMs) expired += 1;
    if (expired > 0) hits.splice(0, expired);
    const allowed = hits.length < limit;
    if (allowed) {
      hits.push(at);
      if (!known) {
        if (size >= maxKeys) makeRoom(logs, at);
        size += 1;
        logs.set(key, log);
      } else if (at - log.movedAt >= windowMs / 4) {
        // Admitted: the key moves to the end, behind the keys that moved before it.
        logs.delete(key);
        logs.set(key, log);
        log.movedAt = at;
      }
    } else if (known && hits.length === 0) {
      logs.delete(key);
      size -= 1;
    }
    return windowResult(allowed, limit, hits.length, hits[0] ?? at, at, windowMs);
  }

  return {
    get size() {
      return size;
    },
    get keysExamined() {
      return keysExamined;
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
