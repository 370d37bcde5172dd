/**
 * An inbound run whose instance stopped midway is handed over to a new execution, which answers again from the start.
 * A reader that followed the first execution received its fragments: the new execution's events begin with
 * `run.restarted`, numbered above them, so the reader knows to discard what it had and a `Last-Event-ID` from the
 * first execution still resumes. On PGlite and (with DATABASE_URL) on PostgreSQL. The first instance's death is a
 * run adopted, a few live events, and nothing more; the sweeper hands it over again once its lease ran out.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '@service/testing/app';
import { testBackends, type TestStore } from '@service/testing/store';
import { createLocalEngine, type Engines } from '../../engine/index.ts';
import { ALIASES } from '../../vocabulary/alias.ts';
import { handOverInboundRuns, type InboundRun } from '../../worker/inbound-runs.ts';
import { signInboundBody } from '../webhooks/inbound-signature.ts';
import { inboundRunExecutor } from './inbound.ts';
import { sweepInterruptedRuns } from './recovery.ts';
import { createRunEventHub, type RunEvent, type RunEventHub } from '../run-events/index.ts';

const LEASE_MS = 5_000;
const SLOW = { timeout: 20_000, interval: 20 };

describe.each(testBackends())('a restarted inbound run on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  let hub: RunEventHub;
  const controller = new AbortController();

  beforeEach(async () => {
    store = await open();
    hub = createRunEventHub(store.db);
    // Fragments 100 ms apart: the second execution is still running while a reader joins it.
    const local = createLocalEngine({ fragmentDelayMs: 100 });
    const engines = Object.fromEntries(ALIASES.map((alias) => [alias, local])) as Engines;
    t = await createTestApp({ db: store.db, deps: { runLeaseMs: LEASE_MS, runEvents: hub, engines } });
  });
  afterEach(async () => {
    controller.abort();
    await t.close();
    await store.cleanup();
  });

  /** Follows the run's events after `after` in the background, as GET /runs/{id}/events does. */
  function follow(runId: string, after: number) {
    const events: RunEvent[] = [];
    const statusAtFirst: string[] = [];
    const done = (async () => {
      for await (const event of t.services.runs.events(t.workspaceId, runId, { after, signal: controller.signal })) {
        if (events.length === 0) statusAtFirst.push((await t.services.runs.getRun(t.workspaceId, runId)).run.status);
        events.push(event);
      }
    })();
    return { events, statusAtFirst, done };
  }

  const textAfterRestart = (events: RunEvent[]) =>
    events
      .slice(events.findIndex((e) => e.type === 'run.restarted'))
      .flatMap((e) => (e.type === 'text.delta' ? [e.delta] : []))
      .join('');

  it('a reader of the first execution gets run.restarted, then the new answer; Last-Event-ID from before still resumes', async () => {
    const { secret } = await t.services.webhooks.inbound.create(t.workspaceId, { slug: 'leads', agentSlug: 'sales', template: 'New lead: {{ name }}' });
    const body = JSON.stringify({ name: 'Dana Whitfield' });
    const ingested = await t.app.request('/webhooks/inbound/leads', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-SERVICE-Signature': signInboundBody(body, secret), 'X-SERVICE-Event-Id': 'lead-1' },
      body,
    });
    expect(ingested.status).toBe(200);
    const { runId } = (await ingested.json()) as { runId: string };

    // The first instance adopts the run, says two fragments, and stops.
    const dies = async (run: InboundRun) => {
      const started = await t.services.runs.start({
        workspaceId: run.workspaceId,
        agentSlug: run.agentSlug,
        alias: 'Sonata',
        messages: [{ role: 'user', content: run.content }],
        source: 'inbound_webhook',
        existingRunId: run.runId,
      });
      expect(started.kind).toBe('started');
      const first = hub.begin(run.runId);
      first.push({ type: 'text.delta', delta: 'A first try ' }, t.clock.now());
      first.push({ type: 'text.delta', delta: 'that never ends' }, t.clock.now());
    };
    expect(await handOverInboundRuns({ db: store.db, clock: t.clock, execute: dies })).toBe(1);
    const early = follow(runId, 0);
    await expect.poll(() => early.events.map((e) => e.sequence), SLOW).toEqual([1, 2, 3, 4]);

    // Its lease runs out: handed over again, to an execution that runs to the end.
    t.clock.advance(LEASE_MS);
    expect(await sweepInterruptedRuns({ db: store.db, clock: t.clock, limits: t.services.budget.limits })).toEqual({ failed: 0, retried: 1 });
    expect(await handOverInboundRuns({ db: store.db, clock: t.clock, execute: inboundRunExecutor(t.services.runs, () => {}) })).toBe(1);
    // A client that had the first execution's events resumes with Last-Event-ID 4, while the new execution runs.
    const resumed = follow(runId, 4);
    const run = await t.services.runs.waitForTerminal(t.workspaceId, runId, 30_000);
    expect(run).toMatchObject({ status: 'completed', content: expect.any(String) });
    await Promise.all([early.done, resumed.done]);

    const restarted = { type: 'run.restarted', sequence: 1_000_003, attempt: 1, reason: 'interrupted', runId };
    // The reader from the start: the first execution's fragments, then the restart, then the new answer, once each.
    expect(early.events.slice(0, 5)).toMatchObject([
      { type: 'run.created', sequence: 1 },
      { type: 'run.routed', sequence: 2 },
      { type: 'text.delta', sequence: 3, delta: 'A first try ' },
      { type: 'text.delta', sequence: 4, delta: 'that never ends' },
      restarted,
    ]);
    // The resumed reader: live from the restart on (the run was still in progress), nothing of the first try.
    expect(resumed.events[0]).toMatchObject(restarted);
    expect(resumed.statusAtFirst).toEqual(['in_progress']);
    for (const reader of [early, resumed]) {
      const sequences = reader.events.map((e) => e.sequence);
      expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
      expect(new Set(sequences).size).toBe(sequences.length);
      expect(reader.events.at(-1)).toMatchObject({ type: 'run.completed' });
      expect(textAfterRestart(reader.events)).toBe(run.content);
    }
    // Read again after the end, the stored log is the second execution's: the restart, then its answer.
    const replay = follow(runId, 0);
    await replay.done;
    expect(replay.events.map((e) => e.type).slice(0, 3)).toEqual(['run.created', 'run.routed', 'run.restarted']);
    expect(textAfterRestart(replay.events)).toBe(run.content);
  });
});
