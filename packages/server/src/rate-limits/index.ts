/**
 * @module Rate-limit storage: the sliding-window counters behind the rate-limit middleware
 * (middleware/rate-limit/), in memory for one process or in Redis for several instances sharing
 * one limit. A floor under the middleware: it knows hits and windows, not requests.
 */
import type { Limiter } from './limiter.ts';
import { createMemoryLimiter } from './memory-limiter.ts';
import { connectRedis, createRedisLimiter } from './redis-limiter.ts';

export type { Limiter, RateLimitResult } from './limiter.ts';
export { createMemoryLimiter, type MemoryLimiter, type MemoryLimiterOptions } from './memory-limiter.ts';
export { connectRedis, createRedisLimiter, type RedisLimiterOptions } from './redis-limiter.ts';

/** Memory by default; Redis when a URL is given, so several instances share the limits. */
export function createLimiter(config: { redisUrl?: string | undefined } = {}): Limiter {
  return config.redisUrl ? createRedisLimiter({ redis: connectRedis(config.redisUrl) }) : createMemoryLimiter();
}
