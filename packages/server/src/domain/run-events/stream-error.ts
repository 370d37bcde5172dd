/**
 * @module The `StreamError` of a run that did not complete, for a stream that already began (an invocation's
 * `event: error`) and for the `run.failed` event of its log; the synchronous answer is runs/outcome.ts's.
 *
 * | failureReason             | `error`           |
 * |---------------------------|-------------------|
 * | `kill_switch:<kind>`      | `kill_switch`     |
 * | `engine_error`, `timeout` | the same reason   |
 * | anything else             | `internal_error`  |
 */
import type { Run } from '../runs/store.ts';

export interface StreamErrorBody {
  error: 'engine_error' | 'timeout' | 'kill_switch' | 'internal_error' | 'service_unavailable';
  message: string;
  runId: string;
  requestId?: string;
}

export function streamErrorOf(run: Pick<Run, 'id' | 'failureReason'>, requestId: string): StreamErrorBody {
  const reason = run.failureReason ?? 'internal_error';
  if (reason.startsWith('kill_switch:')) {
    return { error: 'kill_switch', message: 'A spending kill switch stopped the run.', runId: run.id, requestId };
  }
  if (reason === 'engine_error' || reason === 'timeout') {
    return { error: reason, message: 'The agent could not complete the answer.', runId: run.id, requestId };
  }
  return { error: 'internal_error', message: 'The run failed.', runId: run.id, requestId };
}
