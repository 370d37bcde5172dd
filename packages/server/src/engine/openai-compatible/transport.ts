/**
 * @module The `fetch` the engine's `openai` client is given: a kept-alive undici `Pool` on the
 * server's origin, behind a small WHATWG `fetch`. Node's global `fetch` (undici's fetch, with its
 * spec machinery around every request and response) cost about 0.3 ms more CPU per model call
 * (docs/performance.md, "The model call's transport").
 *
 * What the client reads of a response is kept: the status, the headers, and the body, read whole
 * unless it is an event stream, which is handed on as it arrives (with backpressure). The signal
 * the client passes (its timeout, the caller's abort, a `break` out of a stream) aborts the
 * request at any point, the body included, and closes its connection; the rejection or the
 * stream's error is the signal's `AbortError`, which the client tells apart from a broken
 * connection (errors.ts maps both). No redirect is followed (the global `fetch` followed them): a
 * model server is configured by its address, and a 3xx fails the call like any other status. Only
 * the headers a call needs are sent (SENT_HEADERS).
 */
import { type Dispatcher, Pool } from 'undici';

export interface Transport {
  /** What the `openai` client calls instead of the global `fetch`. */
  readonly fetch: typeof globalThis.fetch;
  /** Drops the kept-alive connections and any request still in flight (the server is stopping). */
  close(): Promise<void>;
}

/**
 * The request headers that leave: what a Chat Completions call needs, and a trace's context. The client adds others by
 * itself (headers from the host's `OPENAI_CUSTOM_HEADERS`, which no option turns off, and `x-stainless-*`, its
 * description of this host); configuration comes only from ours, so those stay here.
 */
const SENT_HEADERS = ['accept', 'authorization', 'content-type', 'traceparent', 'tracestate', 'user-agent'] as const;

/** Statuses whose response has no body (the `Response` constructor refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** A streamed answer's media type. */
const EVENT_STREAM = /^text\/event-stream\b/i;

/** An event stream is handed on as it arrives; this many chunks are buffered before the upstream is paused. */
const STREAM_CHUNKS = 16;

export function createTransport(baseURL: string): Transport {
  const origin = new URL(baseURL).origin;
  // No cap on connections, undici's keep-alive defaults: what the global fetch's dispatcher did.
  const pool = new Pool(origin);
  const fetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : input);
    // The client only ever calls its base URL's origin; anything else is a bug, not a request to send.
    if (url.origin !== origin) throw new TypeError('request outside the configured server');
    const { body: requestBody } = init;
    if (requestBody != null && typeof requestBody !== 'string' && !(requestBody instanceof Uint8Array)) throw new TypeError('unsupported request body');
    const { statusCode, headers, body } = await pool.request({
      path: url.pathname + url.search,
      method: (init.method ?? 'GET') as Dispatcher.HttpMethod,
      headers: sentHeaders(init.headers instanceof Headers ? init.headers : new Headers(init.headers)),
      body: requestBody,
      signal: init.signal ?? undefined,
    });
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(headers)) {
      if (Array.isArray(value)) for (const one of value) responseHeaders.append(name, one);
      else if (value !== undefined) responseHeaders.append(name, value);
    }
    const head = { status: statusCode, headers: responseHeaders };
    if (NULL_BODY.has(statusCode)) {
      // Nothing to read; reading to its end keeps the connection for the next request.
      await body.dump();
      return new Response(null, head);
    }
    if (EVENT_STREAM.test(responseHeaders.get('content-type') ?? '')) return new Response(webStream(body), head);
    // A JSON answer or an error body: read whole, so the client's timeout covers it too.
    return new Response(await body.bytes(), head);
  };
  return {
    fetch: fetch as typeof globalThis.fetch,
    close: () => pool.destroy(),
  };
}

function sentHeaders(given: Headers): Record<string, string> {
  const sent: Record<string, string> = {};
  for (const name of SENT_HEADERS) {
    const value = given.get(name);
    if (value !== null) sent[name] = value;
  }
  return sent;
}

/** Node's readable as a WHATWG stream: paused while the reader is {@link STREAM_CHUNKS} behind; cancelling it closes the request. */
function webStream(body: Dispatcher.ResponseData['body']): ReadableStream<Uint8Array> {
  let open = true;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        body.on('data', (chunk: Buffer) => {
          if (!open) return;
          controller.enqueue(chunk);
          if ((controller.desiredSize ?? 1) <= 0) body.pause();
        });
        body.once('end', () => {
          if (open) controller.close();
          open = false;
        });
        // Aborted (the signal's AbortError), or the connection broke: the reader sees that error.
        body.on('error', (error: Error) => {
          if (open) controller.error(error);
          open = false;
        });
      },
      pull() {
        body.resume();
      },
      cancel() {
        open = false;
        body.destroy();
      },
    },
    { highWaterMark: STREAM_CHUNKS },
  );
}
