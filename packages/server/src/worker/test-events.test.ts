/**
 * Test events (`POST /webhook-destinations/{id}/test-events`, and the ping) and the delivery log's detail of
 * each attempt, on both stores over real loopback HTTPS receivers: a test event of every type reaches the one
 * destination, signed, marked `"test": true`, with sample data of its type's shape; the log's `requestBody` is
 * byte for byte what the receiver got, its headers are the ones sent (signatures shortened), and the answer's
 * start is kept within 2 KiB; a failing test event is attempted once, never retried, and leaves the
 * destination's health alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as zod from '../../../../generated/zod.ts';
import { verifyWebhook } from '../../../sdk/src/index.ts';
import { createSelfSignedCertificate, startHttpsTestReceiver, type HttpsTestReceiver, type ReceiverAnswer } from '@service/testing/https-receiver';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { runDeliveryBatch, type DeliveryWorkerDeps } from './deliveries.ts';

const certificate = createSelfSignedCertificate();

/** Every outbound type and the contract's schema of its `data`. */
const DATA_SCHEMAS = {
  'run.completed': zod.zRunCompletedData,
  'run.failed': zod.zRunFailedData,
  'approval.created': zod.zApprovalCreatedData,
  'approval.decided': zod.zApprovalDecidedData,
  'draft.created': zod.zDraftCreatedData,
  'integration.connected': zod.zIntegrationConnectedData,
  ping: zod.zPingData,
} as const;
const TYPES = Object.keys(DATA_SCHEMAS) as (keyof typeof DATA_SCHEMAS)[];

