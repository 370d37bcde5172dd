/**
 * `oneAtATime`: calls while a run is under way are one more run, and a caller waits for at most the run under way
 * and that next one, even while calls keep arriving (as inbound hand-overs that end one after another make them).
 */
import { describe, expect, it } from 'vitest';
import { oneAtATime } from './one-at-a-time.ts';

describe('oneAtATime', () => {
  it('runs the calls that arrive during a run as one more run', async () => {
    let runs = 0;
    let release: () => void = () => {};
    const fill = oneAtATime(async () => {
      runs += 1;
      if (runs === 1) await new Promise<void>((resolve) => (release = resolve));
    });
    const first = fill();
    const [second, third] = [fill(), fill()];
    expect(second).toBe(third);
    release();
    await Promise.all([first, second, third]);
    expect(runs).toBe(2);
    expect(fill.current).toBeUndefined();
  });

  it('answers a caller after the run under way and the next, while every run keeps asking for another', async () => {
    let runs = 0;
    let ended = 0;
    let seenAt: number | undefined;
    const fill = oneAtATime(async () => {
      runs += 1;
      await Promise.resolve();
      ended += 1;
      // Each run ends by asking for one more (a hand-over that ends frees a slot), fifty times in a row.
      if (runs < 50) void fill();
    });
    void fill();
    // Asked during the first run: answered once the second has ended, not after the fiftieth.
    await fill().then(() => {
      seenAt = ended;
    });
    expect(seenAt).toBe(2);
    while (fill.current) await fill.current;
    expect(runs).toBe(50);
  });

  it('runs again after a run that failed, and the failure reaches only its own callers', async () => {
    let runs = 0;
    let release: () => void = () => {};
    const fill = oneAtATime(async () => {
      runs += 1;
      if (runs === 1) {
        await new Promise<void>((resolve) => (release = resolve));
        throw new Error('the store is down');
      }
    });
    const first = fill();
    const second = fill();
    release();
    await expect(first).rejects.toThrow('the store is down');
    await expect(second).resolves.toBeUndefined();
    expect(runs).toBe(2);
  });
});
