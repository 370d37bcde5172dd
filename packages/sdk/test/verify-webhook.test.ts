import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The server's own signer and delivery, by relative path (tests only): what we verify is what it sends.
import { deliverWebhook } from '../../server/src/domain/webhooks/delivery.ts';
import { buildEnvelope, buildPingEnvelope, serializeEnvelope, type OutboundEnvelope } from '../../server/src/domain/webhooks/envelope.ts';
import { createSelfSignedCertificate, startHttpsTestReceiver, type HttpsTestReceiver } from '@service/testing/https-receiver';
import { buildDeliveryHeaders } from '../../server/src/domain/webhooks/outbound-signature.ts';
import { verifyWebhook, type VerifyWebhookOptions } from '../src/webhooks/verify-webhook.ts';
import type { WebhookEvent } from '../src/webhooks/events.ts';

/** A destination secret as the service issues them: `whsec_` + 32 base62 (`seed` padded). */
const secretOf = (seed: string) => `whsec_${seed.padEnd(32, '0')}`;
const SECRET = secretOf('DstSecretForReceiverTests');
const TENANT = 'wksp_0123456789abcdef';
const NOW = Date.UTC(2026, 10, 22, 6, 0, 0);

const STANDARD = ['webhook-id', 'webhook-timestamp', 'webhook-signature'];

/**
 * A delivery as the server signs it: both header sets, or only the service's (`service`) or only the
 * Standard Webhooks ones (`standard`).
 */
function signed(
  envelope: OutboundEnvelope,
  {
    secret = SECRET,
    at = NOW,
    previousSecret,
    set = 'both',
  }: { secret?: string; at?: number; previousSecret?: string; set?: 'both' | 'service' | 'standard' } = {},
) {
  const body = serializeEnvelope(envelope);
  const all = buildDeliveryHeaders({ body, secret, previousSecret, eventId: envelope.id, eventType: envelope.type, nowMs: at });
  const keep = (name: string) => (set === 'both' ? true : set === 'standard' ? STANDARD.includes(name) : !STANDARD.includes(name));
  const headers = Object.fromEntries(Object.entries(all).filter(([name]) => keep(name) || name === 'Content-Type'));
  return { body, headers };
}

const completed = buildEnvelope({
  type: 'run.completed',
  tenantId: TENANT,
  data: { run_id: 'run_0123456789abcdef', agent: 'sales', alias: 'Sonata', status: 'completed', usage: { input_tokens: 1, output_tokens: 2, stu: 3 } },
  redactText: (text) => text,
  createdAt: new Date(NOW - 1000),
});

function verify(overrides: Partial<VerifyWebhookOptions> = {}) {
  const { body, headers } = signed(completed);
  return verifyWebhook({ rawBody: body, headers, secret: SECRET, now: NOW, ...overrides });
}

