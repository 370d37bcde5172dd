/**
 * @module Admission control: a request that would only wait is refused at once. When the requests
 * in progress in this process, or the statements waiting for the store (the embedded store's
 * worker thread, or a free PostgreSQL connection), are at their bound, the request answers
 * `503 service_unavailable` with `Retry-After: 1` (`Retry-After-Ms: 1000`, `X-Should-Retry: true`: nothing was
 * done for it), before anything else is done for it, instead
 * of joining a queue it would leave seconds later. Health routes are never refused (a load balancer
 * must keep seeing the instance alive).
 *
 * Mounted first: a refusal is the cheapest answer the app gives (no log line of its own, no
 * redaction of a body that holds only fixed text and the request id, no routing), because under
 * overload clients that retry at once send refusals at the rate the process can answer them, and
 * every microsecond a refusal costs is taken from the requests already admitted. Refusals are
 * counted (`refused`, the metrics) instead of logged one by one.
 *
 * A request counts as in progress from its admission until its response begins: a stream that
 * has sent its headers no longer counts (it holds a connection, not the store).
 */
import type { MiddlewareHandler } from 'hono';
import { retryHints } from '../../errors.ts';
import { isAcceptableRequestId, newRequestId } from '../request-id/index.ts';

export interface AdmissionLimits {
  /** Requests in progress at most (MAX_REQUESTS_IN_FLIGHT); 0: no bound. */
  maxInFlight: number;
  /** Statements waiting for the store at most (MAX_STORE_QUEUE); 0: no bound. */
  maxStoreQueue: number;
}

export type AdmissionRefusal = 'in_flight' | 'store_queue';

/** Seconds a refused client waits: the queue of a loaded instance moves in well under one. */
export const ADMISSION_RETRY_AFTER_SEC = 1;

export const AT_CAPACITY_MESSAGE = 'The service is at capacity; retry shortly.';

export function admission(
  limits: AdmissionLimits,
  deps: { storeQueue: () => number; exempt: (path: string) => boolean; refused?: (reason: AdmissionRefusal) => void },
): MiddlewareHandler {
  const { maxInFlight, maxStoreQueue } = limits;
  let inFlight = 0;
  return async function admission(c, next) {
    const reason: AdmissionRefusal | undefined =
      maxInFlight > 0 && inFlight >= maxInFlight ? 'in_flight' : maxStoreQueue > 0 && deps.storeQueue() >= maxStoreQueue ? 'store_queue' : undefined;
    if (reason && !deps.exempt(c.req.path)) {
      deps.refused?.(reason);
      // The error table's body for a 5xx (ServerError), with the request id echoed or made as request-id does.
      const sent = c.req.header('x-request-id');
      const requestId = isAcceptableRequestId(sent) ? sent : newRequestId();
      return c.body(JSON.stringify({ error: 'service_unavailable', message: AT_CAPACITY_MESSAGE, requestId }), 503, {
        'Content-Type': 'application/json',
        ...retryHints(ADMISSION_RETRY_AFTER_SEC * 1000, true),
        'X-Request-Id': requestId,
      });
    }
    inFlight += 1;
    try {
      await next();
    } finally {
      inFlight -= 1;
    }
  };
}
