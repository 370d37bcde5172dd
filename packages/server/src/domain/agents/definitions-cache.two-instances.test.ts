/**
 * The agents' definitions held in memory by two instances over one PostgreSQL and one Redis: instance
 * B serves a definition from its cache (a row changed behind its back, with no notification, is not
 * seen), and a change made through instance A's route reaches B's cache by the notification it sends.
 * Runs when DATABASE_URL and REDIS_URL are set (CI).
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApp } from '../../app.ts';
import { connectRedis, createRedisLimiter } from '../../rate-limits/index.ts';
import { randomBase62 } from '../../random.ts';
import type { OpenDb } from '../../store/db.ts';
import { openStore } from '../../store/open.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { httpCaller } from '@service/testing/panel-sessions';
import { createAgentDefinitions } from './definitions-cache.ts';
import { defaultInstructions } from './instructions.ts';

const DATABASE_URL = process.env.DATABASE_URL;
const REDIS_URL = process.env.REDIS_URL;

describe.skipIf(!DATABASE_URL || !REDIS_URL)("agents' definitions across two instances on PostgreSQL and Redis", () => {
  let store: TestStore;
  let secondDb: OpenDb;
  let a: TestApp;
  let b: ReturnType<typeof createApp>;
  let server: ServerType;
  const redisClients: ReturnType<typeof connectRedis>[] = [];

  beforeAll(async () => {
    store = await testBackends()
      .find((backend) => backend.name === 'postgres')!
      .open();
    const [schema] = await store.db.query<{ schema: string }>('SELECT current_schema() AS schema');
    // Instance B has its own connection pool and LISTEN connection to the same schema.
    secondDb = await openStore({ databaseUrl: DATABASE_URL, schema: schema!.schema });
    const prefix = `test:${randomBase62(10)}:`;
    const limiter = () => {
      const redis = connectRedis(REDIS_URL!);
      redisClients.push(redis);
      return createRedisLimiter({ redis, prefix });
    };
    a = await createTestApp({ db: store.db, deps: { limiter: limiter() } });
    b = createApp({ db: secondDb, clock: a.clock, limiter: limiter(), logError: () => {} });
    server = serve({ fetch: a.app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    await secondDb?.close();
    await a?.close();
    await store?.cleanup();
    for (const redis of redisClients) redis.disconnect();
  });

  it("B serves its cached definition until A's change notifies it, then the new one", async () => {
    const call = httpCaller(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const admin = await a.login();
    // B's reader as another process has it: this process's own changes (A's) do not reach it, only the notification.
    const onB = (() => {
      const reader = createAgentDefinitions({ db: secondDb, version: () => 0 });
      return () => reader.get(a.workspaceId, 'finance');
    })();
    expect(await onB()).toMatchObject({ instructions: defaultInstructions('finance'), stepLimit: 8 });

    // A row written behind B's back, without a notification: B still answers from memory.
    await store.db.query(
      `INSERT INTO agent_definitions (workspace_id, agent_slug, instructions, step_limit, tools, approvals, updated_at)
       VALUES ($1, 'finance', 'unseen', 3, NULL, '{}'::jsonb, now())`,
      [a.workspaceId],
    );
    expect((await onB()).stepLimit).toBe(8);

    // Through A's route: the change notifies every instance when it commits.
    const instructions = 'You are the Finance agent. Reconcile invoices and report differences.';
    const res = await call(admin, 'PUT', '/agents/finance/configuration', {
      instructions,
      stepLimit: 12,
      tools: ['ledger'],
      approvals: { 'ledger.post': 'required' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    await vi.waitFor(async () => expect((await onB()).stepLimit).toBe(12), { timeout: 10_000, interval: 20 });
    expect(await onB()).toEqual({ slug: 'finance', instructions, stepLimit: 12, tools: ['ledger'], approvals: { 'ledger.post': 'required' } });
    // A's own reader has it at once (this process's change).
    expect((await a.services.agentDefinitions.get(a.workspaceId, 'finance')).stepLimit).toBe(12);
    // And the app's own reader on B (built by buildServices) too.
    expect((await b.services.agentDefinitions.get(a.workspaceId, 'finance')).stepLimit).toBe(12);
  });
});
