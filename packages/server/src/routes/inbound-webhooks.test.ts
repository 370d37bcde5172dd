/**
 * The inbound webhook routes end to end through the app: admin creation, signed SHA-256 and
 * SHA-512 senders starting runs, duplicates (sequential and parallel) starting none, and every
 * inbound error of the spec with its status and body. On PGlite, and on PostgreSQL when
 * DATABASE_URL is set (own schema).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInboundBody } from '../domain/webhooks/inbound-signature.ts';
import { MAX_INBOUND_BODY_BYTES } from '../domain/webhooks/body-limit.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';

type Algorithm = 'sha256' | 'sha512';

describe.each(testBackends())('inbound webhooks on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  let admin: { cookie: string; csrfToken: string };

  beforeAll(async () => {
    store = await open();
    t = await createTestApp({ db: store.db });
    admin = await t.login();
  });
  afterAll(async () => {
    await t?.close();
    await store?.cleanup();
  });

  async function adminCall(method: string, path: string, body?: unknown) {
    const res = await t.app.request(path, {
      method,
      headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrfToken, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  }

  async function createWebhook(body: Record<string, unknown>) {
    const r = await adminCall('POST', '/inbound-webhooks', body);
    expect(r.status).toBe(201);
    return r.body as { slug: string; secret: string };
  }

  async function send(
    slug: string,
    raw: string | Uint8Array,
    options: { secret?: string; algorithm?: Algorithm; header?: string; headers?: Record<string, string>; v1?: boolean; signature?: string } = {},
  ) {
    const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
    if (options.secret)
      headers[options.header ?? 'X-SERVICE-Signature'] = options.signature ?? signInboundBody(raw, options.secret, options.algorithm ?? 'sha256');
    const res = await t.app.request(`${options.v1 ? '/v1' : ''}/webhooks/inbound/${slug}`, {
      method: 'POST',
      headers,
      body: typeof raw === 'string' ? raw : Buffer.from(raw),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  }

  async function runsOf(runId: string) {
    return store.db.query<{ status: string; source: string; agent_slug: string; alias: string }>(
      `SELECT status, source, agent_slug, alias FROM runs WHERE id = $1`,
      [runId],
    );
  }

  it('creates a webhook with its secret shown once; the list never shows it', async () => {
    const created = await adminCall('POST', '/inbound-webhooks', { slug: 'crm-leads', agentSlug: 'sales', template: 'Lead {{ contact.name }}' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      slug: 'crm-leads',
      agentSlug: 'sales',
      alias: 'Sonata',
      signatureHeader: 'X-SERVICE-Signature',
      algorithm: 'sha256',
      timestampRequired: false,
      requestsPerMinute: 60,
      status: 'active',
      lastEventAt: null,
    });
    expect(created.body.secret).toMatch(/^whsec_[0-9A-Za-z]{32}$/);
    const stored = await store.db.query<{ secret_encrypted: string }>(`SELECT secret_encrypted FROM inbound_webhooks WHERE slug = 'crm-leads'`);
    expect(stored[0]!.secret_encrypted).not.toContain((created.body.secret as string).slice(6));
    const list = await adminCall('GET', '/inbound-webhooks');
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).not.toContain(created.body.secret as string);
    expect((list.body.data as { slug: string }[]).map((w) => w.slug)).toContain('crm-leads');
    // The slug is unique across the service.
    const again = await adminCall('POST', '/inbound-webhooks', { slug: 'crm-leads' });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ error: 'invalid_body' });
  });

  // Found by the contract fuzzer: a webhook could be created for an agent that does not exist ("j-"),
  // and every event sent to it would then have started a run doomed to fail.
  it('refuses to create a webhook for an unknown agent', async () => {
    const r = await adminCall('POST', '/inbound-webhooks', { slug: 'nowhere-hook', agentSlug: 'procurement' });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'invalid_body', message: "Invalid body field 'agentSlug': must be one of the workspace's agents.", param: 'agentSlug' });
    expect(JSON.stringify(r.body)).not.toContain('procurement');
    const list = await adminCall('GET', '/inbound-webhooks');
    expect((list.body.data as { slug: string }[]).map((w) => w.slug)).not.toContain('nowhere-hook');
  });

  it.each([
    ['sha256', false],
    ['sha512', true],
  ] as const)('an external %s sender (v1 route: %s) starts a run; its duplicate does not', async (algorithm, v1) => {
    const { slug, secret } = await createWebhook({ slug: `sender-${algorithm}`, algorithm, agentSlug: 'finance' });
    const body = JSON.stringify({ event: 'invoice.paid', id: 'inv_1', amount: 120 });
    const first = await send(slug, body, { secret, algorithm, v1, headers: { 'X-SERVICE-Event-Id': `evt-${algorithm}-1` } });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ ok: true, code: 'ok', eventId: `evt-${algorithm}-1`, runId: expect.stringMatching(/^run_[0-9A-Za-z]{16,32}$/) });
    expect(first.headers.get('x-request-id')).toBeTruthy();
    expect(first.headers.get('x-ratelimit-limit')).toBe('60');
    expect(await runsOf(first.body.runId as string)).toEqual([{ status: 'in_progress', source: 'inbound_webhook', agent_slug: 'finance', alias: 'Sonata' }]);

    const repeat = await send(slug, body, { secret, algorithm, v1, headers: { 'X-SERVICE-Event-Id': `evt-${algorithm}-1` } });
    expect(repeat.status).toBe(200);
    expect(repeat.body).toEqual({ ok: true, code: 'duplicate', eventId: `evt-${algorithm}-1` });
    const runs = await store.db.query(`SELECT id FROM runs WHERE source = 'inbound_webhook' AND agent_slug = 'finance' AND alias = 'Sonata' AND id = $1`, [
      first.body.runId,
    ]);
    expect(runs).toHaveLength(1);
    const audit = await store.db.query<{ event_id_source: string; duplicates: number; body_bytes: number }>(
      `SELECT event_id_source, duplicates, body_bytes FROM inbound_events WHERE slug = $1`,
      [slug],
    );
    expect(audit).toEqual([{ event_id_source: 'X-SERVICE-Event-Id', duplicates: 1, body_bytes: Buffer.byteLength(body) }]);
  });

  it('takes the event id from the alternative headers, or from the body when none is sent', async () => {
    const { slug, secret } = await createWebhook({ slug: 'alt-ids' });
    for (const header of ['X-Event-Id', 'X-Webhook-Id', 'X-Hook-Id']) {
      const r = await send(slug, `{"h":"${header}"}`, { secret, headers: { [header]: `id-${header}` } });
      expect(r.body).toMatchObject({ ok: true, code: 'ok', eventId: `id-${header}` });
    }
    const derived = await send(slug, '{"no":"header"}', { secret });
    expect(derived.body).toMatchObject({ code: 'ok', eventId: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    const resent = await send(slug, '{"no":"header"}', { secret });
    expect(resent.body).toEqual({ ok: true, code: 'duplicate', eventId: derived.body.eventId });
  });

  it('parallel duplicates start exactly one run (the unique constraint decides)', async () => {
    const { slug, secret } = await createWebhook({ slug: 'parallel' });
    const body = '{"event":"lead.created","id":"lead_9"}';
    const answers = await Promise.all(Array.from({ length: 12 }, () => send(slug, body, { secret, headers: { 'X-SERVICE-Event-Id': 'lead-9' } })));
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
    const ok = answers.filter((a) => a.body.code === 'ok');
    expect(ok).toHaveLength(1);
    expect(answers.filter((a) => a.body.code === 'duplicate')).toHaveLength(11);
    const events = await store.db.query<{ run_id: string; duplicates: number }>(`SELECT run_id, duplicates FROM inbound_events WHERE slug = $1`, [slug]);
    expect(events).toEqual([{ run_id: ok[0]!.body.runId, duplicates: 11 }]);
    const runs = await store.db.query(`SELECT r.id FROM runs r JOIN inbound_events e ON e.run_id = r.id WHERE e.slug = $1`, [slug]);
    expect(runs).toHaveLength(1);
  });

  describe('inbound errors', () => {
    let hook: { slug: string; secret: string };
    beforeAll(async () => {
      hook = await createWebhook({ slug: 'errors', timestampRequired: true, template: 'Hi {{ name }}' });
    });
    const now = () => String(Math.floor(t.clock.now().getTime() / 1000));

    it('413 payload_too_large over 1 MiB, before the signature (even with no signature)', async () => {
      const big = `{"a":"${'x'.repeat(MAX_INBOUND_BODY_BYTES)}"}`;
      const r = await send(hook.slug, big);
      expect(r.status).toBe(413);
      expect(r.body).toMatchObject({ error: 'payload_too_large' });
      expect(r.headers.get('x-request-id')).toBeTruthy();
      expect(r.headers.get('x-ratelimit-limit')).toBeTruthy();
    });

    it('401 signature_invalid: missing, wrong, other algorithm, uppercase, timestamp missing, stale or in the future', async () => {
      const body = '{"name":"Dana"}';
      const ts = now();
      const good = signInboundBody(body, hook.secret);
      const cases: [string, Record<string, string>][] = [
        ['missing', { 'X-SERVICE-Timestamp': ts }],
        ['wrong secret', { 'X-SERVICE-Signature': signInboundBody(body, 'whsec_other'), 'X-SERVICE-Timestamp': ts }],
        ['sha512 of a sha256 webhook', { 'X-SERVICE-Signature': signInboundBody(body, hook.secret, 'sha512'), 'X-SERVICE-Timestamp': ts }],
        ['uppercase hex', { 'X-SERVICE-Signature': good.toUpperCase(), 'X-SERVICE-Timestamp': ts }],
        ['timestamp required', { 'X-SERVICE-Signature': good }],
        ['stale timestamp', { 'X-SERVICE-Signature': good, 'X-SERVICE-Timestamp': String(Number(ts) - 301) }],
        ['future timestamp', { 'X-SERVICE-Signature': good, 'X-SERVICE-Timestamp': String(Number(ts) + 61) }],
      ];
      for (const [name, headers] of cases) {
        const r = await send(hook.slug, body, { headers });
        expect({ name, status: r.status, error: r.body.error }).toEqual({ name, status: 401, error: 'signature_invalid' });
      }
      // Re-serialized JSON is not the raw body.
      const spaced = '{ "name": "Dana" }';
      const r = await send(hook.slug, spaced, { headers: { 'X-SERVICE-Signature': good, 'X-SERVICE-Timestamp': ts } });
      expect(r.status).toBe(401);
      // ISO 8601 timestamps inside the window are accepted.
      const iso = new Date(t.clock.now().getTime() - 200_000).toISOString();
      const ok = await send(hook.slug, body, { secret: hook.secret, headers: { 'X-SERVICE-Timestamp': iso, 'X-SERVICE-Event-Id': 'iso-1' } });
      expect(ok.status).toBe(200);
    });

    it('400 payload_invalid for a body that is not JSON and for a template that does not render', async () => {
      const headers = { 'X-SERVICE-Timestamp': now() };
      const notJson = await send(hook.slug, '{"name": ', { secret: hook.secret, headers });
      expect(notJson.status).toBe(400);
      expect(notJson.body).toMatchObject({ error: 'payload_invalid' });
      // Strict variables: `name` is missing.
      const noName = await send(hook.slug, '{"other":1}', { secret: hook.secret, headers });
      expect(noName.status).toBe(400);
      expect(noName.body).toMatchObject({ error: 'payload_invalid' });
      expect(await store.db.query(`SELECT 1 FROM inbound_events WHERE slug = 'errors' AND body_bytes = 11`)).toEqual([]);
    });

    it('400 invalid_request for a malformed event id header, after the signature', async () => {
      const r = await send(hook.slug, '{"name":"x"}', { secret: hook.secret, headers: { 'X-SERVICE-Timestamp': now(), 'X-SERVICE-Event-Id': 'has space' } });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: 'invalid_request' });
    });

    it('404 webhook_not_found for an unknown or revoked slug, webhook_unavailable while paused', async () => {
      const unknown = await send('no-such-hook', '{}');
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ error: 'webhook_not_found' });
      const other = await createWebhook({ slug: 'lifecycle' });
      const signed = () => send('lifecycle', '{"a":1}', { secret: other.secret });
      expect((await adminCall('POST', '/inbound-webhooks/lifecycle/pause')).body).toMatchObject({ status: 'paused' });
      const paused = await signed();
      expect(paused.status).toBe(404);
      expect(paused.body).toMatchObject({ error: 'webhook_unavailable' });
      expect((await adminCall('POST', '/inbound-webhooks/lifecycle/resume')).body).toMatchObject({ status: 'active' });
      expect((await signed()).status).toBe(200);
      const revoked = await adminCall('DELETE', '/inbound-webhooks/lifecycle');
      expect(revoked.status).toBe(200);
      expect(revoked.body).toMatchObject({ slug: 'lifecycle', status: 'revoked' });
      const gone = await signed();
      expect(gone.status).toBe(404);
      expect(gone.body).toEqual({ error: 'webhook_not_found' });
      // Revoked is final.
      expect((await adminCall('POST', '/inbound-webhooks/lifecycle/resume')).status).toBe(404);
    });

    it('404 webhook_not_found for a slug no webhook can have (a NUL byte, upper case, a space, too long): never a 500', async () => {
      for (const slug of ['crm%00leads', '%00', 'leads%00', 'CRM-Leads', 'crm%20leads', 'caf%C3%A9', 'a'.repeat(65)]) {
        const r = await send(slug, '{"a":1}', { secret: hook.secret });
        expect([slug, r.status]).toEqual([slug, 404]);
        expect(r.body).toEqual({ error: 'webhook_not_found' });
      }
    });

    it("429 rate_limited past the webhook's requests per minute per IP, before the signature is checked", async () => {
      const limited = await createWebhook({ slug: 'limited', requestsPerMinute: 2 });
      const ok1 = await send('limited', '{"n":1}', { secret: limited.secret });
      const ok2 = await send('limited', '{"n":2}', { secret: limited.secret });
      expect([ok1.status, ok2.status]).toEqual([200, 200]);
      expect(ok2.headers.get('x-ratelimit-limit')).toBe('2');
      expect(ok2.headers.get('x-ratelimit-remaining')).toBe('0');
      const third = await send('limited', '{"n":3}', { signature: 'deadbeef', secret: 'x' });
      expect(third.status).toBe(429);
      expect(third.body).toMatchObject({ error: 'rate_limited', retryAfterSec: expect.any(Number) });
      expect(third.headers.get('retry-after')).toBe(String(third.body.retryAfterSec));
      // The same wait to the millisecond, rounded up to whole seconds in Retry-After and the body.
      const waitSec = Number(third.body.retryAfterSec);
      expect(Number(third.headers.get('retry-after-ms'))).toBeGreaterThan((waitSec - 1) * 1000);
      expect(Number(third.headers.get('retry-after-ms'))).toBeLessThanOrEqual(waitSec * 1000);
      expect(third.headers.get('x-should-retry')).toBe('true');
      t.clock.advance(61_000);
      expect((await send('limited', '{"n":4}', { secret: limited.secret })).status).toBe(200);
    });
  });

  it("a webhook's own rate replaces the API's 60/min per IP on the inbound route", async () => {
    const fast = await createWebhook({ slug: 'fast', requestsPerMinute: 100 });
    const statuses: number[] = [];
    for (let i = 0; i < 75; i += 1) statuses.push((await send('fast', `{"n":${i}}`, { secret: fast.secret })).status);
    expect(statuses).toEqual(Array(75).fill(200));
    // Other methods on the inbound path are API requests again: 405 with the common headers.
    const get = await t.app.request('/webhooks/inbound/fast');
    expect(get.status).toBe(405);
    expect(get.headers.get('x-ratelimit-limit')).toBe('60');
  });

  it("another workspace's webhook is 404 not_found to this admin, and absent from the list", async () => {
    await store.db.query(`INSERT INTO workspaces (id, name, created_at) VALUES ('wksp_otherAAAAAAAAAAAAAAAA', 'O', now())`);
    await t.services.webhooks.inbound.create('wksp_otherAAAAAAAAAAAAAAAA', { slug: 'not-mine' });
    for (const [method, path] of [
      ['POST', '/inbound-webhooks/not-mine/pause'],
      ['DELETE', '/inbound-webhooks/not-mine'],
    ] as const) {
      const r = await adminCall(method, path);
      expect(r.status).toBe(404);
      expect(r.body).toMatchObject({ error: 'not_found' });
    }
    const list = await adminCall('GET', '/inbound-webhooks');
    expect((list.body.data as { slug: string }[]).map((w) => w.slug)).not.toContain('not-mine');
  });
});
