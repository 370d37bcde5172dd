/**
 * @module getRunEvents (GET /runs/{run_id}/events) and its Set B twin under /v1: a run's event log
 * as Server-Sent Events (`id:` its sequence, `event:` its type, `data:` the RunEvent), after
 * `Last-Event-ID` or `?after=N`, live until the terminal event (domain/run-events/reader.ts).
 * Readable as GET /runs/{run_id} is; another workspace's run is `404 not_found`, answered as JSON
 * before the stream begins. A comment line every 15 s keeps an idle connection open; a graceful
 * shutdown ends the stream, and the client resumes on another instance with its last id.
 */
import { streamSSE } from 'hono/streaming';
import { type Handler, type Handlers, workspaceOf } from './handler.ts';

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
    // Re-armed after each write; never once the stream ended (a keep-alive in flight as it ends finds it stopped).
    const keepAlive = () => {
      clearTimeout(idle);
      if (stop.signal.aborted) return;
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
      stop.abort();
      clearTimeout(idle);
      unregister();
    }
  });
  return { status: 200, stream };
};

/** `Last-Event-ID` (1 to 10 digits: the contract's pattern, checked before the handler) wins over `?after=`. */
function resumeAfter(lastEventId: string | undefined, after: number | undefined): number {
  return lastEventId === undefined ? (after ?? 0) : Number(lastEventId);
}

export const runEventHandlers = {
  getRunEvents,
  getRunEventsV1: getRunEvents,
} satisfies Partial<Handlers>;
