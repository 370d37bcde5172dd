/**
 * Fair admission over real HTTP (@hono/node-server on loopback), with a small `MAX_REQUESTS_IN_FLIGHT` so that
 * a handful of connections can hold it: no timing, only statuses and counts.
 *
 * - Slow bodies sent to an inbound slug from one address hold at most that address's part of the
 *   unauthenticated share: another workspace's authenticated calls are still answered (they used to answer
 *   503: the inbound route read the body first, and the places of the one pool were all held).
 * - A workspace holding its share of requests in flight (slow bodies on its own authenticated invocations) is
 *   refused past its share, and another workspace is still admitted (it used to answer 503).
 */
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '@service/testing/app';
import { openMemoryStore } from '@service/testing/store';
import { initWorkspace, type InitResult } from '../../domain/workspaces/init.ts';
import { createMetrics, type Metrics } from '../../metrics/index.ts';

const MAX_IN_FLIGHT = 8;

let t: TestApp;
let other: InitResult;
let server: ServerType;
let port: number;
let metrics: Metrics;
/** Requests the server has begun (their headers parsed). */
let begun = 0;
const sockets: Socket[] = [];

beforeEach(async () => {
  const db = await openMemoryStore();
  metrics = createMetrics({ db });
  t = await createTestApp({ db, deps: { metrics, admission: { maxInFlight: MAX_IN_FLIGHT, maxStoreQueue: 0 } } });
  other = await initWorkspace(t.db, t.clock, { adminEmail: 'other-admin@example.com', secretBox: t.services.webhooks.secretBox });
  begun = 0;
  server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
  server.on('request', () => (begun += 1));
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  port = (server.address() as AddressInfo).port;
});

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

/** Requests of `party` holding a place now, as `/metrics` shows them (undefined where the gauge does not exist). */
async function holding(party: 'workspace' | 'unauthenticated'): Promise<number | undefined> {
  const line = (await metrics.render()).split('\n').find((l) => l.startsWith(`service_admission_in_flight{party="${party}"} `));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

/**
 * Waits until every slow request was either answered or is held waiting for its body: without the gauge, until
 * at most the bound is unanswered.
 */
async function settled(slow: Array<{ status: () => number | null }>, party: 'workspace' | 'unauthenticated'): Promise<void> {
  await until(() => begun >= slow.length);
  for (;;) {
    const answered = slow.filter((s) => s.status() !== null).length;
    const held = await holding(party);
    if (held === undefined ? answered >= slow.length - MAX_IN_FLIGHT : answered + held >= slow.length) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Opens a connection that sends `head` and the first bytes of a body it never finishes; resolves with the
 * status the server answered, or null while it has not answered (the connection stays open until the test ends).
 */
function slowBody(head: string, declared: number): { status: () => number | null } {
  let received = '';
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  socket.on('connect', () => socket.write(`${head}Content-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n{"a":`));
  socket.on('data', (d) => (received += d.toString()));
  socket.on('error', () => {});
  return {
    status: () => {
      const match = /^HTTP\/1\.1 (\d{3})/.exec(received);
      return match ? Number(match[1]) : null;
    },
  };
}

/** The other workspace's statuses for `count` reads, one after another. */
async function otherWorkspaceCalls(count: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const res = await fetch(`http://127.0.0.1:${port}/usage/current`, { headers: { authorization: `Bearer ${other.apiKey}` } });
    statuses.push(res.status);
    await res.body?.cancel();
  }
  return statuses;
}

async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('fair admission over HTTP', () => {
  it('slow bodies to an inbound slug from one address do not refuse another workspace', { timeout: 60_000 }, async () => {
    await t.services.webhooks.inbound.create(t.workspaceId, { slug: 'crm-leads', requestsPerMinute: 1000 });
    const slow = Array.from({ length: 3 * MAX_IN_FLIGHT }, () =>
      slowBody(`POST /webhooks/inbound/crm-leads HTTP/1.1\r\nHost: 127.0.0.1\r\nX-SERVICE-Signature: ${'0'.repeat(64)}\r\n`, 4096),
    );
    // Every slow request has reached the server; those past the address's share were answered 503 at once:
    // alone, the unauthenticated group's share is 8 / 2 = 4, and one address's part of it 4 / 2 = 2.
    await settled(slow, 'unauthenticated');
    // The other workspace's calls are admitted.
    expect(await otherWorkspaceCalls(5)).toEqual([200, 200, 200, 200, 200]);
    const answered = slow.map((s) => s.status());
    expect(answered.filter((status) => status === null)).toHaveLength(2);
    expect(answered.filter((status) => status !== null).every((status) => status === 503)).toBe(true);
    const refusals = await metrics.render();
    expect(refusals).toMatch(/service_admission_refusals_total\{reason="address_share"\} \d+/);
    // Refused at admission's first stage, before the route's middleware: counted as refusals, not as the route's
    // requests (they used to pass the whole chain to the route's own share check).
    const inbound503 = refusals
      .split('\n')
      .filter((l) => l.startsWith('service_http_requests_total{') && l.includes('"ingestInboundEvent"') && l.includes('status="503"'));
    expect(inbound503).toEqual([]);
  });

  it('a workspace holding its share of requests in flight does not stop another workspace', { timeout: 60_000 }, async () => {
    // A's key is verified once first, so its requests are charged to A as soon as they arrive.
    const warm = await fetch(`http://127.0.0.1:${port}/usage/current`, { headers: { authorization: `Bearer ${t.apiKey}` } });
    expect(warm.status).toBe(200);
    await warm.body?.cancel();
    begun = 0;
    const slow = Array.from({ length: 2 * MAX_IN_FLIGHT }, () =>
      slowBody(`POST /v1/inference HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${t.apiKey}\r\n`, 4096),
    );
    await settled(slow, 'workspace');
    expect(await otherWorkspaceCalls(5)).toEqual([200, 200, 200, 200, 200]);
    // A holds its share (8 / 2 = 4 while alone) and its other requests were refused at once.
    const answered = slow.map((s) => s.status());
    expect(answered.filter((status) => status === null)).toHaveLength(MAX_IN_FLIGHT / 2);
    expect(answered.filter((status) => status === 503)).toHaveLength(slow.length - MAX_IN_FLIGHT / 2);
    const text = await metrics.render();
    expect(text).toMatch(/service_admission_refusals_total\{reason="workspace_share"\} \d+/);
    expect(text).toContain('service_admission_workspaces_at_share 1');
  });
});
