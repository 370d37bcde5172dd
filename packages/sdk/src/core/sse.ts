/**
 * @module A Server-Sent Events reader over a fetch body: yields `{ event, data, id }` per event (the event name
 * defaults to `message`; several `data:` lines join with newlines; `id` is the event's own `id:` line, if any;
 * comments and `retry:` are skipped). As the SSE specification says, an event not closed by its blank line when the
 * body ends is discarded: a stream cut in the middle of an event yields only the events it delivered whole.
 *
 * A connection can die without closing (a NAT or a proxy forgets it): with `idleMs`, a body that delivers no byte for
 * that long is canceled and the reader throws `ConnectionError`, which the callers treat as a drop (they resume).
 */
import { ConnectionError } from './errors.ts';

export interface SseEvent {
  event: string;
  data: string;
  /** The `id:` line of this event (a run's stream: the event's `sequence`); undefined when it has none. */
  id: string | undefined;
}

export async function* readSse(body: ReadableStream<Uint8Array>, options: { idleMs?: number } = {}): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const read = options.idleMs === undefined ? () => reader.read() : () => readWithin(reader, options.idleMs!);
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let id: string | undefined;
  try {
    for (;;) {
      const { value, done } = await read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let newline = buffer.search(/\r\n|\r|\n/);
      // A lone `\r` at the end may be the first half of `\r\n`: wait for the next chunk.
      while (newline >= 0 && !(newline === buffer.length - 1 && buffer.endsWith('\r') && !done)) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
        if (line === '') {
          if (data.length) yield { event: event || 'message', data: data.join('\n'), id };
          event = '';
          data = [];
          id = undefined;
        } else if (!line.startsWith(':')) {
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'event') event = value;
          else if (field === 'data') data.push(value);
          else if (field === 'id' && !value.includes('\0')) id = value;
        }
        newline = buffer.search(/\r\n|\r|\n/);
      }
      if (done) break;
    }
  } finally {
    reader.releaseLock();
  }
}

/** One read, or `ConnectionError` (the body canceled) when no byte came within `idleMs`. */
async function readWithin(reader: ReadableStreamDefaultReader<Uint8Array>, idleMs: number): ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const idle = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ConnectionError(`the stream sent nothing for ${idleMs} ms`)), idleMs);
  });
  try {
    return await Promise.race([reader.read(), idle]);
  } catch (error) {
    if (error instanceof ConnectionError) await reader.cancel(error).catch(() => {});
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
