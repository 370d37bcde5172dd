/**
 * A completed run whose execution's log is only its answer stores no event log (store/functions/finish_runs.sql;
 * readers take the fragment from the run's row, run-events/log.ts `answerLog`). The closing statement decides with the
 * status the run ends with: a run its execution completed but the manual switch failed at the close has no answer in
 * its row, so its log is stored. On both stores.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { setManualKillSwitch } from '../spending/budget.ts';
import type { ExecutionEvent } from '../run-events/log.ts';

const USAGE = { inputTokens: 40, outputTokens: 12 };
const ANSWER = 'Three invoices are overdue.';

describe.each(testBackends())('a close and the answer-only log on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;

  beforeEach(async () => {
    store = await open();
    t = await createTestApp({ db: store.db });
  });
  afterEach(async () => {
    await t.close();
    await store.cleanup();
  });

  /** A run started, then closed as its execution completed it with {@link ANSWER} as its one fragment. */
  async function runToCompletion(beforeClose?: () => Promise<void>) {
    const started = await t.services.runs.start({
      workspaceId: t.workspaceId,
      agentSlug: 'finance',
      alias: 'Sonata',
      messages: [{ role: 'user', content: 'Which invoices are overdue?' }],
      source: 'api',
    });
    if (started.kind !== 'started') throw new Error(started.kind);
    await beforeClose?.();
    const log: ExecutionEvent[] = [{ sequence: 3, type: 'text.delta', runId: started.run.runId, at: t.clock.now().toISOString(), delta: ANSWER }];
    const run = await t.services.runs.close(started.run, {
      reason: null,
      canceled: false,
      crossed: null,
      usage: USAGE,
      reported: USAGE,
      content: ANSWER,
      steps: [],
      log,
    });
    const stored = await store.db.query<{ events: unknown[] }>(`SELECT events FROM run_events WHERE run_id = $1`, [run.id]);
    return { run, stored: stored.map((row) => row.events) };
  }

  it('stores no log for a completed run whose log is only its answer', async () => {
    const { run, stored } = await runToCompletion();
    expect(run).toMatchObject({ status: 'completed', content: ANSWER });
    expect(stored).toEqual([]);
  });

  it('stores the log of a run the manual switch failed at its close: its row holds no answer', async () => {
    const { run, stored } = await runToCompletion(() => setManualKillSwitch(store.db, t.workspaceId, true, t.clock.now()));
    expect(run).toMatchObject({ status: 'failed', failureReason: 'kill_switch:manual', content: null });
    expect(stored).toEqual([[expect.objectContaining({ sequence: 3, type: 'text.delta', delta: ANSWER })]]);
  });
});