describe('verifyWebhook against the server signer', () => {
  it('accepts a genuine delivery and returns the typed envelope', async () => {
    const result = await verify();
    expect(result).toEqual({ ok: true, event: completed, eventId: completed.id, duplicate: false });
    if (result.ok && result.event.type === 'run.completed') expect(result.event.data.usage.stu).toBe(3); // narrowed type
  });

  it('accepts node-style lowercase header records, Buffers and raw text alike', async () => {
    const { body, headers } = signed(completed);
    const nodeHeaders = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    expect((await verifyWebhook({ rawBody: Buffer.from(body), headers: nodeHeaders, secret: SECRET, now: NOW })).ok).toBe(true);
    expect((await verifyWebhook({ rawBody: new TextDecoder().decode(body), headers: new Headers(headers), secret: SECRET, now: new Date(NOW) })).ok).toBe(true);
    expect((await verifyWebhook({ rawBody: body.slice().buffer, headers, secret: SECRET, now: NOW })).ok).toBe(true);
  });

  it('rejects a tampered body with 401 signature_mismatch', async () => {
    const { body, headers } = signed(completed);
    const tampered = new TextEncoder().encode(new TextDecoder().decode(body).replace('"stu":3', '"stu":0'));
    expect(await verifyWebhook({ rawBody: tampered, headers, secret: SECRET, now: NOW })).toEqual({ ok: false, reason: 'signature_mismatch', status: 401 });
  });

  it('rejects re-serialized JSON of the same event (only the exact bytes verify)', async () => {
    const { body, headers } = signed(completed);
    const pretty = JSON.stringify(JSON.parse(new TextDecoder().decode(body)), null, 2);
    expect(await verifyWebhook({ rawBody: pretty, headers, secret: SECRET, now: NOW })).toMatchObject({ ok: false, reason: 'signature_mismatch' });
  });

  it('rejects a wrong secret, and accepts either secret during a rotation', async () => {
    expect(await verify({ secret: secretOf('NotTheSecret') })).toMatchObject({ ok: false, reason: 'signature_mismatch', status: 401 });
    expect((await verify({ secret: [secretOf('NewSecret'), SECRET] })).ok).toBe(true);
    expect((await verify({ secret: [secretOf('NewSecret'), secretOf('Older')] })).ok).toBe(false);
  });

  it('fails closed without a secret', async () => {
    expect(await verify({ secret: '' })).toEqual({ ok: false, reason: 'missing_secret', status: 401 });
    expect(await verify({ secret: [] })).toEqual({ ok: false, reason: 'missing_secret', status: 401 });
  });

  const skews: [string, number, string | null][] = [
    ['300 s old (edge)', -300, null],
    ['301 s old', -301, 'timestamp_too_old'],
    ['an hour old', -3600, 'timestamp_too_old'],
    ['60 s ahead (edge)', 60, null],
    ['61 s ahead', 61, 'timestamp_in_future'],
    ['200 s ahead', 200, 'timestamp_in_future'],
  ];
  it.each(skews)('checks the window: a timestamp %s', async (_name, skewSeconds, reason) => {
    for (const set of ['service', 'standard'] as const) {
      const { body, headers } = signed(completed, { at: NOW + skewSeconds * 1000, set });
      const result = await verifyWebhook({ rawBody: body, headers, secret: SECRET, now: NOW, allowServiceSignatureOnly: set === 'service' });
      if (reason === null) expect(result.ok).toBe(true);
      else expect(result).toEqual({ ok: false, reason, status: 401 });
    }
  });

  it('checks the timestamp before the HMAC (a stale delivery with a bad signature reports the timestamp)', async () => {
    const { body, headers } = signed(completed, { secret: secretOf('Wrong'), at: NOW - 3_600_000 });
    expect(await verifyWebhook({ rawBody: body, headers, secret: SECRET, now: NOW })).toMatchObject({ reason: 'timestamp_too_old' });
  });

  const broken: [string, (h: Record<string, string>) => Record<string, string>, string][] = [
    ['no timestamp', ({ 'X-SERVICE-Timestamp': _, ...h }) => h, 'missing_timestamp'],
    ['an ISO timestamp (deliveries send unix seconds)', (h) => ({ ...h, 'X-SERVICE-Timestamp': new Date(NOW).toISOString() }), 'malformed_timestamp'],
    ['a millisecond timestamp', (h) => ({ ...h, 'X-SERVICE-Timestamp': String(NOW) }), 'malformed_timestamp'],
    ['no signature', ({ 'X-SERVICE-Signature': _, ...h }) => h, 'missing_signature'],
    ['an uppercase signature', (h) => ({ ...h, 'X-SERVICE-Signature': h['X-SERVICE-Signature']!.toUpperCase() }), 'malformed_signature'],
    ['a sha256= prefixed signature', (h) => ({ ...h, 'X-SERVICE-Signature': `sha256=${h['X-SERVICE-Signature']}` }), 'malformed_signature'],
    ['a header event id that differs from the signed body', (h) => ({ ...h, 'X-SERVICE-Event-Id': 'evt_SomeOtherEvent00001' }), 'event_id_mismatch'],
    ['a header event type that differs from the signed body', (h) => ({ ...h, 'X-SERVICE-Event-Type': 'run.failed' }), 'event_type_mismatch'],
  ];
  it.each(broken)('rejects %s (the service header set, allowed alone)', async (_name, edit, reason) => {
    const { body, headers } = signed(completed, { set: 'service' });
    expect(await verifyWebhook({ rawBody: body, headers: edit(headers), secret: SECRET, now: NOW, allowServiceSignatureOnly: true })).toEqual({
      ok: false,
      reason,
      status: 401,
    });
  });

  const brokenStandard: [string, (h: Record<string, string>) => Record<string, string>, string][] = [
    ['no webhook-timestamp', ({ 'webhook-timestamp': _, ...h }) => h, 'missing_timestamp'],
    ['a webhook-timestamp moved by a second (it is signed)', (h) => ({ ...h, 'webhook-timestamp': String(NOW / 1000 + 1) }), 'signature_mismatch'],
    ['no webhook-id', ({ 'webhook-id': _, ...h }) => h, 'missing_signature'],
    ['another webhook-id (it is signed)', (h) => ({ ...h, 'webhook-id': 'evt_SomeOtherEvent00001' }), 'signature_mismatch'],
    ['a signature of another version only', (h) => ({ ...h, 'webhook-signature': h['webhook-signature']!.replace('v1,', 'v2,') }), 'malformed_signature'],
    ['a truncated signature', (h) => ({ ...h, 'webhook-signature': h['webhook-signature']!.slice(0, -4) }), 'malformed_signature'],
  ];
  it.each(brokenStandard)('rejects %s (the Standard Webhooks header set)', async (_name, edit, reason) => {
    const { body, headers } = signed(completed, { set: 'standard' });
    expect(await verifyWebhook({ rawBody: body, headers: edit(headers), secret: SECRET, now: NOW })).toEqual({ ok: false, reason, status: 401 });
  });

  it('accepts the Standard Webhooks set alone, the service set alone when allowed, and prefers the Standard Webhooks set when both are present', async () => {
    for (const set of ['service', 'standard'] as const) {
      const { body, headers } = signed(completed, { set });
      expect(await verifyWebhook({ rawBody: body, headers, secret: SECRET, now: NOW, allowServiceSignatureOnly: set === 'service' }), set).toMatchObject({
        ok: true,
        eventId: completed.id,
      });
    }
    // Both present: a broken service signature does not matter, the signed id and timestamp do.
    const { body, headers } = signed(completed);
    expect((await verifyWebhook({ rawBody: body, headers: { ...headers, 'X-SERVICE-Signature': '0'.repeat(64) }, secret: SECRET, now: NOW })).ok).toBe(true);
  });

  it('during a rotation grace period, the previous secret verifies through webhook-signature only', async () => {
    const previous = secretOf('PreviousSecret');
    const { body, headers } = signed(completed, { previousSecret: previous });
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    for (const secret of [SECRET, previous]) expect((await verifyWebhook({ rawBody: body, headers, secret, now: NOW })).ok).toBe(true);
    const serviceOnly = signed(completed, { previousSecret: previous, set: 'service' });
    expect(
      await verifyWebhook({ rawBody: serviceOnly.body, headers: serviceOnly.headers, secret: previous, now: NOW, allowServiceSignatureOnly: true }),
    ).toMatchObject({
      ok: false,
      reason: 'signature_mismatch',
    });
  });

  it('verifies what the standardwebhooks package signs, with the same secret string', async () => {
    const body = new TextDecoder().decode(serializeEnvelope(completed));
    const signature = new Webhook(SECRET).sign(completed.id, new Date(NOW), body);
    const headers = { 'webhook-id': completed.id, 'webhook-timestamp': String(NOW / 1000), 'webhook-signature': signature };
    expect(await verifyWebhook({ rawBody: body, headers, secret: SECRET, now: NOW })).toMatchObject({ ok: true, eventId: completed.id });
  });

  it('answers 400 invalid_payload for a signed body that is not an event', async () => {
    const body = new TextEncoder().encode('{"hello":"world"}');
    const headers = { 'X-SERVICE-Timestamp': String(NOW / 1000), 'X-SERVICE-Signature': createHmac('sha256', SECRET).update(body).digest('hex') };
    expect(await verifyWebhook({ rawBody: body, headers, secret: SECRET, now: NOW, allowServiceSignatureOnly: true })).toEqual({
      ok: false,
      reason: 'invalid_payload',
      status: 400,
    });
  });

  it('throws a TypeError for an already parsed body', async () => {
    const { headers } = signed(completed);
    await expect(verifyWebhook({ rawBody: completed as never, headers, secret: SECRET, now: NOW })).rejects.toThrow(TypeError);
  });

  it('uses the real clock by default', async () => {
    const { body, headers } = signed(completed, { at: Date.now() });
    expect((await verifyWebhook({ rawBody: body, headers, secret: SECRET })).ok).toBe(true);
    expect((await verify({ now: undefined })).ok).toBe(false); // signed for NOW, which is not today
  });
});

