import { describe, expect, it } from 'vitest';
import { fixedClock } from '../../clock.ts';
import { activeKillSwitch, KILL_SWITCH_LIMITS, killSwitchError, killSwitchOfReason, killSwitchReason, killSwitchWindows } from './kill-switch.ts';

describe('kill switches', () => {
  it('has the spec limits', () => {
    expect(KILL_SWITCH_LIMITS).toEqual({ run: 1_000_000, hour: 10_000_000, day: 80_000_000 });
  });

  it.each(['run', 'hour', 'day', 'manual'] as const)('reason for %s', (scope) => {
    expect(killSwitchReason(scope)).toBe(`kill_switch:${scope}`);
  });
});

describe('killSwitchOfReason', () => {
  it('reads back the kill switch of every reason killSwitchReason writes, and nothing else', () => {
    for (const kind of ['run', 'hour', 'day', 'manual'] as const) expect(killSwitchOfReason(killSwitchReason(kind))).toBe(kind);
    for (const other of ['engine_error', 'kill_switch:', 'kill_switch:week', 'kill_switch:hour ', 'xkill_switch:hour', 'internal_error']) {
      expect(killSwitchOfReason(other)).toBeUndefined();
    }
  });
});

describe('killSwitchWindows', () => {
  it('are UTC calendar hours and days', () => {
    const { hour, day } = killSwitchWindows(new Date('2026-04-30T23:45:10Z'));
    expect(hour.start.toISOString()).toBe('2026-04-30T23:00:00.000Z');
    expect(hour.end.toISOString()).toBe('2026-05-01T00:00:00.000Z');
    expect(day.start.toISOString()).toBe('2026-04-30T00:00:00.000Z');
    expect(day.end.toISOString()).toBe('2026-05-01T00:00:00.000Z');
  });
});

describe('activeKillSwitch', () => {
  const clock = fixedClock('2026-04-30T10:15:00Z');
  const since = new Date('2026-04-30T10:05:00Z');

  it.each([
    ['nothing active', { hourStu: 9_999_999, dayStu: 79_999_999 }, null],
    ['hour reached', { hourStu: 10_000_000, dayStu: 10_000_000, hourSince: since }, { kind: 'hour', activeSince: since, retryAfterMs: 2_700_000 }],
    ['hour reached, time unknown', { hourStu: 10_000_000, dayStu: 10_000_000 }, { kind: 'hour', retryAfterMs: 2_700_000 }],
    ['day reached wins over hour', { hourStu: 10_000_000, dayStu: 80_000_000, daySince: since }, { kind: 'day', activeSince: since, retryAfterMs: 49_500_000 }],
    ['manual wins over all', { hourStu: 10_000_000, dayStu: 80_000_000, manualSince: since }, { kind: 'manual', activeSince: since, retryAfterMs: 3_600_000 }],
    ['manual off', { hourStu: 0, dayStu: 0, manualSince: null }, null],
  ] as const)('%s', (_name, state, want) => {
    expect(activeKillSwitch({ now: clock.now(), ...state })).toEqual(want);
  });

  it('builds the 429 kill_switch error with kind, activeSince and the retry hints (wait, do not loop)', () => {
    const error = killSwitchError({ kind: 'hour', activeSince: since, retryAfterMs: 2_699_500 });
    expect(error.code).toBe('kill_switch');
    expect(error.status).toBe(429);
    expect(error.extras).toEqual({ kind: 'hour', activeSince: '2026-04-30T10:05:00.000Z' });
    expect(error.headers).toEqual({ 'Retry-After': '2700', 'Retry-After-Ms': '2699500', 'X-Should-Retry': 'false' });
    expect(killSwitchError({ kind: 'day', retryAfterMs: 5_000 }).extras).toEqual({ kind: 'day', activeSince: undefined });
  });
});
