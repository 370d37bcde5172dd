/**
 * @module Tests of the hits of one request in one step (`hitAll`), the same on both limiters: in memory, and
 * on a real Redis (REDIS_URL; skipped without one) where they are one round trip.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { hitAll, type Limiter } from './limiter.ts';
import { createMemoryLimiter } from './memory-limiter.ts';
import { connectRedis, createRedisLimiter } from './redis-limiter.ts';

const REDIS_URL = process.env.REDIS_URL;
const WINDOW = 60_000;
let redis: Redis | undefined;

const backends: { name: string; limiter: () => Limiter }[] = [
  { name: 'memory', limiter: () => createMemoryLimiter() },
  ...(REDIS_URL
    ? [
        {
          name: 'redis',
          limiter: () => {
            redis ??= connectRedis(REDIS_URL);
            return createRedisLimiter({ redis, prefix: `test:hitall:${randomBytes(8).toString('hex')}:` });
          },
        },
      ]
    : []),
];

afterAll(async () => {
  await redis?.quit();
});

describe.each(backends)('hitAll on the $name limiter', ({ limiter: create }) => {
  it('counts each key as its own hit would, in one call', async () => {
    const limiter = create();
    const results = await hitAll(limiter, [
      { key: 'ip:a', limit: 3, windowMs: WINDOW },
      { key: 'wksp:w', limit: 5, windowMs: WINDOW },
    ]);
    expect(results.map((r) => [r?.allowed, r?.limit, r?.remaining])).toEqual([
      [true, 3, 2],
      [true, 5, 4],
    ]);
    expect(await limiter.hit('ip:a', 3, WINDOW)).toMatchObject({ allowed: true, remaining: 1 });
    expect(await limiter.hit('wksp:w', 5, WINDOW)).toMatchObject({ allowed: true, remaining: 3 });
  });

  it('stops at a refused binding hit: the hits after it are not made', async () => {
    const limiter = create();
    await limiter.hit('ip:b', 1, WINDOW);
    const results = await hitAll(limiter, [
      { key: 'ip:b', limit: 1, windowMs: WINDOW },
      { key: 'wksp:x', limit: 5, windowMs: WINDOW },
    ]);
    expect(results[0]).toMatchObject({ allowed: false, remaining: 0, limit: 1 });
    expect(results[0]!.retryAfterSec).toBeGreaterThanOrEqual(59);
    expect(results[1]).toBeUndefined();
    // The workspace was not counted.
    expect(await limiter.hit('wksp:x', 5, WINDOW)).toMatchObject({ allowed: true, remaining: 4 });
  });

  it('goes on after a refused hit that does not bind', async () => {
    const limiter = create();
    await limiter.hit('ip:c', 1, WINDOW);
    const results = await hitAll(limiter, [
      { key: 'ip:c', limit: 1, windowMs: WINDOW, binding: false },
      { key: 'ip:raised:c', limit: 100, windowMs: WINDOW },
      { key: 'wksp:y', limit: 5, windowMs: WINDOW },
    ]);
    expect(results.map((r) => [r?.allowed, r?.remaining])).toEqual([
      [false, 0],
      [true, 99],
      [true, 4],
    ]);
  });
});

describe.skipIf(!REDIS_URL)('hitAll on Redis', () => {
  it('is one command, one round trip, for every limit of a request', async () => {
    const client = connectRedis(REDIS_URL!);
    try {
      const limiter = createRedisLimiter({ redis: client, prefix: `test:hitall:${randomBytes(8).toString('hex')}:` });
      await limiter.hitAll!([{ key: 'warm', limit: 1, windowMs: WINDOW }]); // loads the script
      const sent: string[] = [];
      const send = client.sendCommand.bind(client);
      client.sendCommand = ((command: { name: string }) => {
        sent.push(command.name);
        return send(command as never);
      }) as typeof client.sendCommand;
      const results = await limiter.hitAll!([
        { key: 'ip:d', limit: 60, windowMs: WINDOW },
        { key: 'wksp:z', limit: 600, windowMs: WINDOW },
      ]);
      expect(results.map((r) => r?.allowed)).toEqual([true, true]);
      expect(sent).toEqual(['evalsha']);
    } finally {
      await client.quit();
    }
  });
});
