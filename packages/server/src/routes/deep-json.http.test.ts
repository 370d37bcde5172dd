/**
 * JSON nested deeper than {@link MAX_JSON_DEPTH} levels is refused at the door, over real HTTP
 * (@hono/node-server on loopback): a correctly signed inbound event of 5,000 nested arrays used to
 * answer `500 internal_error` (JSON.stringify overflowed the stack rendering the default
 * template), every time for the same event id, so its sender retried it forever. It is
 * `400 payload_invalid` now, on every inbound route and template, and `400 invalid_body` on the API.
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInboundBody } from '../domain/webhooks/inbound-signature.ts';
import { MAX_JSON_DEPTH } from '../middleware/validate/text.ts';
import { createTestApp, type TestApp } from '@service/testing/app';

let t: TestApp;
let server: ServerType;
let base: string;
let key: string;
const secrets: Record<string, string> = {};
let sent = 0;

beforeAll(async () => {
  t = await createTestApp();
  key = await t.keyWith('orchestrator:invoke');
  for (const [slug, template] of [
    ['plain', undefined],
    ['json', '{{ payload | json }}'],
    ['field', 'Lead: {{ name }}'],
  ] as const) {
    secrets[slug] = (await t.services.webhooks.inbound.create(t.workspaceId, { slug, agentSlug: 'sales', ...(template ? { template } : {}) })).secret;
  }
  server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await t.close();
});

const arrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const objects = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

function ingest(slug: string, raw: string, eventId: string, path = '/webhooks/inbound/') {
  return fetch(`${base}${path}${slug}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-signature': signInboundBody(raw, secrets[slug]!), 'x-service-event-id': eventId },
    body: raw,
  });
}

describe('deeply nested JSON over HTTP', () => {
  it.each([
    ['5,000 nested arrays, no template', 'plain', `{"name":"Dana","deep":${arrays(5000)}}`],
    ['5,000 nested objects, no template', 'plain', `{"name":"Dana","deep":${objects(5000)}}`],
    ['5,000 nested arrays, a template printing the payload', 'json', `{"name":"Dana","deep":${arrays(5000)}}`],
    ['5,000 nested arrays, a template printing a field', 'field', `{"name":"Dana","deep":${arrays(5000)}}`],
    ['one level too deep', 'plain', `{"name":"Dana","deep":${arrays(MAX_JSON_DEPTH)}}`],
  ])('a signed inbound event of %s is 400 payload_invalid, and the sender can correct it', async (_, slug, raw) => {
    const eventId = `evt-deep-${(sent += 1)}`;
    for (const path of ['/webhooks/inbound/', '/v1/webhooks/inbound/']) {
      const res = await ingest(slug, raw, eventId, path);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toEqual({ error: 'payload_invalid', message: `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.` });
    }
    expect(await t.db.query(`SELECT 1 FROM inbound_events WHERE event_id = $1`, [eventId])).toEqual([]);
    const fixed = await ingest(slug, '{"name":"Dana"}', eventId);
    expect(fixed.status).toBe(200);
    expect(await fixed.json()).toMatchObject({ ok: true, code: 'ok', eventId });
  });

  it(`accepts an inbound event nested exactly ${MAX_JSON_DEPTH} levels deep`, async () => {
    const res = await ingest('plain', `{"name":"Dana","deep":${arrays(MAX_JSON_DEPTH - 1)}}`, 'evt-limit');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true, code: 'ok', eventId: 'evt-limit' });
  });

  it('an invocation of 5,000 nested arrays is 400 invalid_body', async () => {
    const res = await fetch(`${base}/v1/inference`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: `{"alias":"Sonata","messages":[{"role":"user","content":"hi","x":${arrays(5000)}}]}`,
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'invalid_body', message: `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.` });
  });
});
