import { describe, expect, it } from 'vitest';
import { BodyIncompleteError, MAX_INBOUND_BODY_BYTES, PayloadTooLargeError, readBodyWithLimit } from './body-limit.ts';

/** A stream that hands out `chunks` chunks of `size` bytes on demand and records what it did. */
function countingStream(chunkSize: number, chunks: number) {
  const log = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (log.pulled === chunks) {
          controller.close();
          return;
        }
        log.pulled += 1;
        controller.enqueue(new Uint8Array(chunkSize).fill(0x61));
      },
      cancel() {
        log.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, log };
}

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('readBodyWithLimit', () => {
  it('caps at 1 MiB by default', () => {
    expect(MAX_INBOUND_BODY_BYTES).toBe(1_048_576);
  });

  it('a body its client stopped sending is a 400 of the request, not a lost connection to the store', async () => {
    // What the HTTP adapter's stream fails with when the client closes its connection mid-body (Node's "aborted").
    const aborted = Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
    let sent = false;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (!sent) {
          sent = true;
          controller.enqueue(new Uint8Array([0x7b]));
          return;
        }
        controller.error(aborted);
      },
    });
    const error = await caught(readBodyWithLimit(stream, { contentLength: '100' }));
    expect(error).toBeInstanceOf(BodyIncompleteError);
    expect(error).toMatchObject({ code: 'invalid_request', status: 400 });
    expect((error as BodyIncompleteError).headers).toMatchObject({ Connection: 'close' });
  });

  it('reads a body under the cap into the exact bytes', async () => {
    const body = new Request('http://x/', { method: 'POST', body: 'héllo' }).body;
    expect(new TextDecoder().decode(await readBodyWithLimit(body))).toBe('héllo');
  });

  it('accepts a body of exactly the cap', async () => {
    const { stream } = countingStream(64 * 1024, 16);
    expect((await readBodyWithLimit(stream)).byteLength).toBe(MAX_INBOUND_BODY_BYTES);
  });

  it('stops at the chunk that passes the cap and cancels the rest of a huge stream', async () => {
    const { stream, log } = countingStream(64 * 1024, 10_000); // 640 MiB if read to the end
    const error = await caught(readBodyWithLimit(stream));
    expect(error).toBeInstanceOf(PayloadTooLargeError);
    expect((error as PayloadTooLargeError).code).toBe('payload_too_large');
    expect((error as PayloadTooLargeError).status).toBe(413);
    expect(log.pulled).toBe(17); // 16 chunks fill the cap, the 17th passes it
    expect(log.cancelled).toBe(true);
  });

  it('refuses a declared Content-Length over the cap before reading anything', async () => {
    const { stream, log } = countingStream(1, 1);
    const error = await caught(readBodyWithLimit(stream, { contentLength: String(MAX_INBOUND_BODY_BYTES + 1) }));
    expect(error).toBeInstanceOf(PayloadTooLargeError);
    expect(log.pulled).toBe(0);
    expect(log.cancelled).toBe(true);
  });

  it('does not trust a small Content-Length: the bytes read still count', async () => {
    const { stream } = countingStream(100, 3);
    const error = await caught(readBodyWithLimit(stream, { contentLength: '10', limitBytes: 250 }));
    expect(error).toBeInstanceOf(PayloadTooLargeError);
  });

  it('reads a missing body as empty', async () => {
    expect((await readBodyWithLimit(null)).byteLength).toBe(0);
  });

  it('honours a smaller configured cap', async () => {
    const { stream } = countingStream(10, 2);
    expect((await readBodyWithLimit(stream, { limitBytes: 20 })).byteLength).toBe(20);
    const over = countingStream(10, 3);
    expect(await caught(readBodyWithLimit(over.stream, { limitBytes: 20 }))).toBeInstanceOf(PayloadTooLargeError);
  });
});
