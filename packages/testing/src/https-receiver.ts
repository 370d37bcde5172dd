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
}

/** How the receiver answers a request: a status (and optional body), or never (`'hang'`). */
export type ReceiverAnswer = { status: number; body?: string; headers?: Record<string, string> } | 'hang';

export interface HttpsTestReceiver {
  /** `https://127.0.0.1:<port>` */
  origin: string;
  port: number;
  /** The certificate to pass as `ca`. */
  ca: string;
  received: ReceivedRequest[];
  close(): Promise<void>;
}

/** Start a receiver on 127.0.0.1 (an ephemeral port) answering each request with `answer`. */
export async function startHttpsTestReceiver(
  certificate: TestCertificate,
  answer: (request: ReceivedRequest) => ReceiverAnswer | Promise<ReceiverAnswer> = () => ({ status: 200 }),
): Promise<HttpsTestReceiver> {
  const received: ReceivedRequest[] = [];
  const server: Server = createServer({ key: certificate.key, cert: certificate.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: ReceivedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
      received.push(request);
      void Promise.resolve(answer(request)).then((reply) => {
        if (reply === 'hang') return;
        res.writeHead(reply.status, { 'Content-Type': 'text/plain', ...reply.headers });
        res.end(reply.body ?? '');
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('receiver has no port');
  return {
    origin: `https://127.0.0.1:${address.port}`,
    port: address.port,
    ca: certificate.cert,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
