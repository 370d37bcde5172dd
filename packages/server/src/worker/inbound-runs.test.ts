/**
 * Inbound runs from ingestion to a finished run: the signed event creates the `in_progress` run,
 * the worker's hand-over gives it to the run service's executor (the local engine answers), and a
 * failed hand-over is retried once its lease runs out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboundRunExecutor } from '../domain/runs/index.ts';
import { signInboundBody } from '../domain/webhooks/inbound-signature.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { storeParty, workspaceParty } from '../store/fair-queue.ts';
import { HAND_OVER_LEASE_MS, handOverInboundRuns, type InboundRun } from './inbound-runs.ts';

describe.each(testBackends())('inbound run hand-over on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  let secret: string;

  beforeAll(async () => {
    store = await open();
    t = await createTestApp({ db: store.db });
    const created = await t.services.webhooks.inbound.create(t.workspaceId, { slug: 'runs-hook', agentSlug: 'sales', template: 'New lead: {{ name }}' });
    secret = created.secret;
  });
  afterAll(async () => {
    await t?.close();
    await store?.cleanup();
  });

  async function ingest(body: string, eventId: string): Promise<string> {
    const res = await t.app.request('/webhooks/inbound/runs-hook', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-SERVICE-Signature': signInboundBody(body, secret), 'X-SERVICE-Event-Id': eventId },
      body,
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { runId: string }).runId;
  }

  it('hands the rendered input to the run service, which runs it to completion, once', async () => {
    const runId = await ingest('{"name":"Dana Whitfield"}', 'lead-1');
    const seen: InboundRun[] = [];
    const real = inboundRunExecutor(t.services.runs, () => {});
    const execute = async (run: InboundRun) => {
      seen.push(run);
      await real(run);
    };
    expect(await handOverInboundRuns({ db: store.db, clock: t.clock, execute })).toBe(1);
    expect(seen).toEqual([
      { runId, workspaceId: t.workspaceId, agentSlug: 'sales', alias: 'Sonata', content: 'New lead: Dana Whitfield', eventId: 'lead-1', recoveries: 0 },
    ]);
    const run = await t.services.runs.waitForTerminal(t.workspaceId, runId, 30_000);
    expect(run).toMatchObject({ id: runId, status: 'completed', source: 'inbound_webhook', agentSlug: 'sales' });
    // Handed over once: nothing is waiting, and the stored input is gone (the audit keeps hash and size).
    expect(await handOverInboundRuns({ db: store.db, clock: t.clock, execute })).toBe(0);
    const [event] = await store.db.query<{ agent_input: string | null; run_started_at: Date | null }>(
      `SELECT agent_input, run_started_at FROM inbound_events WHERE event_id = 'lead-1'`,
    );
    expect(event).toEqual({ agent_input: null, run_started_at: expect.any(Date) });
  });

  it("runs as its workspace's party in the store's fair queue, not as the background's", async () => {
    const runId = await ingest('{"name":"Lee Park"}', 'lead-party');
    const real = inboundRunExecutor(t.services.runs, () => {});
    const parties: string[] = [];
    const execute = async (run: InboundRun) => {
      parties.push(storeParty());
      await real(run);
    };
    expect(await handOverInboundRuns({ db: store.db, clock: t.clock, execute })).toBe(1);
    // The party a request of the workspace has (middleware/admission), so the workspace's requests and inbound runs share one queue.
    expect(parties).toEqual([workspaceParty(t.workspaceId)]);
    expect(await t.services.runs.waitForTerminal(t.workspaceId, runId, 30_000)).toMatchObject({ id: runId, status: 'completed' });
  });

  it('a hand-over that fails is retried after its lease, not before', async () => {
    const runId = await ingest('{"name":"Lee"}', 'lead-2');
    const failing = async () => {
      throw new Error('executor down');
    };
    expect(await handOverInboundRuns({ db: store.db, clock: t.clock, execute: failing })).toBe(0);
    const seen: string[] = [];
    const record = async (run: InboundRun) => {
      seen.push(run.runId);
    };
    expect(await handOverInboundRuns({ db: store.db, clock: t.clock, execute: record })).toBe(0);
    t.clock.advance(HAND_OVER_LEASE_MS + 1);
    expect(await handOverInboundRuns({ db: store.db, clock: t.clock, execute: record })).toBe(1);
    expect(seen).toEqual([runId]);
  });

  it('a run that meets budget_reserved waits in the queue for its Retry-After, logs no failure, then runs', async () => {
    const runId = await ingest('{"name":"Robin"}', 'lead-4');
    // Runs in progress hold the whole quota (what start_runs reserves for each; none runs here): the room the
    // inbound run needs comes back only when they end. The period row exists since the first test's run.
    const holds = async (stu: number) => store.db.query(`UPDATE usage_periods SET reserved_stu = $2 WHERE workspace_id = $1`, [t.workspaceId, stu]);
    await holds(1_000_000_000_000);
    try {
      const failures: unknown[] = [];
      const execute = inboundRunExecutor(t.services.runs, (error) => failures.push(error));
      expect(await handOverInboundRuns({ db: store.db, clock: t.clock, execute })).toBe(0);
      expect(failures).toEqual([]);
      expect((await t.services.runs.getRun(t.workspaceId, runId)).run.status).toBe('in_progress');
      // Waiting for the answer's Retry-After (5 s), not the 60 s hand-over lease.
      const [event] = await store.db.query<{ run_lease_until: Date; run_started_at: Date | null }>(
        `SELECT run_lease_until, run_started_at FROM inbound_events WHERE event_id = 'lead-4'`,
      );
      expect(event).toEqual({ run_lease_until: new Date(t.clock.now().getTime() + 5_000), run_started_at: null });
      t.clock.advance(4_999);
      expect(await handOverInboundRuns({ db: store.db, clock: t.clock, execute })).toBe(0);
      // The room came back: the next hand-over after the wait runs it.
      await holds(0);
      t.clock.advance(1);
      expect(await handOverInboundRuns({ db: store.db, clock: t.clock, execute })).toBe(1);
      expect(await t.services.runs.waitForTerminal(t.workspaceId, runId, 30_000)).toMatchObject({ id: runId, status: 'completed' });
      expect(failures).toEqual([]);
    } finally {
      await holds(0); // the next tests start with the room free, whatever happened here
    }
  });

  it('a run canceled before its hand-over is never handed over (its input is already gone)', async () => {
    const runId = await ingest('{"name":"Kim"}', 'lead-3');
    const canceled = await t.app.request(`/runs/${runId}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${t.apiKey}` } });
    expect(canceled.status).toBe(200);
    expect(await canceled.json()).toMatchObject({ id: runId, status: 'canceled' });
    const seen: InboundRun[] = [];
    const record = async (run: InboundRun) => {
      seen.push(run);
    };
    expect(await handOverInboundRuns({ db: store.db, clock: t.clock, execute: record })).toBe(0);
    t.clock.advance(HAND_OVER_LEASE_MS + 1);
    expect(await handOverInboundRuns({ db: store.db, clock: t.clock, execute: record })).toBe(0);
    expect(seen).toEqual([]);
    expect((await t.services.runs.getRun(t.workspaceId, runId)).run.status).toBe('canceled');
  });
});
