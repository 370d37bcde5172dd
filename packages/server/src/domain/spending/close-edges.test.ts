/**
 * The close's rarer paths in `finish_run` (store/functions/finish_runs.sql, settled by settle_runs.sql): a run that closes in
 * the month after the one it reserved in releases the reservation there and is charged to the new
 * period (made by the close); a run whose window rows are gone (nothing deletes them today) gets them
 * back, charged. A batch that names a run twice, or a run of another workspace, closes nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { type FinishRunArgs, finishRuns } from '../runs/queries/close.ts';

describe.each(testBackends())('closing a run on $name', ({ open }) => {
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

  async function startRun() {
    const started = await t.services.runs.start({
      workspaceId: t.workspaceId,
      agentSlug: 'sales',
      alias: 'Sonata',
      messages: [{ role: 'user', content: 'Which invoices are overdue?' }],
      source: 'api',
    });
    if (started.kind !== 'started') throw new Error(`expected a started run, got ${started.kind}`);
    return started.run;
  }

  const periods = () =>
    store.db.query<{ period: string; consumed: number; reserved: number }>(
      `SELECT period, consumed_stu::float8 AS consumed, reserved_stu::float8 AS reserved FROM usage_periods WHERE workspace_id = $1 ORDER BY period`,
      [t.workspaceId],
    );
  const windows = () =>
    store.db.query<{ scope: string; spent: number; reserved: number }>(
      `SELECT scope, spent_stu::float8 AS spent, reserved_stu::float8 AS reserved FROM usage_windows WHERE workspace_id = $1 ORDER BY scope, window_start`,
      [t.workspaceId],
    );

  it('a run reserved in one month and closed in the next: released in the first, charged to the second', async () => {
    // The test clock starts on 2026-06-01 09:00 UTC: to one second before July.
    t.clock.advance(Date.parse('2026-06-30T23:59:59Z') - t.clock.now().getTime());
    const run = await startRun();
    expect(await periods()).toEqual([{ period: '2026-06', consumed: 0, reserved: run.reservedStu }]);
    t.clock.advance(2_000);
    const outcome = await t.services.runs.execute(run);
    expect(outcome.run.status).toBe('completed');
    const stu = outcome.run.usage.stu;
    expect(stu).toBeGreaterThan(0);
    expect(await periods()).toEqual([
      { period: '2026-06', consumed: 0, reserved: 0 },
      { period: '2026-07', consumed: stu, reserved: 0 },
    ]);
    // The windows are the reservation's (June 30th, its last hour): charged there.
    expect((await windows()).map((w) => [w.scope, w.spent, w.reserved])).toEqual([
      ['day', stu, 0],
      ['hour', stu, 0],
    ]);
  });

  it('a run whose window rows are gone gets them back at its close, charged', async () => {
    const run = await startRun();
    await store.db.query(`DELETE FROM usage_windows WHERE workspace_id = $1`, [t.workspaceId]);
    const outcome = await t.services.runs.execute(run);
    expect(outcome.run.status).toBe('completed');
    const stu = outcome.run.usage.stu;
    expect((await windows()).map((w) => [w.scope, w.spent, w.reserved])).toEqual([
      ['day', stu, 0],
      ['hour', stu, 0],
    ]);
    expect(await periods()).toEqual([{ period: '2026-06', consumed: stu, reserved: 0 }]);
  });

  it('a batch that names a run twice, or a run under another workspace, closes none of its runs', async () => {
    const [a, b] = [await startRun(), await startRun()];
    const startedAt = async (id: string) => (await store.db.query<{ started_at: Date }>(`SELECT started_at FROM runs WHERE id = $1`, [id]))[0]!.started_at;
    // A close that charges nothing (no ledger line, no quota): what the batch does with its runs is what is checked.
    const close = async (id: string, workspaceId = t.workspaceId) =>
      ({
        run_id: id,
        workspace_id: workspaceId,
        started_at: await startedAt(id),
        now: t.clock.now(),
        status: 'completed',
        content: 'done',
        input_tokens: 0,
        output_tokens: 0,
        stu: 0,
        unbilled_input: 0,
        unbilled_output: 0,
        unbilled_stu: 0,
        log: [],
      }) as FinishRunArgs;
    const statuses = async () =>
      (await store.db.query<{ id: string; status: string }>(`SELECT id, status FROM runs WHERE id IN ($1, $2) ORDER BY id`, [a.runId, b.runId])).map(
        (r) => r.status,
      );
    await expect(finishRuns(store.db, [await close(a.runId), await close(b.runId), await close(a.runId)])).rejects.toThrow('run_closed_twice_in_batch');
    expect(await statuses()).toEqual(['in_progress', 'in_progress']);
    await expect(finishRuns(store.db, [await close(a.runId), await close(b.runId, 'ws_someone_else')])).rejects.toThrow('run_not_found');
    expect(await statuses()).toEqual(['in_progress', 'in_progress']);
    const closed = await finishRuns(store.db, [await close(b.runId), await close(a.runId)]);
    expect(closed.map((r) => [r.id, r.status]).sort()).toEqual(
      [
        [a.runId, 'completed'],
        [b.runId, 'completed'],
      ].sort(),
    );
    expect(await statuses()).toEqual(['completed', 'completed']);
  });
});
