/**
 * @module Resuming an invocation stream that dropped before its `end` or `error` event: the rest comes from the run's
 * event log (`GET /v1/runs/{X-Run-Id}/events`, `Last-Event-ID` = the `id:` of the last fragment received), mapped back
 * to the invocation stream's own events, so that the caller's loop sees the stream it would have seen uncut:
 * `text.delta` → a fragment; `run.usage` then `run.completed` → the `end` event with that usage; `run.failed` → the
 * same `ServiceError` as an `event: error` (its `error` and `message`, `runId`, status 200); `run.canceled` → the `end`
 * event with the usage billed, as the server's own stream ends a canceled run.
 */
import { ServiceError, StreamInterruptedError, createServiceError } from './core/errors.ts';
import type { RequestOptions, Transport } from './core/transport.ts';
import { OPERATIONS, type Schemas } from './generated/operations.ts';
import type { StreamEvent } from './inference.ts';
import { followRunEvents } from './run-events.ts';

export async function* resumeStream(
  transport: Transport,
  runId: string,
  after: number,
  headers: Headers,
  options: RequestOptions,
  dropped: unknown,
): AsyncGenerator<StreamEvent> {
  const { signal, timeoutMs, maxRetries, headers: extra, bearer } = options;
  const request = { signal, timeoutMs, maxRetries, headers: extra, bearer };
  let last = after;
  let usage: Schemas['TokenUsage'] | undefined;
  let terminal: Schemas['RunEventCompleted'] | Schemas['RunEventCanceled'] | Schemas['RunEventFailed'] | undefined;
  try {
    for await (const event of followRunEvents(transport, runId, { ...request, after }, { cause: dropped })) {
      last = event.sequence;
      if (event.type === 'text.delta') yield { type: 'delta', delta: event.delta };
      else if (event.type === 'run.usage') usage = { inputTokens: event.usage.inputTokens, outputTokens: event.usage.outputTokens };
      else if (event.type === 'run.completed' || event.type === 'run.canceled' || event.type === 'run.failed') terminal = event;
    }
  } catch (error) {
    if (signal?.aborted || error instanceof StreamInterruptedError) throw error;
    // The invocation itself succeeded: a refused resume (a 404, a 403) is why the stream could not be completed.
    const why = error instanceof ServiceError ? `${error.status} ${error.code}` : String(error);
    throw new StreamInterruptedError(`the stream of run ${runId} dropped and could not be resumed: ${why}`, { runId, lastEventId: last, cause: error });
  }
  if (terminal === undefined) throw new StreamInterruptedError(`the stream of run ${runId} ended without its terminal event`, { runId, lastEventId: last });
  if (terminal.type === 'run.failed') {
    throw createServiceError(200, { error: terminal.error, message: terminal.message, runId }, headers);
  }
  yield { type: 'end', runId, usage: usage ?? (await billedUsage(transport, runId, request)) };
}

/** The run's usage when its log gave none before the terminal event (`run.usage` is sent just before it). */
async function billedUsage(transport: Transport, runId: string, options: RequestOptions): Promise<Schemas['TokenUsage']> {
  const detail = (await transport.call(OPERATIONS.getRunV1, { path: { run_id: runId } }, options)) as Schemas['RunDetail'];
  return { inputTokens: detail.run.usage.inputTokens, outputTokens: detail.run.usage.outputTokens };
}
