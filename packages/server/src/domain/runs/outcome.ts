/**
 * @module What an invocation answers for a run that did not complete: the spec's error for the
 * synchronous JSON answer, and the `StreamError` of a stream that already began (run-events/stream-error.ts).
 *
 * | failureReason         | synchronous answer                                   | stream `event: error` |
 * |-----------------------|------------------------------------------------------|-----------------------|
 * | `kill_switch:<kind>`  | 429 `kill_switch` with `kind` (and `Retry-After`)    | `kill_switch`         |
 * | `engine_error`, `timeout` | 503 `service_unavailable` (`Retry-After: 30`, `X-Should-Retry: false`) | the same reason |
 * | anything else         | 500 `internal_error`                                 | `internal_error`      |
 */
import { fail, retryHints, type ServiceError } from '../../errors.ts';
import { killSwitchError, killSwitchOfReason, killSwitchWindows } from '../usage/index.ts';
import type { Run } from './store.ts';

const ENGINE_RETRY_AFTER_SEC = 30;

export function runFailureError(run: Run, now: Date): ServiceError {
  const reason = run.failureReason ?? 'internal_error';
  const kind = killSwitchOfReason(reason);
  if (kind) {
    const windows = killSwitchWindows(now);
    const end = kind === 'hour' ? windows.hour.end : kind === 'day' ? windows.day.end : null;
    const retryAfterMs = end ? Math.max(1, end.getTime() - now.getTime()) : kind === 'manual' ? 3_600_000 : 1000;
    const error = killSwitchError({ kind, retryAfterMs });
    return fail('kill_switch', `A spending kill switch stopped run ${run.id}.`, { kind }, error.headers);
  }
  if (reason === 'engine_error' || reason === 'timeout') {
    return fail(
      'service_unavailable',
      `The agent could not complete run ${run.id}; try again later.`,
      {},
      // The same request (its Idempotency-Key) would answer this failed run again: try later with a new one.
      retryHints(ENGINE_RETRY_AFTER_SEC * 1000, false),
    );
  }
  return fail('internal_error', `Run ${run.id} failed.`);
}
