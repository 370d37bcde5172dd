/**
 * Outbound deliveries end to end: destinations created over the admin API (SSRF guard, secret
 * shown once), events from the outbox, approval decisions, integrations and pings, driven through
 * the worker with the app's injected clock, to a real loopback HTTPS receiver on the allow-list.
 * Every delivery is verified with the receivers' own `verifyWebhook` and with the `standardwebhooks`
 * package (the Standard Webhooks headers), given the secret string exactly as the admin was shown it.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { verifyWebhook } from '../../../sdk/src/index.ts';
import { enqueueEvent } from '../domain/events/outbox.ts';
import { WORKSPACE_EVENT_TYPES } from '../domain/webhooks/envelope.ts';
import { createSecretBox, SealedSecretUnreadable } from '../domain/webhooks/secret-box.ts';
import { createSelfSignedCertificate, startHttpsTestReceiver, type HttpsTestReceiver, type ReceiverAnswer } from '@service/testing/https-receiver';
import { countingDb, testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { startMailServer, type McpTestServer } from '@service/testing/mcp-servers';
import { recordDeliveredAttempts } from '../domain/events/deliveries.ts';
import { claimDueDeliveries, runDeliveryBatch, type DeliveryWorkerDeps } from './deliveries.ts';

const certificate = createSelfSignedCertificate();

describe.each(testBackends())('outbound deliveries on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  let admin: { cookie: string; csrfToken: string };
  let adminUserId: string;
  let receiver: HttpsTestReceiver;
  let answer: (path: string) => ReceiverAnswer = () => ({ status: 200 });
  let mcp: McpTestServer;

  beforeAll(async () => {
    store = await open();
    mcp = await startMailServer();
    t = await createTestApp({ db: store.db, deps: { webhooks: { allowList: ['127.0.0.1'] }, integrations: { ca: mcp.ca } } });
    admin = await t.login();
    adminUserId = (await store.db.query<{ id: string }>(`SELECT user_id AS id FROM memberships WHERE workspace_id = $1`, [t.workspaceId]))[0]!.id;
    receiver = await startHttpsTestReceiver(certificate, (request) => answer(request.path));
  });
  afterAll(async () => {
    await receiver?.close();
    await mcp?.close();
    await t?.close();
    await store?.cleanup();
  });
  beforeEach(async () => {
    answer = () => ({ status: 200 });
    // Sessions last 12 h and some tests move the clock by days.
    admin = await t.login();
  });

  function worker(overrides: Partial<DeliveryWorkerDeps> = {}): DeliveryWorkerDeps {
    return {
      db: store.db,
      clock: t.clock,
      secretBox: t.services.webhooks.secretBox,
      policy: { allowList: t.services.webhooks.allowList },
      ca: receiver.ca,
      timeoutMs: 5_000,
      random: () => 0.5, // no jitter: the schedule's nominal delays
      ...overrides,
    };
  }

  /** Runs batches until nothing is due now. */
  async function drain(deps = worker()): Promise<number> {
    let sent = 0;
    for (;;) {
      const batch = await runDeliveryBatch(deps);
      sent += batch.claimed;
      if (batch.claimed === 0) return sent;
    }
  }

  /** `n` run.completed events queued now (run ids `run_<prefix><i>`), one delivery each per subscribed destination. */
  async function queueRunsCompleted(prefix: string, n: number): Promise<void> {
    for (let i = 0; i < n; i += 1) {
      await enqueueEvent(
        store.db,
        {
          tenantId: t.workspaceId,
          type: 'run.completed',
          data: { run_id: `run_${prefix}${i}`, agent: 'sales', alias: 'Sonata', status: 'completed', usage: { input_tokens: 1, output_tokens: 1, stu: 1 } },
        },
        { now: t.clock.now() },
      );
    }
  }

  async function adminCall(method: string, path: string, body?: unknown) {
    const res = await t.app.request(path, {
      method,
      headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrfToken, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  async function createDestination(path: string, events: readonly string[]) {
    const r = await adminCall('POST', '/webhook-destinations', { url: `${receiver.origin}${path}`, events });
    expect(r.status).toBe(201);
    return r.body as { id: string; secret: string; url: string };
  }

  const receivedAt = (path: string) => receiver.received.filter((r) => r.path === path);

  async function verified(path: string, secret: string, from = 0) {
    const out = [];
    for (const request of receivedAt(path).slice(from)) {
      const result = await verifyWebhook({ rawBody: request.body, headers: request.headers as Record<string, string>, secret, now: t.clock.now() });
      expect(result.ok, `delivery to ${path} verifies`).toBe(true);
      expect(standardVerifies(request, secret), `delivery to ${path} verifies with standardwebhooks`).toBe(true);
      if (result.ok) out.push({ event: result.event, headers: request.headers });
    }
    return out;
  }

  /** Whether the `standardwebhooks` package verifies a received delivery with `secret` (at the app's clock). */
  function standardVerifies(request: { body: Buffer; headers: Record<string, unknown> }, secret: string): boolean {
    const clock = vi.spyOn(Date, 'now').mockReturnValue(t.clock.now().getTime());
    try {
      new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
      return true;
    } catch {
      return false;
    } finally {
      clock.mockRestore();
    }
  }

  async function seedApproval(id: string, workspaceId = t.workspaceId) {
    const now = t.clock.now();
    const runId = `run_${id.slice(4)}`;
    await store.db.query(
      `INSERT INTO runs (id, workspace_id, status, agent_slug, answered_by, alias, source, created_at, updated_at, window_hour, window_day)
       VALUES ($1, $2, 'in_progress', 'finance', 'finance', 'Sonata', 'api', $3, $3, $3, $3)`,
      [runId, workspaceId, now],
    );
    await store.db.query(
      `INSERT INTO approvals (id, workspace_id, run_id, agent_slug, action, summary, status, expires_at, created_at)
       VALUES ($1, $2, $3, 'finance', 'payment.initiate', 'Pay invoice 42', 'pending', $4, $5)`,
      [id, workspaceId, runId, new Date(now.getTime() + 3_600_000), now],
    );
    return runId;
  }

  it('refuses plain http, private, link-local and metadata URLs at creation; shows the secret once', async () => {
    for (const url of [
      'http://127.0.0.1/x',
      'https://10.1.2.3/x',
      'https://169.254.169.254/latest',
      'https://localhost/x',
      'https://user:pw@hooks.example/x',
    ]) {
      const r = await adminCall('POST', '/webhook-destinations', { url, events: ['run.completed'] });
      expect({ url, status: r.status, error: r.body.error }).toEqual({ url, status: 400, error: 'invalid_body' });
    }
    const created = await createDestination('/once', ['run.completed']);
    expect(created).toMatchObject({ id: expect.stringMatching(/^dst_/), status: 'active', consecutiveFailures: 0, pausedAt: null, secretRotatedAt: null });
    expect(created.secret).toMatch(/^whsec_[0-9A-Za-z]{32}$/);
    const list = await adminCall('GET', '/webhook-destinations');
    expect(JSON.stringify(list.body)).not.toContain(created.secret);
    expect((list.body.data as { id: string; url: string }[]).find((d) => d.id === created.id)?.url).toBe(`${receiver.origin}/once`);
  });

  it('refuses a loopback receiver that the allow-list does not name', async () => {
    const strict = await createTestApp({ db: store.db, deps: { webhooks: { allowList: [] } } });
    const session = await strict.login();
    const res = await strict.app.request('/webhook-destinations', {
      method: 'POST',
      headers: { cookie: session.cookie, 'x-csrf-token': session.csrfToken, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${receiver.origin}/x`, events: ['run.completed'] }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_body' });
  });

  it("a run's closing statement writes one delivery per subscribed destination, each with its own id", async () => {
    // Only this test's destinations: more than the two ids the closing statement is given, so the store draws the rest.
    await store.db.query(`UPDATE webhook_destinations SET status = 'paused' WHERE workspace_id = $1`, [t.workspaceId]);
    const destinations = [];
    for (const path of ['/fan-1', '/fan-2', '/fan-3', '/fan-4']) destinations.push(await createDestination(path, ['run.completed']));
    const res = await t.app.request('/v1/inference', {
      method: 'POST',
      headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ alias: 'Sonata', agentSlug: 'sales', messages: [{ role: 'user', content: 'Follow up with Dana' }] }),
    });
    expect(res.status).toBe(200);
    const { runId } = (await res.json()) as { runId: string };
    const rows = await store.db.query<{ id: string; destination_id: string }>(
      `SELECT d.id, d.destination_id FROM deliveries d JOIN outbox_events e ON e.id = d.event_id
        WHERE e.type = 'run.completed' AND e.data->>'run_id' = $1 ORDER BY d.destination_id`,
      [runId],
    );
    expect(rows.map((r) => r.destination_id)).toEqual(destinations.map((d) => d.id).sort());
    for (const row of rows) expect(row.id).toMatch(/^dlv_[0-9A-Za-z]{24}$/);
    expect(new Set(rows.map((r) => r.id)).size).toBe(4);
    await store.db.query(`UPDATE webhook_destinations SET status = 'paused' WHERE workspace_id = $1`, [t.workspaceId]);
  });

  it("a run's draft.created, written by the same closing statement as its run.completed, gets deliveries of its own ids", async () => {
    await store.db.query(`UPDATE webhook_destinations SET status = 'paused' WHERE workspace_id = $1`, [t.workspaceId]);
    const destinations = [];
    for (const path of ['/both-1', '/both-2']) destinations.push(await createDestination(path, ['run.completed', 'draft.created']));
    const res = await t.app.request('/v1/inference', {
      method: 'POST',
      headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        alias: 'Prelude',
        agentSlug: 'sales',
        messages: [{ role: 'user', content: 'Summarise the open opportunities for next quarter.' }],
      }),
    });
    expect(res.status).toBe(200);
    const { runId } = (await res.json()) as { runId: string };
    const rows = await store.db.query<{ id: string; type: string; destination_id: string }>(
      `SELECT d.id, e.type, d.destination_id FROM deliveries d JOIN outbox_events e ON e.id = d.event_id
        WHERE e.data->>'run_id' = $1 ORDER BY e.type, d.destination_id`,
      [runId],
    );
    const ids = destinations.map((d) => d.id).sort();
    expect(rows.map((r) => [r.type, r.destination_id])).toEqual([
      ['draft.created', ids[0]],
      ['draft.created', ids[1]],
      ['run.completed', ids[0]],
      ['run.completed', ids[1]],
    ]);
    expect(new Set(rows.map((r) => r.id)).size).toBe(4);
    await store.db.query(`UPDATE webhook_destinations SET status = 'paused' WHERE workspace_id = $1`, [t.workspaceId]);
  });
  it('delivers every subscribed event, signed, verified by verifyWebhook; unsubscribed types are not sent', async () => {
    // Only this test's destinations receive: earlier ones are set aside.
    await store.db.query(`UPDATE webhook_destinations SET status = 'paused' WHERE workspace_id = $1`, [t.workspaceId]);
    const all = await createDestination('/all', WORKSPACE_EVENT_TYPES);
    const runsOnly = await createDestination('/runs-only', ['run.completed']);
    await drain(); // anything queued by earlier tests goes first
    const base = receiver.received.length;

    const tenantId = t.workspaceId;
    await enqueueEvent(
      store.db,
      {
        tenantId,
        type: 'run.completed',
        data: { run_id: 'run_a', agent: 'sales', alias: 'Sonata', status: 'completed', usage: { input_tokens: 3, output_tokens: 5, stu: 1 } },
      },
      { now: t.clock.now() },
    );
    await enqueueEvent(
      store.db,
      { tenantId, type: 'run.failed', data: { run_id: 'run_b', agent: 'sales', reason: 'kill_switch:hour', status: 'failed' } },
      { now: t.clock.now() },
    );
    await enqueueEvent(
      store.db,
      {
        tenantId,
        type: 'approval.created',
        data: { approval_id: 'apr_x', run_id: 'run_c', agent: 'finance', action: 'payment.initiate', summary: 'Pay', expires_at: t.clock.now().toISOString() },
      },
      { now: t.clock.now() },
    );
    await enqueueEvent(
      store.db,
      { tenantId, type: 'draft.created', data: { draft_id: 'drf_x', run_id: 'run_c', agent: 'marketing', kind: 'email', subject: 'Hello' } },
      { now: t.clock.now() },
    );
    await seedApproval('apr_decideAAAAAAAAAAAAAAA');
    const decided = await adminCall('POST', '/approvals/apr_decideAAAAAAAAAAAAAAA/decision', { decision: 'approved' });
    expect(decided.status).toBe(200);
    expect(decided.body).toMatchObject({ id: 'apr_decideAAAAAAAAAAAAAAA', status: 'approved', decidedBy: adminUserId, decidedAt: t.clock.now().toISOString() });
    const integration = await adminCall('POST', '/integrations', { integration: 'crm', provider: 'hubspot', url: mcp.url });
    expect(integration.status).toBe(201);
    expect(integration.body).toMatchObject({ id: expect.stringMatching(/^int_/), integration: 'crm', provider: 'hubspot', connectedBy: adminUserId });

    const sent = await drain();
    // Six events to /all, and run.completed once more to /runs-only.
    expect(sent).toBe(7);
    expect(receiver.received.length - base).toBe(7);
    const events = await verified('/all', all.secret);
    expect(events.map((e) => e.event.type).sort()).toEqual([...WORKSPACE_EVENT_TYPES].sort());
    for (const { event, headers } of events) {
      expect(Object.keys(event).sort()).toEqual(['created_at', 'data', 'id', 'tenant_id', 'type']);
      expect(event.tenant_id).toBe(tenantId);
      expect(headers['x-service-event-id']).toBe(event.id);
      expect(headers['x-service-event-type']).toBe(event.type);
      expect(headers['content-type']).toMatch(/^application\/json/);
      expect(headers['x-service-timestamp']).toBe(String(Math.floor(t.clock.now().getTime() / 1000)));
      expect(headers['x-service-signature']).toMatch(/^[0-9a-f]{64}$/);
      expect(headers['webhook-id']).toBe(event.id);
      expect(headers['webhook-timestamp']).toBe(headers['x-service-timestamp']);
      expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    }
    expect(events.find((e) => e.event.type === 'approval.decided')!.event.data).toEqual({
      approval_id: 'apr_decideAAAAAAAAAAAAAAA',
      decision: 'approved',
      decided_by: adminUserId,
      run_id: 'run_decideAAAAAAAAAAAAAAA',
    });
    expect(events.find((e) => e.event.type === 'integration.connected')!.event.data).toEqual({
      integration: 'crm',
      provider: 'hubspot',
      connected_by: adminUserId,
    });
    // The runs-only destination got its one type; another secret does not verify its deliveries.
    const runsOnlyEvents = await verified('/runs-only', runsOnly.secret);
    expect(runsOnlyEvents.map((e) => e.event.type)).toEqual(['run.completed']);
    const wrong = await verifyWebhook({
      rawBody: receivedAt('/runs-only')[0]!.body,
      headers: receivedAt('/runs-only')[0]!.headers as Record<string, string>,
      secret: all.secret,
      now: t.clock.now(),
    });
    expect(wrong).toMatchObject({ ok: false, reason: 'signature_mismatch', status: 401 });
    expect(standardVerifies(receivedAt('/runs-only')[0]!, all.secret)).toBe(false);

    // Decided once: a second decision is refused; another workspace's approval does not exist here.
    expect((await adminCall('POST', '/approvals/apr_decideAAAAAAAAAAAAAAA/decision', { decision: 'rejected' })).status).toBe(400);
    await store.db.query(`INSERT INTO workspaces (id, name, created_at) VALUES ('wksp_elsewhereAAAAAAAAAAA', 'E', now())`);
    await seedApproval('apr_elsewhereAAAAAAAAAAA', 'wksp_elsewhereAAAAAAAAAAA');
    const foreign = await adminCall('POST', '/approvals/apr_elsewhereAAAAAAAAAAA/decision', { decision: 'approved' });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ error: 'not_found' });
  });

  it('a destination whose secret was sealed under another key: nothing is sent, the attempt fails, the operator is told', async () => {
    const dest = await createDestination('/sealed-elsewhere', ['integration.connected']);
    // As after a SECRET_KEY change without `service secret-key rotate`: the stored secret opens under no key this instance has.
    const elsewhere = createSecretBox('a-key-this-instance-was-never-given-0000000001').seal(dest.secret);
    await store.db.query(`UPDATE webhook_destinations SET secret_encrypted = $2 WHERE id = $1`, [dest.id, elsewhere]);
    const ping = await adminCall('POST', `/webhook-destinations/${dest.id}/ping`);
    expect(ping.status).toBe(202);
    const errors: unknown[] = [];
    await drain(worker({ logError: (error) => errors.push(error) }));
    expect(receivedAt('/sealed-elsewhere')).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(SealedSecretUnreadable);
    // A test event is attempted once: given up, recorded as a failed attempt of our own making.
    const attempts = await store.db.query<{ result: string; reason: string | null }>(
      `SELECT a.result, a.reason FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.destination_id = $1`,
      [dest.id],
    );
    expect(attempts).toEqual([{ result: 'give_up', reason: 'network_error' }]);
    await adminCall('POST', `/webhook-destinations/${dest.id}/pause`);
  });

  it('a ping reaches only that destination, is signed, and is not workspace activity (no run, no STU)', async () => {
    const dest = await createDestination('/ping', ['approval.decided']);
    const runsBefore = await store.db.query(`SELECT id FROM runs`);
    const ping = await adminCall('POST', `/webhook-destinations/${dest.id}/ping`);
    expect(ping.status).toBe(202);
    expect(ping.body).toEqual({ eventIds: [expect.stringMatching(/^evt_/)] });
    await drain();
    const [delivered] = await verified('/ping', dest.secret);
    expect(delivered!.event).toMatchObject({ id: (ping.body.eventIds as string[])[0], type: 'ping', data: { destination_id: dest.id } });
    expect(await store.db.query(`SELECT id FROM runs`)).toEqual(runsBefore);
  });

  it('after a rotation, later deliveries (retries included) are signed with the new secret; the previous one signs webhook-signature for 24 h', async () => {
    const dest = await createDestination('/rotate', ['draft.created']);
    answer = (path) => (path === '/rotate' ? { status: 503 } : { status: 200 });
    await enqueueEvent(
      store.db,
      { tenantId: t.workspaceId, type: 'draft.created', data: { draft_id: 'drf_r', run_id: 'run_r', agent: 'hr', kind: 'email', subject: 'S' } },
      { now: t.clock.now() },
    );
    await drain();
    expect(receivedAt('/rotate')).toHaveLength(1);
    expect(receivedAt('/rotate')[0]!.headers['webhook-signature']).toMatch(/^v1,[^ ]+$/);
    const rotated = await adminCall('POST', `/webhook-destinations/${dest.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(dest.secret);
    expect(rotated.body.secretRotatedAt).toBe(t.clock.now().toISOString());
    expect(rotated.body.previousSecretExpiresAt).toBe(new Date(t.clock.now().getTime() + 24 * 3_600_000).toISOString());
    const newSecret = rotated.body.secret as string;
    answer = () => ({ status: 200 });
    t.clock.advance(36_000); // past the 30 s (+20 %) retry
    await drain();
    const retry = receivedAt('/rotate')[1]!;
    const headers = retry.headers as Record<string, string>;
    // X-SERVICE-Signature: the new secret only (verified alone only when the receiver allows it).
    const serviceOnly = Object.fromEntries(Object.entries(headers).filter(([name]) => !name.startsWith('webhook-')));
    const alone = { rawBody: retry.body, headers: serviceOnly, now: t.clock.now(), allowServiceSignatureOnly: true };
    expect(await verifyWebhook({ ...alone, secret: newSecret })).toMatchObject({ ok: true });
    expect(await verifyWebhook({ ...alone, secret: dest.secret })).toMatchObject({
      ok: false,
      reason: 'signature_mismatch',
    });
    // webhook-signature during the grace period: the new secret's, then the previous one's, each verifying with its own secret.
    const signatures = headers['webhook-signature']!.split(' ');
    expect(signatures).toHaveLength(2);
    expect(standardVerifies(retry, newSecret)).toBe(true);
    expect(standardVerifies(retry, dest.secret)).toBe(true);
    expect(standardVerifies({ ...retry, headers: { ...headers, 'webhook-signature': signatures[0]! } }, newSecret)).toBe(true);
    expect(standardVerifies({ ...retry, headers: { ...headers, 'webhook-signature': signatures[0]! } }, dest.secret)).toBe(false);
    expect(standardVerifies({ ...retry, headers: { ...headers, 'webhook-signature': signatures[1]! } }, dest.secret)).toBe(true);
    for (const secret of [newSecret, dest.secret])
      expect(await verifyWebhook({ rawBody: retry.body, headers, secret, now: t.clock.now() })).toMatchObject({ ok: true });
    // The retry carries the very same body and event id.
    expect(retry.body.equals(receivedAt('/rotate')[0]!.body)).toBe(true);

    // Past the grace period: the new secret only, in both header sets.
    t.clock.advance(24 * 3_600_000);
    admin = await t.login();
    const listed = ((await adminCall('GET', '/webhook-destinations')).body.data as Record<string, unknown>[]).find((d) => d.id === dest.id);
    expect(listed).toMatchObject({ previousSecretExpiresAt: null });
    expect(JSON.stringify(listed)).not.toContain(newSecret);
    const ping = await adminCall('POST', `/webhook-destinations/${dest.id}/ping`);
    expect(ping.status).toBe(202);
    await drain();
    const late = receivedAt('/rotate')[2]!;
    expect((late.headers as Record<string, string>)['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(standardVerifies(late, newSecret)).toBe(true);
    expect(standardVerifies(late, dest.secret)).toBe(false);
    expect(await verifyWebhook({ rawBody: late.body, headers: late.headers as Record<string, string>, secret: newSecret, now: t.clock.now() })).toMatchObject({
      ok: true,
    });
    expect(await verifyWebhook({ rawBody: late.body, headers: late.headers as Record<string, string>, secret: dest.secret, now: t.clock.now() })).toMatchObject(
      {
        ok: false,
      },
    );
  });

  it('a receiver failing 20 times in a row pauses its destination; resume and replay deliver what failed', async () => {
    const dest = await createDestination('/failing', ['run.failed']);
    await drain();
    answer = (path) => (path === '/failing' ? { status: 500 } : { status: 200 });
    const oneAtATime = worker({ batchSize: 1 });
    const statusOf = async () => (await store.db.query<{ status: string }>(`SELECT status FROM webhook_destinations WHERE id = $1`, [dest.id]))[0]!.status;
    // One event after the other, each retried on the schedule by moving the injected clock past
    // every delay (4 h is the longest), until it is given up or the destination is paused.
    const eventIds: string[] = [];
    for (let i = 0; i < 3 && (await statusOf()) === 'active'; i += 1) {
      const e = await enqueueEvent(
        store.db,
        { tenantId: t.workspaceId, type: 'run.failed', data: { run_id: `run_f${i}`, agent: 'it', reason: 'timeout', status: 'failed' } },
        { now: t.clock.now() },
      );
      eventIds.push(e.eventId);
      for (let round = 0; round < 10; round += 1) {
        await drain(oneAtATime);
        const [pending] = await store.db.query(`SELECT 1 FROM deliveries WHERE event_id = $1 AND status = 'pending'`, [e.eventId]);
        if (!pending || (await statusOf()) === 'paused') break;
        t.clock.advance(5 * 3_600_000);
      }
    }
    expect(eventIds).toHaveLength(3);
    expect(receivedAt('/failing')).toHaveLength(20);
    const pausedAt = t.clock.now().toISOString();
    admin = await t.login();
    const listed = ((await adminCall('GET', '/webhook-destinations')).body.data as Record<string, unknown>[]).find((d) => d.id === dest.id);
    expect(listed).toMatchObject({ status: 'paused', consecutiveFailures: 20, pausedAt });
    const attempts = await store.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.destination_id = $1 AND a.result = 'retry'`,
      [dest.id],
    );
    expect(attempts[0]!.n).toBe(20);
    // Paused: nothing more is sent, however late it gets.
    t.clock.advance(24 * 3_600_000);
    await drain();
    expect(receivedAt('/failing')).toHaveLength(20);

    // Two deliveries used their 8 attempts and were given up; the third is still pending.
    const states = await store.db.query<{ status: string; n: number }>(
      `SELECT status, count(*)::int AS n FROM deliveries WHERE destination_id = $1 GROUP BY status ORDER BY status`,
      [dest.id],
    );
    expect(states).toEqual([
      { status: 'failed', n: 2 },
      { status: 'pending', n: 1 },
    ]);

    answer = () => ({ status: 200 });
    admin = await t.login();
    const resumed = await adminCall('POST', `/webhook-destinations/${dest.id}/resume`);
    expect(resumed.body).toMatchObject({ status: 'active', consecutiveFailures: 0, pausedAt: null });
    const replay = await adminCall('POST', `/webhook-destinations/${dest.id}/replay`);
    expect(replay.status).toBe(202);
    expect(replay.body.eventIds as string[]).toHaveLength(2);
    await drain();
    const delivered = await verified('/failing', dest.secret, 20);
    expect(new Set(delivered.map((d) => d.event.id))).toEqual(new Set(eventIds));
    const done = await store.db.query<{ status: string }>(`SELECT DISTINCT status FROM deliveries WHERE destination_id = $1`, [dest.id]);
    expect(done).toEqual([{ status: 'delivered' }]);
  });

  it('410 Gone gives a delivery up at once and pauses the destination (gone); resume and replay send it again', async () => {
    const dest = await createDestination('/gone', ['integration.connected']);
    answer = (path) => (path === '/gone' ? { status: 410 } : { status: 200 });
    expect((await adminCall('POST', '/integrations', { integration: 'mail', provider: 'imap', url: mcp.url })).status).toBe(201);
    await drain();
    const [row] = await store.db.query<{ status: string; attempts: number }>(`SELECT status, attempts FROM deliveries WHERE destination_id = $1`, [dest.id]);
    expect(row).toEqual({ status: 'failed', attempts: 1 });
    // Paused at once, after one failed attempt, with the reason the panel shows.
    const listed = ((await adminCall('GET', '/webhook-destinations')).body.data as Record<string, unknown>[]).find((d) => d.id === dest.id);
    expect(listed).toMatchObject({
      status: 'paused',
      pausedReason: 'gone',
      pausedAt: t.clock.now().toISOString(),
      consecutiveFailures: 1,
      lastFailure: { at: t.clock.now().toISOString(), errorKind: 'http_status', httpStatus: 410 },
    });
    // Paused for gone: later events are not queued for it (the receiver said it wants none).
    expect((await adminCall('POST', '/integrations', { integration: 'chat', provider: 'matrix', url: mcp.url })).status).toBe(201);
    expect(await store.db.query(`SELECT id FROM deliveries WHERE destination_id = $1`, [dest.id])).toHaveLength(1);
    // A replay while paused waits for the resume.
    answer = () => ({ status: 204 });
    expect((await adminCall('POST', `/webhook-destinations/${dest.id}/replay`)).body).toEqual({ eventIds: [expect.stringMatching(/^evt_/)] });
    await drain();
    expect(receivedAt('/gone')).toHaveLength(1);
    const resumed = await adminCall('POST', `/webhook-destinations/${dest.id}/resume`);
    expect(resumed.body).toMatchObject({ status: 'active', pausedReason: null, consecutiveFailures: 0 });
    await drain();
    expect(receivedAt('/gone')).toHaveLength(2);
    await verified('/gone', dest.secret);
  });

  it('concurrent claims never take the same delivery (FOR UPDATE SKIP LOCKED)', async () => {
    await createDestination('/claims', ['run.completed']);
    await drain();
    await queueRunsCompleted('c', 10);
    const claims = await Promise.all([1, 2, 3, 4].map(() => claimDueDeliveries(worker({ batchSize: 4 }))));
    const ids = claims.flat().map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    // Claimed deliveries are leased: a second claim now finds none of them.
    const again = await claimDueDeliveries(worker({ batchSize: 50 }));
    expect(again.filter((c) => ids.includes(c.id))).toEqual([]);
    // Once the lease runs out they are due again: a worker that died loses nothing.
    t.clock.advance(60_000);
    await drain();
    const undelivered = await store.db.query(
      `SELECT id FROM deliveries WHERE status <> 'delivered' AND destination_id IN (SELECT id FROM webhook_destinations WHERE url LIKE '%/claims')`,
    );
    expect(undelivered).toEqual([]);
  });

  it('records delivered attempts in one statement, only those whose claim still holds; a failing destination is healthy again', async () => {
    const destination = await createDestination('/grouped', ['run.completed']);
    await drain();
    await store.db.query(`UPDATE webhook_destinations SET consecutive_failures = 3 WHERE id = $1`, [destination.id]);
    await queueRunsCompleted('g', 3);
    const claimed = (await claimDueDeliveries(worker({ batchSize: 50 }))).filter((c) => c.destination_id === destination.id);
    expect(claimed).toHaveLength(3);
    const at = t.clock.now();
    const counted = countingDb(store.db);
    const recorded = await recordDeliveredAttempts(
      counted.db,
      claimed.map((c, i) => ({ deliveryId: c.id, claimToken: i === 2 ? 'a-claim-since-lost' : c.claim_token, attempt: 1, status: 204, at, durationMs: 7 })),
    );
    expect(counted.statements).toHaveLength(1);
    expect(recorded.sort()).toEqual([claimed[0]!.id, claimed[1]!.id].sort());
    const rows = await store.db.query<{ id: string; status: string; claim_token: string | null; attempts: number; last_status: number | null }>(
      `SELECT id, status, claim_token, attempts, last_status FROM deliveries WHERE id = ANY ($1::text[]) ORDER BY id`,
      [claimed.map((c) => c.id)],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const c of claimed.slice(0, 2)) expect(byId.get(c.id)).toMatchObject({ status: 'delivered', claim_token: null, attempts: 1, last_status: 204 });
    // The third is left to the claim that holds it now.
    expect(byId.get(claimed[2]!.id)).toMatchObject({ status: 'pending', claim_token: claimed[2]!.claim_token, attempts: 0 });
    const audit = await store.db.query<{ delivery_id: string; result: string; status: number; duration_ms: number }>(
      `SELECT delivery_id, result, status, duration_ms FROM delivery_attempts WHERE delivery_id = ANY ($1::text[])`,
      [claimed.map((c) => c.id)],
    );
    expect(audit.map((a) => a.delivery_id).sort()).toEqual(recorded.sort());
    expect(audit.every((a) => a.result === 'delivered' && a.status === 204 && a.duration_ms === 7)).toBe(true);
    // The third, sent again once its claim's lease ran out, clears the failures its destination had when claimed.
    expect(claimed[2]!.consecutive_failures).toBe(3);
    t.clock.advance(60_000);
    await drain();
    const [health] = await store.db.query<{ consecutive_failures: number }>(`SELECT consecutive_failures FROM webhook_destinations WHERE id = $1`, [
      destination.id,
    ]);
    expect(health!.consecutive_failures).toBe(0);
  });
});
