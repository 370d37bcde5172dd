/**
 * The hand-over's claim (`claimWaitingInboundEvents`) reads the runs of the events it claims by their key, whatever
 * the number of runs waiting in the workspace. PGlite never analyzes, and PostgreSQL only once autovacuum gets to
 * it: planned on the statistics of a small store, the claim's joins on `runs` took the workspace's status index
 * (`runs_workspace_status_order`, every `in_progress` run of the workspace) and filtered it by id, once per event
 * it looked at. A burst of inbound events then made every claim slower than the last: at 3,200 waiting, 20 ms of
 * PostgreSQL per claim, and on the embedded store the hand-overs took its one thread from the ingestion itself
 * (docs/performance.md). The sweeper's read of expired leases likewise went through every waiting run (their null
 * leases sorted first) before the first started one. Measured here as the rows of `runs` and `inbound_events` each
 * read (the backend's own statistics, before and after it in one transaction): the same with 1,000 and with 3,000
 * events waiting.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rowsRead, testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { signInboundBody } from '../webhooks/inbound-signature.ts';
import { expiredLeases } from '../runs/queries/run-row.ts';
import { claimWaitingInboundEvents } from './run-queue.ts';

/** Rolls the claim's transaction back: each claim sees the same queue. */
class Measured extends Error {}

describe.each(testBackends())('the hand-over claims by key on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;

  beforeEach(async () => {
    store = await open();
    t = await createTestApp({ db: store.db });
  });
  afterEach(async () => {
    await t?.close();
    await store?.cleanup();
  });

  /** One claim of up to 16 events, at most 4 of the workspace: how many it claimed, and the rows it read. */
  async function claim(): Promise<{ claimed: number; runs: number; events: number }> {
    let measured: { claimed: number; runs: number; events: number } | undefined;
    await t.db
      .transaction(async (tx) => {
        const runs = await rowsRead(tx, 'runs');
        const events = await rowsRead(tx, 'inbound_events');
        const now = t.clock.now();
        const claimed = await claimWaitingInboundEvents(tx, { now, limit: 16, perWorkspace: 4, leaseUntil: new Date(now.getTime() + 60_000) });
        measured = { claimed: claimed.length, runs: (await rowsRead(tx, 'runs')) - runs, events: (await rowsRead(tx, 'inbound_events')) - events };
        throw new Measured();
      })
      .catch((error: unknown) => {
        if (!(error instanceof Measured)) throw error;
      });
    return measured!;
  }

  /** Three events through the route, as a sender sends them: the rows `burst` copies. */
  async function firstEvents(): Promise<void> {
    const { secret } = await t.services.webhooks.inbound.create(t.workspaceId, { slug: 'burst', agentSlug: 'sales' });
    for (let i = 0; i < 3; i += 1) {
      const body = JSON.stringify({ lead: i });
      const res = await t.app.request('/webhooks/inbound/burst', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'X-SERVICE-Signature': signInboundBody(body, secret), 'X-SERVICE-Event-Id': `burst-${i}` },
        body,
      });
      expect(res.status).toBe(200);
    }
  }

  /** `count` more events waiting for their hand-over, each with its `in_progress` run, as a burst leaves them. */
  async function burst(count: number, from: number): Promise<void> {
    await t.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO runs (id, workspace_id, status, agent_slug, answered_by, alias, source, window_hour, window_day, created_at, updated_at)
           SELECT 'run_burst' || n, $1, 'in_progress', 'sales', 'sales', 'Sonata', 'inbound_webhook', $2, $2, $2, $2
             FROM generate_series($3::int, $3::int + $4::int - 1) AS n`,
        [t.workspaceId, t.clock.now(), from, count],
      );
      await tx.query(
        `INSERT INTO inbound_events (id, webhook_id, workspace_id, slug, event_id, event_id_source, received_at, body_sha256, body_bytes,
                                       agent_input, agent_slug, alias, run_id)
           SELECT 'ine_burst' || n, e.webhook_id, e.workspace_id, e.slug, 'burst-event-' || n, e.event_id_source, e.received_at + n * interval '1 ms',
                  e.body_sha256, e.body_bytes, e.agent_input, e.agent_slug, e.alias, 'run_burst' || n
             FROM (SELECT * FROM inbound_events WHERE workspace_id = $1 LIMIT 1) e, generate_series($2::int, $2::int + $3::int - 1) AS n`,
        [t.workspaceId, from, count],
      );
    });
  }

  it('reads as many rows with 3,000 events waiting in the workspace as with 1,000', async () => {
    await firstEvents();
    // Claims planned while few events wait.
    for (let i = 0; i < 8; i += 1) expect((await claim()).claimed).toBe(3);
    await burst(1000, 0);
    const with1000 = await claim();
    await burst(2000, 1000);
    const with3000 = await claim();
    expect(with1000.claimed).toBe(4);
    expect(with3000).toEqual(with1000);
    expect(with1000.runs).toBeLessThan(100);
    expect(with1000.events).toBeLessThan(100);
  });

  it('sweeps expired leases reading as many rows of runs with 3,000 runs waiting for their hand-over as with 1,000', async () => {
    await firstEvents();
    /** The sweeper's read of expired leases (recovery.ts): the rows of `runs` it read. */
    async function sweepRead(): Promise<number> {
      return t.db.transaction(async (tx) => {
        const before = await rowsRead(tx, 'runs');
        expect(await expiredLeases(tx, t.clock.now(), 50)).toEqual([]);
        return (await rowsRead(tx, 'runs')) - before;
      });
    }
    await burst(1000, 0);
    const with1000 = await sweepRead();
    await burst(2000, 1000);
    const with3000 = await sweepRead();
    expect(with3000).toBe(with1000);
    expect(with1000).toBeLessThan(100);
  });
});
