/**
 * At-least-once delivery across a crash: the real server (`service serve`, embedded PGlite in a
 * temporary data directory) is killed with SIGKILL while deliveries are in flight and others are
 * still queued, then started again; every event must reach the loopback HTTPS receiver, signed
 * and verifiable. The process is `node --import tsx cli.ts` itself, so SIGKILL hits the server and
 * not a wrapper.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../../sdk/src/index.ts';
import { totpCode } from '../domain/sessions/totp.ts';
import { createSelfSignedCertificate, startHttpsTestReceiver, type HttpsTestReceiver, type ReceiverAnswer } from '@service/testing/https-receiver';
import { startCrmServer, type McpTestServer } from '@service/testing/mcp-servers';
import { openStore } from '../store/open.ts';
import { DEFAULT_DELIVERY_LANES } from './deliveries.ts';
import { cliProcesses, until, type CliProcesses } from '@service/testing/cli-processes';

// The destination's lane is full with these in flight: later events wait for a slot (worker/deliveries.ts).
const EVENTS_IN_FLIGHT = DEFAULT_DELIVERY_LANES.perDestination;
const EVENTS_QUEUED = 4;

describe('durability: kill -9 mid-delivery, restart, nothing lost', () => {
  let dir: string;
  let receiver: HttpsTestReceiver;
  let answer: () => ReceiverAnswer = () => 'hang';
  let env: NodeJS.ProcessEnv;
  let secret: string;
  let admin: { email: string; password: string; totpSecret: string };
  let cli: CliProcesses;
  let mcp: McpTestServer;
  const run = (...args: string[]) => cli.run(...args);
  const serve = () => cli.serve();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'durability-'));
    const certificate = createSelfSignedCertificate();
    mcp = await startCrmServer();
    // The receiver's and the MCP server's certificates.
    writeFileSync(join(dir, 'receiver-ca.pem'), `${certificate.cert}\n${mcp.ca}`);
    receiver = await startHttpsTestReceiver(certificate, () => answer());
    env = { ...process.env };
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'DATA_DIR', 'PORT', 'SECRET_KEY']) delete env[name];
    Object.assign(env, {
      WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
      WEBHOOK_POLL_MS: '100',
      // Longer than recording the queued events takes beside the rest of the suite (each connects an MCP server
      // first): an attempt that timed out sooner would free its lane and let a queued event out before the kill.
      WEBHOOK_DELIVERY_TIMEOUT_MS: '15000',
      // The receiver's and the MCP server's self-signed certificates, trusted the standard way; verification stays on.
      NODE_EXTRA_CA_CERTS: join(dir, 'receiver-ca.pem'),
    });
    cli = cliProcesses(dir, env);
    admin = (JSON.parse(await run('init', '--json')) as { admin: typeof admin }).admin;
    const created = JSON.parse(
      await run('webhooks', 'outbound', 'create', '--url', `${receiver.origin}/hook`, '--events', 'integration.connected', '--json'),
    ) as {
      id: string;
      secret: string;
    };
    secret = created.secret;
  }, 60_000);

  afterAll(async () => {
    cli?.killAll();
    await receiver?.close();
    await mcp?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function login(url: string): Promise<{ cookie: string; csrfToken: string }> {
    const res = await fetch(`${url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: admin.email, password: admin.password, totpCode: totpCode(admin.totpSecret, new Date()) }),
    });
    expect(res.status).toBe(200);
    return { cookie: res.headers.get('set-cookie')!.split(';')[0]!, csrfToken: ((await res.json()) as { csrfToken: string }).csrfToken };
  }

  it('every event reaches the receiver at least once, signed, after a SIGKILL and a restart', async () => {
    const first = await serve();
    const session = await login(first.url);
    const record = async (i: number) => {
      const res = await fetch(`${first.url}/integrations`, {
        method: 'POST',
        headers: { cookie: session.cookie, 'x-csrf-token': session.csrfToken, 'content-type': 'application/json' },
        body: JSON.stringify({ integration: `crm-${i}`, provider: `provider-${i}`, url: mcp.url }),
      });
      expect(res.status).toBe(201);
    };
    // These are claimed and sent; the receiver never answers, so they are in flight.
    for (let i = 0; i < EVENTS_IN_FLIGHT; i += 1) await record(i);
    await until(() => new Set(receiver.received.map((r) => r.headers['x-service-event-id'])).size === EVENTS_IN_FLIGHT, 'the first deliveries to be in flight');
    // These are committed while the hung attempts fill the destination's lane: queued, not yet sent.
    for (let i = EVENTS_IN_FLIGHT; i < EVENTS_IN_FLIGHT + EVENTS_QUEUED; i += 1) await record(i);
    const inFlight = receiver.received.length;

    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    expect(first.child.signalCode).toBe('SIGKILL');
    expect(inFlight).toBe(EVENTS_IN_FLIGHT);

    answer = () => ({ status: 200 });
    const second = await serve();
    const okIds = () => new Set(receiver.received.slice(inFlight).map((r) => r.headers['x-service-event-id'] as string));
    await until(() => okIds().size === EVENTS_IN_FLIGHT + EVENTS_QUEUED, 'every event to be delivered after the restart');

    // Each delivery verifies with the receivers' function; the providers cover every integration recorded.
    const providers = new Set<string>();
    for (const request of receiver.received.slice(inFlight)) {
      const result = await verifyWebhook({ rawBody: request.body, headers: request.headers as Record<string, string>, secret });
      expect(result.ok).toBe(true);
      if (result.ok) providers.add((result.event.data as { provider: string }).provider);
    }
    expect(providers).toEqual(new Set(Array.from({ length: EVENTS_IN_FLIGHT + EVENTS_QUEUED }, (_, i) => `provider-${i}`)));

    // A clean stop, then the store agrees: every delivery delivered, none lost.
    second.child.kill('SIGTERM');
    await new Promise((resolve) => second.child.once('exit', resolve));
    const db = await openStore({ dataDir: join(dir, 'data', 'pglite') });
    try {
      const rows = await db.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM deliveries GROUP BY status`);
      expect(rows).toEqual([{ status: 'delivered', n: EVENTS_IN_FLIGHT + EVENTS_QUEUED }]);
      const events = await db.query<{ id: string }>(`SELECT id FROM outbox_events`);
      expect(new Set(events.map((e) => e.id))).toEqual(okIds());
    } finally {
      await db.close();
    }
  }, 120_000);
});
