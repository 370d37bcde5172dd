/**
 * @module Tests of the Redis sliding-window limiter against a real Redis (REDIS_URL); skipped
 * without one. Every test uses its own random key prefix, so parallel suites do not meet.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, createRedisLimiter } from './redis-limiter.ts';

const REDIS_URL = process.env.REDIS_URL;
const WINDOW = 60_000;

describe.skipIf(!REDIS_URL)('redis limiter', () => {
  let first: Redis;
  let second: Redis;
  beforeAll(() => {
    first = connectRedis(REDIS_URL!);
    second = connectRedis(REDIS_URL!);
  });
  afterAll(async () => {
    await first.quit();
    await second.quit();
  });

  function prefix() {
    return `test:ratelimit:${randomBytes(8).toString('hex')}:`;
  }

  async function redisNowMs(redis: Redis) {
    const [sec, micro] = await redis.time();
    return Number(sec) * 1000 + Math.floor(Number(micro) / 1000);
  }

  it('admits up to the limit and refuses the next hit', async () => {
    const limiter = createRedisLimiter({ redis: first, prefix: prefix() });
    const before = Math.floor((await redisNowMs(first)) / 1000);
    const results = [];
    for (let i = 0; i < 4; i += 1) results.push(await limiter.hit('ip:a', 3, WINDOW));
    expect(results.map((r) => [r.allowed, r.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
    const refused = results[3]!;
    expect(refused.limit).toBe(3);
    expect(refused.retryAfterSec).toBeGreaterThanOrEqual(59);
    expect(refused.retryAfterSec).toBeLessThanOrEqual(60);
    expect(refused.resetAt).toBeGreaterThanOrEqual(before + 60);
    expect(refused.resetAt).toBeLessThanOrEqual(before + 62);
  });

  it('shares one limit between two limiter instances on two connections', async () => {
    const shared = prefix();
    const a = createRedisLimiter({ redis: first, prefix: shared });
    const b = createRedisLimiter({ redis: second, prefix: shared });
    const outcomes = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).hit('wksp:w1', 6, WINDOW)));
    expect(outcomes.filter((r) => r.allowed)).toHaveLength(6);
    expect(outcomes.filter((r) => !r.allowed)).toHaveLength(4);
    expect(await a.hit('wksp:w1', 6, WINDOW)).toMatchObject({ allowed: false, remaining: 0 });
    expect(await b.hit('wksp:other', 6, WINDOW)).toMatchObject({ allowed: true, remaining: 5 });
  });

  it('slides: hits older than the window are dropped, younger ones still count', async () => {
    const keys = prefix();
    const limiter = createRedisLimiter({ redis: first, prefix: keys });
    const now = await redisNowMs(first);
    // Two hits that already left the window and two that leave in about one second.
    await first.zadd(`${keys}k`, now - 70_000, 'old-1', now - 60_001, 'old-2', now - 59_000, 'young-1', now - 59_000, 'young-2');
    expect(await limiter.hit('k', 3, WINDOW)).toMatchObject({ allowed: true, remaining: 0 });
    const refused = await limiter.hit('k', 3, WINDOW);
    expect(refused).toMatchObject({ allowed: false, retryAfterSec: 1, resetAt: Math.ceil((now + 1_000) / 1000) });
    expect(await first.zcard(`${keys}k`)).toBe(3);
  });

  it('lets a key expire with its window', async () => {
    const keys = prefix();
    const limiter = createRedisLimiter({ redis: first, prefix: keys });
    await limiter.hit('k', 5, WINDOW);
    const ttl = await first.pttl(`${keys}k`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(WINDOW);
  });
});
