import { describe, expect, it } from 'vitest';
import { periodOf, periodStart, resetAt } from './period.ts';

describe('period', () => {
  it.each([
    ['2026-01-15T12:00:00Z', '2026-01', '2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z'],
    ['2026-01-01T00:00:00Z', '2026-01', '2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z'],
    ['2026-01-31T23:59:59.999Z', '2026-01', '2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z'],
    ['2026-12-31T23:00:00Z', '2026-12', '2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
    ['2028-02-29T10:00:00Z', '2028-02', '2028-02-01T00:00:00.000Z', '2028-03-01T00:00:00.000Z'],
    // 23:30 on the 31st in New York is already the next month in UTC.
    ['2026-03-31T23:30:00-04:00', '2026-04', '2026-04-01T00:00:00.000Z', '2026-05-01T00:00:00.000Z'],
  ])('%s → %s, starts %s, resets %s', (now, period, start, reset) => {
    const at = new Date(now);
    expect(periodOf(at)).toBe(period);
    expect(periodStart(at).toISOString()).toBe(start);
    expect(resetAt(at).toISOString()).toBe(reset);
  });
});
