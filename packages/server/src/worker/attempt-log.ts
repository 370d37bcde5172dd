/**
 * @module One log line per delivery attempt, counted by outcome: `info` when delivered, `warn` when
 * it failed, with the error kind, the HTTP status, the duration and the next retry, so an operator
 * sees why a destination fails without opening the store. It names the destination by its id and
 * by the host of the URL its admin configured; never an address that host resolved to, never the
 * path, the body, a header or the secret. The socket's error code (`detail`) passes the redactor.
 */
import type { Logger } from '../log/index.ts';
import type { Metrics } from '../metrics/index.ts';
import { redactText } from '../redact/index.ts';
import type { DeliveryAttemptInfo } from './deliveries.ts';

export function logDeliveryAttempt(logger: Logger, metrics: Metrics | undefined, attempt: DeliveryAttemptInfo): void {
  const { outcome } = attempt;
  metrics?.deliveryAttempts.inc({ outcome: outcome.result });
  const fields = {
    deliveryId: attempt.deliveryId,
    eventId: attempt.eventId,
    eventType: attempt.eventType,
    destinationId: attempt.destinationId,
    destinationHost: attempt.destinationHost,
    attempt: attempt.attempt,
    result: outcome.result,
    durationMs: attempt.durationMs,
    ...(outcome.status !== undefined ? { httpStatus: outcome.status } : {}),
    ...(attempt.errorKind ? { errorKind: attempt.errorKind } : {}),
    ...('reason' in outcome ? { reason: outcome.reason, ...(outcome.detail ? { detail: redactText(outcome.detail) } : {}) } : {}),
    ...(attempt.nextRetryAt ? { nextRetryAt: attempt.nextRetryAt.toISOString() } : {}),
  };
  if (outcome.result === 'delivered') logger.info(fields, 'delivery sent');
  else logger.warn(fields, outcome.result === 'give_up' ? 'delivery failed; given up' : 'delivery failed; will retry');
}
