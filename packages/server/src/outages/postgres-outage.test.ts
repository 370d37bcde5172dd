/**
 * A PostgreSQL outage, cut by the test: the app and its delivery worker reach PostgreSQL through a TCP
 * proxy of the test's own, which closes every connection and refuses new ones, then lets them through
 * again. During the cut the API answers 503 service_unavailable with Retry-After and the request id,
 * /readyz names the store, and the worker's ticks fail (it backs off); once restored, the API answers
 * again, the outbox event acknowledged before the cut is delivered and the run of the inbound event
 * acknowledged before the cut is executed: nothing lost. Runs when DATABASE_URL is set (CI).
 */
import { createServer, type Server, type Socket, connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboundRunExecutor } from '../domain/runs/index.ts';
import { signInboundBody } from '../domain/webhooks/inbound-signature.ts';
import { createSelfSignedCertificate, startHttpsTestReceiver, type HttpsTestReceiver } from '@service/testing/https-receiver';
import { startCrmServer, type McpTestServer } from '@service/testing/mcp-servers';
import { until } from '@service/testing/cli-processes';
import type { OpenDb } from '../store/db.ts';
import { openStore } from '../store/open.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { startWorker, type Worker } from '../worker/index.ts';

const DATABASE_URL = process.env.DATABASE_URL;

/** A TCP proxy to PostgreSQL that the test can cut (every connection closed, new ones refused) and restore. */
async function startCuttableProxy(target: URL): Promise<{ port: number; cut(): void; restore(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let open = true;
  const server: Server = createServer((client) => {
    if (!open) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    cut() {
      open = false;
      for (const s of sockets) s.destroy();
    },
    restore() {
      open = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe.skipIf(!DATABASE_URL)('PostgreSQL outage', () => {
  let store: TestStore;
  let proxied: OpenDb;
  let proxy: Awaited<ReturnType<typeof startCuttableProxy>>;
  let receiver: HttpsTestReceiver;
  let mcp: McpTestServer;
  let t: TestApp;
  let worker: Worker | undefined;

  beforeAll(async () => {
    store = await testBackends()
      .find((b) => b.name === 'postgres')!
      .open();
    const [schema] = await store.db.query<{ schema: string }>('SELECT current_schema() AS schema');
    proxy = await startCuttableProxy(new URL(DATABASE_URL!));
    const url = new URL(DATABASE_URL!);
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    proxied = await openStore({ databaseUrl: url.toString(), schema: schema!.schema });
    const certificate = createSelfSignedCertificate();
    receiver = await startHttpsTestReceiver(certificate);
    mcp = await startCrmServer();
    t = await createTestApp({ db: proxied, deps: { webhooks: { allowList: ['127.0.0.1'] }, integrations: { ca: mcp.ca } } });
  }, 60_000);

  afterAll(async () => {
    await worker?.stop();
    await t?.close();
    await proxy?.close();
    await receiver?.close();
    await mcp?.close();
    await store?.cleanup();
  });

  it('answers 503 during the cut, backs off, and resumes with nothing lost', { timeout: 120_000 }, async () => {
    const { cookie, csrfToken } = await t.login();
    const admin = { cookie, 'x-csrf-token': csrfToken, 'content-type': 'application/json' };
    const destination = await t.app.request('/webhook-destinations', {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ url: `${receiver.origin}/hook`, events: ['integration.connected'] }),
    });
    expect(destination.status).toBe(201);
    // An event acknowledged before the cut, not delivered yet (the worker is not running).
    const connected = await t.app.request('/integrations', {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ integration: 'crm', provider: 'hubspot', url: mcp.url }),
    });
    expect(connected.status).toBe(201);
    const [queued] = await store.db.query<{ event_id: string }>(`SELECT event_id FROM deliveries WHERE status = 'pending'`);
    expect(queued).toBeDefined();
    // An inbound event acknowledged before the cut: its run waits in the durable queue for the worker.
    const hook = await t.app.request('/inbound-webhooks', {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ slug: 'crm-leads', agentSlug: 'sales', alias: 'Sonata', algorithm: 'sha256', timestampRequired: false }),
    });
    expect(hook.status).toBe(201);
    const { secret } = (await hook.json()) as { secret: string };
    const event = JSON.stringify({ lead: 'Dana Whitfield' });
    const ingested = await t.app.request('/webhooks/inbound/crm-leads', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-event-id': 'lead-1', 'x-service-signature': signInboundBody(event, secret) },
      body: event,
    });
    expect(ingested.status).toBe(200);
    const { runId } = (await ingested.json()) as { runId: string };

    proxy.cut();

    const refused = await t.app.request('/runs', { headers: { authorization: `Bearer ${t.apiKey}` } });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    const body = (await refused.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ error: 'service_unavailable', requestId: refused.headers.get('x-request-id') });
    expect(JSON.stringify(body)).not.toMatch(/5432|127\.0\.0\.1|postgres/i);
    const ready = await t.app.request('/readyz');
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ failing: ['store'], checks: { store: 'failing' } });

    // The worker starts during the outage: its ticks fail and it keeps trying.
    const errors: unknown[] = [];
    worker = startWorker({
      db: proxied,
      clock: t.clock,
      secretBox: t.services.webhooks.secretBox,
      policy: { allowList: t.services.webhooks.allowList },
      ca: receiver.ca,
      pollMs: 50,
      executeInboundRun: inboundRunExecutor(t.services.runs, () => {}),
      logError: (error) => errors.push(error),
    });
    await until(() => errors.length >= 2, 'the worker to fail twice', 30_000);
    expect(receiver.received).toHaveLength(0);

    proxy.restore();

    await until(() => receiver.received.length >= 1, 'the queued event to be delivered', 60_000, 100);
    expect(receiver.received[0]!.headers['x-service-event-id']).toBe(queued!.event_id);
    await until(async () => (await t.app.request('/readyz')).status === 200, '/readyz to recover', 30_000, 200);
    const again = await t.app.request('/runs', { headers: { authorization: `Bearer ${t.apiKey}` } });
    expect(again.status).toBe(200);
    // The receiver has the event; the worker records its answer after it, in a statement of its own.
    await until(
      async () =>
        (await store.db.query<{ status: string }>(`SELECT status FROM deliveries WHERE event_id = $1`, [queued!.event_id]))[0]?.status === 'delivered',
      'the delivery to be recorded as delivered',
      30_000,
      100,
    );
    await until(
      async () => (await store.db.query<{ status: string }>(`SELECT status FROM runs WHERE id = $1`, [runId]))[0]?.status === 'completed',
      'the acknowledged inbound run to complete',
      60_000,
      200,
    );
  });
});
