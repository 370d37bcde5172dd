/**
 * @module getRunEvents (GET /runs/{run_id}/events) and its Set B twin under /v1: a run's event log
 * as Server-Sent Events (`id:` its sequence, `event:` its type, `data:` the RunEvent), after
 * `Last-Event-ID` or `?after=N`, live until the terminal event (domain/runs/run-events-reader.ts).
 * Readable as GET /runs/{run_id} is; another workspace's run is `404 not_found`, answered as JSON
 * before the stream begins. A comment line every 15 s keeps an idle connection open; a graceful
 * shutdown ends the stream, and the client resumes on another instance with its last id.
 */
import { streamSSE } from 'hono/streaming';
import { fail } from '../errors.ts';
import { type Handler, type Handlers, workspaceOf } from './handler.ts';

/** The largest sequence a client may name (the contract's bound). */
const MAX_SEQUENCE = 2_147_483_647;

const getRunEvents: Handler<'getRunEvents'> = async (c, { params, query, headers }, { runs, streams, mcp }) => {
  const workspaceId = workspaceOf(c);
  const after = resumeAfter(headers['last-event-id'], query.after);
  // Another workspace's run, or none: JSON 404 before any stream.
  await runs.answeredBy(workspaceId, params.run_id);
  const stream = streamSSE(c, async (stream) => {
    const stop = new AbortController();
    stream.onAbort(() => stop.abort());
    const unregister = streams.register(async () => stop.abort());
    let idle: ReturnType<typeof setTimeout> | undefined;
    const keepAlive = () => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        if (!stop.signal.aborted) void stream.write(': keep-alive\n\n').then(keepAlive, () => stop.abort());
      }, mcp.keepAliveMs);
    };
    try {
      keepAlive();
      for await (const event of runs.events(workspaceId, params.run_id, { after, signal: stop.signal })) {
        await stream.writeSSE({ id: String(event.sequence), event: event.type, data: JSON.stringify(event) });
        keepAlive();
      }
    } finally {
      clearTimeout(idle);
      unregister();
    }
  });
  return { status: 200, stream };
};

/** `Last-Event-ID` wins over `?after=`; a sequence beyond the contract's bound is refused. */
function resumeAfter(lastEventId: string | undefined, after: number | undefined): number {
  if (lastEventId === undefined) return after ?? 0;
  const value = Number(lastEventId);
  if (!Number.isSafeInteger(value) || value > MAX_SEQUENCE) throw fail('invalid_request', "'last-event-id' must be a whole number from 0 to 2147483647.");
  return value;
}

export const runEventHandlers = {
  getRunEvents,
  getRunEventsV1: getRunEvents,
} satisfies Partial<Handlers>;
