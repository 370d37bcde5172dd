/**
 * @module The SSE reader (src/core/sse.ts) on bodies split at every byte: each event's `id:`, comments skipped, CRLF,
 * and an event cut before its blank line discarded (what a dropped connection leaves); a silent body given up after `idleMs`.
 */
import { describe, expect, it } from 'vitest';
import { ConnectionError } from '../src/core/errors.ts';
import { readSse, type SseEvent } from '../src/core/sse.ts';

/** The body as one chunk per byte, the worst split a network can make. */
function byteByByte(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let index = 0;
  return new ReadableStream({
    pull(controller) {
      if (index < bytes.length) controller.enqueue(bytes.subarray(index, ++index));
      else controller.close();
    },
  });
}

async function read(text: string): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of readSse(byteByByte(text))) events.push(event);
  return events;
}

describe('readSse', () => {
  it.each<[string, string, SseEvent[]]>([
    [
      'ids, names and the default name',
      'id: 3\ndata: {"delta":"Hé"}\n\nid: 9\nevent: end\ndata: {"done":true}\n\n',
      [
        { event: 'message', data: '{"delta":"Hé"}', id: '3' },
        { event: 'end', data: '{"done":true}', id: '9' },
      ],
    ],
    ['no id', 'data: a\n\n', [{ event: 'message', data: 'a', id: undefined }]],
    [
      'a keep-alive comment between events',
      'id: 1\ndata: a\n\n: keep-alive\n\nid: 2\ndata: b\n\n',
      [
        { event: 'message', data: 'a', id: '1' },
        { event: 'message', data: 'b', id: '2' },
      ],
    ],
    ['CRLF line ends', 'id: 1\r\nevent: run.created\r\ndata: x\r\n\r\n', [{ event: 'run.created', data: 'x', id: '1' }]],
    ['several data lines', 'data: a\ndata: b\n\n', [{ event: 'message', data: 'a\nb', id: undefined }]],
    ['an event cut before its blank line is discarded', 'id: 1\ndata: a\n\nid: 2\ndata: {"delta":"b"}\n', [{ event: 'message', data: 'a', id: '1' }]],
    ['an event cut inside its data is discarded', 'id: 1\ndata: a\n\nid: 2\ndata: {"del', [{ event: 'message', data: 'a', id: '1' }]],
  ])('%s', async (_, body, want) => {
    expect(await read(body)).toEqual(want);
  });

  it('gives up on a body silent for idleMs: ConnectionError, the body canceled, the events before it delivered', async () => {
    let canceled: unknown;
    const silent = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('id: 1\ndata: a\n\n'));
      },
      cancel(reason) {
        canceled = reason;
      },
    });
    const events: SseEvent[] = [];
    const error = await (async () => {
      for await (const event of readSse(silent, { idleMs: 50 })) events.push(event);
    })().catch((e: unknown) => e);
    expect(events).toEqual([{ event: 'message', data: 'a', id: '1' }]);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toBe('the stream sent nothing for 50 ms');
    expect(canceled).toBe(error);
  });
});
