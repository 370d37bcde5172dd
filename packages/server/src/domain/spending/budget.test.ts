/**
 * Budgets are enforced in the database: concurrent reservations and concurrent invocations, on
 * PGlite and (with DATABASE_URL) on PostgreSQL in a schema of its own, never spend above a limit.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixedClock } from '../../clock.ts';
import { createApp } from '../../app.ts';
import { DEFAULT_STU_RATES } from '../usage/index.ts';
import { startingRun } from '@service/testing/runs';
import { testBackends, type TestStore } from '@service/testing/store';
import { createWorkspace } from '../workspaces/index.ts';
import { createKeyService } from '../keys/index.ts';
import { newId } from '../../random.ts';
import { reserveRun, settleRun, type BudgetSettings } from './budget.ts';
import { ensurePeriod } from './usage-store.ts';

/** The statement an invocation starts with (start_runs, through its group commit): a run of 50 input tokens asking for 60 more. */
function reserve(db: TestStore['db'], workspaceId: string, now: Date, settings: BudgetSettings, runId = newId('run'), requestPreview: string | null = null) {
  return reserveRun(db, {
    ...startingRun(workspaceId, now, { runId, requestPreview }),
    quotaStu: 10_000_000,
    inputTokens: 50,
    desiredOutput: 60,
    settings,
  });
}

