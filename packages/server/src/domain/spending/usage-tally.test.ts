/**
 * The usage tally (usage-tally.ts): GET /usage/current answers from memory, moved by every writer of a
 * period row through the notification bus, never moved back by a late notification, and read from the
 * store when this instance charged the workspace or lost its listener.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { countingDb, testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { createApp } from '../../app.ts';
import { openStore } from '../../store/open.ts';
import type { OpenDb } from '../../store/db.ts';
import { createUsageTally, parseUsageNotification, type PeriodTally, USAGE_CHANNEL } from './usage-tally.ts';

describe('parseUsageNotification', () => {
  it('reads workspace, period, version, rollover and consumed', () => {
    expect(parseUsageNotification('wksp_a 2026-06 7 1000 250')).toEqual({
      workspaceId: 'wksp_a',
      tally: { period: '2026-06', version: 7, rolloverStu: 1000, consumedStu: 250 },
    });
  });
  it('ignores what is not a notification of the tally', () => {
    for (const payload of ['', 'wksp_a', 'wksp_a 2026-06 x 1 2', 'wksp_a 2026-06 1 2 3 4']) expect(parseUsageNotification(payload)).toBeUndefined();
  });
});

describe.each(testBackends())('the usage tally on $name', ({ name, open }) => {
  let store: TestStore;
  let t: TestApp;
  let statements: string[];
  let headers: Record<string, string>;

  beforeAll(async () => {
    store = await open();
    const counted = countingDb(store.db);
    statements = counted.statements;
    t = await createTestApp({ db: counted.db });
    await t.services.keys.ready();
    headers = { Authorization: `Bearer ${t.apiKey}`, 'Content-Type': 'application/json' };
  });
  afterAll(async () => {
    await t?.close();
    await store?.cleanup();
  });

  async function consumed(): Promise<number> {
    const res = await t.app.request('/usage/current', { headers });
    expect(res.status).toBe(200);
    return ((await res.json()) as { consumedStu: number }).consumedStu;
  }

  /** A ledger write made by another writer (another instance, the sweeper): straight to the store. */
  async function chargeElsewhere(stu: number): Promise<void> {
    await store.db.query(`UPDATE usage_periods SET consumed_stu = consumed_stu + $2 WHERE workspace_id = $1 AND period = '2026-06'`, [t.workspaceId, stu]);
  }

  it('answers a warm read from memory: no statement', async () => {
    await consumed();
    statements.length = 0;
    const res = await t.app.request('/usage/current', { headers });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ period: '2026-06', consumedStu: expect.any(Number), quotaStu: expect.any(Number) });
    expect(statements).toEqual([]);
  });

  it("moves with another writer's charge through the bus, still without a statement", async () => {
    const before = await consumed();
    await chargeElsewhere(1234);
    await vi.waitFor(async () => expect(await consumed()).toBe(before + 1234), { timeout: 10_000, interval: 5 });
    statements.length = 0;
    expect(await consumed()).toBe(before + 1234);
    expect(statements).toEqual([]);
  });

  it('is never moved back by a late notification of an older state', async () => {
    const tally = createUsageTally(store.db);
    const notify = (payload: string) => store.db.query(`SELECT pg_notify($1 || '.' || current_schema(), $2)`, [USAGE_CHANNEL, payload]);
    const unreadable = async (): Promise<PeriodTally> => {
      throw new Error('read from the store');
    };
    const held = await tally.read('wksp_late', '2026-06', async () => ({ period: '2026-06', version: 5, rolloverStu: 0, consumedStu: 500 }));
    expect(held.consumedStu).toBe(500);
    // An older state (version 4), then news of another workspace: notifications arrive in order, so
    // once that news is held, the older state was heard before it.
    await notify('wksp_late 2026-06 4 0 400');
    await notify('wksp_sentinel 2026-06 1 0 1');
    await vi.waitFor(async () => expect((await tally.read('wksp_sentinel', '2026-06', unreadable)).consumedStu).toBe(1), { timeout: 10_000, interval: 5 });
    expect(await tally.read('wksp_late', '2026-06', unreadable)).toEqual({ period: '2026-06', version: 5, rolloverStu: 0, consumedStu: 500 });
    // A newer version, or the next period, replaces it.
    await notify('wksp_late 2026-06 6 0 600');
    await vi.waitFor(async () => expect((await tally.read('wksp_late', '2026-06', unreadable)).consumedStu).toBe(600), { timeout: 10_000, interval: 5 });
  });

  it("has this instance's own charge in the very next read, though its notification is late", async () => {
    // The same store, with the tally's notifications held back until released (a slow listener).
    const held: Array<() => void> = [];
    const slow: OpenDb = {
      driver: store.db.driver,
      query: (sql, params, options) => store.db.query(sql, params, options),
      transaction: (fn) => store.db.transaction(fn),
      exec: (sql) => store.db.exec(sql),
      close: async () => {},
      listen: (channel, handler) =>
        store.db.listen!(channel, channel === USAGE_CHANNEL ? { ...handler, message: (payload) => held.push(() => handler.message(payload)) } : handler),
    };
    const b = await createTestApp({ db: slow });
    await b.services.keys.ready();
    const bHeaders = { Authorization: `Bearer ${b.apiKey}`, 'Content-Type': 'application/json' };
    const read = async () => ((await (await b.app.request('/usage/current', { headers: bHeaders })).json()) as { consumedStu: number }).consumedStu;
    try {
      const before = await read();
      const res = await b.app.request('/v1/inference', {
        method: 'POST',
        headers: bHeaders,
        body: JSON.stringify({ alias: 'Sonata', messages: [{ role: 'user', content: 'Which invoices are overdue?' }] }),
      });
      expect(res.status).toBe(200);
      const [run] = await store.db.query<{ stu: number }>(`SELECT stu FROM runs WHERE workspace_id = $1 ORDER BY created_at DESC LIMIT 1`, [b.workspaceId]);
      expect(run!.stu).toBeGreaterThan(0);
      expect(await read()).toBe(before + run!.stu);
      for (const deliver of held.splice(0)) deliver();
      expect(await read()).toBe(before + run!.stu);
    } finally {
      await b.close();
    }
  });

  it.skipIf(name !== 'postgres')('reads the store while the listener is down, so no news is missed', async () => {
    const [row] = await store.db.query<{ schema: string }>('SELECT current_schema() AS schema');
    // An instance of its own whose listener, once cut, stays down (a reconnect would come after 10 minutes).
    const second: OpenDb = await openStore({ databaseUrl: process.env.DATABASE_URL, schema: row!.schema, listenRetryMs: 600_000 });
    try {
      const b = createApp({ db: second, clock: t.clock, logError: () => {} });
      await b.services.keys.ready();
      const read = async () => ((await (await b.app.request('/usage/current', { headers })).json()) as { consumedStu: number }).consumedStu;
      const before = await read();
      await chargeElsewhere(3);
      await vi.waitFor(async () => expect(await read()).toBe(before + 3), { timeout: 10_000, interval: 5 });
      await store.db.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE application_name = 'service-listener' AND position(current_schema() in query) > 0`,
      );
      // A's listener (cut too) comes back by itself; B's stays down. Once B knows its listener is gone, it reads the store: a charge it was not told of is seen.
      await chargeElsewhere(11);
      await vi.waitFor(async () => expect(await read()).toBe(before + 14), { timeout: 10_000, interval: 5 });
    } finally {
      await second.close();
    }
  });
});
