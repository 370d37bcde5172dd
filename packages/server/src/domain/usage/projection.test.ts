import { describe, expect, it } from 'vitest';
import { projectedStu } from './projection.ts';

describe('projectedStu', () => {
  it.each([
    // 30-day April: half-way through, 1,000 consumed → 2,000.
    ['2026-04-16T00:00:00Z', 1_000, 2_000],
    // a third of January (31 days) after 10 days and 8 hours → triple.
    ['2026-01-11T08:00:00Z', 3_000, 9_000],
    // last instant: projection equals consumption.
    ['2026-04-30T23:59:59.999Z', 5_000, 5_000],
    ['2026-04-10T00:00:00Z', 0, 0],
    // first minute: elapsed is floored to one hour (720 hours in April).
    ['2026-04-01T00:01:00Z', 10, 7_200],
  ])('at %s with %i consumed → %i', (now, consumed, want) => {
    expect(projectedStu(consumed, new Date(now))).toBe(want);
  });
});
