/**
 * @module When and how long to wait before retrying. The server's `X-Should-Retry` decides first where it is sent:
 * `true` retries whatever the status and the method (the request was refused before any work), `false` never does.
 * Without it: `429 rate_limit_exceeded` and `429 budget_reserved` always (the request was refused before any work),
 * 5xx and connection failures when the request is safe to repeat (a read, a delete, or an invocation carrying its
 * `Idempotency-Key`). `quota_exceeded` and `kill_switch` are never retried: they end by waiting for the reset or by
 * reviewing consumption. The wait is `Retry-After-Ms`, else `Retry-After` (seconds or an HTTP date), else backoff.
 */
import { ConnectionError, type ServiceError } from './errors.ts';

export const INITIAL_DELAY_MS = 500;
export const MAX_DELAY_MS = 8_000;
/** A wait (`Retry-After-Ms` or `Retry-After`) longer than this is not waited for: the error is thrown with `retryAfterSec`. */
export const MAX_RETRY_AFTER_MS = 60_000;

export function isRetriable(error: ServiceError | ConnectionError, repeatable: boolean): boolean {
  if (error instanceof ConnectionError) return repeatable;
  const shouldRetry = error.headers.get('x-should-retry');
  if (shouldRetry === 'true') return true;
  if (shouldRetry === 'false') return false;
  if (error.code === 'rate_limit_exceeded' || error.code === 'budget_reserved') return true;
  if (error.code === 'quota_exceeded' || error.code === 'kill_switch') return false;
  return repeatable && error.status >= 500 && error.status !== 501;
}

/**
 * The wait before retry number `attempt + 1`: the server's wait when the answer gives one (`Retry-After-Ms` in
 * milliseconds first, then `Retry-After` in seconds or as an HTTP date; a value that does not parse is ignored),
 * otherwise exponential backoff from 0.5 s, capped at 8 s, with jitter (between half and the whole of it).
 * Returns undefined when the server asks for longer than MAX_RETRY_AFTER_MS.
 */
export function retryDelayMs(attempt: number, headers: Headers | undefined, random: () => number = Math.random): number | undefined {
  const asked = serverWaitMs(headers);
  if (asked !== undefined) return asked > MAX_RETRY_AFTER_MS ? undefined : Math.max(0, asked);
  const ceiling = Math.min(MAX_DELAY_MS, INITIAL_DELAY_MS * 2 ** attempt);
  return ceiling / 2 + (ceiling / 2) * random();
}

function serverWaitMs(headers: Headers | undefined): number | undefined {
  const ms = headers?.get('retry-after-ms')?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Number(ms);
  const retryAfter = headers?.get('retry-after')?.trim();
  if (!retryAfter) return undefined;
  if (/^\d+(\.\d+)?$/.test(retryAfter)) return Number(retryAfter) * 1000;
  const at = Date.parse(retryAfter);
  return Number.isFinite(at) ? at - Date.now() : undefined;
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
