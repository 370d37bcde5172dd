/**
 * @module The `fetch` the MCP client's transport uses: every request passes the SSRF guard of webhook
 * destinations (domain/webhooks/ssrf-guard.ts) again, connects to the address the guard checked (a DNS rebind
 * between the check and the connect cannot reach a refused address), follows no redirect, and reads at most
 * {@link MAX_RESPONSE_BYTES} of an answer.
 *
 * Connections are kept alive between requests, in one pool per address the guard checked (and port and server
 * name): a session's requests (`initialize`, its call, its close) and the next sessions reuse one TLS connection
 * instead of opening one each, and a connection only ever carries requests pinned to the address it was opened to.
 * An idle connection is closed after {@link IDLE_MS}; a request whose reused connection the server had closed
 * meanwhile (the reset of a kept-alive connection, before the request was read) is sent once more on a new one,
 * unless the caller says it must not be (`resend: false`: the reset may also be a server that read it and failed).
 *
 * A request that failed before any of it could reach the server (its new connection failed before its TLS handshake
 * completed: refused, unreachable, reset, a certificate refused) fails with {@link RequestNotSent}: the MCP client
 * retries only what it knows was never received (mcp-client.ts).
 */
import { Agent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { Readable, Transform } from 'node:stream';
import type { SecureContextOptions } from 'node:tls';
import { resolveDestination, type DestinationPolicy } from '../webhooks/ssrf-guard.ts';

/** What one answer of a server may weigh (a tools list with large schemas fits; a flood does not). */
export const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

/** How long an idle connection is kept: under the 5 s after which Node's servers close one by default. */
export const IDLE_MS = 4_000;
/** Pools kept at once (addresses); past it the oldest is forgotten (its connections end when idle). */
const MAX_POOLS = 64;

/**
 * The transport's fetch: `(url, init) => Response`. `resend: false` (a request that acts, such as a `tools/call`) is
 * never sent a second time, not even after the reset of a reused connection: the server may have read it.
 */
export type PinnedFetch = (url: string | URL, init?: RequestInit, options?: { resend?: boolean }) => Promise<Response>;

/** A server's answer went past {@link MAX_RESPONSE_BYTES}. */
export class ResponseTooLarge extends Error {
  override readonly name = 'ResponseTooLarge';
}

/** A request failed before any of it could reach the server; `cause` is the failure. */
export class RequestNotSent extends Error {
  override readonly name = 'RequestNotSent';
  constructor(cause: unknown) {
    super('The request was not sent.', { cause });
  }
}

export function createPinnedFetch(options: { policy: DestinationPolicy; ca?: SecureContextOptions['ca'] }): PinnedFetch {
  const pools = new Map<string, Agent>();
  /** The pool of connections to the checked address `address` (port, server name). */
  function poolOf(address: string, port: number, servername: string | undefined): Agent {
    const key = `${address}|${port}|${servername ?? ''}`;
    let pool = pools.get(key);
    if (!pool) {
      // Forgotten, not destroyed: requests under way on its connections finish, and its idle ones time out.
      if (pools.size >= MAX_POOLS) pools.delete(pools.keys().next().value!);
      // No cap on connections: a pool only reuses idle ones, so one workspace's calls never queue another's behind
      // them (each workspace's sessions are bounded by its connection slots, connection-slots.ts).
      pool = new Agent({ keepAlive: true, timeout: IDLE_MS, ...(options.ca !== undefined ? { ca: options.ca } : {}) });
      pools.set(key, pool);
    }
    return pool;
  }

  return async (input, init = {}, sending = {}) => {
    const pinned = await resolveDestination(String(input), options.policy);
    const { url } = pinned;
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value;
    });
    // The MCP transport sends its messages as JSON text; an OpenID Connect token request is a form.
    const body = typeof init.body === 'string' ? init.body : init.body instanceof URLSearchParams ? init.body.toString() : undefined;
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const port = url.port === '' ? 443 : Number(url.port);
    const servername = isIP(host) === 0 ? host : undefined;
    const send = (retry: boolean) =>
      new Promise<Response>((resolve, reject) => {
        const req = httpsRequest(
          {
            hostname: host,
            port,
            path: `${url.pathname}${url.search}`,
            method: init.method ?? 'GET',
            headers,
            // The socket connects to the address the guard checked, whatever DNS says now.
            lookup: pinned.lookup as never,
            servername,
            agent: poolOf(pinned.address, port, servername),
            ...(options.ca !== undefined ? { ca: options.ca } : {}),
            ...(init.signal ? { signal: init.signal } : {}),
          },
          (res) => {
            const responseHeaders = new Headers();
            for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) responseHeaders.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
            const status = res.statusCode ?? 502;
            const empty = status === 204 || status === 304 || (status >= 100 && status < 200) || init.method === 'HEAD';
            let seen = 0;
            const bounded = new Transform({
              transform(chunk: Buffer, _encoding, callback) {
                seen += chunk.length;
                if (seen > MAX_RESPONSE_BYTES) callback(new ResponseTooLarge('The answer is too large.'));
                else callback(null, chunk);
              },
            });
            res.on('error', (error) => bounded.destroy(error));
            if (empty) res.resume();
            const stream = empty ? null : (Readable.toWeb(res.pipe(bounded)) as ReadableStream<Uint8Array>);
            resolve(new Response(stream, { status: status < 200 || status > 599 ? 502 : status, headers: responseHeaders }));
          },
        );
        // Whether the request's bytes may have reached the server: once it has a connection whose TLS handshake is
        // done (a reused one already was); before that nothing of it was sent.
        let connected = false;
        req.once('socket', (socket) => {
          if (req.reusedSocket) connected = true;
          else socket.once('secureConnect', () => (connected = true));
        });
        req.on('error', (error: NodeJS.ErrnoException) => {
          // A kept-alive connection the server closed as this request went out: nothing was read, send it again.
          if (retry && req.reusedSocket && error.code === 'ECONNRESET' && !init.signal?.aborted) resolve(send(false));
          else reject(connected ? error : new RequestNotSent(error));
        });
        req.end(body);
      });
    return send(sending.resend !== false);
  };
}
