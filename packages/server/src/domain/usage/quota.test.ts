import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../errors.ts';
import { quotaExceededError } from './quota.ts';

describe('quotaExceededError', () => {
  it('is the 429 quota_exceeded ServiceError of the refusal, with its retry hints', () => {
    const error = quotaExceededError({ allowed: false, policy: 'hardstop', pctConsumed: 130.5, resetAt: 'x', retryAfterMs: 6_001 });
    expect(error).toBeInstanceOf(ServiceError);
    expect(error.code).toBe('quota_exceeded');
    expect(error.status).toBe(429);
    expect(error.extras).toEqual({ policy: 'hardstop', pctConsumed: 130.5, resetAt: 'x' });
    expect(error.headers).toEqual({ 'Retry-After': '7', 'Retry-After-Ms': '6001', 'X-Should-Retry': 'false' });
  });
});
