import { describe, expect, it } from 'vitest';
import { fixedClock } from '../../clock.ts';
import { computeUsage } from './usage.ts';

describe('computeUsage', () => {
  it('builds the Usage resource with a fixed clock', () => {
    const clock = fixedClock('2026-04-16T00:00:00Z');
    expect(computeUsage({ now: clock.now(), quotaStu: 2_000_000, rolloverStu: 500_000, consumedStu: 2_000_000 })).toEqual({
      period: '2026-04',
      quotaStu: 2_000_000,
      rolloverStu: 500_000,
      consumedStu: 2_000_000,
      pctConsumed: 80,
      projectedStu: 4_000_000,
      level: 'warning',
      resetAt: '2026-05-01T00:00:00.000Z',
    });
  });

  it('moves to the next period at midnight UTC on the first', () => {
    const clock = fixedClock('2026-04-30T23:59:59.999Z');
    expect(computeUsage({ now: clock.now(), quotaStu: 10, rolloverStu: 0, consumedStu: 0 }).period).toBe('2026-04');
    clock.advance(1);
    const next = computeUsage({ now: clock.now(), quotaStu: 10, rolloverStu: 0, consumedStu: 0 });
    expect(next.period).toBe('2026-05');
    expect(next.resetAt).toBe('2026-06-01T00:00:00.000Z');
  });
});
