/**
 * @module A run's event log followed live (`GET /runs/{run_id}/events`, `getRunEvents`): read as a stream with the
 * session (the typed client, the body as a stream, so a refusal is read in words like any other answer), resumed
 * after a drop with `Last-Event-ID`, each event handed on once, in order of `sequence`, until the terminal event.
 */
import { ApiError, api, type Schemas, toApiError } from './api.ts';
import { readSse } from './sse.ts';

export type RunEvent = Schemas['RunEvent'];
export type TerminalRunEvent = Extract<RunEvent, { type: 'run.completed' | 'run.failed' | 'run.canceled' }>;

/** `live` while a stream is open, `reconnecting` while waiting to resume after a drop. */
export type Connection = 'live' | 'reconnecting';

export interface FollowOptions {
  /** Aborting stops following (the page left the run); the promise then resolves with `undefined`. */
  signal: AbortSignal;
  /** The last sequence already shown (an invocation stream's last `id:`): only what follows is handed on. */
  after?: number;
  onEvent(event: RunEvent): void;
  onConnection(connection: Connection): void;
}

/** Waits before resuming: 1 s, doubling up to 15 s, back to 1 s once an event arrives. */
const FIRST_WAIT_MS = 1000;
const LONGEST_WAIT_MS = 15_000;
/**
 * Drops in a row without reaching the server before giving up (about two minutes of waiting). A stream the server
 * opened counts as reaching it, events or not: a run that waits for an approval sends nothing until the decision,
 * which may take days, and a proxy may cut a quiet stream at its own limit; the page follows it all the same.
 */
const MOST_DROPS = 10;

export function isTerminal(event: RunEvent): event is TerminalRunEvent {
  return event.type === 'run.completed' || event.type === 'run.failed' || event.type === 'run.canceled';
}

/**
 * Follows the run until its terminal event, which it resolves with. A drop (network error, a stream that ends
 * before the terminal event, 429 or 5xx) is resumed after the last `sequence` received, so no fragment is shown
 * twice; any other refusal (404, 401, …) is thrown as an ApiError, and so is a server not reached MOST_DROPS times
 * in a row.
 */
export async function followRunEvents(runId: string, options: FollowOptions): Promise<TerminalRunEvent | undefined> {
  let last = options.after ?? 0;
  let drops = 0;
  let wait = FIRST_WAIT_MS;
  while (!options.signal.aborted) {
    let retryAfterMs: number | undefined;
    try {
      const {
        data: body,
        error,
        response,
      } = await api.GET('/runs/{run_id}/events', {
        params: { path: { run_id: runId }, header: last > 0 ? { 'Last-Event-ID': String(last) } : {} },
        headers: { Accept: 'text/event-stream' },
        parseAs: 'stream',
        signal: options.signal,
      });
      if (!response.ok || !body) {
        const refusal = toApiError(response, error);
        if (!isPassing(response.status)) throw refusal;
        retryAfterMs = refusal.retryAfterSec ? refusal.retryAfterSec * 1000 : undefined;
      } else {
        options.onConnection('live');
        drops = 0;
        for await (const message of readSse(body)) {
          const event = JSON.parse(message.data) as RunEvent;
          // A resumed stream starts after `last`; an event at or before it would repeat text already shown.
          if (typeof event.sequence !== 'number' || event.sequence <= last) continue;
          last = event.sequence;
          drops = 0;
          wait = FIRST_WAIT_MS;
          options.onEvent(event);
          if (isTerminal(event)) return event;
        }
      }
    } catch (err) {
      if (options.signal.aborted) return undefined;
      if (err instanceof ApiError) throw err;
      // Otherwise the connection failed or broke mid-stream: resumed below.
    }
    drops += 1;
    if (drops > MOST_DROPS)
      throw new ApiError(0, 'network_error', 'The live view lost the server. Check the connection, then follow the run again.', undefined, undefined, {});
    options.onConnection('reconnecting');
    await pause(retryAfterMs ?? wait, options.signal);
    wait = Math.min(wait * 2, LONGEST_WAIT_MS);
  }
  return undefined;
}

/** Answers worth waiting out: rate limited, or the server briefly unable to answer. */
function isPassing(status: number): boolean {
  return status === 429 || status === 502 || status === 503 || status === 504;
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
