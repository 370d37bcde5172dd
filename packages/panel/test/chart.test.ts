/**
 * The chart's value axis: its top is the next 1, 2 or 5 × 10ⁿ at or above the largest day, and its figures are short.
 */
import { describe, expect, it } from 'vitest';
import { axisTop, compact } from '../src/axis.ts';

describe('chart axis', () => {
  it('tops the axis at the next 1, 2 or 5 × 10ⁿ', () => {
    expect([0, 1, 3, 7, 10, 11, 180, 201, 4_900, 12_345, 600_000].map(axisTop)).toEqual([1, 1, 5, 10, 10, 20, 200, 500, 5_000, 20_000, 1_000_000]);
  });

  it('writes figures short', () => {
    expect([0, 0.5, 7, 999, 1_000, 1_500, 12_345, 2_000_000, 1_250_000].map(compact)).toEqual(['0', '0.5', '7', '999', '1k', '1.5k', '12.3k', '2M', '1.3M']);
  });
});