describe.each(testBackends())('budgets on $name', ({ open }) => {
  let store: TestStore;
  beforeEach(async () => {
    store = await open();
  });
  afterEach(async () => {
    await store.cleanup();
  });

  it('writes the start of the request on the run it starts, and on no run it refuses', async () => {
    const clock = fixedClock('2026-06-01T09:30:00Z');
    const { id: workspaceId } = await createWorkspace(store.db, clock, 'Preview');
    await ensurePeriod(store.db, workspaceId, clock.now(), 10_000_000);
    const roomy = { rates: DEFAULT_STU_RATES, limits: { run: 1_000_000, hour: 1_000_000, day: 1_000_000 } };
    const started = newId('run');
    expect((await reserve(store.db, workspaceId, clock.now(), roomy, started, 'Which invoices are overdue?')).outcome).toBe('started');
    const refused = newId('run');
    const tight = { rates: DEFAULT_STU_RATES, limits: { run: 1_000_000, hour: 100, day: 1_000_000 } };
    await expect(reserve(store.db, workspaceId, clock.now(), tight, refused, 'Refused')).rejects.toMatchObject({ code: 'budget_reserved' });
    const rows = await store.db.query<{ id: string; request_preview: string | null }>(
      `SELECT id, request_preview FROM runs WHERE workspace_id = $1 ORDER BY id`,
      [workspaceId],
    );
    expect(rows).toEqual([{ id: started, request_preview: 'Which invoices are overdue?' }]);
  });

  it('concurrent reservations never pass the hour limit; reservations alone never trip the switch', async () => {
    const clock = fixedClock('2026-06-01T09:30:00Z');
    const { id: workspaceId } = await createWorkspace(store.db, clock, 'Budget');
    await ensurePeriod(store.db, workspaceId, clock.now(), 10_000_000);
    const settings = { rates: DEFAULT_STU_RATES, limits: { run: 1_000_000, hour: 1000, day: 1_000_000 } };
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => reserve(store.db, workspaceId, clock.now(), settings)));
    const reserved = outcomes.flatMap((o) => (o.status === 'fulfilled' && o.value.outcome === 'started' ? [o.value.reservedStu] : []));
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
    // 9 × 110 fit in 1000; the others fit the limit but not beside what those hold: 429 budget_reserved,
    // neither a crossing (no failed run) nor a kill switch.
    expect(reserved).toEqual(Array(9).fill(110));
    expect(refused).toHaveLength(11);
    for (const error of refused) {
      expect(error).toMatchObject({
        code: 'budget_reserved',
        status: 429,
        extras: { budget: 'hour', retryAfterSec: 5 },
        headers: { 'Retry-After': '5', 'Retry-After-Ms': '5000', 'X-Should-Retry': 'true' },
      });
    }
    const rows = await store.db.query<{ scope: string; spent: number; reserved: number; tripped_at: Date | null }>(
      `SELECT scope, spent_stu::float8 AS spent, reserved_stu::float8 AS reserved, tripped_at FROM usage_windows WHERE workspace_id = $1 ORDER BY scope`,
      [workspaceId],
    );
    expect(rows.map((r) => [r.scope, Number(r.spent), Number(r.reserved), r.tripped_at])).toEqual([
      ['day', 0, 990, null],
      ['hour', 0, 990, null],
    ]);
    const [period] = await store.db.query<{ reserved: number }>(`SELECT reserved_stu::float8 AS reserved FROM usage_periods WHERE workspace_id = $1`, [
      workspaceId,
    ]);
    expect(Number(period!.reserved)).toBe(990);
  });

  it('a window whose charged consumption leaves no room for the input trips at once', async () => {
    const clock = fixedClock('2026-06-01T09:30:00Z');
    const { id: workspaceId } = await createWorkspace(store.db, clock, 'Budget');
    await ensurePeriod(store.db, workspaceId, clock.now(), 10_000_000);
    const settings = { rates: DEFAULT_STU_RATES, limits: { run: 1_000_000, hour: 1000, day: 1_000_000 } };
    const first = await reserve(store.db, workspaceId, clock.now(), settings);
    if (first.outcome !== 'started') throw new Error(`not started: ${first.outcome}`);
    // The run ends having consumed 960 STU: 40 are left, less than the next run's 50 input tokens.
    await store.db.transaction((tx) =>
      settleRun(tx, { workspaceId, windows: first.windows, reservedStu: 110, stu: 960, crossed: null, now: clock.now(), limits: settings.limits }),
    );
    expect(await reserve(store.db, workspaceId, clock.now(), settings)).toMatchObject({ outcome: 'crossed', scope: 'hour' });
    await expect(reserve(store.db, workspaceId, clock.now(), settings)).rejects.toMatchObject({ code: 'kill_switch', extras: { kind: 'hour' } });
  });

  it('concurrent invocations on two app instances never spend above the hour limit', async () => {
    const clock = fixedClock('2026-06-01T09:30:00Z');
    const { id: workspaceId } = await createWorkspace(store.db, clock, 'Budget');
    const key = (await createKeyService({ db: store.db, clock }).create(workspaceId, { name: 'k', scopes: ['orchestrator:invoke'] })).secret;
    const limits = { run: 1_000_000, hour: 300, day: 1_000_000 };
    // Two instances over the same store, as two processes behind a load balancer.
    const apps = [1, 2].map(() => createApp({ db: store.db, clock, killSwitchLimits: limits, logError: () => {} }).app);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        apps[i % 2]!.request('/v1/inference', {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-forwarded-for': `10.0.0.${i}` },
          body: JSON.stringify({ alias: 'Prelude', agentSlug: 'sales', maxTokens: 30, messages: [{ role: 'user', content: `Follow up ${i}` }] }),
        }),
      ),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    // Refused beside the runs in progress (budget_reserved, no run), or by the hour window (kill_switch): a run that
    // crossed it at once (a failed run), or one that came after the window tripped (no run). Which of those two a
    // kill_switch answer was depends on the order the requests reached the store in.
    let killSwitchOut = 0;
    for (const res of answers.filter((r) => r.status === 429)) {
      const body = (await res.json()) as { error: string; kind?: string; budget?: string };
      if (body.error === 'budget_reserved') expect(body.budget).toBe('hour');
      else {
        expect(body).toMatchObject({ error: 'kill_switch', kind: 'hour' });
        killSwitchOut += 1;
      }
    }

    const runs = await store.db.query<{ status: string; stu: number; reserved_stu: number; failure_reason: string | null }>(
      `SELECT status, stu, reserved_stu, failure_reason FROM runs WHERE workspace_id = $1`,
      [workspaceId],
    );
    const completed = runs.filter((r) => r.status === 'completed');
    const failed = runs.filter((r) => r.status !== 'completed');
    expect(completed).toHaveLength(statuses.filter((s) => s === 200).length);
    expect(failed.every((r) => r.status === 'failed' && r.failure_reason === 'kill_switch:hour')).toBe(true);
    expect(failed.length).toBeLessThanOrEqual(killSwitchOut);
    const billed = runs.reduce((sum, r) => sum + r.stu, 0);
    expect(billed).toBeLessThanOrEqual(300);
    expect(runs.every((r) => r.status !== 'in_progress' && r.reserved_stu === 0)).toBe(true);
    const [hour] = await store.db.query<{ spent: number }>(`SELECT spent_stu::float8 AS spent FROM usage_windows WHERE workspace_id = $1 AND scope = 'hour'`, [
      workspaceId,
    ]);
    // Reservations released: the window holds exactly what the runs consumed.
    expect(Number(hour!.spent)).toBe(billed);
    const [period] = await store.db.query<{ consumed: number }>(`SELECT consumed_stu::float8 AS consumed FROM usage_periods WHERE workspace_id = $1`, [
      workspaceId,
    ]);
    expect(Number(period!.consumed)).toBe(billed);
  });
});
