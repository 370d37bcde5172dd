/**
 * @module Tests of the request-id middleware through a small Hono app (app.request, no port).
 */
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { fail, ServiceError } from '../../errors.ts';
import { isAcceptableRequestId, requestId, type RequestIdVariables } from './index.ts';

const GENERATED = /^req_[0-9A-Za-z]{24}$/;

function buildApp() {
  const app = new Hono<{ Variables: RequestIdVariables }>();
  app.use(requestId());
  app.get('/ok', (c) => c.json({ requestId: c.get('requestId') }, 200));
  app.get('/raw', () => new Response('plain', { status: 200 }));
  app.get('/boom', () => {
    throw new Error('database exploded');
  });
  app.get('/forbidden', () => {
    throw fail('forbidden');
  });
  app.onError((err, c) => {
    const status = err instanceof ServiceError ? err.status : 500;
    const code = err instanceof ServiceError ? err.code : 'internal_error';
    return c.json({ error: code, requestId: c.get('requestId') }, status as 403 | 500);
  });
  app.notFound((c) => c.json({ error: 'not_found' }, 404));
  return app;
}

describe('requestId middleware', () => {
  it.each([
    ['a simple id', 'abc-123'],
    ['one character', 'x'],
    ['200 printable characters', 'a'.repeat(200)],
    ['punctuation', 'trace:{42}~!'],
  ])('echoes %s', async (_name, sent) => {
    const res = await buildApp().request('/ok', { headers: { 'X-Request-Id': sent } });
    expect(res.status).toBe(200);
    expect(res.headers.get('X-Request-Id')).toBe(sent);
    expect(await res.json()).toEqual({ requestId: sent });
  });

  it.each([
    ['absent', undefined],
    ['201 characters', 'a'.repeat(201)],
    ['non-ASCII', 'id-é'],
    ['a tab inside', 'a\tb'],
    ['only spaces (trimmed to empty)', '   '],
    // Found by the contract fuzzer: the contract's X-Request-Id is `^[\x21-\x7E]+$`, so a space is never echoed.
    ['one with an inner space', 'ABC xyz'],
  ])('generates an id when the sent one is %s', async (_name, sent) => {
    const headers: Record<string, string> = sent === undefined ? {} : { 'X-Request-Id': sent };
    const res = await buildApp().request('/ok', { headers });
    const id = res.headers.get('X-Request-Id');
    expect(id).toMatch(GENERATED);
    expect(await res.json()).toEqual({ requestId: id });
  });

  it('generates a different id for every request', async () => {
    const app = buildApp();
    const ids = new Set<string | null>();
    for (let i = 0; i < 20; i += 1) ids.add((await app.request('/ok')).headers.get('X-Request-Id'));
    expect(ids.size).toBe(20);
  });

  it.each([
    ['an unexpected error (500)', '/boom', 500, 'internal_error'],
    ['a ServiceError (403)', '/forbidden', 403, 'forbidden'],
    ['an unknown route (404)', '/missing', 404, 'not_found'],
  ])('sets the header on %s', async (_name, path, status, code) => {
    const res = await buildApp().request(path, { headers: { 'X-Request-Id': 'client-7' } });
    expect(res.status).toBe(status);
    expect(res.headers.get('X-Request-Id')).toBe('client-7');
    const body = (await res.json()) as { error: string };
    expect(body.error).toBe(code);
  });

  it('puts the id in the error body the mapper renders', async () => {
    const res = await buildApp().request('/boom');
    const body = (await res.json()) as { requestId: string };
    expect(body.requestId).toBe(res.headers.get('X-Request-Id'));
    expect(body.requestId).toMatch(GENERATED);
  });

  it('sets the header on a Response the handler built by hand', async () => {
    const res = await buildApp().request('/raw', { headers: { 'X-Request-Id': 'hand-made' } });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('plain');
    expect(res.headers.get('X-Request-Id')).toBe('hand-made');
  });

  it('uses the injected generator', async () => {
    const app = new Hono<{ Variables: RequestIdVariables }>();
    app.use(requestId({ generate: () => 'req_fixed' }));
    app.get('/', (c) => c.text(c.get('requestId'), 200));
    const res = await app.request('/');
    expect(res.headers.get('X-Request-Id')).toBe('req_fixed');
    expect(await res.text()).toBe('req_fixed');
  });
});

describe('isAcceptableRequestId', () => {
  it.each([
    ['abc', true],
    ['', false],
    ['a b', false],
    ['a\r\nSet-Cookie: x=1', false],
    ['\u0000', false],
    ['~'.repeat(200), true],
    ['~'.repeat(201), false],
  ])('%j -> %s', (value, want) => {
    expect(isAcceptableRequestId(value)).toBe(want);
  });
});
