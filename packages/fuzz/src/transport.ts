/**
 * @module Transports: in-process (anything with Hono's `request(path, init)`) and real HTTP (`fetch` against a
 * base URL). Both record the response fully (status, headers, bytes) so checks stay pure functions.
 */
import type { PreparedRequest } from './case.ts';

export interface RecordedResponse {
  status: number;
  statusText: string;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: Uint8Array;
  /** `body` decoded as UTF-8. */
  text: string;
  elapsedMs: number;
  /** The body was cut (an open event stream, or larger than the cap). */
  truncated: boolean;
}

export interface Transport {
  /** Base URL that reports and curl commands show (`http://localhost` in-process). */
  baseUrl: string;
  send(request: PreparedRequest): Promise<RecordedResponse>;
}

/** Hono's `app.request`, or any object with the same shape. */
export interface InProcessApp {
  request(path: string, init?: RequestInit): Response | Promise<Response>;
}

export interface TransportOptions {
  /** A body read stops when no byte arrived for this long (long-lived SSE streams). */
  idleTimeoutMs?: number;
  /** A body read stops at this many bytes. */
  maxBodyBytes?: number;
  /** The whole request must finish in this time (HTTP only). */
  requestTimeoutMs?: number;
}

export function inProcessTransport(app: InProcessApp, options: TransportOptions = {}): Transport {
  const opts = { idleTimeoutMs: 200, maxBodyBytes: 4 << 20, ...options };
  return {
    baseUrl: 'http://localhost',
    async send(req) {
      const started = performance.now();
      const res = await app.request(req.path, { method: req.method, headers: req.headers, body: req.body });
      return record(res, started, opts);
    },
  };
}

export function httpTransport(baseUrl: string, options: TransportOptions = {}): Transport {
  const opts = { idleTimeoutMs: 2_000, maxBodyBytes: 4 << 20, requestTimeoutMs: 30_000, ...options };
  const base = baseUrl.replace(/\/+$/, '');
  return {
    baseUrl: base,
    async send(req) {
      const started = performance.now();
      const res = await fetch(base + req.path, {
        method: req.method,
        headers: req.headers,
        body: req.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(opts.requestTimeoutMs),
      });
      return record(res, started, opts);
    },
  };
}

async function record(res: Response, started: number, opts: Required<Pick<TransportOptions, 'idleTimeoutMs' | 'maxBodyBytes'>>): Promise<RecordedResponse> {
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    headers[k.toLowerCase()] = v;
  });
  const { bytes, truncated } = await readBody(res, opts.idleTimeoutMs, opts.maxBodyBytes);
  return {
    status: res.status,
    statusText: res.statusText,
    headers,
    body: bytes,
    text: new TextDecoder().decode(bytes),
    elapsedMs: performance.now() - started,
    truncated,
  };
}

async function readBody(res: Response, idleMs: number, maxBytes: number): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (!res.body) return { bytes: new Uint8Array(), truncated: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<'idle'>((resolve) => {
      timer = setTimeout(() => resolve('idle'), idleMs);
    });
    const next = await Promise.race([reader.read(), idle]);
    clearTimeout(timer);
    if (next === 'idle') {
      truncated = true;
      break;
    }
    if (next.done) break;
    chunks.push(next.value);
    size += next.value.byteLength;
    if (size >= maxBytes) {
      truncated = true;
      break;
    }
  }
  if (truncated) await reader.cancel().catch(() => undefined);
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    bytes.set(c, offset);
    offset += c.byteLength;
  }
  return { bytes, truncated };
}
