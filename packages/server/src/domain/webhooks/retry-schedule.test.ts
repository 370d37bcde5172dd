import { describe, expect, it } from 'vitest';
import {
  MAX_DELIVERY_ATTEMPTS,
  nextAttemptAt,
  nextRetryDelayMs,
  PAUSE_AFTER_CONSECUTIVE_FAILURES,
  RETRY_SCHEDULE_SECONDS,
  shouldPauseDestination,
} from './retry-schedule.ts';

describe('retry schedule', () => {
  it('is the published one: 0 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h', () => {
    expect(RETRY_SCHEDULE_SECONDS).toEqual([0, 30, 120, 600, 1800, 3600, 7200, 14400]);
    expect(MAX_DELIVERY_ATTEMPTS).toBe(8);
  });

  const nominal: [number, number][] = [
    [1, 30_000],
    [2, 120_000],
    [3, 600_000],
    [4, 1_800_000],
    [5, 3_600_000],
    [6, 7_200_000],
    [7, 14_400_000],
  ];
  it.each(nominal)('after %i failed attempts waits the nominal delay with centred jitter (%i ms)', (failed, ms) => {
    expect(nextRetryDelayMs(failed, () => 0.5)).toBe(ms);
    expect(nextRetryDelayMs(failed, () => 0)).toBe(Math.round(ms * 0.8));
    expect(nextRetryDelayMs(failed, () => 0.999999)).toBe(Math.round(ms * (1 + 0.2 * (2 * 0.999999 - 1))));
    expect(nextRetryDelayMs(failed, () => 0.25)).toBe(Math.round(ms * 0.9));
  });

  it('gives up after the 8th failed attempt', () => {
    expect(nextRetryDelayMs(8, () => 0.5)).toBeNull();
    expect(nextRetryDelayMs(20, () => 0.5)).toBeNull();
    expect(nextAttemptAt(8, new Date(0), () => 0.5)).toBeNull();
  });

  it('dates the next attempt from the failed one', () => {
    expect(nextAttemptAt(1, new Date('2026-11-22T06:00:00Z'), () => 0.5)?.toISOString()).toBe('2026-11-22T06:00:30.000Z');
    expect(nextAttemptAt(7, new Date('2026-11-22T06:00:00Z'), () => 0)?.toISOString()).toBe('2026-11-22T09:12:00.000Z');
  });

  it('refuses nonsense input', () => {
    expect(() => nextRetryDelayMs(0)).toThrow(RangeError);
    expect(() => nextRetryDelayMs(1.5)).toThrow(RangeError);
    expect(() => nextRetryDelayMs(1, () => 1)).toThrow(RangeError);
    expect(() => nextRetryDelayMs(1, () => Number.NaN)).toThrow(RangeError);
  });

  it('uses Math.random by default, inside ±20 %', () => {
    for (let i = 0; i < 200; i += 1) {
      const delay = nextRetryDelayMs(3)!;
      expect(delay).toBeGreaterThanOrEqual(480_000);
      expect(delay).toBeLessThanOrEqual(720_000);
    }
  });
});

describe('pause rule', () => {
  it('pauses a destination at 20 consecutive failed attempts', () => {
    expect(PAUSE_AFTER_CONSECUTIVE_FAILURES).toBe(20);
    expect(shouldPauseDestination(19)).toBe(false);
    expect(shouldPauseDestination(20)).toBe(true);
    expect(shouldPauseDestination(21)).toBe(true);
    expect(shouldPauseDestination(0)).toBe(false);
  });
});
