/**
 * A close reads the run's row by its key, whatever the number of runs its workspace has (store/functions/finish_runs.sql; first in migration 0517), and so
 * does the adoption of an inbound run, whatever the number of runs waiting for their hand-over (0518).
 * PL/pgSQL keeps a statement's generic plan for the connection's life and PGlite never analyzes: planned
 * while the workspace had a few runs, finish_run's `WHERE id = … AND workspace_id = …` took the
 * workspace's index and read all of its runs on every close, and start_run's adoption read every waiting run.
 * Measured here as the rows of `runs` the statement read (the backend's own statistics, before and after it in
 * one transaction): the same with 300 and with 900 other runs in the workspace (9 rows). On 0506's finish_run it
 * failed on both stores (317 rows, then 918), on 0506's start_run too (303, then 903): on PostgreSQL as well, until
 * autovacuum's ANALYZE would have made the plan again.
 *
 * A batch of closes (`finish_runs`, store/functions/finish_runs.sql) locks its runs by key too, whatever the number
 * of runs stored: on 0511's finish_runs (`id IN (SELECT …)`, a sequential scan of `runs`) a batch of five closes read
 * 1,065 rows with 1,000 runs stored and 3,070 with 3,000, on both stores; written as `id = ANY (ARRAY(SELECT …))` it
 * still read 1,065 then 3,070 on PGlite (the plan made while `runs` was small); locked one by one by key, 40 either way.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { rowsRead, testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import type { OpenDb } from '../../store/db.ts';
import { handOverInboundRuns } from '../../worker/inbound-runs.ts';
import { signInboundBody } from '../webhooks/inbound-signature.ts';
import { inboundRunExecutor } from './inbound.ts';

describe.each(testBackends())('the close finds its run by key on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  /** When set, the next statement that matches runs in a transaction that reports how many rows of `runs` it read. */
  let probe: { statement: RegExp; report: (read: number) => void } | undefined;
  /** When set, the next lone close waits for it (the closes that arrive meanwhile then go out together). */
  let hold: Promise<void> | undefined;
  /** Whether a close waits for `hold`. */
  let held = false;

  // A store for each test: its functions' plans are made while its `runs` is small, whatever ran before.
  beforeEach(async () => {
    store = await open();
    const inner = store.db;
    const db: OpenDb = {
      ...inner,
      async query(sql, params, options) {
        if (hold && /FROM finish_run\(/.test(sql)) {
          const waitFor = hold;
          hold = undefined;
          held = true;
          await waitFor;
        }
        const report = probe?.statement.test(sql) ? probe.report : undefined;
        if (!report) return inner.query(sql, params, options);
        probe = undefined;
        return inner.transaction(async (tx) => {
          const before = await rowsRead(tx, 'runs');
          const rows = await tx.query(sql, params, options);
          report((await rowsRead(tx, 'runs')) - before);
          return rows as never[];
        });
      },
    };
    t = await createTestApp({ db });
    await t.services.keys.ready();
  });
  afterEach(async () => {
    await t?.close();
    await store?.cleanup();
  });

  const body = JSON.stringify({ alias: 'Sonata', messages: [{ role: 'user', content: 'Which invoices are overdue?' }] });
  async function invoke(): Promise<void> {
    const res = await t.app.request('/v1/inference', {
      method: 'POST',
      headers: { Authorization: `Bearer ${t.apiKey}`, 'Content-Type': 'application/json' },
      body,
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  }
  /** `count` finished runs of the workspace, written directly (what many earlier invocations leave). */
  async function addRuns(count: number, from: number): Promise<void> {
    await store.db.query(
      `INSERT INTO runs (id, workspace_id, status, agent_slug, answered_by, alias, source, window_hour, window_day, created_at, updated_at)
       SELECT 'run_lookup' || n, $1, 'completed', 'orchestrator', 'orchestrator', 'Sonata', 'api', $2, $2, $2, $2
         FROM generate_series($3::int, $3::int + $4::int - 1) AS n`,
      [t.workspaceId, new Date('2026-06-01T00:00:00Z'), from, count],
    );
  }
  async function readByOneClose(): Promise<number> {
    let read: number | undefined;
    probe = { statement: /FROM finish_run\(/, report: (n) => (read = n) };
    await invoke();
    expect(read).toBeDefined();
    return read!;
  }

  it('reads as many rows of runs with 900 other runs in the workspace as with 300', async () => {
    // Plans made while the workspace is small: PL/pgSQL switches to a generic plan after five executions.
    for (let i = 0; i < 8; i += 1) await invoke();
    await addRuns(300, 0);
    const with300 = await readByOneClose();
    await addRuns(600, 300);
    const with900 = await readByOneClose();
    expect(with900).toBe(with300);
    expect(with300).toBeLessThan(300);
  });

  it('closes a batch reading as many rows of runs with 3,000 runs stored as with 1,000', async () => {
    /** `n` invocations whose closes, but the first, wait behind the first and go out as one finish_runs: the rows that read. */
    async function readByBatch(n: number): Promise<number> {
      let release!: () => void;
      hold = new Promise<void>((resolve) => (release = resolve));
      held = false;
      const first = invoke();
      await vi.waitFor(() => expect(held).toBe(true), { timeout: 10_000 });
      const answers = Promise.all([first, ...Array.from({ length: n - 1 }, () => invoke())]);
      await vi.waitFor(() => expect(t.services.runs.closesWaiting()).toBe(n - 1), { timeout: 10_000 });
      let read: number | undefined;
      probe = { statement: /FROM finish_runs\(/, report: (r) => (read = r) };
      release();
      await answers;
      expect(read).toBeDefined();
      return read!;
    }
    // Plans made while the store is small: PL/pgSQL switches to a generic plan after five executions.
    for (let i = 0; i < 8; i += 1) await readByBatch(3);
    await addRuns(1000, 10_000);
    const with1000 = await readByBatch(5);
    await addRuns(2000, 11_000);
    const with3000 = await readByBatch(5);
    expect(with3000).toBe(with1000);
    expect(with1000).toBeLessThan(1000);
  });

  it('adopts an inbound run reading as many rows of runs with 900 runs waiting in the workspace as with 300', async () => {
    const { secret } = await t.services.webhooks.inbound.create(t.workspaceId, { slug: 'lookup', agentSlug: 'sales' });
    const execute = inboundRunExecutor(t.services.runs, (error) => {
      throw error;
    });
    let events = 0;
    /** One signed event ingested and handed over: its run is adopted (start_runs with adopt), and how many rows that read. */
    async function adoptOne(probed: boolean): Promise<number | undefined> {
      const body = JSON.stringify({ lead: events });
      const res = await t.app.request('/webhooks/inbound/lookup', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'X-SERVICE-Signature': signInboundBody(body, secret), 'X-SERVICE-Event-Id': `lookup-${events++}` },
        body,
      });
      expect(res.status).toBe(200);
      let read: number | undefined;
      if (probed) probe = { statement: /start_runs\(/, report: (n) => (read = n) };
      expect(await handOverInboundRuns({ db: t.db, clock: t.clock, execute })).toBe(1);
      return read;
    }
    // Plans made while few runs wait: PL/pgSQL switches to a generic plan after five executions.
    for (let i = 0; i < 8; i += 1) await adoptOne(false);
    // Runs waiting for their hand-over (in_progress, not started), as a burst of inbound events leaves them.
    const waiting = async (count: number, from: number) =>
      store.db.query(
        `INSERT INTO runs (id, workspace_id, status, agent_slug, answered_by, alias, source, window_hour, window_day, created_at, updated_at)
         SELECT 'run_waiting' || n, $1, 'in_progress', 'sales', 'sales', 'Sonata', 'inbound_webhook', $2, $2, $2, $2
           FROM generate_series($3::int, $3::int + $4::int - 1) AS n`,
        [t.workspaceId, t.clock.now(), from, count],
      );
    await waiting(300, 0);
    const with300 = await adoptOne(true);
    await waiting(600, 300);
    const with900 = await adoptOne(true);
    expect(with300).toBeDefined();
    expect(with900).toBe(with300);
    expect(with300).toBeLessThan(300);
  });
});
