/**
 * Valid JSON that the store cannot keep is refused at the door, on PGlite and (with DATABASE_URL)
 * on PostgreSQL: a lone UTF-16 surrogate anywhere in a body is `400 invalid_body` (it used to fail
 * the tool-call write: a 500 and a run stuck `in_progress`), and in a signed inbound event a lone
 * surrogate or a NUL is `400 payload_invalid` (it used to be a 500, which senders retry forever).
 * Nothing is stored for a refused request.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { signInboundBody } from '../domain/webhooks/inbound-signature.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';

const LONE = 'Call Dana back \ud800 today';

describe.each(testBackends())('hostile but valid input on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  let key: string;

  beforeEach(async () => {
    store = await open();
    t = await createTestApp({ db: store.db });
    key = await t.keyWith('orchestrator:invoke');
  });
  afterEach(async () => {
    await t.close();
    await store.cleanup();
  });

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    t.app.request(path, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      // JSON.stringify spells a lone surrogate as the escape \ud800: valid JSON, not valid text.
      body: JSON.stringify(body),
    });

  async function expectRefused(res: Response, error: string): Promise<void> {
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    const body = (await res.json()) as { error: string; message: string };
    expect(body).toEqual({ error, message: expect.stringMatching(/surrogate|NUL/) });
  }

  it('a lone surrogate is 400 invalid_body on invocation (sync, stream, Set B) and key creation; no run is created', async () => {
    const messages = [{ role: 'user', content: LONE }];
    await expectRefused(await post('/v1/inference', { alias: 'Sonata', agentSlug: 'sales', messages }), 'invalid_body');
    await expectRefused(await post('/v1/inference', { alias: 'Sonata', stream: true, messages }), 'invalid_body');
    await expectRefused(await post('/v1/agents/sales/messages', { alias: 'Sonata', messages }), 'invalid_body');
    await expectRefused(
      await post('/v1/inference', { alias: 'Sonata', messages: [{ role: 'user', content: 'hi' }], conversationId: 'c-\udc00' }),
      'invalid_body',
    );
    const session = await t.login();
    const keyRes = await t.app.request('/api-keys', {
      method: 'POST',
      headers: { cookie: session.cookie, 'x-csrf-token': session.csrfToken, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'ci \ud83d', scopes: ['usage:read'] }),
    });
    await expectRefused(keyRes, 'invalid_body');
    expect(await store.db.query(`SELECT 1 FROM runs`)).toEqual([]);

    // A surrogate pair is ordinary text.
    const ok = await post('/v1/inference', { alias: 'Sonata', agentSlug: 'sales', messages: [{ role: 'user', content: 'Call Dana back 😀 today' }] });
    expect(ok.status).toBe(200);
    expect(await store.db.query(`SELECT status FROM runs`)).toEqual([{ status: 'completed' }]);
  });

  describe('signed inbound events', () => {
    let secret: string;
    beforeEach(async () => {
      ({ secret } = await t.services.webhooks.inbound.create(t.workspaceId, { slug: 'crm', agentSlug: 'sales', template: 'Lead: {{ name }}' }));
    });

    const ingest = (raw: string, eventId: string) =>
      t.app.request('/webhooks/inbound/crm', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'X-SERVICE-Signature': signInboundBody(raw, secret), 'X-SERVICE-Event-Id': eventId },
        body: raw,
      });

    it.each([
      ['NUL in a value', '{"name":"Dana\\u0000Whitfield"}'],
      ['NUL in a key', '{"na\\u0000me":"Dana"}'],
      ['a lone surrogate in a value', '{"name":"Dana \\ud800"}'],
      ['a lone surrogate in a nested key', '{"contact":{"\\udfff":"x"},"name":"Dana"}'],
    ])('%s is 400 payload_invalid and stores nothing', async (_, raw) => {
      await expectRefused(await ingest(raw, 'evt-1'), 'payload_invalid');
      expect(await store.db.query(`SELECT 1 FROM inbound_events`)).toEqual([]);
      // The sender can correct the event and send it again under the same id.
      const res = await ingest('{"name":"Dana Whitfield"}', 'evt-1');
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ ok: true, code: 'ok', eventId: 'evt-1' });
    });
  });
});
