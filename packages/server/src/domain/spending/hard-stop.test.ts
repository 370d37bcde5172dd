/**
 * The quota's hard stop has one home, domain/usage/policy.ts: `start_runs` is given it with every run
 * (`hardstop_pct`) and refuses at the share it is given, not at a figure of its own.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixedClock } from '../../clock.ts';
import { HARDSTOP_PCT } from '../usage/index.ts';
import { createWorkspace } from '../workspaces/index.ts';
import { startingRun } from '@service/testing/runs';
import { testBackends, type TestStore } from '@service/testing/store';
import { type StartRunInput, startRunArgs } from './queries.ts';
import { ensurePeriod } from './usage-store.ts';

const QUOTA = 10_000;

/** A run of 10 input tokens asking for 10 more, at 1 STU a token, far below every kill switch. */
function smallRun(workspaceId: string, now: Date): StartRunInput {
  return {
    ...startingRun(workspaceId, now),
    quotaStu: QUOTA,
    stuRate: 1,
    inputTokens: 10,
    desiredOutput: 10,
    limits: { run: 1_000_000, hour: 10_000_000, day: 80_000_000 },
    claim: null,
  };
}

it('is the policy’s share (120 %), given to start_runs with every run', () => {
  expect(HARDSTOP_PCT).toBe(120);
  const args = startRunArgs(smallRun('ws', new Date(0)));
  expect(args.hardstop_pct).toBe(HARDSTOP_PCT);
});

describe.each(testBackends())('the hard stop start_runs applies, on $name', ({ open }) => {
  let store: TestStore;
  beforeEach(async () => {
    store = await open();
  });
  afterEach(async () => {
    await store.cleanup();
  });

  /** start_runs' decision for one small run of a workspace that consumed 110 % of its quota, at the hard stop given. */
  async function decisionAt(hardstopPct: number) {
    const clock = fixedClock('2026-06-01T09:30:00Z');
    const { id: workspaceId } = await createWorkspace(store.db, clock, 'Hard stop');
    await ensurePeriod(store.db, workspaceId, clock.now(), QUOTA);
    await store.db.query(`UPDATE usage_periods SET consumed_stu = $2 WHERE workspace_id = $1`, [workspaceId, QUOTA * 1.1]);
    const args = startRunArgs(smallRun(workspaceId, clock.now()));
    const [row] = await store.db.query<{ decisions: unknown }>(`SELECT start_runs($1) AS decisions`, [
      JSON.stringify([{ ...args, hardstop_pct: hardstopPct }]),
    ]);
    const decisions = typeof row!.decisions === 'string' ? JSON.parse(row!.decisions) : row!.decisions;
    return (decisions as { outcome: string; consumedStu?: number | string; allowanceStu?: number | string }[])[0]!;
  }

  it('admits a run at 110 % of the quota below a hard stop of 120 %', async () => {
    expect(await decisionAt(120)).toMatchObject({ outcome: 'started' });
  });

  it('refuses it at the hard stop it is given (100 %), with what was consumed and the allowance', async () => {
    const decision = await decisionAt(100);
    expect(decision.outcome).toBe('quota_exceeded');
    expect(Number(decision.consumedStu)).toBe(QUOTA * 1.1);
    expect(Number(decision.allowanceStu)).toBe(QUOTA);
  });
});
