/**
 * @module The rate limits of a request through the whole app on a real Redis (REDIS_URL; skipped without
 * one): an authenticated request's per-IP and per-workspace hits are one Redis command, one round trip; an
 * anonymous request's per-IP hit alone is one too.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '@service/testing/app';
import { connectRedis, createRedisLimiter } from './rate-limits/index.ts';

const REDIS_URL = process.env.REDIS_URL;

describe.skipIf(!REDIS_URL)('rate limits on Redis through the app', () => {
  let redis: Redis;
  let t: TestApp;
  const sent: string[] = [];

  beforeAll(async () => {
    redis = connectRedis(REDIS_URL!);
    t = await createTestApp({ deps: { limiter: createRedisLimiter({ redis, prefix: `test:trips:${randomBytes(8).toString('hex')}:` }) } });
    await t.services.keys.ready();
    // Every command the client sends (ioredis's own entry point).
    const send = redis.sendCommand.bind(redis);
    redis.sendCommand = ((command: { name: string }) => {
      sent.push(command.name);
      return send(command as never);
    }) as typeof redis.sendCommand;
    // Loads the scripts, so that what is counted below is the steady state (EVALSHA).
    await t.app.request('/usage/current', { headers: { authorization: `Bearer ${t.apiKey}` } });
    await t.app.request('/usage/current');
  });
  afterAll(async () => {
    await t?.close();
    await redis?.quit();
  });

  it('makes the per-IP and per-workspace hits of an authenticated request in one command', async () => {
    sent.length = 0;
    const res = await t.app.request('/usage/current', { headers: { authorization: `Bearer ${t.apiKey}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('X-RateLimit-Limit')).toBe('60');
    expect(res.headers.get('X-RateLimit-Remaining')).toBe('57'); // the two warming requests and this one
    expect(sent).toEqual(['evalsha']);
  });

  it('makes the per-IP hit of a request whose credential fails in one command, and answers 401', async () => {
    sent.length = 0;
    const res = await t.app.request('/usage/current', { headers: { authorization: 'Bearer service_sk_live_000000000000000000000000' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('X-RateLimit-Remaining')).toBe('56');
    expect(sent).toEqual(['evalsha']);
  });
});
