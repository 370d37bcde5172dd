/**
 * A PostgreSQL outage answers `503 service_unavailable` with `Retry-After` and the request id,
 * never `500 internal_error` and never the database's address. The app's store connects through
 * a TCP relay on loopback that the test cuts, as a database that goes away. Runs when
 * DATABASE_URL is set (CI).
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { randomBase62 } from '../random.ts';
import { createTestApp, type TestApp } from '@service/testing/app';
import type { OpenDb } from './db.ts';
import { openStore } from './open.ts';
import { quoteIdent } from './postgres.ts';
import { adminQuery } from '@service/testing/store';

const DATABASE_URL = process.env.DATABASE_URL;

describe.skipIf(!DATABASE_URL)('a PostgreSQL outage', () => {
  const schema = `test_${randomBase62(12).toLowerCase()}`;
  const sockets = new Set<Socket>();
  let relay: Server;
  let db: OpenDb;
  let t: TestApp;
  let key: string;

  const admin = (sql: string) => adminQuery(DATABASE_URL!, sql);

  beforeAll(async () => {
    await admin(`CREATE SCHEMA ${quoteIdent(schema)}`);
    const target = new URL(DATABASE_URL!);
    relay = createServer((inbound) => {
      const outbound = connect(Number(target.port || 5432), target.hostname);
      for (const s of [inbound, outbound]) {
        sockets.add(s);
        s.on('error', () => {});
        s.on('close', () => sockets.delete(s));
      }
      inbound.pipe(outbound).pipe(inbound);
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const via = new URL(DATABASE_URL!);
    via.hostname = '127.0.0.1';
    via.port = String((relay.address() as { port: number }).port);
    db = await openStore({ databaseUrl: via.toString(), schema });
    t = await createTestApp({ db });
    key = await t.keyWith('orchestrator:invoke', 'usage:read');
  });

  afterAll(async () => {
    await db?.close().catch(() => {});
    relay?.close();
    await admin(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`);
  });

  it('answers 503 service_unavailable with Retry-After and the request id on reads and invocations', async () => {
    const before = await t.app.request('/usage/current', { headers: { authorization: `Bearer ${key}` } });
    expect(before.status).toBe(200);

    // The database goes away: no new connection, and the open ones are cut.
    relay.close();
    for (const s of sockets) s.destroy();
    // The usage is answered from memory (the usage tally) while its news are known current: until the
    // instance learns, a moment after the cut, that its listener is gone. From then on it reads the store.
    await vi.waitFor(async () => expect((await t.app.request('/usage/current', { headers: { authorization: `Bearer ${key}` } })).status).toBe(503), {
      timeout: 10_000,
      interval: 10,
    });

    const invoke = (headers: Record<string, string>): RequestInit => ({
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ alias: 'Sonata', messages: [{ role: 'user', content: 'Which invoices are overdue?' }] }),
    });
    // Whether the request was applied before the store went away is not known: a read, or a write with an
    // Idempotency-Key (its retry answers the first outcome), may be repeated; another write may not.
    const requests: [string, RequestInit, string][] = [
      ['/usage/current', { headers: { authorization: `Bearer ${key}` } }, 'true'],
      ['/runs', { headers: { authorization: `Bearer ${key}` } }, 'true'],
      ['/v1/inference', invoke({ 'idempotency-key': 'outage-1' }), 'true'],
      ['/v1/inference', invoke({}), 'false'],
    ];
    for (const [path, init, shouldRetry] of requests) {
      const res = await t.app.request(path, init);
      expect(res.status, path).toBe(503);
      expect([res.headers.get('retry-after'), res.headers.get('retry-after-ms'), res.headers.get('x-should-retry')]).toEqual(['5', '5000', shouldRetry]);
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({ error: 'service_unavailable', message: expect.any(String), requestId: res.headers.get('x-request-id') });
      expect(text).not.toMatch(/127\.0\.0\.1|5432|postgres|ECONN/i);
    }
  });
});
