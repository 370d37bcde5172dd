/**
 * @module Rate-limit storage: the sliding-window counters behind the rate-limit middleware
 * (middleware/rate-limit/), in memory for one process or in Redis for several instances sharing
 * one limit. A floor under the middleware: it knows hits and windows, not requests.
 */
export { hitAll, type Hit, type Limiter, type RateLimitResult } from './limiter.ts';
export { createMemoryLimiter, type KeyClassCount, type MemoryLimiter, type MemoryLimiterOptions } from './memory-limiter.ts';
export { connectRedis, createRedisLimiter, type RedisLimiterOptions } from './redis-limiter.ts';
