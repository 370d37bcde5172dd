/**
 * @module Fuzzing a deployment that limits request rates (60 per minute per address by default): a
 * transport that spaces requests (`--rate-limit N/s`) and, on a request-rate 429
 * (`rate_limit_exceeded`, or `rate_limited` on inbound routes) with `Retry-After`, waits and sends
 * the same case again. A 429 of the quota or a kill switch is an answer to check, never retried.
 * A request-rate 429 that is still there after the retries is not a finding: the runner skips its
 * checks (`isRequestRateLimited`) and counts it.
 */
import type { PreparedRequest } from './case.ts';
import type { RecordedResponse, Transport } from './transport.ts';

export interface PacingOptions {
  /** At most this many requests per second (spaced evenly); unlimited when absent. */
  ratePerSec?: number;
  /** How many times one case is sent again after a request-rate 429. Default 5. */
  maxRetries?: number;
  /** The longest `Retry-After` honoured, in seconds; a longer one is returned as it is. Default 120. */
  maxWaitSec?: number;
  /** Waits (tests pass their own). */
  sleep?: (ms: number) => Promise<void>;
  /** Milliseconds since an origin (tests pass their own). */
  now?: () => number;
}

const RATE_LIMIT_CODES = new Set(['rate_limit_exceeded', 'rate_limited']);

/** A 429 that says "too many requests" (not the quota, not a kill switch, not failed logins). */
export function isRequestRateLimited(response: RecordedResponse): boolean {
  if (response.status !== 429) return false;
  try {
    return RATE_LIMIT_CODES.has((JSON.parse(response.text) as { error?: unknown }).error as string);
  } catch {
    return false;
  }
}

/** `--rate-limit` values: `N/s` or `N/m` (requests per second or per minute); a plain number is per second. */
export function parseRate(value: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(?:\/\s*(s|m))?\s*$/.exec(value);
  const n = match ? Number(match[1]) : NaN;
  if (!match || !(n > 0)) throw new Error(`--rate-limit must look like 10/s or 50/m, not "${value}"`);
  return match[2] === 'm' ? n / 60 : n;
}

export function pacedTransport(inner: Transport, options: PacingOptions = {}): Transport & { retried: () => number } {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const now = options.now ?? (() => performance.now());
  const spacing = options.ratePerSec ? 1000 / options.ratePerSec : 0;
  const maxRetries = options.maxRetries ?? 5;
  const maxWaitMs = (options.maxWaitSec ?? 120) * 1000;
  let nextSlot = 0;
  let retried = 0;

  async function paced(request: PreparedRequest): Promise<RecordedResponse> {
    if (spacing > 0) {
      const at = Math.max(now(), nextSlot);
      nextSlot = at + spacing;
      const wait = at - now();
      if (wait > 0) await sleep(wait);
    }
    return inner.send(request);
  }

  return {
    baseUrl: inner.baseUrl,
    retried: () => retried,
    async send(request) {
      let response = await paced(request);
      for (let attempt = 0; attempt < maxRetries && isRequestRateLimited(response); attempt += 1) {
        const waitMs = retryAfterMs(response);
        if (waitMs === undefined || waitMs > maxWaitMs) break;
        retried += 1;
        await sleep(waitMs);
        response = await paced(request);
      }
      return response;
    },
  };
}

function retryAfterMs(response: RecordedResponse): number | undefined {
  const value = response.headers['retry-after'];
  if (value === undefined || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value) * 1000;
}
