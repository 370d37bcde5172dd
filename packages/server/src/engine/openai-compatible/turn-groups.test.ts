import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { turnGroups } from './turn-groups.ts';

/** Yields each batch's items in one turn (microtasks apart), the batches a timer apart. */
async function* batches<T>(...groups: T[][]): AsyncGenerator<T> {
  for (const [i, group] of groups.entries()) {
    if (i > 0) await sleep(5);
    for (const item of group) yield await Promise.resolve(item);
  }
}

async function all<T>(source: AsyncIterable<T[]>): Promise<T[][]> {
  const out: T[][] = [];
  for await (const group of source) out.push(group);
  return out;
}

describe('turnGroups', () => {
  it('hands on the first item of a turn alone, at once, and the rest of that turn together', async () => {
    expect(await all(turnGroups(batches([1, 2, 3, 4], [5], [6, 7, 8])))).toEqual([[1], [2, 3, 4], [5], [6], [7, 8]]);
  });

  it('hands on items that arrive a turn apart one by one', async () => {
    expect(await all(turnGroups(batches(['a'], ['b'], ['c'])))).toEqual([['a'], ['b'], ['c']]);
  });

  it('hands on the first item before the rest of its turn has arrived', async () => {
    const seen: string[] = [];
    async function* source() {
      seen.push('read 1');
      yield 1;
      seen.push('read 2');
      yield 2;
    }
    for await (const group of turnGroups(source())) seen.push(`group ${group.join(',')}`);
    expect(seen).toEqual(['read 1', 'group 1', 'read 2', 'group 2']);
  });

  it('passes on a failure of the source, after what arrived before it', async () => {
    async function* failing() {
      yield 1;
      yield 2;
      throw new Error('cut');
    }
    const seen: number[][] = [];
    await expect(
      (async () => {
        for await (const group of turnGroups(failing())) seen.push(group);
      })(),
    ).rejects.toThrow('cut');
    expect(seen).toEqual([[1], [2]]);
  });

  it('stops the source when the consumer stops', async () => {
    let stopped = false;
    async function* endless() {
      try {
        for (let i = 0; ; i++) {
          await sleep(1);
          yield i;
        }
      } finally {
        stopped = true;
      }
    }
    for await (const group of turnGroups(endless())) if (group[0] === 2) break;
    expect(stopped).toBe(true);
  });

  it('does not wait for a read still pending when the consumer stops', async () => {
    let release = () => {};
    let stopped = false;
    async function* stalls() {
      try {
        yield 1;
        yield 2;
        // The next read waits until released (a model that paused).
        await new Promise<void>((resolve) => (release = resolve));
        yield 3;
      } finally {
        stopped = true;
      }
    }
    const groups: number[][] = [];
    for await (const group of turnGroups(stalls())) {
      groups.push(group);
      if (group.includes(2)) break;
    }
    expect(groups).toEqual([[1], [2]]);
    expect(stopped).toBe(false);
    release();
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(true);
  });
});
