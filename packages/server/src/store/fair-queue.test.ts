/**
 * The store's queue served fairly between parties (store/fair-queue.ts, store/pglite-worker.ts, store/postgres.ts):
 * the parties' queues are served in turn, so a statement of a quiet party is answered after at most the statements
 * already at the store and one of each other party, not after every statement a flooding party queued before it: on
 * the embedded store's thread, and for PostgreSQL's pool (with DATABASE_URL). On the embedded store a transaction's
 * statements still pass while the queue is full (no statement waits for the transaction that waits for it). Order of
 * answers only, no timing.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPgliteWorkerTestStore, untilFileSql } from '@service/testing/store';
import { asStoreParty, FairQueue, storeParty } from './fair-queue.ts';
import { GROUP_PARTY, groupCommit } from './group-commit.ts';
import { openPostgres } from './postgres.ts';

describe('FairQueue', () => {
  it('serves the parties in turn, each in its own order', () => {
    const queue = new FairQueue<string>();
    for (const item of ['a1', 'a2', 'a3', 'a4']) queue.push('a', item);
    queue.push('b', 'b1');
    queue.push('', 'system1');
    queue.push('b', 'b2');
    const out: string[] = [];
    while (queue.size > 0) out.push(queue.shift()!);
    expect(out).toEqual(['a1', 'b1', 'system1', 'a2', 'b2', 'a3', 'a4']);
  });

  it('skips the parties it is told to: the first in turn not skipped is served, and keeps its place', () => {
    const queue = new FairQueue<string>();
    for (const item of ['a1', 'a2']) queue.push('a', item);
    for (const item of ['b1', 'b2']) queue.push('b', item);
    queue.push('c', 'c1');
    expect(queue.shift(new Set(['a']))).toBe('b1');
    expect(queue.shift(new Set(['a', 'b', 'c']))).toBeUndefined();
    expect(queue.size).toBe(4);
    const out: string[] = [];
    while (queue.size > 0) out.push(queue.shift()!);
    // a, whose turn it was, is still first; b went last when it was served.
    expect(out).toEqual(['a1', 'c1', 'b2', 'a2']);
  });
});

describe('group commit', () => {
  it("sends a group's statement as a party of its own, not as the writer whose statement ran before it", async () => {
    const parties: string[] = [];
    let release!: () => void;
    const first = new Promise<void>((resolve) => (release = resolve));
    const submit = groupCommit<string, void>(
      async (items) => {
        parties.push(`${items.join('+')}: ${storeParty()}`);
        if (items[0] === 'a1') await first;
      },
      { waitForTurn: false },
    );
    const a1 = asStoreParty('ws:a', () => submit('a1'));
    const later = [asStoreParty('ws:a', () => submit('a2')), asStoreParty('ws:b', () => submit('b1'))];
    release();
    await Promise.all([a1, ...later]);
    expect(parties).toEqual([`a1: ${GROUP_PARTY}`, `a2+b1: ${GROUP_PARTY}`]);
  });
});

describe('the embedded store serves its queue fairly', () => {
  let store: Awaited<ReturnType<typeof openPgliteWorkerTestStore>>;
  beforeAll(async () => {
    store = await openPgliteWorkerTestStore();
  });
  afterAll(async () => {
    await store?.cleanup();
  });

  it("answers a quiet party's statement before most of what a flooding party queued ahead of it", async () => {
    const answered: string[] = [];
    const held = store.db.query(untilFileSql('fair-release'));
    const flood = Array.from({ length: 40 }, (_, i) =>
      asStoreParty('ws:a', () => store.db.query('SELECT $1::int AS n', [i]).then(() => answered.push(`a${i}`))),
    );
    const quiet = asStoreParty('ws:b', () => store.db.query('SELECT 1').then(() => answered.push('b')));
    writeFileSync(join(store.dataDir, 'fair-release'), '');
    await Promise.all([held, ...flood, quiet]);
    // In arrival order it would be answered last (41st); served in turn, after the 8 already at the thread and
    // the flooding party's next one.
    expect(answered.indexOf('b')).toBeLessThan(10);
    expect(answered.filter((name) => name.startsWith('a'))).toEqual(Array.from({ length: 40 }, (_, i) => `a${i}`));
  });

  it("lets a transaction's statements pass a full queue", async () => {
    const held = store.db.query(untilFileSql('tx-release'));
    const flood = Array.from({ length: 30 }, () => asStoreParty('ws:a', () => store.db.query('SELECT 1')));
    const tx = asStoreParty('ws:b', () =>
      store.db.transaction(async (t) => {
        await t.query('SELECT 1');
        await t.query('SELECT 2');
        const [row] = await t.query<{ n: number }>('SELECT 3 AS n');
        return row!.n;
      }),
    );
    writeFileSync(join(store.dataDir, 'tx-release'), '');
    expect(await tx).toBe(3);
    await Promise.all([held, ...flood]);
    expect(store.db.queued!()).toBe(0);
  });
});

describe.skipIf(!process.env.DATABASE_URL)("PostgreSQL's pool hands out its connections fairly", () => {
  it("answers a quiet party's statement before most of what a flooding party queued ahead of it", async () => {
    const db = await openPostgres({ url: process.env.DATABASE_URL!, max: 1 });
    try {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      // The pool's one connection is held by a transaction until the test releases it.
      const held = db.transaction(async (tx) => {
        await tx.query('SELECT 1');
        await gate;
      });
      await new Promise((resolve) => setImmediate(resolve));
      const answered: string[] = [];
      const flood = Array.from({ length: 20 }, (_, i) => asStoreParty('ws:a', () => db.query('SELECT $1::int AS n', [i]).then(() => answered.push(`a${i}`))));
      const quiet = asStoreParty('ws:b', () => db.query('SELECT 1').then(() => answered.push('b')));
      expect(db.queued!()).toBe(21);
      release();
      await Promise.all([held, ...flood, quiet]);
      // In arrival order it would be answered last (21st); served in turn, second.
      expect(answered.indexOf('b')).toBe(1);
    } finally {
      await db.close();
    }
  });
});
