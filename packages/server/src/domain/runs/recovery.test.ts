/**
 * The sweeper of runs whose instance died, on PGlite and (with DATABASE_URL) on PostgreSQL: a run
 * whose lease ran out fails with `interrupted` and releases its reservation; an inbound run, which
 * its sender was told was ingested, is handed over again and executed to the end. The instance's
 * death is a run adopted and never executed; its lease runs out when the clock moves past it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { signInboundBody } from '../webhooks/inbound-signature.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { handOverInboundRuns, type InboundRun, type InboundRunExecutor } from '../../worker/inbound-runs.ts';
import { inboundRunExecutor } from './inbound.ts';
import type { PendingRun } from './service.ts';
import { INTERRUPTED, MAX_RECOVERIES, sweepInterruptedRuns } from './recovery.ts';
import { subscribeToEveryEvent } from '@service/testing/event-subscriber';

const LEASE_MS = 5_000;

describe.each(testBackends())('interrupted runs on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;

  beforeEach(async () => {
    store = await open();
    t = await createTestApp({ db: store.db, deps: { runLeaseMs: LEASE_MS } });
    await subscribeToEveryEvent(t.db, t.workspaceId);
  });
  afterEach(async () => {
    await t.close();
    await store.cleanup();
  });

  const sweep = () => sweepInterruptedRuns({ db: store.db, clock: t.clock, limits: t.services.budget.limits });

  async function held(): Promise<number[]> {
    const rows = await store.db.query<{ reserved: number }>(
      `SELECT reserved_stu::float8 AS reserved FROM usage_periods UNION ALL SELECT reserved_stu::float8 FROM usage_windows`,
    );
    return rows.map((r) => Number(r.reserved));
  }

  async function runRow(runId: string) {
    const [row] = await store.db.query<{ status: string; failure_reason: string | null; reserved_stu: number; started_at: Date | null; recoveries: number }>(
      `SELECT status, failure_reason, reserved_stu, started_at, recoveries FROM runs WHERE id = $1`,
      [runId],
    );
    return row!;
  }

  it('a run whose lease ran out fails with interrupted, releases its reservation and sends run.failed; not before', async () => {
    const started = await t.services.runs.start({
      workspaceId: t.workspaceId,
      agentSlug: 'sales',
      alias: 'Sonata',
      messages: [{ role: 'user', content: 'Call the lead back' }],
      source: 'api',
    });
    if (started.kind !== 'started') throw new Error(started.kind);
    expect(await held()).toEqual([started.run.reservedStu, started.run.reservedStu, started.run.reservedStu]);

    t.clock.advance(LEASE_MS - 1);
    expect(await sweep()).toEqual({ failed: 0, retried: 0 });
    t.clock.advance(1);
    expect(await sweep()).toEqual({ failed: 1, retried: 0 });
    expect(await runRow(started.run.runId)).toMatchObject({ status: 'failed', failure_reason: INTERRUPTED, reserved_stu: 0 });
    expect(await held()).toEqual([0, 0, 0]);
    const events = await store.db.query<{ type: string; data: Record<string, unknown> }>(`SELECT type, data FROM outbox_events`);
    expect(events).toEqual([{ type: 'run.failed', data: { run_id: started.run.runId, agent: 'sales', reason: INTERRUPTED, status: 'failed' } }]);
    // Ended once: a second sweep finds nothing.
    expect(await sweep()).toEqual({ failed: 0, retried: 0 });
  });

  it('an interrupted inbound run is handed over again and runs to the end; after MAX_RECOVERIES it fails', async () => {
    const { secret } = await t.services.webhooks.inbound.create(t.workspaceId, { slug: 'leads', agentSlug: 'sales', template: 'New lead: {{ name }}' });
    const ingest = async (eventId: string) => {
      const body = JSON.stringify({ name: `Lead ${eventId}` });
      const res = await t.app.request('/webhooks/inbound/leads', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'X-SERVICE-Signature': signInboundBody(body, secret), 'X-SERVICE-Event-Id': eventId },
        body,
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { runId: string }).runId;
    };
    // An instance that adopts the run (reserving its budget) and dies before executing it (or stalls).
    let stalled: PendingRun | undefined;
    const dies = async (run: InboundRun) => {
      const started = await t.services.runs.start({
        workspaceId: run.workspaceId,
        agentSlug: run.agentSlug,
        alias: 'Sonata',
        messages: [{ role: 'user', content: run.content }],
        source: 'inbound_webhook',
        existingRunId: run.runId,
      });
      if (started.kind === 'started') stalled ??= started.run;
    };
    const handOver = (execute: InboundRunExecutor) => handOverInboundRuns({ db: store.db, clock: t.clock, execute });

    const runId = await ingest('lead-1');
    expect(await handOver(dies)).toBe(1);
    expect(await runRow(runId)).toMatchObject({ status: 'in_progress', started_at: expect.any(Date) });
    t.clock.advance(LEASE_MS);
    expect(await sweep()).toEqual({ failed: 0, retried: 1 });
    expect(await runRow(runId)).toMatchObject({ status: 'in_progress', started_at: null, reserved_stu: 0, recoveries: 1 });
    expect(await held()).toEqual([0, 0, 0]);

    expect(await handOver(inboundRunExecutor(t.services.runs, () => {}))).toBe(1);
    expect(await t.services.runs.waitForTerminal(t.workspaceId, runId, 30_000)).toMatchObject({ status: 'completed' });
    const [event] = await store.db.query<{ agent_input: string | null }>(`SELECT agent_input FROM inbound_events WHERE run_id = $1`, [runId]);
    expect(event!.agent_input).toBeNull();
    // The first instance was only stalled: when it wakes up and ends its execution, it records nothing.
    const late = await t.services.runs.execute(stalled!);
    expect(late.run).toMatchObject({ id: runId, status: 'completed' });
    const ledger = await store.db.query(`SELECT 1 FROM usage_ledger WHERE run_id = $1`, [runId]);
    expect(ledger).toHaveLength(1);
    expect(await held()).toEqual([0, 0, 0]);

    // A run whose instance keeps dying is not handed over forever.
    const doomed = await ingest('lead-2');
    for (let i = 0; i < MAX_RECOVERIES; i += 1) {
      t.clock.advance(LEASE_MS + 60_000);
      expect(await handOver(dies)).toBe(1);
      t.clock.advance(LEASE_MS);
      expect(await sweep()).toEqual({ failed: 0, retried: 1 });
    }
    t.clock.advance(LEASE_MS + 60_000);
    expect(await handOver(dies)).toBe(1);
    t.clock.advance(LEASE_MS);
    expect(await sweep()).toEqual({ failed: 1, retried: 0 });
    expect(await runRow(doomed)).toMatchObject({ status: 'failed', failure_reason: INTERRUPTED, recoveries: MAX_RECOVERIES });
    expect(await held()).toEqual([0, 0, 0]);
  });
});
