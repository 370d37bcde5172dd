/**
 * The delivery log: every attempt the worker makes is recorded with its time, HTTP status or error
 * kind, duration and next retry; `GET /webhook-destinations/{id}/deliveries` shows it, the destination
 * shows its last failure and why it is paused, and each failed attempt is logged at `warn`. Real
 * loopback HTTPS receivers: one answering 500 then 200, one whose certificate is not trusted, and a
 * port nobody listens on.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zDeliveryList, zWebhookDestinationList } from '../../../../generated/zod.ts';
import { createSelfSignedCertificate, startHttpsTestReceiver, type HttpsTestReceiver, type ReceiverAnswer } from '@service/testing/https-receiver';
import { createLogger } from '../log/index.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { logDeliveryAttempt } from './attempt-log.ts';
import { runDeliveryBatch, type DeliveryWorkerDeps } from './deliveries.ts';

const certificate = createSelfSignedCertificate();

describe.each(testBackends())('the delivery log on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  let admin: { cookie: string; csrfToken: string };
  let receiver: HttpsTestReceiver;
  let answer: ReceiverAnswer = { status: 500 };
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    level: 'info',
    destination: new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    }),
  });

  beforeAll(async () => {
    store = await open();
    t = await createTestApp({ db: store.db, deps: { webhooks: { allowList: ['127.0.0.1'] } } });
    admin = await t.login();
    receiver = await startHttpsTestReceiver(certificate, () => answer);
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
    await store?.cleanup();
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
      onAttempt: (attempt) => logDeliveryAttempt(logger, undefined, attempt),
      ...overrides,
    };
  }

  async function drain(deps = worker()): Promise<void> {
    while ((await runDeliveryBatch(deps)).claimed > 0);
    await new Promise((resolve) => setImmediate(resolve));
  }

  async function call(method: string, path: string, body?: unknown, session = admin) {
    const res = await t.app.request(path, {
      method,
      headers: { cookie: session.cookie, 'x-csrf-token': session.csrfToken, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  /**
   * A destination with one delivery of its own that is retried like real traffic: a ping (which reaches that one
   * destination only) whose delivery is then made an ordinary one, since a test event is attempted once
   * (test-events.test.ts covers that).
   */
  async function destinationWithPing(url: string) {
    const created = await call('POST', '/webhook-destinations', { url, events: ['run.completed'] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const ping = await call('POST', `/webhook-destinations/${created.body.id}/ping`);
    expect(ping.status).toBe(202);
    const eventId = ping.body.eventIds[0] as string;
    expect(await store.db.query(`UPDATE deliveries SET test = false WHERE event_id = $1 RETURNING id`, [eventId])).toHaveLength(1);
    return { id: created.body.id as string, secret: created.body.secret as string, eventId };
  }

  const destination = async (id: string) => zWebhookDestinationList.parse((await call('GET', '/webhook-destinations')).body).data.find((d) => d.id === id)!;

  it('records a receiver answering 500 (status, kind, duration, next retry), then its success; the destination keeps the last failure', async () => {
    answer = { status: 500 };
    const { id, eventId, secret } = await destinationWithPing(`${receiver.origin}/failing/path?token=abc`);
    const failedAt = t.clock.now();
    await drain();

    const first = await call('GET', `/webhook-destinations/${id}/deliveries`);
    expect(first.status).toBe(200);
    const page = zDeliveryList.parse(first.body);
    expect(page).toMatchObject({ total: 1, limit: 50, offset: 0 });
    const retryAt = new Date(failedAt.getTime() + 30_000).toISOString();
    expect(page.data[0]).toMatchObject({
      eventId,
      eventType: 'ping',
      status: 'pending',
      deliveredAt: null,
      nextRetryAt: retryAt,
      attempts: [{ attempt: 1, at: failedAt.toISOString(), result: 'retry', httpStatus: 500, errorKind: 'http_status', nextRetryAt: retryAt }],
    });
    expect(page.data[0]!.attempts[0]!.durationMs).toEqual(expect.any(Number));
    expect(await destination(id)).toMatchObject({
      status: 'active',
      consecutiveFailures: 1,
      pausedReason: null,
      lastFailure: { at: failedAt.toISOString(), errorKind: 'http_status', httpStatus: 500 },
    });

    // The failed attempt was logged at warn with its reason, naming the host but not the path, query or secret.
    const warned = lines.filter((l) => l.level === 'warn' && l.destinationId === id);
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({
      msg: 'delivery failed; will retry',
      eventId,
      eventType: 'ping',
      destinationHost: `127.0.0.1:${receiver.port}`,
      attempt: 1,
      result: 'retry',
      httpStatus: 500,
      errorKind: 'http_status',
      durationMs: expect.any(Number),
      nextRetryAt: retryAt,
    });
    const text = JSON.stringify(warned);
    for (const hidden of ['/failing/path', 'token=abc', secret]) expect(text).not.toContain(hidden);

    // Nothing is due before the retry time; then the receiver is healthy again.
    answer = { status: 200 };
    t.clock.advance(30_000);
    await drain();
    const second = zDeliveryList.parse((await call('GET', `/webhook-destinations/${id}/deliveries`)).body).data[0]!;
    expect(second).toMatchObject({ status: 'delivered', nextRetryAt: null, deliveredAt: t.clock.now().toISOString() });
    expect(second.attempts.map((a) => [a.attempt, a.result, a.httpStatus, a.errorKind, a.nextRetryAt])).toEqual([
      [1, 'retry', 500, 'http_status', retryAt],
      [2, 'delivered', 200, null, null],
    ]);
    expect(await destination(id)).toMatchObject({ consecutiveFailures: 0, lastFailure: { errorKind: 'http_status', httpStatus: 500 } });
    expect(lines.filter((l) => l.destinationId === id && l.level === 'info').map((l) => l.msg)).toEqual(['delivery sent']);

    // The filter: nothing of this destination is given up.
    expect((await call('GET', `/webhook-destinations/${id}/deliveries?status=failed`)).body).toMatchObject({ data: [], total: 0 });
    expect((await call('GET', `/webhook-destinations/${id}/deliveries?status=delivered`)).body).toMatchObject({ total: 1 });
  });

  it('names a certificate the service does not trust `tls`, and a closed port `connection_refused`', async () => {
    const untrusted = await destinationWithPing(`${receiver.origin}/untrusted`);
    // No extra trust root: the receiver's self-signed certificate is refused.
    await drain(worker({ ca: undefined }));
    const closed = await startHttpsTestReceiver(certificate);
    await closed.close();
    const refused = await destinationWithPing(`${closed.origin}/closed`);
    await drain();
    for (const [dest, kind] of [
      [untrusted, 'tls'],
      [refused, 'connection_refused'],
    ] as const) {
      const [delivery] = zDeliveryList.parse((await call('GET', `/webhook-destinations/${dest.id}/deliveries`)).body).data;
      expect(delivery!.attempts).toEqual([expect.objectContaining({ result: 'retry', httpStatus: null, errorKind: kind })]);
      expect((await destination(dest.id)).lastFailure).toMatchObject({ errorKind: kind, httpStatus: null });
      expect(lines.find((l) => l.destinationId === dest.id)).toMatchObject({ level: 'warn', errorKind: kind });
    }
  });

  it('shows why a destination is paused; the log pages newest first; another destination id is not_found', async () => {
    answer = { status: 200 };
    const { id } = await destinationWithPing(`${receiver.origin}/paged`);
    await call('POST', `/webhook-destinations/${id}/ping`);
    await drain();
    const paused = await call('POST', `/webhook-destinations/${id}/pause`);
    expect(paused.body).toMatchObject({ status: 'paused', pausedReason: 'admin' });
    const all = zDeliveryList.parse((await call('GET', `/webhook-destinations/${id}/deliveries`)).body);
    expect(all.total).toBe(2);
    const second = zDeliveryList.parse((await call('GET', `/webhook-destinations/${id}/deliveries?limit=1&offset=1`)).body);
    expect(second).toMatchObject({ total: 2, limit: 1, offset: 1 });
    expect(second.data.map((d) => d.id)).toEqual([all.data[1]!.id]);
    const missing = await call('GET', '/webhook-destinations/dst_0000000000000000000000/deliveries');
    expect(missing).toMatchObject({ status: 404, body: { error: 'not_found' } });
    expect((await call('POST', `/webhook-destinations/${id}/resume`)).body).toMatchObject({ status: 'active', pausedReason: null });
  });
});
