/** The worker's backoff while its ticks fail (the store is down): doubling from the poll, capped. */
import { describe, expect, it } from 'vitest';
import { backoffMs, MAX_BACKOFF_MS } from './index.ts';

describe('worker backoff', () => {
  it('polls at the interval while ticks succeed, doubles after each failure, and stops at the cap', () => {
    expect(backoffMs(1_000, 0)).toBe(1_000);
    expect([1, 2, 3, 4].map((failures) => backoffMs(1_000, failures))).toEqual([2_000, 4_000, 8_000, 16_000]);
    expect(backoffMs(1_000, 5)).toBe(MAX_BACKOFF_MS);
    expect(backoffMs(1_000, 500)).toBe(MAX_BACKOFF_MS);
    // A poll already above the cap is kept as it is.
    expect(backoffMs(60_000, 3)).toBe(60_000);
  });
});
