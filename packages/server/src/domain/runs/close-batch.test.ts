/**
 * Group commit of the closing statement (close-batch.ts), on PGlite and (with DATABASE_URL) on
 * PostgreSQL: the closes that wait behind one in flight go out as one `finish_runs` statement, each
 * run closed exactly as alone (its row, steps, ledger line, charge, released reservation and event);
 * a run that cannot close makes that statement fail, and the batch's runs are then closed one by
 * one, so only that run fails, with what its lone close answers.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { countingDb, testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import type { OpenDb } from '../../store/db.ts';
import { createCloseBatcher } from './close-batch.ts';
import type { FinishRunArgs } from './queries/close.ts';
import { subscribeToEveryEvent } from '@service/testing/event-subscriber';

describe.each(testBackends())('closes batched on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  let db: OpenDb;
  let statements: string[];
  /** Run ids in the order start_runs was sent them. */
  let started: string[];
  /** The first lone finish_run waits for this, once; `heldRun` is the run it closes. */
  let hold: Promise<void> | undefined;
  let heldRun: string | undefined;

  beforeEach(async () => {
    store = await open();
    const counted = countingDb(store.db);
    statements = counted.statements;
    started = [];
    hold = undefined;
    heldRun = undefined;
    db = {
      ...counted.db,
      async query(sql, params, options) {
        if (/^SELECT start_runs\(/.test(sql)) for (const run of JSON.parse(params![0] as string) as { run_id: string }[]) started.push(run.run_id);
        if (hold && /FROM finish_run\(/.test(sql)) {
          const waitFor = hold;
          hold = undefined;
          heldRun = (JSON.parse(params![0] as string) as FinishRunArgs).run_id;
          await waitFor;
        }
        return counted.db.query(sql, params, options);
      },
    };
    t = await createTestApp({ db });
    await subscribeToEveryEvent(t.db, t.workspaceId);
    await t.services.keys.ready();
  });
  afterEach(async () => {
    await t?.close();
    await store.cleanup();
  });

  const invoke = (i: number) =>
    t.app.request('/v1/inference', {
      method: 'POST',
      headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ alias: 'Prelude', agentSlug: 'finance', maxTokens: 64, messages: [{ role: 'user', content: `Follow up with lead ${i}` }] }),
    });

  /**
   * `n` invocations whose closes, but the first, wait behind the first (it closes alone, held in flight until the
   * others wait); `meanwhile` runs before it is let go.
   */
  async function together(n: number, meanwhile: () => Promise<void> = async () => {}): Promise<Response[]> {
    let release!: () => void;
    hold = new Promise<void>((resolve) => (release = resolve));
    statements.length = 0;
    const first = invoke(0);
    await vi.waitFor(() => expect(heldRun).toBeDefined(), { timeout: 10_000 });
    const others = Array.from({ length: n - 1 }, (_, i) => invoke(i + 1));
    await vi.waitFor(() => expect(t.services.runs.closesWaiting()).toBe(n - 1), { timeout: 10_000 });
    await meanwhile();
    release();
    return Promise.all([first, ...others]);
  }

  const closing = () => statements.filter((s) => /FROM finish_runs?\(/.test(s)).map((s) => (/FROM finish_runs\(/.test(s) ? 'finish_runs' : 'finish_run'));

  it('closes 8 concurrent invocations in two statements: the first alone, the 7 that waited in one, each run as alone', async () => {
    const answers = await together(8);
    expect(answers.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(closing()).toEqual(['finish_run', 'finish_runs']);
    const runs = await store.db.query<{ id: string; status: string; stu: number; steps: number; ledger: number; events: number }>(
      `SELECT r.id, r.status, r.stu::float8 AS stu,
              (SELECT count(*)::int FROM run_steps s WHERE s.run_id = r.id) AS steps,
              (SELECT count(*)::int FROM usage_ledger l WHERE l.run_id = r.id AND l.stu = r.stu) AS ledger,
              (SELECT count(*)::int FROM outbox_events e WHERE e.type = 'run.completed' AND e.data->>'run_id' = r.id) AS events
         FROM runs r WHERE r.id = ANY ($1::text[])`,
      [started],
    );
    expect(runs).toHaveLength(8);
    for (const run of runs) {
      expect(run).toMatchObject({ status: 'completed', ledger: 1, events: 1 });
      expect(run.stu).toBeGreaterThan(0);
      expect(run.steps).toBeGreaterThan(0);
    }
    const answered = await Promise.all(answers.map(async (res) => ((await res.json()) as { runId: string }).runId));
    expect(answered.sort()).toEqual([...started].sort());
    // Every reservation released, every charge on the period and the windows.
    const [period] = await store.db.query<{ consumed: number; reserved: number; version: number }>(
      `SELECT consumed_stu::float8 AS consumed, reserved_stu::float8 AS reserved, version::int AS version FROM usage_periods WHERE workspace_id = $1`,
      [t.workspaceId],
    );
    const windows = await store.db.query<{ spent: number; reserved: number }>(
      `SELECT spent_stu::float8 AS spent, reserved_stu::float8 AS reserved FROM usage_windows WHERE workspace_id = $1`,
      [t.workspaceId],
    );
    const total = runs.reduce((sum, run) => sum + run.stu, 0);
    // The period's charge is written once per statement, not once per run: its version (the usage tally's count of
    // the changes of what it consumed, migration 0507) moved twice, for the lone close and for the batch of 7.
    expect(period).toEqual({ consumed: total, reserved: 0, version: 2 });
    expect(windows).toEqual([
      { spent: total, reserved: 0 },
      { spent: total, reserved: 0 },
    ]);
  });

  it('a run that cannot close fails alone: the batch is closed again run by run, and the others complete', async () => {
    let gone: string | undefined;
    const answers = await together(5, async () => {
      // The workspace's run deleted while it executed: its close raises run_not_found.
      gone = started.find((id) => id !== heldRun);
      await store.db.query(`DELETE FROM runs WHERE id = $1`, [gone]);
    });
    expect(closing()).toEqual(['finish_run', 'finish_runs', 'finish_run', 'finish_run', 'finish_run', 'finish_run']);
    // The deleted run's invocation answers what a lone close of a deleted run answers; the others complete.
    expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 404]);
    expect(await answers.find((r) => r.status === 404)!.json()).toMatchObject({ error: 'not_found' });
    const runs = await store.db.query<{ status: string; ledger: number }>(
      `SELECT r.status, (SELECT count(*)::int FROM usage_ledger l WHERE l.run_id = r.id) AS ledger FROM runs r WHERE r.id = ANY ($1::text[])`,
      [started],
    );
    expect(runs).toEqual(Array(4).fill({ status: 'completed', ledger: 1 }));
    // Nothing charged twice.
    const [ledger] = await store.db.query<{ lines: number }>(`SELECT count(*)::int AS lines FROM usage_ledger WHERE workspace_id = $1`, [t.workspaceId]);
    expect(ledger!.lines).toBe(4);
  });

  it('a lone close goes out alone, as the one statement it always was', async () => {
    statements.length = 0;
    expect((await invoke(0)).status).toBe(200);
    expect(closing()).toEqual(['finish_run']);
  });
});

