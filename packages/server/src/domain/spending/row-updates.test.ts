/**
 * How many times an invocation updates the rows every run of a workspace shares: its period
 * (`usage_periods`), its day and hour windows (`usage_windows`) and GET /runs's counters (`run_counts`). Counted
 * by row triggers this test installs (each row updated, or counter inserted, writes a line naming the table
 * and the statement's function), while 50 invocations of one workspace run at once through the app, on both
 * stores. The starts that wait behind one in flight go as one statement (spending/start-batch.ts), which
 * updates each of those rows once for all its runs (store/functions/start_runs.sql); the closes likewise
 * (domain/runs/close-batch.ts, settled per batch by store/functions/settle_runs.sql); the counters once per
 * class per transaction (store/functions/run_counts.sql). The workspace is the only one active, so a statement
 * carries up to 64 starts or closes (store/group-commit.ts `maxItemsAlone`). Seen here: 0.36 per invocation for the
 * starts and closes together on both stores (a first start alone, the 49 that waited behind it in one statement: 8
 * rows for the starts, 10 for the closes); 0.9 with statements of at most 16 whoever is active (the code before,
 * which fails here). One statement per run, each updating the period, two windows and a counter, is about 9 (the
 * code before group commits: starts 4.0 and closes 5.0 on both stores).
 *
 * Which invocations share a statement depends on when each arrives, so the test fixes it: the burst's first start
 * (alone, nothing in flight) is held until the other 49 wait behind it, and so is its first close. The count is
 * then the same however loaded the machine is: 2 start statements and 2 close statements for the 50.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '@service/testing/app';
import { until } from '@service/testing/cli-processes';
import { testBackends, type TestStore } from '@service/testing/store';
import type { OpenDb } from '../../store/db.ts';
import { startsOf } from './start-batch.ts';

/** The shared rows an invocation (its start and its close) may update at most, on average over the 50. */
const UPDATES_PER_INVOCATION = 0.5;

/** Runs a start or close statement carries: its one argument, a JSON array (batch) or object (a lone close). */
function carriedRuns(params: unknown): number {
  const arg: unknown = JSON.parse((params as string[])[0]!);
  return Array.isArray(arg) ? arg.length : 1;
}

describe.each(testBackends())('row updates per invocation on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  let key: string;
  /** Armed for the burst: its first start and its first close wait until the other 49 wait behind them. */
  let holdFirst = false;

  beforeEach(async () => {
    store = await open();
    holdFirst = false;
    let startHeld = false;
    let closeHeld = false;
    const db: OpenDb = new Proxy(store.db, {
      get: (target, name) =>
        name === 'query'
          ? async (sql: string, ...rest: unknown[]) => {
              // The first statement carries the runs of its turn; it is held until every other run waits behind it.
              if (holdFirst && !startHeld && /^SELECT start_runs\(/.test(sql)) {
                startHeld = true;
                const carried = carriedRuns(rest[0]);
                await until(() => startsOf(db).waiting() === 50 - carried, 'the other starts to wait', 60_000);
              }
              if (holdFirst && !closeHeld && /FROM finish_runs?\(/.test(sql)) {
                closeHeld = true;
                const carried = carriedRuns(rest[0]);
                await until(() => t.services.runs.closesWaiting() === 50 - carried, 'the other closes to wait', 60_000);
              }
              return (target.query as (...args: unknown[]) => Promise<unknown>).call(target, sql, ...rest);
            }
          : Reflect.get(target, name),
    });
    await store.db.exec(`
      CREATE TABLE test_row_updates (tbl text NOT NULL, path text NOT NULL);
      CREATE FUNCTION test_row_update() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        v_path text := CASE WHEN current_query() ~ 'start_run' THEN 'start' WHEN current_query() ~ 'finish_run' THEN 'close' ELSE 'other' END;
      BEGIN
        -- The counters are written as the transaction commits, past its statement: a start adds to in_progress.
        IF TG_TABLE_NAME = 'run_counts' THEN
          v_path := CASE WHEN NEW.status = 'in_progress' AND (TG_OP = 'INSERT' OR NEW.runs > OLD.runs) THEN 'start' ELSE 'close' END;
        END IF;
        INSERT INTO test_row_updates (tbl, path) VALUES (TG_TABLE_NAME, v_path);
        RETURN NULL;
      END $$;
      CREATE TRIGGER test_periods_updated AFTER UPDATE ON usage_periods FOR EACH ROW EXECUTE FUNCTION test_row_update();
      CREATE TRIGGER test_windows_updated AFTER UPDATE ON usage_windows FOR EACH ROW EXECUTE FUNCTION test_row_update();
      CREATE TRIGGER test_counts_updated AFTER INSERT OR UPDATE ON run_counts FOR EACH ROW EXECUTE FUNCTION test_row_update();
    `);
    t = await createTestApp({ db, deps: { config: { trustProxy: 1 } } });
    key = await t.keyWith('orchestrator:invoke');
  });
  afterEach(async () => {
    await t?.close();
    await store.cleanup();
  });

  const invoke = (i: number) =>
    t.app.request('/v1/inference', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-forwarded-for': `10.2.0.${i}` },
      body: JSON.stringify({ alias: 'Prelude', agentSlug: 'finance', maxTokens: 64, messages: [{ role: 'user', content: `Follow up with lead ${i}` }] }),
    });

  it('50 concurrent invocations of one workspace: their starts and closes update the period, windows and counters well under once each', async () => {
    // The period, the windows and the counters exist before (made by a first invocation): only updates count.
    expect((await invoke(0)).status).toBe(200);
    await store.db.query(`DELETE FROM test_row_updates`);

    holdFirst = true;
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => invoke(i + 1)));
    expect(answers.map((res) => res.status)).toEqual(Array(50).fill(200));
    for (const res of answers) expect(await res.json()).toMatchObject({ runId: expect.stringMatching(/^run_/) });

    const rows = await store.db.query<{ path: string; tbl: string; n: number }>(
      `SELECT path, tbl, count(*)::int AS n FROM test_row_updates GROUP BY path, tbl ORDER BY path, tbl`,
    );
    const updates = (path: string) => rows.filter((r) => r.path === path).reduce((sum, r) => sum + r.n, 0);
    // Each kind of row was updated by the starts and by the closes (so the count is not vacuous), but seldom.
    expect(rows.filter((r) => r.path === 'start').map((r) => r.tbl)).toEqual(['run_counts', 'usage_periods', 'usage_windows']);
    expect(rows.filter((r) => r.path === 'close').map((r) => r.tbl)).toEqual(['run_counts', 'usage_periods', 'usage_windows']);
    expect(updates('other')).toBe(0);
    expect((updates('start') + updates('close')) / 50).toBeLessThanOrEqual(UPDATES_PER_INVOCATION);

    // The counters still count every run: GET /runs's total is the number of runs stored.
    const [stored] = await store.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM runs WHERE workspace_id = $1`, [t.workspaceId]);
    const list = await t.app.request('/runs?limit=1', { headers: { authorization: `Bearer ${t.apiKey}` } });
    expect(list.status).toBe(200);
    expect(((await list.json()) as { total: number }).total).toBe(stored!.n);
    expect(stored!.n).toBe(51);
  });
});
