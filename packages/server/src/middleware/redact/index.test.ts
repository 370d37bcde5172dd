/**
 * @module Tests of the body redaction middleware through a small Hono app (app.request).
 */
import { Hono, type Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { describe, expect, it } from 'vitest';
import { fail, ServiceError } from '../../errors.ts';
import { REDACTED } from '../../redact/index.ts';
import { requestId, type RequestIdVariables } from '../request-id/index.ts';
import type { RouteVariables } from '../route/index.ts';
import { customerDataOf, keepUnredacted, redactBody, type RedactVariables } from './index.ts';

const R = REDACTED;
const SECRET = 'service_sk_live_AbCdEfGhIjKlMnOpQrStUvWx';

function buildApp() {
  const app = new Hono<{ Variables: RedactVariables & RequestIdVariables }>();
  app.use(requestId());
  app.use(redactBody());
  app.get('/run', (c) => c.json({ id: 'run_AbCdEfGhIjKlMnOpQrSt', alias: 'Sonata', content: 'I am Claude by Anthropic', usage: { inputTokens: 3 } }, 200));
  app.post('/api-keys', (c) => {
    keepUnredacted(c, SECRET);
    return c.json({ prefix: 'service_sk_live_AbCdEf', secret: SECRET, note: `never log ${SECRET}` }, 201);
  });
  app.get('/upstream-failure', () => {
    throw fail('service_unavailable', 'upstream gpt-4o at 10.0.0.7:8000 failed', {}, { 'Retry-After': '5' });
  });
  app.get('/crash', () => {
    throw new TypeError('Cannot read x of undefined at /app/src/engine.ts:10:5');
  });
  app.get('/text', (c) => c.text('served by vLLM on localhost:8000', 200));
  app.get('/html', (c) => c.html('<p>OpenAI</p>', 200));
  app.get('/not-json', (c) => c.body('{"broken": "OpenAI', 200, { 'Content-Type': 'application/json' }));
  app.get('/problem', (c) => c.body('{"detail":"Ollama"}', 400, { 'Content-Type': 'application/problem+json' }));
  app.get('/sized', (c) => c.body('{"m":"GPT-4o"}', 200, { 'Content-Type': 'application/json', 'Content-Length': '14' }));
  app.get('/sse', (c) =>
    streamSSE(c, async (stream) => {
      await stream.writeSSE({ data: JSON.stringify({ delta: 'raw OpenAI' }) });
    }),
  );
  app.onError((err, c: Context) => {
    if (err instanceof ServiceError) {
      return c.json({ error: err.code, message: err.publicMessage, ...err.extras }, err.status as 503, err.headers);
    }
    // A careless mapper that leaks the exception text: the redactor still catches it.
    return c.json({ error: 'internal_error', message: err.message, requestId: c.get('requestId') }, 500);
  });
  return app;
}

describe('redactBody middleware', () => {
  it('redacts the strings of a JSON body and keeps its shape and the aliases', async () => {
    const res = await buildApp().request('/run');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({
      id: 'run_AbCdEfGhIjKlMnOpQrSt',
      alias: 'Sonata',
      content: `I am ${R} by ${R}`,
      usage: { inputTokens: 3 },
    });
  });

  it('redacts error bodies and keeps status and headers', async () => {
    const res = await buildApp().request('/upstream-failure', { headers: { 'X-Request-Id': 'trace-1' } });
    expect(res.status).toBe(503);
    expect(res.headers.get('Retry-After')).toBe('5');
    expect(res.headers.get('X-Request-Id')).toBe('trace-1');
    expect(await res.json()).toEqual({ error: 'service_unavailable', message: `upstream ${R} at ${R} failed` });
  });

  it('removes a path and frame an unexpected error leaked into the body', async () => {
    const res = await buildApp().request('/crash', { headers: { 'X-Request-Id': 'trace-2' } });
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: 'internal_error', message: `Cannot read x of undefined ${R}`, requestId: 'trace-2' });
  });

  it("echoes the request's own id as sent, where the same text elsewhere is redacted", async () => {
    // An id a client chose that a rule would match (a model's name): its header carries it as sent, and so does the body.
    const sent = 'gpt-4o-trace-7';
    const app = buildApp();
    app.get('/echo', (c) => c.json({ requestId: c.get('requestId'), note: `made by ${sent}` }, 200));
    app.get('/echo-by-hand', (c) =>
      c.body(JSON.stringify({ requestId: c.get('requestId'), note: `made by ${sent}` }), 200, { 'Content-Type': 'application/json' }),
    );
    for (const path of ['/echo', '/echo-by-hand', '/crash']) {
      const res = await app.request(path, { headers: { 'X-Request-Id': sent } });
      expect(res.headers.get('X-Request-Id')).toBe(sent);
      const body = (await res.json()) as { requestId: string; note?: string };
      expect(body.requestId).toBe(sent);
      if (path !== '/crash') expect(body.note).toBe(`made by ${R}-trace-7`);
    }
  });

  it('shows a secret only where the route asked for it', async () => {
    const res = await buildApp().request('/api-keys', { method: 'POST' });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ prefix: 'service_sk_live_AbCdEf', secret: SECRET, note: `never log ${R}` });
  });

  it.each([
    ['plain text', '/text', 200, `served by ${R} on ${R}`],
    ['a declared JSON body that is not JSON', '/not-json', 200, `{"broken": "${R}`],
    ['a +json media type', '/problem', 400, `{"detail":"${R}"}`],
  ])('redacts %s', async (_name, path, status, want) => {
    const res = await buildApp().request(path);
    expect(res.status).toBe(status);
    expect(await res.text()).toBe(want);
  });

  it('drops a Content-Length that no longer fits', async () => {
    const res = await buildApp().request('/sized');
    expect(res.headers.get('content-length')).toBeNull();
    expect(await res.json()).toEqual({ m: R });
  });

  it.each([
    ['an event stream (redacted fragment by fragment elsewhere)', '/sse', 'raw OpenAI'],
    ['HTML', '/html', '<p>OpenAI</p>'],
  ])('leaves %s alone', async (_name, path, contained) => {
    const res = await buildApp().request(path);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain(contained);
  });
});

