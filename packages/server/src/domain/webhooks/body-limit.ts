/**
 * @module Reading an inbound body with the spec's 1 MB cap enforced while reading: a declared
 * `Content-Length` over the cap is refused before any byte is read, and a stream that passes the
 * cap is cancelled at once, so an unbounded body is never buffered.
 */
import { ServiceError } from '../../errors.ts';

/** The inbound body cap in bytes: 1 MB read as 1 MiB (1,048,576 bytes), as body parsers count it. */
export const MAX_INBOUND_BODY_BYTES = 1024 * 1024;

/** The 413 of an inbound body over the cap. */
export class PayloadTooLargeError extends ServiceError<'payload_too_large'> {
  constructor(readonly limitBytes: number) {
    super('payload_too_large', 413, `The body is larger than ${limitBytes} bytes`, {});
  }
}

interface ReadBodyOptions {
  /** The request's `Content-Length` header, if any; a value over the cap fails before reading. */
  contentLength?: string | null;
  /** The cap in bytes; {@link MAX_INBOUND_BODY_BYTES} unless given. */
  limitBytes?: number;
  /** Aborted when the body took too long: the stream is cancelled and {@link BodyTimeoutError} thrown. */
  signal?: AbortSignal;
}

/** A body that did not arrive in time (the inbound routes' `INBOUND_BODY_TIMEOUT_MS`). */
export class BodyTimeoutError extends ServiceError {
  constructor() {
    super('invalid_request', 400, 'The request body did not arrive in time.', {}, { Connection: 'close' });
  }
}

/**
 * A body its client's connection closed before it was read (the client left mid-body, or before the server read what
 * it had sent: the adapter's stream fails either way). The client is gone, so the answer
 * is for the request log: the client's doing, not a failure of the server or of the store (the driver's error, an
 * `ECONNRESET` "aborted", used to read as a lost database connection: `503`, a store outage in the metrics and an
 * error logged with its stack for every such client).
 */
export class BodyIncompleteError extends ServiceError {
  constructor() {
    super('invalid_request', 400, 'The connection closed before the request body was read.', {}, { Connection: 'close' });
  }
}

/**
 * Read a request body stream (a web `ReadableStream`, as `c.req.raw.body` in Hono) into one
 * `Uint8Array` of at most `limitBytes`. A null body reads as empty. Throws
 * {@link PayloadTooLargeError} as soon as the declared length or the bytes read pass the cap,
 * after cancelling the stream so the rest is never pulled, and {@link BodyIncompleteError} when the stream fails
 * (its client closed the connection).
 */
export async function readBodyWithLimit(body: ReadableStream<Uint8Array> | null | undefined, options: ReadBodyOptions = {}): Promise<Uint8Array> {
  const limit = options.limitBytes ?? MAX_INBOUND_BODY_BYTES;
  const declared = parseContentLength(options.contentLength);
  if (declared !== undefined && declared > limit) {
    await body?.cancel().catch(() => undefined);
    throw new PayloadTooLargeError(limit);
  }
  if (!body) return new Uint8Array(0);

  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  const { signal } = options;
  let timedOut = false;
  const onAbort = () => {
    timedOut = true;
    void reader.cancel().catch(() => undefined);
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      if (signal?.aborted) onAbort();
      const { done, value } = await reader.read().catch(() => {
        // The stream fails only when its connection does (the adapter's request stream): cut by the timeout above,
        // or by the client.
        throw timedOut ? new BodyTimeoutError() : new BodyIncompleteError();
      });
      if (timedOut) throw new BodyTimeoutError();
      if (done) break;
      total += value.byteLength;
      if (total > limit) {
        await reader.cancel().catch(() => undefined);
        throw new PayloadTooLargeError(limit);
      }
      chunks.push(value);
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    reader.releaseLock();
  }
  return concat(chunks, total);
}

// An unparsable Content-Length is left to the streaming count instead of being trusted or refused.
function parseContentLength(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Number(value);
}

function concat(chunks: readonly Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
