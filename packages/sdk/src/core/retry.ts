/**
 * @module When and how long to wait before retrying: `429 rate_limit_exceeded` and `429 budget_reserved` always
 * (the request was refused before any work), 5xx and connection failures when the request is safe to repeat (a read, a delete, or an
 * invocation carrying its `Idempotency-Key`). `quota_exceeded` and `kill_switch` are never retried: they end
 * by waiting for the reset or by reviewing consumption.
 */
import { ConnectionError, type ServiceError } from './errors.ts';

export const INITIAL_DELAY_MS = 500;
export const MAX_DELAY_MS = 8_000;
/** A `Retry-After` longer than this is not waited for: the error is thrown with `retryAfterSec`. */
export const MAX_RETRY_AFTER_MS = 60_000;

export function isRetriable(error: ServiceError | ConnectionError, repeatable: boolean): boolean {
  if (error instanceof ConnectionError) return repeatable;
  if (error.code === 'rate_limit_exceeded' || error.code === 'budget_reserved') return true;
  if (error.code === 'quota_exceeded' || error.code === 'kill_switch') return false;
  return repeatable && error.status >= 500 && error.status !== 501;
}

/**
 * The wait before retry number `attempt + 1`: `Retry-After` (seconds or an HTTP date) when the answer has one,
 * otherwise exponential backoff from 0.5 s, capped at 8 s, with jitter (between half and the whole of it).
 * Returns undefined when `Retry-After` asks for longer than MAX_RETRY_AFTER_MS.
 */
export function retryDelayMs(attempt: number, headers: Headers | undefined, random: () => number = Math.random): number | undefined {
  const retryAfter = headers?.get('retry-after');
  if (retryAfter) {
    const seconds = Number(retryAfter);
    const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(retryAfter) - Date.now();
    if (Number.isFinite(ms)) return ms > MAX_RETRY_AFTER_MS ? undefined : Math.max(0, ms);
  }
  const ceiling = Math.min(MAX_DELAY_MS, INITIAL_DELAY_MS * 2 ** attempt);
  return ceiling / 2 + (ceiling / 2) * random();
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
