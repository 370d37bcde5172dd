/**
 * @module A run's event log, `GET /v1/runs/{run_id}/events`, as an async iterator of typed `RunEvent`s: from the start
 * or after a `sequence`, live until the terminal event (`run.completed`, `run.failed` or `run.canceled`), then done.
 * When the connection drops before the terminal event it reconnects with `Last-Event-ID` = the last `sequence`
 * received, and never yields an event twice. Reconnections are bounded: at most `maxRetries` failed attempts in a row
 * without a new event (a drop, a connection failure, or an answer the retry rules of ./core/retry.ts retry, waiting as
 * they say); an event received starts the count again.
 */
import { ConnectionError, ServiceError, StreamInterruptedError } from './core/errors.ts';
import { isRetriable, retryDelayMs, sleep } from './core/retry.ts';
import { readSse } from './core/sse.ts';
import type { RequestOptions, Transport } from './core/transport.ts';
import { OPERATIONS, type Schemas } from './generated/operations.ts';

export type RunEvent = Schemas['RunEvent'];
export type RunEventType = RunEvent['type'];
/** The events that end a run's log; every log ends with exactly one. */
export type TerminalRunEvent = Schemas['RunEventCompleted'] | Schemas['RunEventFailed'] | Schemas['RunEventCanceled'];

export const TERMINAL_EVENT_TYPES: readonly TerminalRunEvent['type'][] = ['run.completed', 'run.failed', 'run.canceled'];

export interface RunEventsOptions extends Omit<RequestOptions, 'idempotencyKey'> {
  /** Only the events after this `sequence` (the last one you received); default 0, from the start. */
  after?: number;
}

export function isTerminalRunEvent(event: RunEvent): event is TerminalRunEvent {
  return (TERMINAL_EVENT_TYPES as readonly string[]).includes(event.type);
}

/**
 * The run's events in order of `sequence`. `dropped`: the caller's own stream of this run already dropped (an
 * invocation stream resuming here), which counts as the first failed attempt. Throws a `ServiceError` the retry rules
 * do not retry as it is (`404 not_found`: no such run), and `StreamInterruptedError` once the attempts are used up.
 */
export async function* followRunEvents(
  transport: Transport,
  runId: string,
  options: RunEventsOptions = {},
  dropped?: { cause: unknown },
): AsyncGenerator<RunEvent> {
  const { after = 0, ...request } = options;
  const maxRetries = request.maxRetries ?? transport.config.maxRetries;
  let last = after;
  let failures = dropped ? 1 : 0;
  let failure: { cause: unknown; headers?: Headers } | undefined = dropped;
  for (;;) {
    if (failure) {
      if (failures > maxRetries) throw exhausted(failure.cause, runId, last, failures);
      const delay = retryDelayMs(failures - 1, failure.headers);
      if (delay === undefined) throw exhausted(failure.cause, runId, last, failures);
      await sleep(delay, request.signal);
    }
    const abort = new AbortController();
    const signal = request.signal ? AbortSignal.any([request.signal, abort.signal]) : abort.signal;
    try {
      const headers = last > 0 ? { 'last-event-id': String(last) } : undefined;
      // One attempt per request: this loop applies the retry rules, so that drops and refusals share one budget.
      const { response } = await transport.send(OPERATIONS.getRunEventsV1, { path: { run_id: runId }, headers }, { ...request, signal, maxRetries: 0 });
      if (!response.body) throw new TypeError('the event stream answer has no body');
      // The server sends a keep-alive comment every 15 s: silence for the request timeout is a dead connection.
      for await (const sse of readSse(response.body, { idleMs: request.timeoutMs ?? transport.config.timeoutMs })) {
        const event = parseEvent(sse.data, sse.id);
        if (event === undefined || event.sequence <= last) continue;
        last = event.sequence;
        failures = 0;
        yield event;
        if (isTerminalRunEvent(event)) return;
      }
      failure = { cause: new ConnectionError(`the event stream of run ${runId} closed before its terminal event`) };
    } catch (error) {
      if (request.signal?.aborted) throw request.signal.reason ?? error;
      if (error instanceof ServiceError) {
        if (!isRetriable(error, true)) throw error;
        failure = { cause: error, headers: error.headers };
      } else {
        failure = { cause: error };
      }
    } finally {
      // Leaving early (break, return, an exception) or a drop ends this request.
      abort.abort();
    }
    failures += 1;
  }
}

function parseEvent(data: string, id: string | undefined): RunEvent | undefined {
  let event: unknown;
  try {
    event = JSON.parse(data);
  } catch {
    return undefined;
  }
  if (typeof event !== 'object' || event === null || typeof (event as { type?: unknown }).type !== 'string') return undefined;
  const sequence = (event as { sequence?: unknown }).sequence ?? Number(id);
  if (typeof sequence !== 'number' || !Number.isInteger(sequence)) return undefined;
  return { ...(event as RunEvent), sequence };
}

/** After the last attempt: its ServiceError as it is (a 429 or 503 past the retries), otherwise the interruption. */
function exhausted(cause: unknown, runId: string, lastEventId: number, failures: number): Error {
  if (cause instanceof ServiceError) return cause;
  const why = cause instanceof Error ? cause.message : String(cause);
  return new StreamInterruptedError(
    `the stream of run ${runId} dropped ${failures} times in a row before its terminal event (last event ${lastEventId}): ${why}`,
    { runId, lastEventId, cause },
  );
}
