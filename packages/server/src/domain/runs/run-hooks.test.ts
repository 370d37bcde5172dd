import { describe, expect, it } from 'vitest';
import type { Tx } from '../../store/db.ts';
import { createRunHooks, type EndedRun } from './run-hooks.ts';

const tx = {} as Tx;
const run: EndedRun = { runId: 'run_1', workspaceId: 'ws_1', source: 'inbound_webhook' };

describe('run hooks', () => {
  // Its own set: the process's set holds what the suites that built services registered.
  const { onRunEnded, onRunInterrupted, runEnded, runInterrupted } = createRunHooks();
  it('tells every ended-run hook once, in registration order, with the closing transaction; registering again is a no-op', async () => {
    const calls: string[] = [];
    const first = async (t: Tx, r: EndedRun) => void calls.push(`first ${r.runId} ${t === tx}`);
    const second = async (_t: Tx, r: EndedRun) => void calls.push(`second ${r.source}`);
    onRunEnded(first);
    onRunEnded(second);
    onRunEnded(first);
    await runEnded(tx, run);
    expect(calls).toEqual(['first run_1 true', 'second inbound_webhook']);
  });

  it('an interrupted run is handed over by the first hook that takes it; none taking it answers false', async () => {
    expect(await runInterrupted(tx, run)).toBe(false);
    const asked: string[] = [];
    onRunInterrupted(async () => (asked.push('declines'), false));
    onRunInterrupted(async () => (asked.push('takes'), true));
    onRunInterrupted(async () => (asked.push('never asked'), true));
    expect(await runInterrupted(tx, run)).toBe(true);
    expect(asked).toEqual(['declines', 'takes']);
  });
});
