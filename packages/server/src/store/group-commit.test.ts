import { describe, expect, it } from 'vitest';
import { asStoreParty } from './fair-queue.ts';
import { ACTIVE_MS, groupCommit } from './group-commit.ts';

/** A flush that records each group and waits until `release` is called for it. */
function recordingFlush() {
  const groups: number[][] = [];
  const pending: Array<(fail?: Error) => void> = [];
  const flush = (items: number[]) =>
    new Promise<number[]>((resolve, reject) => {
      groups.push(items);
      pending.push((fail) => (fail ? reject(fail) : resolve(items.map((n) => n * 10))));
    });
  return { groups, flush, release: (fail?: Error) => pending.shift()!(fail) };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('groupCommit', () => {
  it('sends the writes of one turn as one statement, and each writer gets its result', async () => {
    const { groups, flush, release } = recordingFlush();
    const submit = groupCommit(flush);
    const results = Promise.all([submit(1), submit(2), submit(3)]);
    await turn();
    expect(groups).toEqual([[1, 2, 3]]);
    release();
    expect(await results).toEqual([
      [10, 20, 30],
      [10, 20, 30],
      [10, 20, 30],
    ]);
  });

  it('a lone write goes out at its turn; writes during a statement go out together after it', async () => {
    const { groups, flush, release } = recordingFlush();
    const submit = groupCommit(flush);
    const first = submit(1);
    await turn();
    expect(groups).toEqual([[1]]);
    const later = Promise.all([submit(2), submit(3)]);
    await turn();
    expect(groups).toEqual([[1]]); // still waiting for the first statement
    release();
    await first;
    await turn();
    expect(groups).toEqual([[1], [2, 3]]);
    release();
    await later;
  });

  it('a failed statement fails each of its writers, and the next group still goes out', async () => {
    const { groups, flush, release } = recordingFlush();
    const submit = groupCommit(flush);
    const failing = [submit(1), submit(2)].map((p) => p.catch((error: Error) => error.message));
    await turn();
    const next = submit(3);
    release(new Error('store down'));
    expect(await Promise.all(failing)).toEqual(['store down', 'store down']);
    await turn();
    expect(groups).toEqual([[1, 2], [3]]);
    release();
    expect(await next).toEqual([30]);
  });

  it('caps a statement at maxItems', async () => {
    const { groups, flush, release } = recordingFlush();
    const submit = groupCommit(flush, { maxItems: 2 });
    const all = Promise.all([1, 2, 3, 4, 5].map((n) => submit(n)));
    await turn();
    release();
    await turn();
    release();
    await turn();
    release();
    await all;
    expect(groups).toEqual([[1, 2], [3, 4], [5]]);
  });

  it("fills a statement from the writers' parties in turn: a quiet workspace's write goes in the next statement, not behind a flood's", async () => {
    const { groups, flush, release } = recordingFlush();
    const submit = groupCommit(flush, { maxItems: 3 });
    const first = asStoreParty('wksp_a', () => submit(1));
    await turn();
    // While the first statement runs, workspace A queues six more writes, then workspace B one.
    const flood = asStoreParty('wksp_a', () => Promise.all([2, 3, 4, 5, 6, 7].map((n) => submit(n))));
    const quiet = asStoreParty('wksp_b', () => submit(100));
    release();
    await first;
    await turn();
    expect(groups).toEqual([[1], [2, 100, 3]]);
    release();
    expect(await quiet).toEqual([20, 1000, 30]);
    await turn();
    release();
    await turn();
    release();
    await flood;
    expect(groups).toEqual([[1], [2, 100, 3], [4, 5, 6], [7]]);
  });

  it("with several statements allowed, a quiet workspace's write goes at once beside a flood's statement; a workspace has one in flight", async () => {
    const { groups, flush, release } = recordingFlush();
    const submit = groupCommit(flush, { maxItems: 3, waitForTurn: false, maxStatements: 2 });
    const first = asStoreParty('wksp_a', () => submit(1));
    // Workspace A's next writes wait for its statement in flight.
    const flood = asStoreParty('wksp_a', () => Promise.all([2, 3, 4, 5].map((n) => submit(n))));
    expect(groups).toEqual([[1]]);
    // Workspace B's goes at once, in a statement of its own beside A's.
    const quiet = asStoreParty('wksp_b', () => submit(100));
    expect(groups).toEqual([[1], [100]]);
    // Both statements are in flight: C's write waits, though no statement carries C.
    const third = asStoreParty('wksp_c', () => submit(200));
    expect(groups).toEqual([[1], [100]]);
    // A's first statement returns: the free statement takes A's and C's writes in turn (A's queue came first).
    release();
    await first;
    await turn();
    expect(groups).toEqual([[1], [100], [2, 200, 3]]);
    release(); // B's
    expect(await quiet).toEqual([1000]);
    await turn();
    // A is in flight again (with C): its last writes wait, though a statement is free.
    expect(groups).toHaveLength(3);
    release();
    expect(await third).toEqual([20, 2000, 30]);
    await turn();
    expect(groups).toEqual([[1], [100], [2, 200, 3], [4, 5]]);
    release();
    // Each writer is answered with its statement's result.
    expect(await flood).toEqual([
      [20, 2000, 30],
      [20, 2000, 30],
      [40, 50],
      [40, 50],
    ]);
  });

  it('carries up to maxItemsAlone writes while one workspace alone is active, maxItems while another wrote within ACTIVE_MS', async () => {
    const { groups, flush, release } = recordingFlush();
    let clock = 0;
    const submit = groupCommit(flush, { maxItems: 2, maxItemsAlone: 4, waitForTurn: false, maxStatements: 2, now: () => clock });
    const as = (party: string, n: number) => asStoreParty(party, () => submit(n));
    // A alone: its writes that waited behind its first statement go four at a time.
    const first = as('wksp_a', 1);
    const alone = Promise.all([2, 3, 4, 5, 6].map((n) => as('wksp_a', n)));
    release();
    await first;
    await turn();
    expect(groups).toEqual([[1], [2, 3, 4, 5]]);
    // B writes (its statement goes beside A's): while B is active, A's statements carry two at most.
    const quiet = as('wksp_b', 100);
    expect(groups).toEqual([[1], [2, 3, 4, 5], [100]]);
    const shared = Promise.all([7, 8, 9].map((n) => as('wksp_a', n)));
    release(); // A's four
    release(); // B's
    expect(await quiet).toEqual([1000]);
    await turn();
    expect(groups.slice(3)).toEqual([[6, 7]]);
    // B has not written for ACTIVE_MS: A is alone again.
    clock += ACTIVE_MS + 1;
    const more = Promise.all([10, 11].map((n) => as('wksp_a', n)));
    release();
    await turn();
    expect(groups.slice(3)).toEqual([
      [6, 7],
      [8, 9, 10, 11],
    ]);
    release();
    await Promise.all([alone, shared, more]);
  });
});