describe('the close batcher over a scripted store', () => {
  interface Sent {
    sql: 'finish_run' | 'finish_runs';
    runs: string[];
    params: readonly unknown[];
    answer(rows: unknown[]): void;
    fail(err: unknown): void;
  }
  function scriptedStore(driver: OpenDb['driver'] = 'postgres'): { db: OpenDb; sent: Sent[] } {
    const sent: Sent[] = [];
    const query = (sql: string, params: readonly unknown[] = []) =>
      new Promise<never[]>((resolve, reject) => {
        const batch = /FROM finish_runs\(/.test(sql);
        const closes = JSON.parse(params[0] as string) as FinishRunArgs | FinishRunArgs[];
        const runs = (Array.isArray(closes) ? closes : [closes]).map((close) => close.run_id);
        sent.push({ sql: batch ? 'finish_runs' : 'finish_run', runs, params, answer: (rows) => resolve(rows as never[]), fail: reject });
      });
    const db = { driver, query, transaction: async () => Promise.reject(new Error('no')), exec: async () => {}, close: async () => {} } as OpenDb;
    return { db, sent };
  }
  const row = (id: string) => ({ id, status: 'completed' });
  // A close's first keys (the batcher reads only the run's id; the store here is scripted).
  const params = (id: string): FinishRunArgs =>
    ({
      run_id: id,
      workspace_id: 'ws_1',
      started_at: new Date(0),
      now: new Date(0),
      status: 'completed',
      reason: null,
      manual_reason: null,
      crossed: null,
      content: '',
      input_tokens: 1,
      output_tokens: 1,
      stu: 1,
      alias: 'Prelude',
      quota_stu: Infinity,
    }) as FinishRunArgs;
  /** An error as the store answers it (PostgreSQL's ErrorResponse: severity and SQLSTATE). */
  const storeError = (message: string) => Object.assign(new Error(message), { severity: 'ERROR', code: 'P0001' });
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  it('on the embedded store, sends a lone close at once: its one thread is what limits', async () => {
    const { db, sent } = scriptedStore('pglite');
    const batcher = createCloseBatcher(db);
    const lone = batcher.finish(params('run_a'));
    expect(sent.map((s) => [s.sql, s.runs])).toEqual([['finish_run', ['run_a']]]);
    sent[0]!.answer([row('run_a')]);
    await expect(lone).resolves.toMatchObject(row('run_a'));
  });

  it('on PostgreSQL, sends the closes of one turn together: a lone one as finish_run, several as one finish_runs', async () => {
    const { db, sent } = scriptedStore();
    const batcher = createCloseBatcher(db, 3, 3);
    const lone = batcher.finish(params('run_a'));
    // Sent at the end of the event loop's turn, with whatever else closed in it.
    expect(sent).toEqual([]);
    await settle();
    expect(sent.map((s) => [s.sql, s.runs])).toEqual([['finish_run', ['run_a']]]);
    sent[0]!.answer([row('run_a')]);
    await expect(lone).resolves.toMatchObject(row('run_a'));
    const both = ['run_b', 'run_c'].map((id) => batcher.finish(params(id)));
    await settle();
    expect(sent.slice(1).map((s) => [s.sql, s.runs])).toEqual([['finish_runs', ['run_b', 'run_c']]]);
    sent[1]!.answer([row('run_c'), row('run_b')]);
    expect((await Promise.all(both)).map((r) => r.id)).toEqual(['run_b', 'run_c']);
  });

  it('sends a lone close at its turn, and those that arrive while it is in flight in one statement (at most maxBatch)', async () => {
    const { db, sent } = scriptedStore();
    const batcher = createCloseBatcher(db, 3, 3);
    const first = batcher.finish(params('run_a'));
    await settle();
    expect(sent.map((s) => [s.sql, s.runs])).toEqual([['finish_run', ['run_a']]]);
    const later = ['run_b', 'run_c', 'run_d', 'run_e'].map((id) => batcher.finish(params(id)));
    expect(batcher.waiting()).toBe(4);
    sent[0]!.answer([row('run_a')]);
    await expect(first).resolves.toMatchObject(row('run_a'));
    await settle();
    expect(sent.map((s) => [s.sql, s.runs])).toEqual([
      ['finish_run', ['run_a']],
      ['finish_runs', ['run_b', 'run_c', 'run_d']],
    ]);
    // Each run's close as an object of named keys; a number JSON cannot hold as the text the driver would send.
    const batched = JSON.parse(sent[1]!.params[0] as string) as Record<string, unknown>[];
    expect(batched[0]).toEqual({
      ...params('run_b'),
      started_at: '1970-01-01T00:00:00.000Z',
      now: '1970-01-01T00:00:00.000Z',
      quota_stu: 'Infinity',
    });
    sent[1]!.answer([row('run_d'), row('run_b'), row('run_c')]);
    await settle();
    expect(sent[2]).toMatchObject({ sql: 'finish_run', runs: ['run_e'] });
    sent[2]!.answer([row('run_e')]);
    expect((await Promise.all(later)).map((r) => [r.id, r.status])).toEqual(['run_b', 'run_c', 'run_d', 'run_e'].map((id) => [id, 'completed']));
    expect(batcher.waiting()).toBe(0);
  });

  it('after an error the store answered, closes each run alone: only the run that fails fails, with its own error', async () => {
    const { db, sent } = scriptedStore();
    const batcher = createCloseBatcher(db);
    const first = batcher.finish(params('run_a'));
    await settle();
    const others = ['run_b', 'run_c', 'run_d'].map((id) =>
      batcher.finish(params(id)).then(
        (closed) => closed.id,
        (err: Error) => `failed: ${err.message}`,
      ),
    );
    sent[0]!.answer([row('run_a')]);
    await first;
    await settle();
    sent[1]!.fail(storeError('run_not_found'));
    await settle();
    expect(sent.slice(2).map((s) => [s.sql, s.runs])).toEqual([
      ['finish_run', ['run_b']],
      ['finish_run', ['run_c']],
      ['finish_run', ['run_d']],
    ]);
    sent[2]!.answer([row('run_b')]);
    sent[3]!.fail(storeError('run_not_found'));
    sent[4]!.answer([row('run_d')]);
    expect(await Promise.all(others)).toEqual(['run_b', 'failed: run_not_found', 'run_d']);
  });

  it('after a failure the store did not answer (it may have committed), sends nothing again: each close gets that failure', async () => {
    const { db, sent } = scriptedStore();
    const batcher = createCloseBatcher(db);
    const first = batcher.finish(params('run_a'));
    await settle();
    const others = ['run_b', 'run_c'].map((id) => batcher.finish(params(id)));
    sent[0]!.answer([row('run_a')]);
    await first;
    await settle();
    const cut = new Error('Connection terminated unexpectedly');
    sent[1]!.fail(cut);
    for (const close of others) await expect(close).rejects.toBe(cut);
    expect(sent).toHaveLength(2);
  });
});
