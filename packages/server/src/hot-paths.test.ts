/**
 * @module The statements the hot paths run, counted through the store: an authenticated read takes
 * one query (the key comes from the cache, no revocation read, no last_used_at write), and a
 * synchronous invocation two statements and no transaction: `start_run`, which checks and reserves
 * the budget and inserts the run (committed before the engine runs, so every instance sees the
 * reservation and the run), and `finish_run`, which closes it with its steps, usage and events.
 * The agent settings come from memory.
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

  it('runs a synchronous invocation in two statements: start_run, then finish_run, and nothing else', async () => {
    const body = JSON.stringify({ alias: 'Sonata', messages: [{ role: 'user', content: 'Which invoices are overdue?' }] });
    const { res, run } = await counting('/v1/inference', { method: 'POST', body });
    expect(res.status).toBe(200);
    // The agent settings come from memory; no transaction, no lock held across a round trip.
    expect(run).toHaveLength(2);
    expect(run[0]).toMatch(/^SELECT start_run\(/);
    expect(run[1]).toMatch(/^SELECT id, .* FROM finish_run\(/);
  });

  it('an invocation after its agent was paused and resumed reads the settings again, once', async () => {
    await t.services.agents.pause(t.workspaceId, 'finance', 'Quarter close');
    await t.services.agents.resume(t.workspaceId, 'finance');
    statements.length = 0;
    const body = JSON.stringify({ alias: 'Sonata', messages: [{ role: 'user', content: 'Which invoices are overdue?' }] });
    const res = await t.app.request('/v1/inference', { method: 'POST', headers, body });
    expect(res.status).toBe(200);
    expect(statements).toHaveLength(3);
    expect(statements[0]).toMatch(/FROM paused_agents/);
  });
});
