/**
 * @module A real HTTPS webhook receiver on loopback for tests (delivery, outbox worker, e2e): a
 * self-signed certificate made with `openssl` at test time, trusted through the `ca` option,
 * and a scripted answer per request. Not used by the service itself.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import type { TLSSocket } from 'node:tls';
import { join } from 'node:path';

/** A key and certificate in PEM form. */
export interface TestCertificate {
  key: string;
  cert: string;
}

/**
 * A fresh self-signed certificate for 127.0.0.1, ::1, localhost and `extraNames` (DNS names),
 * made by the `openssl` command line; the files are removed again at once.
 */
export function createSelfSignedCertificate(extraNames: readonly string[] = []): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'webhook-cert-'));
  try {
    const san = ['IP:127.0.0.1', 'IP:::1', 'DNS:localhost', ...extraNames.map((name) => `DNS:${name}`)].join(',');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-sha256',
        '-days',
        '2',
        '-subj',
        '/CN=localhost',
        '-addext',
        `subjectAltName=${san}`,
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One request as the receiver saw it. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body bytes, exactly as received. */
  body: Buffer;
  /** The TLS connection it came on (1 for the receiver's first) and how many requests that connection carried before it. */
  connection: number;
  earlierOnConnection: number;
  /** The name the client asked for in TLS (SNI), if any. */
  servername: string | undefined;
}

/**
 * How the receiver answers a request: a status (and optional body), never (`'hang'`), or by closing
 * its connection at once without an answer (`'reset'`, as a server whose keep-alive timeout just ran out).
 */
export type ReceiverAnswer = { status: number; body?: string | Uint8Array; headers?: Record<string, string> } | 'hang' | 'reset';

export interface HttpsTestReceiver {
  /** `https://127.0.0.1:<port>` */
  origin: string;
  port: number;
  /** The certificate to pass as `ca`. */
  ca: string;
  received: ReceivedRequest[];
  /** TLS connections accepted so far. */
  readonly connections: number;
  close(): Promise<void>;
}

/** Start a receiver on 127.0.0.1 (an ephemeral port) answering each request with `answer`. */
export async function startHttpsTestReceiver(
  certificate: TestCertificate,
  answer: (request: ReceivedRequest) => ReceiverAnswer | Promise<ReceiverAnswer> = () => ({ status: 200 }),
): Promise<HttpsTestReceiver> {
  const received: ReceivedRequest[] = [];
  let connections = 0;
  const served = new WeakMap<object, { connection: number; requests: number }>();
  const server: Server = createServer({ key: certificate.key, cert: certificate.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const socket = req.socket as TLSSocket;
      const seen = served.get(socket) ?? { connection: 0, requests: 0 };
      const request: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
        connection: seen.connection,
        earlierOnConnection: seen.requests,
        servername: typeof socket.servername === 'string' ? socket.servername : undefined,
      };
      seen.requests += 1;
      received.push(request);
      void Promise.resolve(answer(request)).then((reply) => {
        if (reply === 'hang') return;
        if (reply === 'reset') {
          socket.destroy();
          return;
        }
        res.writeHead(reply.status, { 'Content-Type': 'text/plain', ...reply.headers });
        res.end(reply.body ?? '');
      });
    });
  });
  server.on('secureConnection', (socket: TLSSocket) => {
    connections += 1;
    served.set(socket, { connection: connections, requests: 0 });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('receiver has no port');
  return {
    origin: `https://127.0.0.1:${address.port}`,
    port: address.port,
    ca: certificate.cert,
    received,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
