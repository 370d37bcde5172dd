/**
 * @module In-memory sliding-window limiter: the default of a single process. Memory stays bounded and a hit
 * stays O(1), however many clients there are. Each class of keys (what a key says before its first colon: `ip`,
 * `wksp`, …) has its own bound of `maxKeys`, so a flood of addresses never pushes a workspace's count out (whose
 * workspace would then start its window afresh). Within a class, the keys of each window length are kept roughly
 * in the order of their last admitted hit: a key moves to the end when a hit is admitted, at most once a quarter
 * of its window (moving a key costs more than the rest of a hit). So the idle keys lead: each hit drops the
 * leading keys whose hits have all left the window and stops at the first live one (an idle key goes within a
 * window and a quarter of its last hit), and once its class holds `maxKeys` keys a new key takes the place of the
 * key of its class that moved longest ago. (A sweep of every key whenever the map was full of live keys looked at
 * 10,000 keys a hit with 10,000 tracked; 100,000 clients within a minute held the event loop for seconds:
 * docs/performance.md, "A full rate limiter held the event loop".)
 */
import { windowResult, type Limiter, type RateLimitResult } from './limiter.ts';

export interface MemoryLimiterOptions {
  /** Epoch milliseconds; inject a fake clock in tests. */
  now?: () => number;
  /** Upper bound on the number of tracked keys of each class (default 100 000). */
  maxKeys?: number;
}

export interface MemoryLimiter extends Limiter {
  /** Number of keys currently tracked, all classes together (for tests and metrics). */
  readonly size: number;
  /** Tracked keys looked at to drop idle ones or make room, since the limiter was made (tests: O(1) a hit). */
  readonly keysExamined: number;
  /** Each class of keys: how many are tracked now, and how many live ones made room for a new key since the limiter was made (metrics). */
  classes(): KeyClassCount[];
}

/** One class of keys (`ip`, `wksp`, …) as the metrics show it. */
export interface KeyClassCount {
  name: string;
  keys: number;
  /** Live keys (hit within their window) dropped to make room: their clients' counts restarted. */
  evicted: number;
}

interface HitLog {
  /** Admission times (ms), oldest first. */
  hits: number[];
  /** When the key last moved to the end of its window's order. */
  movedAt: number;
}

/** The keys of one class: per window length their logs, the one that moved longest ago first (a Map keeps the order of insertion). */
interface KeyClass {
  evicted: number;
  windows: Map<number, Map<string, HitLog>>;
}

export function createMemoryLimiter(options: MemoryLimiterOptions = {}): MemoryLimiter {
  const now = options.now ?? Date.now;
  const maxKeys = options.maxKeys ?? 100_000;
  const classes = new Map<string, KeyClass>();
  let keysExamined = 0;

  function classOf(key: string): KeyClass {
    const colon = key.indexOf(':');
    const name = colon < 0 ? key : key.slice(0, colon);
    let found = classes.get(name);
    if (!found) classes.set(name, (found = { evicted: 0, windows: new Map() }));
    return found;
  }

  /** Keys of a class: a class has a window length or two. */
  function keyCount(keys: KeyClass): number {
    let n = 0;
    for (const logs of keys.windows.values()) n += logs.size;
    return n;
  }

  /** Drops the leading logs of a window whose hits have all left it; stops at the first live one. */
  function dropIdle(logs: Map<string, HitLog>, windowMs: number, at: number): void {
    for (const [key, { hits }] of logs) {
      keysExamined += 1;
      if (hits[hits.length - 1]! > at - windowMs) return;
      logs.delete(key);
    }
  }

  /** Makes room for one more key of a class: idle keys go first (`current`'s were just dropped), then the key that moved longest ago. */
  function makeRoom(keys: KeyClass, current: Map<string, HitLog>, at: number): void {
    for (const [windowMs, logs] of keys.windows) if (logs !== current) dropIdle(logs, windowMs, at);
    if (keyCount(keys) < maxKeys) return;
    // Still full of live keys (many clients at once): that client's count restarts, the price of a memory bound.
    let oldest: { logs: Map<string, HitLog>; key: string; at: number } | undefined;
    for (const logs of keys.windows.values()) {
      const first = logs.entries().next();
      if (first.done) continue;
      keysExamined += 1;
      const [key, log] = first.value;
      if (!oldest || log.movedAt < oldest.at) oldest = { logs, key, at: log.movedAt };
    }
    if (oldest) {
      oldest.logs.delete(oldest.key);
      keys.evicted += 1;
    }
  }

  function hit(key: string, limit: number, windowMs: number): RateLimitResult {
    const at = now();
    const keys = classOf(key);
    let logs = keys.windows.get(windowMs);
    if (!logs) keys.windows.set(windowMs, (logs = new Map()));
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
        if (keyCount(keys) >= maxKeys) makeRoom(keys, logs, at);
        logs.set(key, log);
      } else if (at - log.movedAt >= windowMs / 4) {
        // Admitted: the key moves to the end, behind the keys that moved before it.
        logs.delete(key);
        logs.set(key, log);
        log.movedAt = at;
      }
    } else if (known && hits.length === 0) {
      logs.delete(key);
    }
    return windowResult(allowed, limit, hits.length, hits[0] ?? at, at, windowMs);
  }

  return {
    get size() {
      let size = 0;
      for (const keys of classes.values()) size += keyCount(keys);
      return size;
    },
    get keysExamined() {
      return keysExamined;
    },
    classes() {
      return Array.from(classes, ([name, keys]) => ({ name, keys: keyCount(keys), evicted: keys.evicted }));
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
