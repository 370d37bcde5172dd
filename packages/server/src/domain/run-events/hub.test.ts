/**
 * The live tail of a run between two instances' hubs on one PostgreSQL schema (each with its own
 * pool and listener, as two `serve` processes have): nothing is published until someone watches;
 * a watch sends what the executing hub holds, then each new event; an event larger than a
 * notification's 8000 bytes arrives whole, in pieces; a watch that comes before the run begins is
 * remembered; `whenFollowed` answers whether a reader came. On the embedded store a hub is local.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenDb } from '../../store/db.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import { createRunEventHub, type RunEventHub } from './hub.ts';
import type { RunEvent } from './log.ts';

const DATABASE_URL = process.env.DATABASE_URL;
const AT = new Date('2026-06-01T09:00:00Z');

/** Resolves with the events the listener got once `count` arrived. */
function collect(hub: RunEventHub, runId: string, after: number, count: number): { events: RunEvent[]; done: Promise<RunEvent[]>; stop: () => void } {
  const events: RunEvent[] = [];
  let resolve: (value: RunEvent[]) => void = () => {};
  const done = new Promise<RunEvent[]>((r) => {
    resolve = r;
  });
  const stop = hub.follow(runId, after, (event) => {
    events.push(event);
    // The first `count`: a follower may hear an event twice (a watch and a rewatch both answered; the reader
    // drops what it already has, by sequence), after the promise resolved and before its awaiter resumed.
    if (events.length === count) resolve(events.slice(0, count));
  });
  return { events, done, stop };
}

describe.skipIf(!DATABASE_URL)('run event hubs of two instances on PostgreSQL', () => {
  let store: TestStore;
  let peer: OpenDb;
  let a: RunEventHub;
  let b: RunEventHub;
  const notifications: string[] = [];
  /** The watches A's listener handled: heard after A's hub (the handlers of a channel run in order, synchronously). */
  const watchesHandledByA: string[] = [];

  beforeAll(async () => {
    store = await testBackends()
      .find((backend) => backend.name === 'postgres')!
      .open();
    peer = await store.peer();
    a = createRunEventHub(store.db);
    b = createRunEventHub(peer);
    await Promise.all([a.listenToBus(), b.listenToBus()]);
    await store.db.listen!('service_run_watch', { message: (payload) => watchesHandledByA.push(payload), state: () => {} });
    // What goes over the bus, as a third instance hears it.
    const spy = await store.peer();
    await spy.listen!('service_run_events', { message: (payload) => notifications.push(payload), state: () => {} });
  });
  afterAll(async () => {
    await store.cleanup();
  });

  it('publishes nothing for a run nobody watches; a watch gets what A holds, then each new event, in order', async () => {
    const live = a.begin('run_AAAAAAAAAAAAAAAAAAAA');
    live.push({ type: 'text.delta', delta: 'Hello ' }, AT);
    live.push({ type: 'tool.called', name: 'crm.lookup', summary: 'Called crm.lookup.' }, AT);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(notifications).toEqual([]);

    const reader = collect(b, 'run_AAAAAAAAAAAAAAAAAAAA', 0, 5);
    // A watch and its answer cross PostgreSQL twice: more than expect.poll's default second on a busy machine.
    await expect.poll(() => reader.events.length, { timeout: 10_000 }).toBe(2);
    live.push({ type: 'text.delta', delta: 'world.' }, AT);
    const last = live.end({
      id: 'run_AAAAAAAAAAAAAAAAAAAA',
      status: 'completed',
      failureReason: null,
      usage: { inputTokens: 3, outputTokens: 2, stu: 15 },
      completedAt: AT.toISOString(),
      updatedAt: AT.toISOString(),
    });
    const events = await reader.done;
    reader.stop();
    expect(events.map((e) => [e.sequence, e.type])).toEqual([
      [3, 'text.delta'],
      [4, 'tool.called'],
      [5, 'text.delta'],
      [6, 'run.usage'],
      [7, 'run.completed'],
    ]);
    expect(last).toBe(7);
  });

  it('an event larger than one notification arrives whole, in pieces', async () => {
    const big = 'é'.repeat(12_000);
    const live = a.begin('run_BBBBBBBBBBBBBBBBBBBB');
    live.push({ type: 'text.delta', delta: big }, AT);
    const reader = collect(b, 'run_BBBBBBBBBBBBBBBBBBBB', 0, 1);
    const [event] = await reader.done;
    reader.stop();
    expect(event).toMatchObject({ sequence: 3, type: 'text.delta', delta: big });
    // Each payload within PostgreSQL's limit.
    expect(notifications.every((payload) => Buffer.byteLength(payload) < 8000)).toBe(true);
  });

  it('a watch that comes before the run begins is remembered; whenFollowed answers whether a reader came', async () => {
    const reader = collect(b, 'run_CCCCCCCCCCCCCCCCCCCC', 0, 1);
    // The run begins only once A handled the watch, so A must have remembered it (a fixed sleep let a slow
    // notification arrive after the begin, where it counts as a live watch and whenFollowed(10) could miss it).
    await expect.poll(() => watchesHandledByA, { timeout: 10_000 }).toContain(JSON.stringify(['run_CCCCCCCCCCCCCCCCCCCC', 0]));
    const live = a.begin('run_CCCCCCCCCCCCCCCCCCCC');
    expect(await live.whenFollowed(10)).toBe(true);
    live.push({ type: 'text.delta', delta: 'late start' }, AT);
    expect((await reader.done)[0]).toMatchObject({ sequence: 3, delta: 'late start' });
    reader.stop();

    const alone = a.begin('run_DDDDDDDDDDDDDDDDDDDD');
    expect(await alone.whenFollowed(50)).toBe(false);
  });

  it('a reader that saw a gap asks again and gets the events from there', async () => {
    const live = a.begin('run_EEEEEEEEEEEEEEEEEEEE');
    for (const delta of ['one ', 'two ', 'three ']) live.push({ type: 'text.delta', delta }, AT);
    const first = collect(b, 'run_EEEEEEEEEEEEEEEEEEEE', 0, 3);
    await first.done;
    first.stop();
    const again = collect(b, 'run_EEEEEEEEEEEEEEEEEEEE', 4, 1);
    b.rewatch('run_EEEEEEEEEEEEEEEEEEEE', 4);
    expect(await again.done).toMatchObject([{ sequence: 5, delta: 'three ' }]);
    again.stop();
  });
});