/** What an attacker who captured a delivery sends later: the same body, a fresh `X-SERVICE-Timestamp`, no `webhook-*`. */
function replayed(delivery: { body: Uint8Array; headers: Record<string, string> }, atMs: number) {
  const kept = Object.entries(delivery.headers).filter(([name]) => !STANDARD.includes(name));
  return { body: delivery.body, headers: { ...Object.fromEntries(kept), 'X-SERVICE-Timestamp': String(Math.floor(atMs / 1000)) } };
}

describe('verifyWebhook against replays (X-SERVICE-Signature covers the body only)', () => {
  const HOUR = 3_600_000;

  it('verifies a genuine delivery by default', async () => {
    const { body, headers } = signed(completed);
    expect(await verifyWebhook({ rawBody: body, headers, secret: SECRET, now: NOW })).toMatchObject({ ok: true, eventId: completed.id });
  });

  it('by default refuses a delivery captured an hour ago and replayed with a fresh X-SERVICE-Timestamp and no webhook-* headers', async () => {
    const replay = replayed(signed(completed), NOW + HOUR);
    expect(await verifyWebhook({ rawBody: replay.body, headers: replay.headers, secret: SECRET, now: NOW + HOUR })).toEqual({
      ok: false,
      reason: 'missing_standard_signature',
      status: 401,
    });
  });

  it('with allowServiceSignatureOnly, still refuses that replay: its signed created_at lies outside the window', async () => {
    const replay = replayed(signed(completed), NOW + HOUR);
    expect(await verifyWebhook({ rawBody: replay.body, headers: replay.headers, secret: SECRET, now: NOW + HOUR, allowServiceSignatureOnly: true })).toEqual({
      ok: false,
      reason: 'created_at_too_old',
      status: 401,
    });
  });

  it('a fresh delivery carrying only X-SERVICE-* verifies with allowServiceSignatureOnly, and is refused without it', async () => {
    const { body, headers } = signed(completed, { set: 'service' });
    expect(await verifyWebhook({ rawBody: body, headers, secret: SECRET, now: NOW, allowServiceSignatureOnly: true })).toMatchObject({
      ok: true,
      eventId: completed.id,
    });
    expect(await verifyWebhook({ rawBody: body, headers, secret: SECRET, now: NOW })).toEqual({ ok: false, reason: 'missing_standard_signature', status: 401 });
    // A delivery with no signature at all says so too, before its (absent) timestamp.
    expect(await verifyWebhook({ rawBody: body, headers: { 'Content-Type': 'application/json' }, secret: SECRET, now: NOW })).toMatchObject({
      reason: 'missing_standard_signature',
    });
  });

  const ages: [string, number, string | null][] = [
    ['300 s old (edge)', -300, null],
    ['301 s old', -301, 'created_at_too_old'],
    ['60 s ahead (edge)', 60, null],
    ['61 s ahead', 61, 'created_at_in_future'],
  ];
  it.each(ages)('with allowServiceSignatureOnly, holds the signed created_at to the window: %s', async (_name, ageSeconds, reason) => {
    const envelope = { ...completed, created_at: new Date(NOW + ageSeconds * 1000).toISOString() };
    const { body, headers } = signed(envelope, { set: 'service' });
    const result = await verifyWebhook({ rawBody: body, headers, secret: SECRET, now: NOW, allowServiceSignatureOnly: true });
    if (reason === null) expect(result.ok).toBe(true);
    else expect(result).toEqual({ ok: false, reason, status: 401 });
  });

  it('a genuine retry hours after the event verifies through webhook-signature (its timestamp is signed), in either mode', async () => {
    const retry = signed(completed, { at: NOW + 2 * HOUR });
    for (const allowServiceSignatureOnly of [false, true]) {
      const result = await verifyWebhook({ rawBody: retry.body, headers: retry.headers, secret: SECRET, now: NOW + 2 * HOUR, allowServiceSignatureOnly });
      expect(result, `allowServiceSignatureOnly: ${allowServiceSignatureOnly}`).toMatchObject({ ok: true, eventId: completed.id });
    }
  });

  it('the same retry carrying only X-SERVICE-* is refused as too old, unless maxEventAgeSeconds widens the window', async () => {
    const retry = signed(completed, { at: NOW + 2 * HOUR, set: 'service' });
    const options = { rawBody: retry.body, headers: retry.headers, secret: SECRET, now: NOW + 2 * HOUR, allowServiceSignatureOnly: true };
    expect(await verifyWebhook(options)).toEqual({ ok: false, reason: 'created_at_too_old', status: 401 });
    expect(await verifyWebhook({ ...options, maxEventAgeSeconds: 3 * 3600 })).toMatchObject({ ok: true });
  });

  it('maxEventAgeSeconds holds webhook-signature deliveries to an age too; a created_at in the future is refused in either mode', async () => {
    const retry = signed(completed, { at: NOW + 2 * HOUR });
    expect(await verifyWebhook({ rawBody: retry.body, headers: retry.headers, secret: SECRET, now: NOW + 2 * HOUR, maxEventAgeSeconds: 300 })).toEqual({
      ok: false,
      reason: 'created_at_too_old',
      status: 401,
    });
    const ahead = { ...completed, created_at: new Date(NOW + 120_000).toISOString() };
    for (const set of ['both', 'standard'] as const) {
      const { body, headers } = signed(ahead, { set });
      expect(await verifyWebhook({ rawBody: body, headers, secret: SECRET, now: NOW }), set).toEqual({
        ok: false,
        reason: 'created_at_in_future',
        status: 401,
      });
    }
  });

  it('a signed envelope whose created_at is not a date-time is not an event (400 invalid_payload)', async () => {
    const { body, headers } = signed({ ...completed, created_at: 'yesterday' });
    expect(await verifyWebhook({ rawBody: body, headers, secret: SECRET, now: NOW })).toEqual({ ok: false, reason: 'invalid_payload', status: 400 });
  });

  it('rejects a negative or non-finite maxEventAgeSeconds as a programming error', async () => {
    for (const maxEventAgeSeconds of [-1, Number.NaN, Number.POSITIVE_INFINITY]) await expect(verify({ maxEventAgeSeconds })).rejects.toThrow(RangeError);
  });
});

