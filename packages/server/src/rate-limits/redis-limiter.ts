/**
 * @module Redis sliding-window limiter for several server instances sharing one limit. Each key
 * is a sorted set of admission times; one Lua script trims, counts and admits atomically, and
 * reads the time from Redis itself so instances with skewed clocks still agree on the window.
 * The limits of one request (per IP, per workspace) go in one script call: one round trip. Its
 * keys are several: on a Redis Cluster they would have to share a hash slot (the service connects
 * to one Redis, see connectRedis).
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { windowResult, type Limiter } from './limiter.ts';

// KEYS[1]: the key's sorted set. ARGV: limit, windowMs, a unique member for this hit.
// Returns { allowed (0|1), counted, oldest admission (ms), now (ms) }.
const SLIDING_WINDOW_HIT = `
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local counted = redis.call('ZCARD', KEYS[1])
local allowed = 0
if counted < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  counted = counted + 1
  allowed = 1
end
local oldest = now
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if first[2] then oldest = tonumber(first[2]) end
if counted > 0 then redis.call('PEXPIRE', KEYS[1], window) end
return { allowed, counted, oldest, now }
`;

// The hits of one request in one round trip. KEYS: one sorted set per hit. ARGV: a unique member, then
// limit, windowMs, binding (0|1) per hit. Hits are made in order, as SLIDING_WINDOW_HIT makes one, until
// a binding one is refused. Returns { now (ms), then per hit: allowed (0|1, or -1 when not made),
// counted, oldest admission (ms) }.
const SLIDING_WINDOW_HIT_ALL = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local out = { now }
local stopped = false
for i, key in ipairs(KEYS) do
  if stopped then
    table.insert(out, -1); table.insert(out, 0); table.insert(out, now)
  else
    local limit = tonumber(ARGV[3 * i - 1])
    local window = tonumber(ARGV[3 * i])
    local binding = ARGV[3 * i + 1] == '1'
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
    local counted = redis.call('ZCARD', key)
    local allowed = 0
    if counted < limit then
      redis.call('ZADD', key, now, ARGV[1] .. ':' .. i)
      counted = counted + 1
      allowed = 1
    end
    local oldest = now
    local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    if first[2] then oldest = tonumber(first[2]) end
    if counted > 0 then redis.call('PEXPIRE', key, window) end
    table.insert(out, allowed); table.insert(out, counted); table.insert(out, oldest)
    if allowed == 0 and binding then stopped = true end
  end
end
return out
`;

const COMMAND = 'serviceSlidingWindowHit';
const COMMAND_ALL = 'serviceSlidingWindowHitAll';

type ScriptReply = [allowed: number, counted: number, oldestMs: number, nowMs: number];
type WithScript = Redis & {
  [COMMAND](key: string, limit: number, windowMs: number, member: string): Promise<ScriptReply>;
  /** Without a fixed number of keys: the count comes first. */
  [COMMAND_ALL](keys: number, ...args: (string | number)[]): Promise<number[]>;
};

export interface RedisLimiterOptions {
  redis: Redis;
  /** Namespace of the limiter's keys (default `service:ratelimit:`); tests use a random one. */
  prefix?: string;
}

export function createRedisLimiter(options: RedisLimiterOptions): Limiter {
  const prefix = options.prefix ?? 'service:ratelimit:';
  // A hit's member in a key's set must be unique across instances: this limiter's random name, then a count (drawing
  // random bytes for each hit cost more than the rest of the hit's own work).
  const name = randomBytes(12).toString('base64url');
  let made = 0;
  const member = () => `${name}.${(made++).toString(36)}`;
  // defineCommand sends EVALSHA and falls back to EVAL once after a NOSCRIPT (Redis restart).
  options.redis.defineCommand(COMMAND, { numberOfKeys: 1, lua: SLIDING_WINDOW_HIT });
  options.redis.defineCommand(COMMAND_ALL, { lua: SLIDING_WINDOW_HIT_ALL });
  const redis = options.redis as WithScript;
  return {
    async hit(key, limit, windowMs) {
      const [allowed, counted, oldestMs, nowMs] = await redis[COMMAND](prefix + key, limit, windowMs, member());
      return windowResult(allowed === 1, limit, counted, oldestMs, nowMs, windowMs);
    },
    async hitAll(hits) {
      // One member for all, with the hit's position: unique in each key's set, even one hit twice.
      const args = hits.flatMap((hit) => [hit.limit, hit.windowMs, hit.binding === false ? '0' : '1']);
      const reply = await redis[COMMAND_ALL](hits.length, ...hits.map((hit) => prefix + hit.key), member(), ...args);
      const nowMs = reply[0]!;
      return hits.map((hit, i) => {
        const [allowed, counted, oldestMs] = reply.slice(1 + 3 * i, 4 + 3 * i) as [number, number, number];
        return allowed === -1 ? undefined : windowResult(allowed === 1, hit.limit, counted, oldestMs, nowMs, hit.windowMs);
      });
    },
  };
}

/**
 * A client for the limiter that fails fast: a request must not wait for Redis to come back,
 * it gets a 503 (see the middleware's onBackendError). Connection errors are not logged here;
 * each request that meets one logs a line in the middleware.
 */
export function connectRedis(url: string): Redis {
  const redis = new Redis(url, {
    // The commands of requests handled in the same turn of the event loop leave in one write.
    enableAutoPipelining: true,
    maxRetriesPerRequest: 1,
    commandTimeout: 1_000,
    connectTimeout: 2_000,
  });
  redis.on('error', () => {});
  return redis;
}
