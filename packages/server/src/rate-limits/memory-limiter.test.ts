/**
 * @module Tests of the in-memory sliding-window limiter, driven by a fake clock (no sleeps).
 */
import { describe, expect, it } from 'vitest';
import { createMemoryLimiter } from './memory-limiter.ts';

const WINDOW = 60_000;
const T0 = Date.parse('2026-01-01T00:00:00Z');

function setup(maxKeys?: number) {
  let now = T0;
  const limiter = createMemoryLimiter({ now: () => now, ...(maxKeys === undefined ? {} : { maxKeys }) });
  return {
    limiter,
    at(ms: number) {
      now = T0 + ms;
    },
  };
}

async function hitMany(limiter: ReturnType<typeof createMemoryLimiter>, key: string, n: number, limit: number) {
  const results = [];
  for (let i = 0; i < n; i += 1) results.push(await limiter.hit(key, limit, WINDOW));
  return results;
}

describe('memory limiter', () => {
  it('admits up to the limit, counting remaining down, then refuses', async () => {
    const { limiter } = setup();
    const results = await hitMany(limiter, 'ip:a', 4, 3);
    expect(results.map((r) => [r.allowed, r.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
    expect(results[0]).toEqual({ allowed: true, limit: 3, remaining: 2, resetAt: T0 / 1000 + 60, retryAfterSec: 0, retryAfterMs: 0 });
    expect(results[3]).toEqual({ allowed: false, limit: 3, remaining: 0, resetAt: T0 / 1000 + 60, retryAfterSec: 60, retryAfterMs: 60_000 });
  });

  it('slides: a hit leaves the window exactly windowMs after it was admitted', async () => {
    const { limiter, at } = setup();
    at(0);
    await limiter.hit('k', 3, WINDOW);
    at(30_000);
    await hitMany(limiter, 'k', 2, 3);
    at(59_999);
    const justBefore = await limiter.hit('k', 3, WINDOW);
    expect(justBefore).toMatchObject({ allowed: false, remaining: 0, retryAfterSec: 1, retryAfterMs: 1, resetAt: T0 / 1000 + 60 });
    at(60_000);
    // Only the hit of t=0 left; the two of t=30 s still count (a fixed bucket would admit 3 here).
    expect(await limiter.hit('k', 3, WINDOW)).toMatchObject({ allowed: true, remaining: 0, resetAt: T0 / 1000 + 90 });
    expect(await limiter.hit('k', 3, WINDOW)).toMatchObject({ allowed: false, retryAfterSec: 30 });
    at(90_000);
    // The two hits of t=30 s left; the one of t=60 s and this one count.
    expect(await limiter.hit('k', 3, WINDOW)).toMatchObject({ allowed: true, remaining: 1, resetAt: T0 / 1000 + 120 });
    at(300_000);
    expect(await limiter.hit('k', 3, WINDOW)).toMatchObject({ allowed: true, remaining: 2 });
  });

  it('does not count refused hits, so hammering does not extend the block', async () => {
    const { limiter, at } = setup();
    await hitMany(limiter, 'k', 2, 2);
    at(10_000);
    await hitMany(limiter, 'k', 50, 2);
    at(60_000);
    expect(await limiter.hit('k', 2, WINDOW)).toMatchObject({ allowed: true, remaining: 1 });
  });

  it('rounds Retry-After up to whole seconds, never below 1', async () => {
    const { limiter, at } = setup();
    at(500);
    await limiter.hit('k', 1, WINDOW);
    at(59_600);
    expect(await limiter.hit('k', 1, WINDOW)).toMatchObject({ allowed: false, retryAfterSec: 1, retryAfterMs: 900, resetAt: Math.ceil((T0 + 60_500) / 1000) });
    at(1_000);
    expect(await limiter.hit('k', 1, WINDOW)).toMatchObject({ allowed: false, retryAfterSec: 60 });
  });

  it('keeps keys apart', async () => {
    const { limiter } = setup();
    await hitMany(limiter, 'a', 2, 2);
    expect(await limiter.hit('a', 2, WINDOW)).toMatchObject({ allowed: false });
    expect(await limiter.hit('b', 2, WINDOW)).toMatchObject({ allowed: true, remaining: 1 });
  });

  it('forgets keys once all their hits left the window', async () => {
    const { limiter, at } = setup();
    for (let i = 0; i < 100; i += 1) await limiter.hit(`ip:${i}`, 60, WINDOW);
    expect(limiter.size).toBe(100);
    at(59_999);
    await limiter.hit('ip:late', 60, WINDOW);
    expect(limiter.size).toBe(101);
    at(60_000);
    await limiter.hit('ip:late', 60, WINDOW);
    // The next hit of that window drops the idle keys, while the live key keeps its count (two hits, then a third).
    expect(limiter.size).toBe(1);
    await limiter.hit('ip:late', 60, WINDOW);
    expect(await limiter.hit('ip:late', 3, WINDOW)).toMatchObject({ allowed: false });
  });

  it('never tracks more than maxKeys keys: idle ones go first, then the one that moved longest ago', async () => {
    const { limiter, at } = setup(10);
    await hitMany(limiter, 'ip:first', 2, 2);
    for (let i = 0; i < 9; i += 1) await limiter.hit(`ip:${i}`, 60, WINDOW);
    await limiter.hit('ip:new', 60, WINDOW);
    expect(limiter.size).toBe(10);
    // 'first' moved longest ago (when it came) and went: its count restarted.
    expect(await limiter.hit('ip:first', 2, WINDOW)).toMatchObject({ allowed: true, remaining: 1 });
    expect(limiter.size).toBe(10);
    // Once keys are idle, a new key takes an idle key's place and live counts survive.
    at(30_000);
    await hitMany(limiter, 'ip:busy', 3, 3);
    at(61_000);
    await limiter.hit('ip:newcomer', 60, WINDOW);
    expect(limiter.size).toBe(2);
    expect(await limiter.hit('ip:busy', 3, WINDOW)).toMatchObject({ allowed: false });
  });

  it('looks at a bounded number of tracked keys per hit, even full of live keys (many clients at once)', async () => {
    const { limiter, at } = setup(10_000);
    for (let i = 0; i < 10_000; i += 1) await limiter.hit(`ip:${i}`, 60, WINDOW);
    expect(limiter.size).toBe(10_000);
    const before = limiter.keysExamined;
    // 10,000 more clients within the window: each new key takes the place of the one that moved longest ago.
    at(1_000);
    for (let i = 0; i < 10_000; i += 1) await limiter.hit(`ip:new:${i}`, 60, WINDOW);
    expect(limiter.size).toBe(10_000);
    // At most a few keys a hit (the sweep of every key whenever full looked at 10,000 a hit).
    expect(limiter.keysExamined - before).toBeLessThanOrEqual(3 * 10_000);
    // The keys hit last are the ones kept.
    expect(await limiter.hit('ip:new:9999', 1, WINDOW)).toMatchObject({ allowed: false });
    expect(await limiter.hit('ip:0', 1, WINDOW)).toMatchObject({ allowed: true });
  });

  it('keeps each window length in its own order: idle keys go first, then the key of any window that moved longest ago', async () => {
    const { limiter, at } = setup(2);
    const HOUR = 3_600_000;
    await limiter.hit('ip:hourly', 2, HOUR);
    at(1_000);
    await limiter.hit('ip:minute', 2, WINDOW);
    // Full of live keys: the key that moved longest ago ('hourly', a window of an hour) makes room.
    at(2_000);
    await limiter.hit('ip:third', 2, WINDOW);
    expect(limiter.size).toBe(2);
    // 'hourly' comes back as a new key (its count restarted) in the place of 'minute', the one that moved longest ago.
    expect(await limiter.hit('ip:hourly', 1, HOUR)).toMatchObject({ allowed: true });
    // A minute later 'third' is idle: a new key of the minute takes its place, and 'hourly' keeps its count.
    at(62_500);
    await limiter.hit('ip:another', 2, WINDOW);
    expect(limiter.size).toBe(2);
    expect(await limiter.hit('ip:hourly', 1, HOUR)).toMatchObject({ allowed: false });
  });

  it('moves an admitted key to the end at most once a quarter of its window; room is made from the key that moved longest ago', async () => {
    const { limiter, at } = setup(3);
    await limiter.hit('ip:a', 5, WINDOW);
    at(1_000);
    await limiter.hit('ip:b', 5, WINDOW);
    at(2_000);
    await limiter.hit('ip:c', 5, WINDOW);
    // 'a' is hit 10 s after it moved (less than 15 s): it stays first. 'b' is hit 19 s after: it goes to the end.
    at(10_000);
    await limiter.hit('ip:a', 5, WINDOW);
    at(20_000);
    await limiter.hit('ip:b', 5, WINDOW);
    // So 'a' makes room for 'd' ('c' keeps its count), then 'c' for 'e' ('b' keeps its count).
    await limiter.hit('ip:d', 5, WINDOW);
    expect(await limiter.hit('ip:c', 1, WINDOW)).toMatchObject({ allowed: false });
    await limiter.hit('ip:e', 5, WINDOW);
    expect(limiter.size).toBe(3);
    expect(await limiter.hit('ip:b', 2, WINDOW)).toMatchObject({ allowed: false });
    expect(await limiter.hit('ip:a', 2, WINDOW)).toMatchObject({ allowed: true, remaining: 1 });
  });

  it('bounds each class of keys (what a key says before its first colon) on its own: a flood of addresses never pushes a workspace out', async () => {
    const { limiter, at } = setup(10);
    await hitMany(limiter, 'wksp:a', 3, 2);
    for (let i = 0; i < 100; i += 1) {
      at(i * 100);
      await limiter.hit(`ip:${i}`, 60, WINDOW);
    }
    expect(limiter.size).toBe(11);
    // The workspace's count survived 100 new addresses: still refused.
    expect(await limiter.hit('wksp:a', 2, WINDOW)).toMatchObject({ allowed: false });
    // 90 live addresses made room for others (the metrics show it), none of the workspaces.
    expect(limiter.classes()).toEqual([
      { name: 'wksp', keys: 1, evicted: 0 },
      { name: 'ip', keys: 10, evicted: 90 },
    ]);
  });
});
