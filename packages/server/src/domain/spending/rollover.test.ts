/**
 * Rollover: unused STU of a period carried into the next, capped at one period's quota. Its one home is the store's
 * `ensure_usage_period` (store/functions/ensure_usage_period.sql), which a run's start, a close's settlement and the
 * usage reads (`ensurePeriod`) all create a period's row with.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixedClock } from '../../clock.ts';
import { PLANS } from '../../vocabulary/plans.ts';
import { createWorkspace } from '../workspaces/index.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import { ensurePeriod } from './usage-store.ts';

const QUOTA = PLANS.starter.quotaStu;

describe.each(testBackends())('rollover into a new period on $name', ({ open }) => {
  let store: TestStore;
  beforeEach(async () => {
    store = await open();
  });
  afterEach(async () => {
    await store.cleanup();
  });

  it.each([
    ['half used', { rolloverStu: 0, consumedStu: 1_000_000 }, 1_000_000],
    ['nothing used: capped at one quota', { rolloverStu: QUOTA, consumedStu: 0 }, QUOTA],
    ['rollover carried, capped', { rolloverStu: 1_500_000, consumedStu: 1_000_000 }, QUOTA],
    ['rollover partly used', { rolloverStu: 500_000, consumedStu: 2_000_000 }, 500_000],
    ['all used', { rolloverStu: 0, consumedStu: QUOTA }, 0],
    ['overage is not carried as debt', { rolloverStu: 0, consumedStu: 2_400_000 }, 0],
  ])('%s', async (_name, previous, want) => {
    const clock = fixedClock('2026-03-01T00:10:00Z');
    const { id: workspaceId } = await createWorkspace(store.db, clock, 'Rollover');
    await store.db.query(
      `INSERT INTO usage_periods (workspace_id, period, rollover_stu, consumed_stu, created_at) VALUES ($1, '2026-02', $2, $3, '2026-02-01T00:00:00Z')`,
      [workspaceId, previous.rolloverStu, previous.consumedStu],
    );
    expect(await ensurePeriod(store.db, workspaceId, clock.now(), QUOTA)).toMatchObject({ period: '2026-03', rolloverStu: want, consumedStu: 0 });
  });

  it('is capped at the quota of the plan in force: a downgrade carries at most the new quota', async () => {
    const clock = fixedClock('2026-01-01T00:00:00Z');
    const { id: workspaceId } = await createWorkspace(store.db, clock, 'Downgrade');
    await store.db.query(
      `INSERT INTO usage_periods (workspace_id, period, rollover_stu, consumed_stu, created_at) VALUES ($1, '2025-12', 0, 0, '2025-12-01T00:00:00Z')`,
      [workspaceId],
    );
    expect((await ensurePeriod(store.db, workspaceId, clock.now(), QUOTA)).rolloverStu).toBe(QUOTA);
  });

  it('is none for a first period, and a period already created keeps its rollover', async () => {
    const clock = fixedClock('2026-03-15T00:00:00Z');
    const { id: workspaceId } = await createWorkspace(store.db, clock, 'First');
    expect(await ensurePeriod(store.db, workspaceId, clock.now(), QUOTA)).toMatchObject({ period: '2026-03', rolloverStu: 0, consumedStu: 0 });
    await store.db.query(
      `INSERT INTO usage_periods (workspace_id, period, rollover_stu, consumed_stu, created_at) VALUES ($1, '2026-02', 0, 0, '2026-02-01T00:00:00Z')`,
      [workspaceId],
    );
    expect((await ensurePeriod(store.db, workspaceId, clock.now(), QUOTA)).rolloverStu).toBe(0);
  });
});
