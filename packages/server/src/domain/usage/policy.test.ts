import { describe, expect, it } from 'vitest';
import { pctConsumed, policyLevel, POLICY_LEVELS } from './policy.ts';

describe('quota policy', () => {
  it.each([
    // consumed, quota, rollover, pct, level
    [0, 1_000, 0, 0, 'green'],
    [749, 1_000, 0, 74.9, 'green'],
    [750, 1_000, 0, 75, 'warning'],
    [899, 1_000, 0, 89.9, 'warning'],
    [900, 1_000, 0, 90, 'critical'],
    [999, 1_000, 0, 99.9, 'critical'],
    [1_000, 1_000, 0, 100, 'overage'],
    [1_099, 1_000, 0, 109.9, 'overage'],
    [1_100, 1_000, 0, 110, 'grace'],
    [1_199, 1_000, 0, 119.9, 'grace'],
    [1_200, 1_000, 0, 120, 'hardstop'],
    [5_000, 1_000, 0, 500, 'hardstop'],
    // rollover raises the allowance: 1,500 of 1,000 + 1,000 is 75 %.
    [1_500, 1_000, 1_000, 75, 'warning'],
    // floored, never rounded up into the next level's figure.
    [1_199_999, 1_000_000, 0, 119.99, 'grace'],
    [2, 3, 0, 66.66, 'green'],
    // no allowance at all.
    [0, 0, 0, 0, 'green'],
    [1, 0, 0, 100, 'overage'],
    [2, 0, 0, 200, 'hardstop'],
  ] as const)('%i of %i + %i → %d %% %s', (consumedStu, quotaStu, rolloverStu, pct, level) => {
    const allowance = { consumedStu, quotaStu, rolloverStu };
    expect(pctConsumed(allowance)).toBe(pct);
    expect(policyLevel(allowance)).toBe(level);
  });

  it('names the six levels of the spec', () => {
    expect(POLICY_LEVELS).toEqual(['green', 'warning', 'critical', 'overage', 'grace', 'hardstop']);
  });
});
