/**
 * The group commit of the starts (start-batch.ts), on both stores: starts that arrive while one is in flight go
 * together as the next statement; a batch the store answers with an error (a lost idempotency claim) is sent
 * again run by run, so only that run fails; a batch that got no answer is not sent again (it may have committed).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fixedClock } from '../../clock.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import type { Db } from '../../store/db.ts';
import { newId } from '../../random.ts';
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
      workspaceId,
      runId: newId('run'),
      adopt: false,
      now,
      leaseUntil: new Date(now.getTime() + 60_000),
      agentSlug: 'sales',
      answeredBy: 'sales',
      alias: 'Prelude',
      source: 'api',
      conversationId: null,
      conversationTurns: null,
      requestPreview: null,
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
    expect(first).toEqual({ d: expect.objectContaining({ outcome: 'started' }) });
    // The second of the same request: a replay of the first once it committed, or (run at the same time on PostgreSQL) its claim lost.
    if ('d' in second!) expect(second.d).toEqual({ outcome: 'replay', runId: a.runId });
    else expect(second!.e.message).toMatch(/idempotency_claim_lost/);
    expect(other).toEqual({ d: expect.objectContaining({ outcome: 'started' }) });
    expect(await reservedOnWindows()).toEqual([330, 330]);
    const runs = await store.db.query<{ id: string }>(`SELECT id FROM runs WHERE workspace_id = $1`, [workspaceId]);
    expect(runs.map((r) => r.id)).not.toContain(b.runId);
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
