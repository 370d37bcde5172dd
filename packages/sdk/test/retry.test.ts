import { describe, expect, it } from 'vitest';
import { ConnectionError, createServiceError, errorClassOf, KillSwitchError, QuotaExceededError, RateLimitError } from '../src/core/errors.ts';
import { isRetriable, MAX_DELAY_MS, retryDelayMs } from '../src/core/retry.ts';

const error = (status: number, body: Record<string, unknown>) => createServiceError(status, body, new Headers());

describe('retry rules', () => {
  it('retries 429 rate_limit_exceeded always, 5xx and connection failures only when the request is repeatable', () => {
    expect(isRetriable(error(429, { error: 'rate_limit_exceeded', retryAfterSec: 1 }), false)).toBe(true);
    expect(isRetriable(error(503, { error: 'service_unavailable' }), true)).toBe(true);
    expect(isRetriable(error(500, { error: 'internal_error' }), false)).toBe(false);
    expect(isRetriable(new ConnectionError('refused'), true)).toBe(true);
    expect(isRetriable(new ConnectionError('refused'), false)).toBe(false);
  });

  it('retries 429 budget_reserved always (no run was created), as a RateLimitError with budget and retryAfterSec', () => {
    const reserved = error(429, { error: 'budget_reserved', budget: 'hour', retryAfterSec: 5 });
    expect(reserved).toBeInstanceOf(RateLimitError);
    expect(reserved).toMatchObject({ code: 'budget_reserved', budget: 'hour', retryAfterSec: 5 });
    expect(isRetriable(reserved, false)).toBe(true);
  });

  it('never retries quota_exceeded, kill_switch, 501 or a 4xx', () => {
    expect(isRetriable(error(429, { error: 'quota_exceeded', policy: 'hardstop', pctConsumed: 120, resetAt: 'x' }), true)).toBe(false);
    expect(isRetriable(error(429, { error: 'kill_switch', kind: 'day' }), true)).toBe(false);
    expect(isRetriable(error(501, { error: 'not_implemented' }), true)).toBe(false);
    expect(isRetriable(error(400, { error: 'invalid_body' }), true)).toBe(false);
  });

  it('obeys X-Should-Retry over the status, the code and the method', () => {
    const hinted = (status: number, body: Record<string, unknown>, shouldRetry: string) =>
      createServiceError(status, body, new Headers({ 'x-should-retry': shouldRetry }));
    // true: retried even where the SDK's own rule would not (a 503 of a POST without Idempotency-Key, a 4xx, a too_many_attempts).
    expect(isRetriable(hinted(503, { error: 'service_unavailable' }, 'true'), false)).toBe(true);
    expect(isRetriable(hinted(409, { error: 'conflict' }, 'true'), false)).toBe(true);
    expect(isRetriable(hinted(429, { error: 'too_many_attempts' }, 'true'), false)).toBe(true);
    // false: never retried, even a repeatable 503 or a rate limit.
    expect(isRetriable(hinted(503, { error: 'service_unavailable' }, 'false'), true)).toBe(false);
    expect(isRetriable(hinted(429, { error: 'rate_limit_exceeded', retryAfterSec: 1 }, 'false'), true)).toBe(false);
    // Anything else: the SDK's own rule.
    expect(isRetriable(hinted(503, { error: 'service_unavailable' }, 'maybe'), false)).toBe(false);
    expect(isRetriable(hinted(503, { error: 'service_unavailable' }, 'maybe'), true)).toBe(true);
  });

  it('prefers Retry-After-Ms to Retry-After, and bounds either by a minute', () => {
    expect(retryDelayMs(0, new Headers({ 'retry-after-ms': '1250', 'retry-after': '2' }))).toBe(1250);
    expect(retryDelayMs(0, new Headers({ 'retry-after-ms': '0' }))).toBe(0);
    expect(retryDelayMs(0, new Headers({ 'retry-after-ms': '120000', 'retry-after': '1' }))).toBeUndefined();
    // One that does not parse is ignored: Retry-After, then backoff.
    expect(retryDelayMs(0, new Headers({ 'retry-after-ms': 'soon', 'retry-after': '2' }))).toBe(2000);
    expect(retryDelayMs(0, new Headers({ 'retry-after-ms': 'soon' }), () => 1)).toBe(500);
  });

  it('waits exactly Retry-After (seconds or a date), and refuses to wait more than a minute', () => {
    expect(retryDelayMs(0, new Headers({ 'retry-after': '1' }))).toBe(1000);
    expect(retryDelayMs(3, new Headers({ 'retry-after': '0' }))).toBe(0);
    const inTwoSeconds = new Date(Date.now() + 2000).toUTCString();
    expect(retryDelayMs(0, new Headers({ 'retry-after': inTwoSeconds }))).toBeLessThanOrEqual(2000);
    expect(retryDelayMs(0, new Headers({ 'retry-after': '3600' }))).toBeUndefined();
  });

  it('backs off exponentially with jitter between half and the whole of the step, capped', () => {
    expect(retryDelayMs(0, undefined, () => 0)).toBe(250);
    expect(retryDelayMs(0, undefined, () => 1)).toBe(500);
    expect(retryDelayMs(2, undefined, () => 1)).toBe(2000);
    expect(retryDelayMs(20, undefined, () => 1)).toBe(MAX_DELAY_MS);
  });

  it('maps each code to its class, with the extra fields', () => {
    expect(errorClassOf(429, 'quota_exceeded')).toBe(QuotaExceededError);
    expect(errorClassOf(429, 'kill_switch')).toBe(KillSwitchError);
    expect(errorClassOf(429, 'too_many_attempts')).toBe(RateLimitError);
    const quota = error(429, {
      error: 'quota_exceeded',
      message: 'm',
      policy: 'grace',
      pctConsumed: 115.5,
      resetAt: '2030-01-01T00:00:00Z',
      requestId: 'req_1',
    });
    expect(quota).toMatchObject({ name: 'QuotaExceededError', code: 'quota_exceeded', message: 'm', policy: 'grace', pctConsumed: 115.5, requestId: 'req_1' });
  });
});
