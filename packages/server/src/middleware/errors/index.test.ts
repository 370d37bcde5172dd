/**
 * @module Tests of the error mapper through a small Hono app: every kind of failure comes out as
 * the spec's error body, 5xx bodies carry the request id and nothing internal.
 */
import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { describe, expect, it } from 'vitest';
import { fail } from '../../errors.ts';
import { redactBody } from '../redact/index.ts';
import { requestId } from '../request-id/index.ts';
import { SealedSecretUnreadable } from '../../domain/webhooks/secret-box.ts';
import { errorBoundary, errorMapper, notFound } from './index.ts';

function buildApp(logged: unknown[] = []) {
  const app = new Hono();
  app.use(requestId());
  app.use(errorBoundary());
  app.use(async function rateHeaders(c, next) {
    c.header('X-RateLimit-Limit', '60');
    await next();
  });
  app.get('/scope', () => {
    throw fail('scope_required', "This API key lacks the scope 'usage:read'.");
  });
  app.get('/quota', () => {
    throw fail('quota_exceeded', 'Quota exhausted.', {
      policy: 'hardstop',
      pctConsumed: 121.5,
      resetAt: '2026-02-01T00:00:00.000Z',
    });
  });
  app.get('/limited', () => {
    throw fail('rate_limit_exceeded', undefined, { retryAfterSec: 7 }, { 'Retry-After': '7' });
  });
  app.get('/down', () => {
    throw fail('service_unavailable', 'A backing service is temporarily unavailable.', { requestId: 'forged' }, { 'Retry-After': '5' });
  });
  app.on(['GET', 'POST'], '/store-gone', () => {
    throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  });
  app.get('/sealed', () => {
    throw new SealedSecretUnreadable();
  });
  app.get('/boom', () => {
    throw new Error('connect ECONNREFUSED 10.0.0.7:5432 at /srv/app/node_modules/pg/lib/client.js');
  });
  app.get('/throws-string', () => {
    // eslint-disable-next-line @typescript-eslint/only-throw-error
    throw 'sk-live-provider-secret';
  });
  app.get('/hono', () => {
    throw new HTTPException(413, { message: 'Payload Too Large at /internal/path' });
  });
  app.onError(errorMapper({ log: (entry) => logged.push(entry) }));
  app.notFound(notFound());
  return app;
}

describe('error mapper', () => {
  it.each([
    ['/scope', 403, { error: 'scope_required', message: "This API key lacks the scope 'usage:read'." }],
    ['/quota', 429, { error: 'quota_exceeded', message: 'Quota exhausted.', policy: 'hardstop', pctConsumed: 121.5, resetAt: '2026-02-01T00:00:00.000Z' }],
    ['/limited', 429, { error: 'rate_limit_exceeded', retryAfterSec: 7 }],
    ['/hono', 413, { error: 'payload_too_large' }],
    ['/nowhere', 404, { error: 'not_found', message: 'No such route.' }],
  ])('renders %s as %i with the spec body', async (path, status, body) => {
    const res = await buildApp().request(path, { headers: { 'X-Request-Id': 'req-test-1' } });
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('X-Request-Id')).toBe('req-test-1');
    expect(res.headers.get('X-RateLimit-Limit')).toBe('60');
    expect(await res.json()).toEqual(body);
  });

  it('keeps the headers of the error (Retry-After)', async () => {
    const res = await buildApp().request('/limited');
    expect(res.headers.get('Retry-After')).toBe('7');
  });

  it.each([
    // The store went away: come back in 5 s; whether the request was applied is not known, so only a read (or a
    // request with an Idempotency-Key) may be repeated.
    ['/store-gone', ['5', '5000', 'true']],
    // The operator must repair the key: no wait to give, and repeating the request will not help until then.
    ['/sealed', [null, null, 'false']],
  ] as const)('sets the retry hints of the 503 of %s', async (path, hints) => {
    const res = await buildApp().request(path, { headers: { 'X-Request-Id': 'req-hints' } });
    expect(res.status).toBe(503);
    expect([res.headers.get('retry-after'), res.headers.get('retry-after-ms'), res.headers.get('x-should-retry')]).toEqual(hints);
    expect(await res.json()).toEqual({ error: 'service_unavailable', message: 'A backing service is temporarily unavailable.', requestId: 'req-hints' });
  });

  it('tells a write without an Idempotency-Key that the store went away not to repeat itself, and one with a key that it may', async () => {
    const post = (headers: Record<string, string>) => buildApp().request('/store-gone', { method: 'POST', headers });
    expect((await post({})).headers.get('x-should-retry')).toBe('false');
    expect((await post({ 'Idempotency-Key': 'k-1' })).headers.get('x-should-retry')).toBe('true');
  });

  it('puts the request id in 5xx bodies, from the context, never from the thrower', async () => {
    const res = await buildApp().request('/down', { headers: { 'X-Request-Id': 'req-503' } });
    expect(res.status).toBe(503);
    expect(res.headers.get('Retry-After')).toBe('5');
    expect(await res.json()).toEqual({
      error: 'service_unavailable',
      message: 'A backing service is temporarily unavailable.',
      requestId: 'req-503',
    });
  });

  it.each(['/boom', '/throws-string'])('turns an unexpected failure at %s into a bare internal_error', async (path) => {
    const logged: unknown[] = [];
    const res = await buildApp(logged).request(path, { headers: { 'X-Request-Id': 'req-500' } });
    expect(res.status).toBe(500);
    expect(res.headers.get('X-Request-Id')).toBe('req-500');
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ error: 'internal_error', message: 'An unexpected error occurred.', requestId: 'req-500' });
    for (const leak of ['ECONNREFUSED', '10.0.0.7', 'node_modules', 'sk-live', 'stack', 'at ']) expect(text).not.toContain(leak);
    // The operator still learns what happened, on the server side.
    expect(logged).toEqual([expect.objectContaining({ requestId: 'req-500', path })]);
  });
});

describe('the request id in a 5xx body survives the redactor', () => {
  // Found by the contract fuzzer: a caller's id such as "trace-gpt-4o" came back as "trace-[redacted]" in
  // the body while the header kept it, so the two no longer matched.
  it('quotes the echoed id unchanged', async () => {
    const app = new Hono();
    app.use(requestId());
    app.use(redactBody());
    app.use(errorBoundary());
    app.get('/boom', () => {
      throw new Error('upstream gpt-4o at 10.0.0.7 failed');
    });
    app.onError(errorMapper({ log: () => {} }));
    const res = await app.request('/boom', { headers: { 'X-Request-Id': 'trace-gpt-4o-o3' } });
    expect(res.status).toBe(500);
    expect(res.headers.get('X-Request-Id')).toBe('trace-gpt-4o-o3');
    expect(await res.json()).toMatchObject({ error: 'internal_error', requestId: 'trace-gpt-4o-o3' });
  });
});