describe('redactBody on c.json: redacted as it is serialised, the response left as it is', () => {
  const WHEN = new Date('2026-06-01T09:00:00Z');
  const body = () => ({
    id: 'run_AbCdEfGhIjKlMnOpQrSt',
    when: WHEN,
    skipped: undefined,
    name: 'Claude team',
    owner: { email: 'ops@10.0.0.7', note: 'uses OpenAI' },
    members: [
      { name: 'GPT fans', role: 'gpt-4o' },
      { name: 'Gemini', role: null },
    ],
    steps: [['at /app/src/x.ts:1:2', 3, true, null]],
    secret: SECRET,
    text: `key ${SECRET}`,
  });
  const customerData = customerDataOf([
    { operationId: 'getTeam', responses: { '200': { customerData: ['name', 'owner.email', 'members.*.name'] }, '201': { customerData: ['owner'] } } },
  ]);
  const handed: Response[] = [];

  function buildJsonApp() {
    const app = new Hono<{ Variables: RedactVariables & RequestIdVariables & Partial<RouteVariables> }>();
    app.use(requestId());
    app.use(redactBody(undefined, customerData));
    app.use(async (c, next) => {
      c.set('operationId', 'getTeam');
      await next();
    });
    // The same value answered through c.json (the fast path) and as a hand-built body (read back and re-wrapped).
    app.get('/fast/:status', (c) => {
      keepUnredacted(c, SECRET);
      const res = c.json(body(), Number(c.req.param('status')) as 200);
      handed.push(res);
      return res;
    });
    app.get('/status-set/:status', (c) => {
      keepUnredacted(c, SECRET);
      c.status(Number(c.req.param('status')) as 200);
      return c.json(body());
    });
    app.get('/slow/:status', (c) => {
      keepUnredacted(c, SECRET);
      return c.body(JSON.stringify(body()), Number(c.req.param('status')) as 200, { 'Content-Type': 'application/json' });
    });
    // A c.json response that something copied afterwards (a header set once the response exists).
    app.get('/copied', async (c, next) => {
      await next();
      c.header('X-Late', 'yes');
    });
    app.get('/copied', (c) => c.json({ content: 'I am Claude' }, 200));
    return app;
  }

  it.each([200, 201, 404])('gives the same body as reading it back and re-wrapping it (status %i)', async (status) => {
    const app = buildJsonApp();
    const fast = await app.request(`/fast/${status}`);
    const fromStatus = await app.request(`/status-set/${status}`);
    const slow = await app.request(`/slow/${status}`);
    expect([fast.status, fromStatus.status, slow.status]).toEqual([status, status, status]);
    const want = await slow.text();
    expect(await fast.text()).toBe(want);
    expect(await fromStatus.text()).toBe(want);
    const parsed = JSON.parse(want) as Record<string, unknown>;
    expect(parsed.when).toBe(WHEN.toISOString());
    expect(parsed).not.toHaveProperty('skipped');
    expect(parsed.secret).toBe(SECRET);
    expect(parsed.text).toBe(`key ${R}`);
    expect(parsed.steps).toEqual([[R, 3, true, null]]);
    if (status === 200) {
      expect(parsed).toMatchObject({ name: 'Claude team', owner: { email: 'ops@10.0.0.7', note: `uses ${R}` } });
      expect(parsed.members).toEqual([
        { name: 'GPT fans', role: R },
        { name: 'Gemini', role: null },
      ]);
    } else if (status === 201) {
      // A customer field that is an object: its strings are redacted all the same.
      expect(parsed).toMatchObject({ name: `${R} team`, owner: { email: `ops@${R}`, note: `uses ${R}` } });
    } else {
      expect(parsed).toMatchObject({ name: `${R} team`, owner: { email: `ops@${R}`, note: `uses ${R}` } });
      expect(parsed.members).toEqual([
        { name: `${R} fans`, role: R },
        { name: R, role: null },
      ]);
    }
  });

  it("passes c.json's own response through untouched (no read back, no re-wrap)", async () => {
    handed.length = 0;
    const res = await buildJsonApp().request('/fast/200');
    expect(handed).toHaveLength(1);
    expect(res).toBe(handed[0]);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('still redacts a c.json response that was copied after it was made', async () => {
    const res = await buildJsonApp().request('/copied');
    expect(res.status).toBe(200);
    expect(res.headers.get('X-Late')).toBe('yes');
    expect(await res.json()).toEqual({ content: `I am ${R}` });
  });
});
