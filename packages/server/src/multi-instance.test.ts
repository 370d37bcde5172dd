/**
 * @module Several server instances over one PostgreSQL and one Redis, as in a scaled-out
 * deployment: a revoke on one instance is refused at once by the others, and the rate limits
 * are one budget across instances. Runs when DATABASE_URL and REDIS_URL are set (CI).
 * A limiter whose Redis is unreachable fails closed; that part needs no service.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createApp } from './app.ts';
import { connectRedis, createRedisLimiter } from './rate-limits/index.ts';
import { randomBase62 } from './random.ts';
import type { OpenDb } from './store/db.ts';
import { openStore } from './store/open.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp } from '@service/testing/app';

const DATABASE_URL = process.env.DATABASE_URL;
const REDIS_URL = process.env.REDIS_URL;
const OPERATOR_TOKEN = 'op-token-for-two-instances-0123456789abcdef';

describe.skipIf(!DATABASE_URL || !REDIS_URL)('two instances on PostgreSQL and Redis', () => {
  let store: TestStore;
  let secondDb: OpenDb;
  const redisClients: ReturnType<typeof connectRedis>[] = [];

  beforeAll(async () => {
    store = await testBackends()
      .find((b) => b.name === 'postgres')!
      .open();
    const [schema] = await store.db.query<{ schema: string }>('SELECT current_schema() AS schema');
    // Instance B has its own connection pool (and LISTEN connection) to the same schema. Its listener,
    // once cut, stays down for the rest of the suite (a reconnect would come after 10 minutes).
    secondDb = await openStore({ databaseUrl: DATABASE_URL, schema: schema!.schema, listenRetryMs: 600_000 });
  });
  afterAll(async () => {
    await secondDb?.close();
    await store?.cleanup();
    for (const redis of redisClients) redis.disconnect();
  });

  async function instances() {
    const prefix = `test:${randomBase62(10)}:`;
    const limiter = () => {
      const redis = connectRedis(REDIS_URL!);
      redisClients.push(redis);
      return createRedisLimiter({ redis, prefix });
    };
    const a = await createTestApp({ db: store.db, deps: { limiter: limiter(), operatorToken: OPERATOR_TOKEN } });
    const second = createApp({ db: secondDb, clock: a.clock, limiter: limiter(), logError: () => {} });
    await Promise.all([a.services.keys.ready(), second.services.keys.ready()]);
    return { a, b: second.app, bKeys: second.services.keys };
  }

  async function revokeOnA(a: Awaited<ReturnType<typeof instances>>['a'], key: string) {
    const { cookie, csrfToken } = await a.login();
    const listed = (await (await a.app.request('/api-keys', { headers: { Cookie: cookie } })).json()) as { data: { id: string; prefix: string }[] };
    const id = listed.data.find((k) => key.startsWith(k.prefix))!.id;
    return a.app.request(`/api-keys/${id}`, { method: 'DELETE', headers: { Cookie: cookie, 'X-CSRF-Token': csrfToken } });
  }

  it('refuses each revoked key on B right after A answers the revoke, B having served it from its cache', async () => {
    const { a, b, bKeys } = await instances();
    expect(bKeys.listening()).toBe(true);
    for (let round = 0; round < 5; round += 1) {
      const key = await a.keyWith('usage:read');
      const readOnB = () => b.request('/usage/current', { headers: { Authorization: `Bearer ${key}` } });
      expect((await readOnB()).status).toBe(200); // B caches the key
      expect((await readOnB()).status).toBe(200);
      expect((await revokeOnA(a, key)).status).toBe(200);
      const after = await readOnB();
      expect(after.status).toBe(401);
      expect(await after.json()).toMatchObject({ error: 'api_key_not_found' });
    }
  });

  it('refuses a key on B right after the operator suspends its workspace on A', async () => {
    const { a, b } = await instances();
    const key = await a.keyWith('usage:read');
    const readOnB = () => b.request('/usage/current', { headers: { Authorization: `Bearer ${key}` } });
    expect((await readOnB()).status).toBe(200);
    const suspend = (status: 'suspended' | 'active') =>
      a.app.request(`/operator/workspaces/${a.workspaceId}`, {
        method: 'PATCH',
        headers: { Authorization: `Bearer ${OPERATOR_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ status }),
      });
    expect((await suspend('suspended')).status).toBe(200);
    const refused = await readOnB();
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: 'tenant_forbidden' });
    expect((await suspend('active')).status).toBe(200);
    expect((await readOnB()).status).toBe(200);
  });

  it('refuses a revoked key at once on the other instance, whose cache had it', async () => {
    const { a, b } = await instances();
    const key = await a.keyWith('mcp:tenant');
    const useOnB = () => b.request('/v1/mcp/tenant/tokens', { method: 'POST', headers: { Authorization: `Bearer ${key}` } });
    expect((await useOnB()).status).toBe(201); // B verifies and caches the key
    const { cookie, csrfToken } = await a.login();
    const listed = (await (await a.app.request('/api-keys', { headers: { Cookie: cookie } })).json()) as {
      data: { id: string; prefix: string }[];
    };
    const id = listed.data.find((k) => key.startsWith(k.prefix))!.id;
    const revoked = await a.app.request(`/api-keys/${id}`, { method: 'DELETE', headers: { Cookie: cookie, 'X-CSRF-Token': csrfToken } });
    expect(revoked.status).toBe(200);
    const after = await useOnB();
    expect(after.status).toBe(401);
    expect(await after.json()).toMatchObject({ error: 'api_key_not_found' });
  });

  // Last of the instances tests: B's listener stays down after it.
  it('refuses a revoked key on B while B has lost its listener: B reads the revocation version instead', async () => {
    const { a, b, bKeys } = await instances();
    const key = await a.keyWith('usage:read');
    const readOnB = () => b.request('/usage/current', { headers: { Authorization: `Bearer ${key}` } });
    expect((await readOnB()).status).toBe(200); // cached while listening
    // Cut every listener of this schema: A's comes back by itself, B's stays down.
    await store.db.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'service-listener' AND position('"service_keys.' || current_schema() || '"' in query) > 0`,
    );
    await vi.waitFor(() => expect(bKeys.listening()).toBe(false), { timeout: 10_000, interval: 20 });
    expect((await readOnB()).status).toBe(200); // cached again, under the current version
    expect((await revokeOnA(a, key)).status).toBe(200);
    const after = await readOnB();
    expect(after.status).toBe(401);
    expect(await after.json()).toMatchObject({ error: 'api_key_not_found' });
  });

  it('shares one per-IP budget of 60 a minute across instances', async () => {
    const { a, b } = await instances();
    for (let i = 0; i < 30; i += 1) {
      expect((await a.app.request('/nope')).status).toBe(404);
      expect((await b.request('/nope')).status).toBe(404);
    }
    const limited = await b.request('/nope');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('Retry-After')).toMatch(/^\d+$/);
    expect(await limited.json()).toMatchObject({ error: 'rate_limit_exceeded' });
    expect((await a.app.request('/nope')).status).toBe(429);
  });
});

describe('a limiter whose Redis is unreachable', () => {
  let t: Awaited<ReturnType<typeof createTestApp>>;
  const redis = connectRedis('redis://127.0.0.1:1');
  beforeAll(async () => {
    t = await createTestApp({ deps: { limiter: createRedisLimiter({ redis }) } });
  });
  afterAll(async () => {
    redis.disconnect();
    await t?.close();
  });
  beforeEach(() => {
    t.clock.advance(1000);
  });

  it('fails closed: 503 service_unavailable with Retry-After and the request id, never a silent pass', async () => {
    const res = await t.app.request('/v1/mcp/tenant/tokens', {
      method: 'POST',
      headers: { Authorization: `Bearer ${t.apiKey}`, 'X-Request-Id': 'req-redis-down' },
    });
    expect(res.status).toBe(503);
    expect(res.headers.get('Retry-After')).toMatch(/^\d+$/);
    expect(res.headers.get('X-Request-Id')).toBe('req-redis-down');
    expect(await res.json()).toEqual({
      error: 'service_unavailable',
      message: 'A backing service is temporarily unavailable.',
      requestId: 'req-redis-down',
    });
  });
});
