/**
 * @module A destination's health as its deliveries report it: a delivered attempt clears the
 * failure count, a failed one adds to it and pauses the destination once the pause rule says so
 * (domain/webhooks/retry-schedule.ts). Called by the delivery worker: for a failure in the
 * transaction that records the attempt; for a success only when the destination had failures when
 * the delivery was claimed (a healthy destination's row is not written by each of its deliveries).
 */
import type { Db, Tx } from '../../store/db.ts';
import { int, oneOf, selectRow, tableRow } from '../../store/rows.ts';
import { shouldPauseDestination } from '../webhooks/retry-schedule.ts';

/** A delivery to the destination succeeded: its consecutive failures are back to 0. */
export async function recordDestinationSuccess(db: Db | Tx, destinationId: string): Promise<void> {
  await db.query(`UPDATE webhook_destinations SET consecutive_failures = 0 WHERE id = $1 AND consecutive_failures <> 0`, [destinationId]);
}

/** What the destination keeps of its last failed attempt (the panel shows it beside the failure count). */
interface DestinationFailure {
  /** domain/webhooks/failure-kind.ts */
  errorKind: string;
  httpStatus: number | null;
  /** The receiver answered `410 Gone`: paused at once (`gone`), whatever the failure count. */
  gone?: boolean;
}

/**
 * A delivery attempt to the destination failed: one more consecutive failure, the failure kept as the
 * last one, and paused: `gone` at once when the receiver answered 410 Gone, `failures` when the count is
 * too many. A destination already paused (an admin's pause that came meanwhile) keeps its reason.
 */
export async function recordDestinationFailure(tx: Tx, destinationId: string, at: Date, failure: DestinationFailure): Promise<void> {
  const dest = await selectRow(
    tx,
    tableRow('webhook_destinations', { consecutive_failures: int, status: oneOf(['active', 'paused']) }),
    `UPDATE webhook_destinations
        SET consecutive_failures = consecutive_failures + 1, last_failure_at = $2, last_failure_kind = $3, last_failure_status = $4
      WHERE id = $1
     RETURNING consecutive_failures, status`,
    [destinationId, at, failure.errorKind, failure.httpStatus],
  );
  if (dest?.status !== 'active') return;
  const reason = failure.gone ? 'gone' : shouldPauseDestination(dest.consecutive_failures) ? 'failures' : null;
  if (reason) {
    await tx.query(`UPDATE webhook_destinations SET status = 'paused', paused_at = $2, paused_reason = $3 WHERE id = $1`, [destinationId, at, reason]);
  }
}
