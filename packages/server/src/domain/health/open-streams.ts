/**
 * @module The Server-Sent Events streams this process holds open, so a graceful shutdown can end
 * each one properly (an invocation stream with `event: error` `service_unavailable`, an MCP stream by
 * closing it) instead of cutting the connection.
 */
export interface OpenStreams {
  /** Registers the way to end one stream; the returned function unregisters it (the stream ended). */
  register(end: () => Promise<void>): () => void;
  /** Ends every open stream; resolves when each has written its last event. */
  endAll(): Promise<void>;
  readonly size: number;
}

/** The message of the `event: error` that ends a stream at shutdown. */
export const RESTARTING_MESSAGE = 'The server is restarting; retry the request.';

export function createOpenStreams(): OpenStreams {
  const ends = new Set<() => Promise<void>>();
  return {
    register(end) {
      ends.add(end);
      return () => ends.delete(end);
    },
    async endAll() {
      const all = [...ends];
      ends.clear();
      await Promise.allSettled(all.map((end) => end()));
    },
    get size() {
      return ends.size;
    },
  };
}
