/**
 * The inbound front over real HTTP (@hono/node-server on loopback): what is refused before the body is read is
 * answered while the sender has sent only its headers (and the connection closed soon after: the adapter discards
 * what still comes for at most 500 ms), and a body that does not arrive in time is cut with the spec's error body
 * and `Connection: close`. No timing is asserted: the server answers (or not) while
 * the client still holds the rest of its body back.
 *
 * - an unknown slug: 404 webhook_not_found (the route used to wait for the whole body first);
 * - a slug past its per-IP limit: 429 rate_limited;
 * - a known slug whose body stops coming: 400 invalid_request once INBOUND_BODY_TIMEOUT_MS has passed;
 * - a sender that closes its connection mid-body: 400 invalid_request (it used to read as a store outage: 503, logged).
 */
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '@service/testing/app';

let t: TestApp;
let server: ServerType;
let port: number;
const sockets: Socket[] = [];
/** What the app reported as unexpected (the error mapper's log), and the statuses it answered, in order. */
const logged: unknown[] = [];
const answered: number[] = [];
let begun = 0;

beforeAll(async () => {
  t = await createTestApp({ deps: { config: { inboundBodyTimeoutMs: 300 }, logError: (entry) => logged.push(entry) } });
  const fetch = async (request: Request, env: unknown) => {
    const response = await t.app.fetch(request, env);
    answered.push(response.status);
    return response;
  };
  server = serve({ fetch, port: 0, hostname: '127.0.0.1' });
  server.on('request', () => (begun += 1));
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

/**
 * Sends the request's headers (declaring a body of `declared` bytes) and `partial` of the body, never the rest;
 * resolves with the whole answer once the server has closed the connection.
 */
function headersOnly(path: string, declared: number, partial = ''): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    sockets.push(socket);
    let received = '';
    socket.on('connect', () =>
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-SERVICE-Signature: ${'0'.repeat(64)}\r\n` +
          `Content-Length: ${declared}\r\n\r\n${partial}`,
      ),
    );
    socket.on('data', (d) => (received += d.toString()));
    socket.on('error', () => {});
    socket.on('close', () => resolve(received));
  });
}

function statusOf(raw: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1]);
}

function bodyOf(raw: string): unknown {
  return JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
}

describe('the inbound front before the body', () => {
  it('answers an unknown slug 404 while the sender has sent only its headers, and closes the connection', { timeout: 30_000 }, async () => {
    const raw = await headersOnly('/webhooks/inbound/no-such-hook', 4096);
    expect(statusOf(raw)).toBe(404);
    expect(bodyOf(raw)).toEqual({ error: 'webhook_not_found' });
    expect(raw).toMatch(/\r\nX-Request-Id: req_/i);
    const nul = await headersOnly('/v1/webhooks/inbound/crm%00leads', 4096);
    expect(statusOf(nul)).toBe(404);
    expect(bodyOf(nul)).toEqual({ error: 'webhook_not_found' });
  });

  it('answers a slug past its per-IP limit 429 before the body', { timeout: 30_000 }, async () => {
    await t.services.webhooks.inbound.create(t.workspaceId, { slug: 'limited', requestsPerMinute: 1 });
    // The first request takes the minute's one place (its signature is wrong: 401, after its body).
    const first = await fetch(`http://127.0.0.1:${port}/webhooks/inbound/limited`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-signature': '0'.repeat(64) },
      body: '{"a":1}',
    });
    expect(first.status).toBe(401);
    const raw = await headersOnly('/webhooks/inbound/limited', 4096);
    expect(statusOf(raw)).toBe(429);
    expect(bodyOf(raw)).toMatchObject({ error: 'rate_limited' });
    expect(raw).toMatch(/\r\nRetry-After: \d+\r\n/i);
  });

  it('cuts a body that does not arrive in time: 400 invalid_request with Connection: close', { timeout: 30_000 }, async () => {
    await t.services.webhooks.inbound.create(t.workspaceId, { slug: 'slow-sender', requestsPerMinute: 100 });
    const raw = await headersOnly('/webhooks/inbound/slow-sender', 4096, '{"a":');
    expect(statusOf(raw)).toBe(400);
    expect(bodyOf(raw)).toEqual({ error: 'invalid_request', message: 'The request body did not arrive in time.' });
    expect(raw).toMatch(/\r\nConnection: close\r\n/i);
  });

  it('a sender that closes its connection mid-body is answered 400 in the log, never as a store failure', { timeout: 30_000 }, async () => {
    await t.services.webhooks.inbound.create(t.workspaceId, { slug: 'gone-sender', requestsPerMinute: 100 });
    const [before, answeredBefore] = [begun, answered.length];
    const socket = connect(port, '127.0.0.1');
    sockets.push(socket);
    socket.on('error', () => {});
    socket.on('connect', () =>
      socket.write(
        `POST /webhooks/inbound/gone-sender HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-SERVICE-Signature: ${'0'.repeat(64)}\r\n` +
          'Content-Length: 4096\r\n\r\n{"a":',
      ),
    );
    await until(() => begun > before);
    socket.destroy();
    await until(() => answered.length > answeredBefore);
    // The driver's "aborted" (ECONNRESET) used to read as a lost database connection: 503, and an error logged.
    expect(answered.at(-1)).toBe(400);
    expect(logged).toEqual([]);
  });
});

async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 5));
}