describe('verifyWebhook dedupe hook', () => {
  it('reports duplicates (still ok, so the receiver answers 2xx) and is only asked after the signature verified', async () => {
    const seen = new Set<string>();
    const asked: string[] = [];
    const dedupe = async (id: string) => {
      asked.push(id);
      if (seen.has(id)) return true;
      seen.add(id);
      return false;
    };
    const first = await verify({ dedupe });
    const second = await verify({ dedupe });
    expect([first.ok && first.duplicate, second.ok && second.duplicate]).toEqual([false, true]);
    expect(await verify({ dedupe, secret: secretOf('Wrong') })).toMatchObject({ ok: false });
    expect(asked).toEqual([completed.id, completed.id]);
  });

  it('accepts an object with a synchronous seen()', async () => {
    const store = {
      ids: new Set([completed.id]),
      seen(id: string) {
        return this.ids.has(id);
      },
    };
    expect(await verify({ dedupe: store })).toMatchObject({ ok: true, duplicate: true });
  });

  it('dedupes on the signed id: a replay with the id header stripped is still a duplicate', async () => {
    const seen = new Set<string>([completed.id]);
    const { body, headers } = signed(completed, { set: 'service' });
    const { 'X-SERVICE-Event-Id': _, ...stripped } = headers;
    const result = await verifyWebhook({
      rawBody: body,
      headers: stripped,
      secret: SECRET,
      now: NOW,
      allowServiceSignatureOnly: true,
      dedupe: (id) => seen.has(id),
    });
    expect(result).toMatchObject({ ok: true, duplicate: true, eventId: completed.id });
  });
});

