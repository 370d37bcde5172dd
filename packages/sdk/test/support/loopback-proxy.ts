/**
 * @module Test helper: a loopback HTTP proxy in front of the real server that can misbehave on purpose, one
 * request at a time: answer a canned error instead (a 429 with `Retry-After`, a 503), forward the request and
 * then drop the answer (the server did the work, the client never hears of it), or never answer.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';

export type ProxyAction = 'pass' | 'drop-response' | 'hang' | { status: number; headers?: Record<string, string>; body?: unknown };

export interface LoopbackProxy {
  url: string;
  /** Every request the proxy received, in order: method, path and headers. */
  seen: { method: string; path: string; headers: IncomingMessage['headers'] }[];
  /** Actions for the next requests, in order; once they are used up, requests pass. */
  script(...actions: ProxyAction[]): void;
  close(): Promise<void>;
}

export async function startLoopbackProxy(port: number, target: string): Promise<LoopbackProxy> {
  const upstream = new URL(target);
  let actions: ProxyAction[] = [];
  const seen: LoopbackProxy['seen'] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers });
      const action = actions.shift() ?? 'pass';
      if (action === 'hang') return;
      if (typeof action === 'object') {
        res.writeHead(action.status, { 'content-type': 'application/json', 'x-request-id': 'req_loopback_proxy', ...action.headers });
        res.end(action.body === undefined ? '' : JSON.stringify(action.body));
        return;
      }
      const forwarded = httpRequest(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
        (answer) => {
          if (action === 'drop-response') {
            // Read the whole answer (the server finished its work), then cut the client's connection.
            answer.resume();
            answer.on('end', () => req.socket.destroy());
            return;
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forwarded.on('error', () => res.destroy());
      forwarded.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
  // Port 0: the one the system chose.
  const { port: listening } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${listening}`,
    seen,
    script: (...next) => {
      actions = next;
    },
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
