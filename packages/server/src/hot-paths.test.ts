/**
 * @module The statements the hot paths run, counted through the store: an authenticated read takes
 * one query (the key comes from the cache, no revocation read, no last_used_at write), and a
 * synchronous invocation writes in two transactions: the one that reserves the budget and starts
 * the run (committed before the engine runs, so every instance sees the reservation and the run),
 * and the one that closes it with its steps, usage and events.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countingDb, testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';

describe.each(testBackends())('hot paths on $name', ({ open }) => {
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

  async function counting(path: string, init: RequestInit = {}) {
    await t.app.request(path, { headers, ...init }); // warms the key cache (and creates the usage period)
    statements.length = 0;
    const res = await t.app.request(path, { headers, ...init });
    return { res, run: [...statements] };
  }

  it('answers GET /usage/current with one query', async () => {
    const { res, run } = await counting('/usage/current');
    expect(res.status).toBe(200);
    expect(run).toHaveLength(1);
    expect(run[0]).toMatch(/^SELECT .* FROM \(SELECT \$1::text AS workspace_id\) w LEFT JOIN workspace_plans/);
  });

  it('answers GET /runs?limit=20 with one query, total included', async () => {
    const { res, run } = await counting('/runs?limit=20');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ total: expect.any(Number), limit: 20 });
    expect(run).toHaveLength(1);
  });

  it('writes a synchronous invocation in two transactions, and nothing outside them', async () => {
    const body = JSON.stringify({ alias: 'Sonata', messages: [{ role: 'user', content: 'Which invoices are overdue?' }] });
    const { res, run } = await counting('/v1/inference', { method: 'POST', body });
    expect(res.status).toBe(200);
    expect(run.filter((s) => s === 'BEGIN')).toHaveLength(2);
    const outside = run.filter((s) => s !== 'BEGIN' && !s.startsWith('  '));
    expect(outside.filter((s) => !s.startsWith('SELECT'))).toEqual([]);
    // The steps of the run go in one statement.
    expect(run.filter((s) => s.includes('INSERT INTO run_steps'))).toHaveLength(1);
  });
});
