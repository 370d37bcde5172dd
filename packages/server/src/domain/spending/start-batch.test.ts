/**
 * The group commit of the starts (start-batch.ts), on both stores: starts that arrive while one is in flight go
 * together as the next statement; a batch the store answers with an error (a lost idempotency claim) is sent
 * again run by run, so only that run fails; a batch that got no answer is not sent again (it may have committed).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fixedClock } from '../../clock.ts';
import { startingRun } from '@service/testing/runs';
import { testBackends, type TestStore } from '@service/testing/store';
import type { Db } from '../../store/db.ts';
import { createWorkspace } from '../workspaces/index.ts';
import { createStartBatcher, type StartBatcher } from './start-batch.ts';
import type { StartRunInput } from './queries.ts';
import { ensurePeriod } from './usage-store.ts';

describe.each(testBackends())('starts batched on $name', ({ open }) => {
  const clock = fixedClock('2026-06-01T09:30:00Z');
  let store: TestStore;
  let workspaceId: string;
  /** Runs per start_runs statement sent, in order. */
  let sent: number[];
  /** The next start_runs statement waits for this (once). */
  let hold: Promise<void> | undefined;
  /** The next batch of more than one run fails so, without reaching the store (once). */
  let cut: Error | undefined;
  let batcher: StartBatcher;

  beforeEach(async () => {
    store = await open();
    ({ id: workspaceId } = await createWorkspace(store.db, clock, 'Batch'));
    await ensurePeriod(store.db, workspaceId, clock.now(), 10_000_000);
    sent = [];
    hold = undefined;
    cut = undefined;
    const db: Db = {
      ...store.db,
      async query(sql, params, options) {
        if (/^SELECT start_runs\(/.test(sql)) {
          const runs = (JSON.parse(params![0] as string) as unknown[]).length;
          sent.push(runs);
          if (cut && runs > 1) {
            const error = cut;
            cut = undefined;
            throw error;
          }
          const waitFor = hold;
          hold = undefined;
          if (waitFor) await waitFor;
        }
        return store.db.query(sql, params, options);
      },
    };
    batcher = createStartBatcher(db);
  });
  afterEach(async () => {
    await store.cleanup();
  });

  function run(claim: StartRunInput['claim'] = null): StartRunInput {
    const now = clock.now();
    return {
      ...startingRun(workspaceId, now),
      quotaStu: 10_000_000,
      stuRate: 1,
      inputTokens: 50,
      desiredOutput: 60,
      limits: { run: 1_000_000, hour: 1_000_000, day: 1_000_000 },
      claim,
    };
  }

  async function reservedOnWindows(): Promise<number[]> {
    const rows = await store.db.query<{ reserved: number }>(
      `SELECT reserved_stu::float8 AS reserved FROM usage_windows WHERE workspace_id = $1 ORDER BY scope`,
      [workspaceId],
    );
    return rows.map((r) => Number(r.reserved));
  }

  /** A first start, held in flight until `release`; `then` starts the others while it is. */
  async function behindOneInFlight<T>(then: () => Promise<T>[]): Promise<T[]> {
    let release!: () => void;
    hold = new Promise<void>((resolve) => (release = resolve));
    const first = batcher.start(run());
    await vi.waitFor(() => expect(sent).toEqual([1]));
    const others = then();
    expect(batcher.waiting()).toBe(others.length);
    release();
    expect(await first).toMatchObject({ outcome: 'started', reservedStu: 110 });
    return Promise.all(others.map((p) => p.then((value) => value)));
  }

  it('sends the starts that waited behind one in flight as one statement', async () => {
    const decisions = await behindOneInFlight(() => [batcher.start(run()), batcher.start(run()), batcher.start(run())]);
    expect(sent).toEqual([1, 3]);
    expect(decisions).toEqual(Array(3).fill({ outcome: 'started', outputCap: 60, reservedStu: 110, limitedBy: null }));
    expect(await reservedOnWindows()).toEqual([440, 440]);
  });

  it("decides a batch's runs per workspace in arrival order, against running totals, and answers them in input order", async () => {
    const { id: other } = await createWorkspace(store.db, clock, 'Other');
    await ensurePeriod(store.db, other, clock.now(), 10_000_000);
    // The other workspace charged 160 of its 200 STU hour: not even a run's input (50) fits in what is left.
    await store.db.query(`INSERT INTO usage_windows (workspace_id, scope, window_start, spent_stu) VALUES ($1, 'day', $2, 160), ($1, 'hour', $3, 160)`, [
      other,
      new Date('2026-06-01T00:00:00Z'),
      new Date('2026-06-01T09:00:00Z'),
    ]);
    const tight = (input: StartRunInput): StartRunInput => ({ ...input, limits: { run: 1_000_000, hour: 330, day: 1_000_000 } });
    const elsewhere = (input: StartRunInput): StartRunInput => ({ ...tight(input), workspaceId: other, limits: { run: 1_000_000, hour: 200, day: 1_000_000 } });
    // The run held in flight holds 110 of this workspace's 330; the batch: this, other, this, other, this.
    const decisions = await behindOneInFlight(() =>
      [tight(run()), elsewhere(run()), tight(run()), elsewhere(run()), tight(run())].map((input) => batcher.start(input)),
    );
    expect(sent).toEqual([1, 5]);
    expect(decisions).toEqual([
      { outcome: 'started', outputCap: 60, reservedStu: 110, limitedBy: null },
      // Crossed at once: the hour window trips, and the next run of the batch finds the switch on.
      { outcome: 'crossed', scope: 'hour' },
      // 220 of 330 held now (the one in flight and the first of the batch): 110 more fit...
      { outcome: 'started', outputCap: 60, reservedStu: 110, limitedBy: null },
      { outcome: 'kill_switch', kind: 'hour', since: clock.now() },
      // ...and then none.
      { outcome: 'budget_reserved', budget: 'hour' },
    ]);
    const windows = await store.db.query<{ workspace_id: string; scope: string; reserved: number; tripped_at: Date | null }>(
      `SELECT workspace_id, scope, reserved_stu::float8 AS reserved, tripped_at FROM usage_windows ORDER BY workspace_id = $1 DESC, scope`,
      [workspaceId],
    );
    expect(windows.map((w) => [w.scope, Number(w.reserved), w.tripped_at])).toEqual([
      ['day', 330, null],
      ['hour', 330, null],
      ['day', 0, null],
      ['hour', 0, clock.now()],
    ]);
    const periods = await store.db.query<{ reserved: number }>(`SELECT reserved_stu::float8 AS reserved FROM usage_periods ORDER BY workspace_id = $1 DESC`, [
      workspaceId,
    ]);
    expect(periods.map((p) => Number(p.reserved))).toEqual([330, 0]);
  });

  it('sends a batch the store refused again run by run: the lost idempotency claim fails or replays only its run', async () => {
    const expiresAt = new Date(clock.now().getTime() + 86_400_000);
    const claim = { credentialId: 'key_batch', key: 'retry-1', requestHash: 'h1', expiresAt };
    const a = run(claim);
    const b = run(claim);
    const settled = await behindOneInFlight(() =>
      [batcher.start(a), batcher.start(b), batcher.start(run())].map((p) =>
        p.then(
          (d) => ({ d }),
          (e: unknown) => ({ e }),
        ),
      ),
    );
    // The batch of three raised idempotency_claim_lost (two runs claimed one key): then each alone.
    expect(sent).toEqual([1, 3, 1, 1, 1]);
    const [first, second, other] = settled as ({ d: { outcome: string; runId?: string } } | { e: Error })[];
    // Of the same request twice, one started; the other (run after it, or at the same time on PostgreSQL) is a
    // replay of it or lost its claim. Nothing else failed.
    const pair = [
      { input: a, outcome: first! },
      { input: b, outcome: second! },
    ];
    const started = pair.filter((p) => 'd' in p.outcome && p.outcome.d.outcome === 'started');
    expect(started).toHaveLength(1);
    const [rest] = pair.filter((p) => p !== started[0]);
    if ('d' in rest!.outcome) expect(rest!.outcome.d).toEqual({ outcome: 'replay', runId: started[0]!.input.runId });
    else expect(rest!.outcome.e.message).toMatch(/idempotency_claim_lost/);
    expect(other).toEqual({ d: expect.objectContaining({ outcome: 'started' }) });
    expect(await reservedOnWindows()).toEqual([330, 330]);
    const runs = await store.db.query<{ id: string }>(`SELECT id FROM runs WHERE workspace_id = $1`, [workspaceId]);
    expect(runs.map((r) => r.id)).not.toContain(rest!.input.runId);
  });

  it('does not send again a batch that got no answer from the store: each of its starts fails so', async () => {
    cut = new Error('Connection terminated unexpectedly');
    const settled = await behindOneInFlight(() =>
      [batcher.start(run()), batcher.start(run())].map((p) =>
        p.then(
          (d) => ({ d }),
          (e: unknown) => ({ e }),
        ),
      ),
    );
    expect(sent).toEqual([1, 2]);
    expect(settled).toEqual([{ e: cut }, { e: cut }].map(() => ({ e: expect.objectContaining({ message: 'Connection terminated unexpectedly' }) })));
    expect(await reservedOnWindows()).toEqual([110, 110]);
  });
});