describe('end to end: the server delivers over HTTPS, the receiver verifies with verifyWebhook', () => {
  let receiver: HttpsTestReceiver;
  const verdicts: { reason: string; type?: string; duplicate?: boolean }[] = [];
  const seen = new Set<string>();
  const receiverSecret = { current: SECRET };

  beforeAll(async () => {
    receiver = await startHttpsTestReceiver(createSelfSignedCertificate(), async (request) => {
      const result = await verifyWebhook({
        rawBody: request.body,
        headers: request.headers,
        secret: receiverSecret.current,
        dedupe: (id) => {
          const dup = seen.has(id);
          seen.add(id);
          return dup;
        },
      });
      verdicts.push(result.ok ? { reason: 'ok', type: result.event.type, duplicate: result.duplicate } : { reason: result.reason });
      return { status: result.ok ? 200 : result.status };
    });
  });
  afterAll(async () => receiver.close());

  const events: OutboundEnvelope[] = [
    completed,
    buildEnvelope({
      type: 'run.failed',
      tenantId: TENANT,
      data: { run_id: 'run_0123456789abcdef', agent: 'hr', reason: 'kill_switch:day', status: 'failed' },
      redactText: (t) => t,
    }),
    buildEnvelope({
      type: 'approval.created',
      tenantId: TENANT,
      data: {
        approval_id: 'apr_0123456789abcdef',
        run_id: 'run_0123456789abcdef',
        agent: 'sales',
        action: 'email.send',
        summary: 'Send it',
        expires_at: '2026-11-23T06:00:00.000Z',
      },
      redactText: (t) => t,
    }),
    buildEnvelope({
      type: 'approval.decided',
      tenantId: TENANT,
      data: { approval_id: 'apr_0123456789abcdef', decision: 'rejected', decided_by: 'usr_0123456789abcdef', run_id: 'run_0123456789abcdef' },
      redactText: (t) => t,
    }),
    buildEnvelope({
      type: 'draft.created',
      tenantId: TENANT,
      data: { draft_id: 'drf_0123456789abcdef', run_id: 'run_0123456789abcdef', agent: 'legal', kind: 'email', subject: 'Hello' },
      redactText: (t) => t,
    }),
    buildEnvelope({
      type: 'integration.connected',
      tenantId: TENANT,
      data: { integration: 'crm', provider: 'hubspot', connected_by: 'usr_0123456789abcdef' },
      redactText: (t) => t,
    }),
    buildPingEnvelope({ tenantId: TENANT, destinationId: 'dst_0123456789abcdef' }),
  ];

  it('every event type arrives, verifies and is answered 200; a redelivery is a duplicate answered 200', async () => {
    // The outcome without what the delivery log keeps of it (the headers sent, the start of the answer).
    const send = async (envelope: OutboundEnvelope, secret = SECRET) => {
      const {
        sentHeaders: _sent,
        answer: _answer,
        ...outcome
      } = (await deliverWebhook(
        { url: `${receiver.origin}/hooks`, secret, body: serializeEnvelope(envelope), eventId: envelope.id, eventType: envelope.type },
        { policy: { allowList: ['127.0.0.1/32'] }, now: () => Date.now(), ca: receiver.ca },
      )) as Awaited<ReturnType<typeof deliverWebhook>> & { sentHeaders?: unknown; answer?: unknown };
      return outcome;
    };
    for (const envelope of events) expect(await send(envelope)).toEqual({ result: 'delivered', status: 200 });
    expect(await send(events[0]!)).toEqual({ result: 'delivered', status: 200 });
    // After a rotation on our side that the receiver has not picked up yet: 401, to be retried.
    const rotated = secretOf('RotatedSecret');
    expect(await send(events[1]!, rotated)).toEqual({ result: 'retry', reason: 'http_status', status: 401 });
    receiverSecret.current = rotated;
    expect(await send(events[1]!, rotated)).toEqual({ result: 'delivered', status: 200 });

    expect(verdicts).toEqual([
      ...events.map((e) => ({ reason: 'ok', type: (e as WebhookEvent).type, duplicate: false })),
      { reason: 'ok', type: 'run.completed', duplicate: true },
      { reason: 'signature_mismatch' },
      { reason: 'ok', type: 'run.failed', duplicate: true },
    ]);
  });
});
