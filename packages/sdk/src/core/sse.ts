/**
 * @module A Server-Sent Events reader over a fetch body: yields `{ event, data, id }` per event (the event name
 * defaults to `message`; several `data:` lines join with newlines; `id` is the event's own `id:` line, if any;
 * comments and `retry:` are skipped). As the SSE specification says, an event not closed by its blank line when the
 * body ends is discarded: a stream cut in the middle of an event yields only the events it delivered whole.
 */

export interface SseEvent {
  event: string;
  data: string;
  /** The `id:` line of this event (a run's stream: the event's `sequence`); undefined when it has none. */
  id: string | undefined;
}

export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let id: string | undefined;
  try {
    for (;;) {
      const { value, done } = await reader.read();
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