describe.each(testBackends())('test events and the delivery log detail on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  let admin: { cookie: string; csrfToken: string };
  let receiver: HttpsTestReceiver;
  let answer: ReceiverAnswer = { status: 200 };

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

  const worker = (): DeliveryWorkerDeps => ({
    db: store.db,
    clock: t.clock,
    secretBox: t.services.webhooks.secretBox,
    policy: { allowList: t.services.webhooks.allowList },
    ca: receiver.ca,
    timeoutMs: 5_000,
  });
  async function drain(): Promise<void> {
    while ((await runDeliveryBatch(worker())).claimed > 0);
  }

  async function call(method: string, path: string, body?: unknown) {
    const res = await t.app.request(path, {
      method,
      headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrfToken, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  async function destination(path: string) {
    const created = await call('POST', '/webhook-destinations', { url: `${receiver.origin}${path}`, events: ['run.completed'] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return { id: created.body.id as string, secret: created.body.secret as string };
  }
  const received = (path: string) => receiver.received.filter((r) => r.path === path);
  const log = async (id: string) => zod.zDeliveryList.parse((await call('GET', `/webhook-destinations/${id}/deliveries`)).body);
  const health = async (id: string) => zod.zWebhookDestinationList.parse((await call('GET', '/webhook-destinations')).body).data.find((d) => d.id === id)!;

  it('sends a test event of every type once, signed, marked test, sample data of its shape; the log shows what was sent and answered', async () => {
    answer = { status: 200, body: '{"received":true}', headers: { 'Content-Type': 'application/json' } };
    const dest = await destination('/every-type');
    const eventIds: Record<string, string> = {};
    for (const type of TYPES) {
      const queued = await call('POST', `/webhook-destinations/${dest.id}/test-events`, { type });
      expect(queued.status, JSON.stringify(queued.body)).toBe(202);
      expect(queued.body).toEqual({ eventIds: [expect.stringMatching(/^evt_[A-Za-z0-9]{24}$/)] });
      eventIds[type] = queued.body.eventIds[0];
    }
    await drain();

    const got = received('/every-type');
    expect(got.map((r) => r.headers['x-service-event-type']).sort()).toEqual([...TYPES].sort());
    const page = await log(dest.id);
    expect(page.total).toBe(TYPES.length);
    for (const request of got) {
      const verified = await verifyWebhook({
        rawBody: request.body,
        headers: request.headers as Record<string, string>,
        secret: dest.secret,
        now: t.clock.now(),
      });
      expect(verified.ok).toBe(true);
      const event = JSON.parse(request.body.toString('utf8'));
      const type = event.type as keyof typeof DATA_SCHEMAS;
      expect(event).toMatchObject({ id: eventIds[type], test: true, tenant_id: expect.stringMatching(/^wksp_/) });
      expect(zod.zEventEnvelope.safeParse(event).success).toBe(true);
      expect(DATA_SCHEMAS[type].safeParse(event.data).success, `${type} data matches its schema`).toBe(true);

      const delivery = page.data.find((d) => d.eventId === event.id)!;
      expect(delivery).toMatchObject({ eventType: type, status: 'delivered', test: true });
      // The stored body is byte for byte what the receiver got.
      expect(Buffer.compare(Buffer.from(delivery.requestBody, 'utf8'), request.body)).toBe(0);
      expect(delivery.attempts).toHaveLength(1);
      const [attempt] = delivery.attempts;
      expect(attempt).toMatchObject({
        attempt: 1,
        result: 'delivered',
        httpStatus: 200,
        errorKind: null,
        responseBody: '{"received":true}',
        responseBodyTruncated: false,
      });
      const shown = Object.fromEntries(attempt!.requestHeaders!.map((h) => [h.name, h.value]));
      expect(Object.keys(shown)).toEqual(
        expect.arrayContaining([
          'X-SERVICE-Signature',
          'X-SERVICE-Timestamp',
          'X-SERVICE-Event-Id',
          'X-SERVICE-Event-Type',
          'webhook-id',
          'webhook-timestamp',
          'webhook-signature',
        ]),
      );
      for (const name of [
        'X-SERVICE-Timestamp',
        'X-SERVICE-Event-Id',
        'X-SERVICE-Event-Type',
        'webhook-id',
        'webhook-timestamp',
        'Content-Type',
        'Content-Length',
      ]) {
        expect(shown[name], name).toBe(request.headers[name.toLowerCase()]);
      }
      // Signatures: the receiver's value starts with what the log shows, and the log never holds the whole one.
      const signature = request.headers['x-service-signature'] as string;
      expect(shown['X-SERVICE-Signature']).toBe(`${signature.slice(0, 12)}…`);
      expect(shown['webhook-signature']).toBe(`${(request.headers['webhook-signature'] as string).slice(0, 15)}…`);
      expect(JSON.stringify(delivery)).not.toContain(signature);
      expect(JSON.stringify(delivery)).not.toContain(dest.secret);
    }
    // Real events never carry the test mark: the destination's own (non-test) shape is unchanged.
    expect(await health(dest.id)).toMatchObject({ status: 'active', consecutiveFailures: 0, lastFailure: null });
  });

  it("shows a signature's start as sent even when it spells a model's name by chance (an HMAC is not engine output)", async () => {
    answer = { status: 200 };
    const dest = await destination('/signature-spells');
    expect((await call('POST', `/webhook-destinations/${dest.id}/ping`)).status).toBe(202);
    await drain();
    // One signature in a few hundred starts with a run of characters the redactor takes for a model's name ("qwq",
    // "o3"): such a start, written into the attempt's logged headers as the worker writes them.
    const spelled = { 'X-SERVICE-Signature': 'sha256=qwq91…', 'webhook-signature': 'v1,BEnPaxS5qwqc…' };
    const [attempt] = await store.db.query<{ id: string; request_headers: { name: string; value: string }[] }>(
      `SELECT a.id, a.request_headers FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.destination_id = $1`,
      [dest.id],
    );
    const headers = attempt!.request_headers.map((h) => (h.name in spelled ? { ...h, value: spelled[h.name as keyof typeof spelled] } : h));
    expect(headers.filter((h) => h.name in spelled)).toHaveLength(2);
    await store.db.query(`UPDATE delivery_attempts SET request_headers = $2 WHERE id = $1`, [attempt!.id, JSON.stringify(headers)]);

    const [delivery] = (await log(dest.id)).data;
    const shown = Object.fromEntries(delivery!.attempts[0]!.requestHeaders!.map((h) => [h.name, h.value]));
    expect(shown).toMatchObject(spelled);
  });

  it('keeps only the first 2 KiB of a 1 MiB answer, and replaces invalid UTF-8', async () => {
    const dest = await destination('/long-answer');
    answer = { status: 200, body: 'z'.repeat(1024 * 1024) };
    await call('POST', `/webhook-destinations/${dest.id}/test-events`, { type: 'run.failed' });
    await drain();
    answer = { status: 502, body: Buffer.from([0x62, 0x61, 0x64, 0xff, 0xfe]) };
    await call('POST', `/webhook-destinations/${dest.id}/ping`);
    await drain();

    const { data } = await log(dest.id);
    const long = data.find((d) => d.eventType === 'run.failed');
    const invalid = data.find((d) => d.eventType === 'ping');
    expect(long!.attempts).toEqual([
      expect.objectContaining({ result: 'delivered', httpStatus: 200, responseBody: 'z'.repeat(2048), responseBodyTruncated: true }),
    ]);
    expect(invalid!.attempts).toEqual([
      expect.objectContaining({ result: 'give_up', httpStatus: 502, errorKind: 'http_status', responseBody: 'bad\uFFFD\uFFFD', responseBodyTruncated: false }),
    ]);
    const [row] = await store.db.query<{ n: number }>(
      `SELECT max(octet_length(a.response_body))::integer AS n FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.destination_id = $1`,
      [dest.id],
    );
    expect(row!.n).toBe(2048);
  });

  it('attempts a failing test event once, never retries it, and leaves the destination healthy (no count, no pause on 410)', async () => {
    const dest = await destination('/failing');
    answer = { status: 500, body: 'receiver down' };
    const failed = await call('POST', `/webhook-destinations/${dest.id}/test-events`, { type: 'approval.created' });
    expect(failed.status).toBe(202);
    await drain();
    answer = { status: 410, body: 'gone' };
    await call('POST', `/webhook-destinations/${dest.id}/ping`);
    await drain();
    // Hours later: nothing is due again.
    answer = { status: 200 };
    t.clock.advance(6 * 3_600_000);
    await drain();

    expect(received('/failing')).toHaveLength(2);
    const page = await log(dest.id);
    // Both were queued at the same instant: in the order of their types.
    page.data.sort((a, b) => b.eventType.localeCompare(a.eventType));
    expect(page.data.map((d) => [d.eventType, d.status, d.test, d.nextRetryAt])).toEqual([
      ['ping', 'failed', true, null],
      ['approval.created', 'failed', true, null],
    ]);
    expect(page.data.map((d) => d.attempts.map((a) => [a.result, a.httpStatus, a.errorKind, a.nextRetryAt, a.responseBody]))).toEqual([
      [['give_up', 410, 'http_status', null, 'gone']],
      [['give_up', 500, 'http_status', null, 'receiver down']],
    ]);
    expect(await health(dest.id)).toMatchObject({ status: 'active', pausedReason: null, consecutiveFailures: 0, lastFailure: null });
  });

  it('sends a test event to a paused destination (it stays paused); refuses an unknown type; another id is not_found', async () => {
    answer = { status: 204 };
    const dest = await destination('/paused');
    expect((await call('POST', `/webhook-destinations/${dest.id}/pause`)).body).toMatchObject({ status: 'paused' });
    expect((await call('POST', `/webhook-destinations/${dest.id}/test-events`, { type: 'draft.created' })).status).toBe(202);
    await drain();
    expect(received('/paused')).toHaveLength(1);
    expect((await log(dest.id)).data[0]).toMatchObject({ status: 'delivered', test: true, attempts: [{ httpStatus: 204, responseBody: '' }] });
    expect(await health(dest.id)).toMatchObject({ status: 'paused', pausedReason: 'admin' });

    const unknown = await call('POST', `/webhook-destinations/${dest.id}/test-events`, { type: 'run.started' });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ error: 'invalid_body' });
    const missing = await call('POST', '/webhook-destinations/dst_0000000000000000000000/test-events', { type: 'ping' });
    expect(missing).toMatchObject({ status: 404, body: { error: 'not_found' } });
  });
});
