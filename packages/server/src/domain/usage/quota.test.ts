import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../errors.ts';
import { assertQuotaAllows, checkQuota, quotaExceededError } from './quota.ts';

const now = new Date('2026-04-30T23:00:00Z');

describe('checkQuota', () => {
  it.each([
    [0, 'green'],
    [1_000, 'overage'],
    [1_100, 'grace'],
    [1_199, 'grace'],
  ] as const)('%i of 1,000 is allowed at %s', (consumedStu, policy) => {
    expect(checkQuota({ now, quotaStu: 1_000, rolloverStu: 0, consumedStu })).toEqual({ allowed: true, policy });
    expect(assertQuotaAllows({ now, quotaStu: 1_000, rolloverStu: 0, consumedStu })).toBe(policy);
  });

  it('refuses at hardstop with policy, pctConsumed, resetAt and a Retry-After until the reset', () => {
    const decision = checkQuota({ now, quotaStu: 1_000, rolloverStu: 0, consumedStu: 1_250 });
    expect(decision).toEqual({
      allowed: false,
      policy: 'hardstop',
      pctConsumed: 125,
      resetAt: '2026-05-01T00:00:00.000Z',
      retryAfterMs: 3_600_000,
    });
  });

  it('throws the 429 quota_exceeded ServiceError', () => {
    let caught: unknown;
    try {
      assertQuotaAllows({ now, quotaStu: 1_000, rolloverStu: 200, consumedStu: 1_440 });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ServiceError);
    const error = caught as ServiceError;
    expect(error.code).toBe('quota_exceeded');
    expect(error.status).toBe(429);
    expect(error.extras).toEqual({ policy: 'hardstop', pctConsumed: 120, resetAt: '2026-05-01T00:00:00.000Z' });
    expect(error.headers).toEqual({ 'Retry-After': '3600', 'Retry-After-Ms': '3600000', 'X-Should-Retry': 'false' });
  });

  it('quotaExceededError mirrors the decision', () => {
    const error = quotaExceededError({ allowed: false, policy: 'hardstop', pctConsumed: 130.5, resetAt: 'x', retryAfterMs: 6_001 });
    expect(error.extras).toEqual({ policy: 'hardstop', pctConsumed: 130.5, resetAt: 'x' });
    expect(error.headers).toEqual({ 'Retry-After': '7', 'Retry-After-Ms': '6001', 'X-Should-Retry': 'false' });
  });
});
