/**
 * @module Graceful shutdown of `serve` (SIGTERM, SIGINT):
 *
 * 1. `/readyz` answers 503 `shutdown` and the listener stops accepting connections;
 * 2. requests in flight finish, for at most `SHUTDOWN_GRACE_MS` (idle keep-alive connections are closed);
 * 3. SSE streams still open are ended: an invocation stream with `event: error` `service_unavailable`
 *    (the run stops), an MCP stream by closing it; connections left after that are closed;
 * 4. the worker stops (its tick in flight finishes within what is left of the grace) and gives back the
 *    deliveries it still holds, so another instance sends them at once.
 *
 * The caller then closes the kept MCP sessions of integrations, Redis and the store, and the process exits 0.
 */
import type { Logger } from '../log/index.ts';
import type { Services } from '../services.ts';
import type { Worker } from '../worker/index.ts';

/** Time given to ended streams to flush their last event before their connections are cut. */
const STREAM_FLUSH_MS = 1_000;

/** What the stop uses of the HTTP server (Node's, plain or TLS). */
interface Closable {
  close(callback?: (err?: Error) => void): unknown;
  closeIdleConnections?: () => void;
  closeAllConnections?: () => void;
}

export function gracefulStop(deps: {
  server: Closable;
  services: Pick<Services, 'health' | 'streams'>;
  worker: Worker | undefined;
  graceMs: number;
  logger: Logger;
}): () => Promise<void> {
  let stopping: Promise<void> | undefined;
  return () => {
    stopping ??= run();
    return stopping;
  };

  async function run(): Promise<void> {
    const { server, services, logger, graceMs } = deps;
    // A duration, not a date: the monotonic clock, whatever happens to the wall clock meanwhile.
    const deadline = performance.now() + graceMs;
    services.health.beginShutdown();
    logger.info({ graceMs, openStreams: services.streams.size }, 'shutting down: no new connections, waiting for requests in flight');
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Connections that finish their response while we wait are closed as soon as they are idle.
    server.closeIdleConnections?.();
    const idle = setInterval(() => server.closeIdleConnections?.(), 50);
    try {
      const inTime = await Promise.race([closed.then(() => true), sleep(graceMs).then(() => false)]);
      if (!inTime) {
        logger.warn({ openStreams: services.streams.size }, 'grace period over: ending open streams');
        // A stream whose client reads nothing cannot take its last event: it is cut with the rest below.
        await Promise.race([services.streams.endAll(), sleep(STREAM_FLUSH_MS)]);
        const flushed = await Promise.race([closed.then(() => true), sleep(STREAM_FLUSH_MS).then(() => false)]);
        if (!flushed) server.closeAllConnections?.();
        await closed;
      }
    } finally {
      clearInterval(idle);
    }
    await deps.worker?.stop(Math.max(0, deadline - performance.now()));
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref?.());
}
