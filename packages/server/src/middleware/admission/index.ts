/**
 * @module Admission control: a request that would only wait is refused at once. When the requests
 * in progress in this process, or the statements waiting for the store (the embedded store's
 * worker thread, or a free PostgreSQL connection), are at their bound, the request answers
 * `503 service_unavailable` with `Retry-After: 1` before it is authenticated or limited, instead of
 * joining a queue it would leave seconds later. Health routes are not behind it (a load balancer
 * must keep seeing the instance alive).
 *
 * A request counts as in progress from its admission until its response begins: a stream that
 * has sent its headers no longer counts (it holds a connection, not the store).
 */
import type { MiddlewareHandler } from 'hono';
import { fail } from '../../errors.ts';

export interface AdmissionLimits {
  /** Requests in progress at most (MAX_REQUESTS_IN_FLIGHT); 0: no bound. */
  maxInFlight: number;
  /** Statements waiting for the store at most (MAX_STORE_QUEUE); 0: no bound. */
  maxStoreQueue: number;
}

/** Seconds a refused client waits: the queue of a loaded instance moves in well under one. */
export const ADMISSION_RETRY_AFTER_SEC = 1;

export function admission(
  limits: AdmissionLimits,
  deps: { storeQueue: () => number; refused?: (reason: 'in_flight' | 'store_queue') => void },
): MiddlewareHandler {
  const { maxInFlight, maxStoreQueue } = limits;
  let inFlight = 0;
  const refuse = (reason: 'in_flight' | 'store_queue') => {
    deps.refused?.(reason);
    return fail('service_unavailable', 'The service is at capacity; retry shortly.', {}, { 'Retry-After': String(ADMISSION_RETRY_AFTER_SEC) });
  };
  return async function admission(_c, next) {
    if (maxInFlight > 0 && inFlight >= maxInFlight) throw refuse('in_flight');
    if (maxStoreQueue > 0 && deps.storeQueue() >= maxStoreQueue) throw refuse('store_queue');
    inFlight += 1;
    try {
      await next();
    } finally {
      inFlight -= 1;
    }
  };
}
