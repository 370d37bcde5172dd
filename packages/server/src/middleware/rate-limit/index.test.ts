/**
 * @module Tests of the rate-limit middleware through small Hono apps (app.request): statuses,
 * headers and bodies, per IP and per workspace, and the fail-closed path with a Redis client
 * pointed at a closed port.
 */
import { createServer } from 'node:net';
import { Hono, type Context } from 'hono';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fail, ServiceError } from '../../errors.ts';
import { requestId, type RequestIdVariables } from '../request-id/index.ts';
import { connectRedis, createMemoryLimiter, createRedisLimiter, type Limiter } from '../../rate-limits/index.ts';
import { byClientIp, enforceRateLimit, PER_IP, rateLimit, type RateLimitOptions } from './index.ts';

const T0 = Date.parse('2026-03-01T12:00:00Z');
const RESET = String(T0 / 1000 + 60);

type Env = { Variables: RequestIdVariables & { workspace?: string } };

/** The spec's error body, as the error mapper renders it. */
function renderError(err: Error, c: Context<Env>) {
  if (!(err instanceof ServiceError)) return c.json({ error: 'internal_error', requestId: c.get('requestId') }, 500);
  return c.json({ error: err.code, message: err.publicMessage, ...err.extras }, err.status as 429, err.headers);
}

function socket(address: string) {
  return { incoming: { socket: { remoteAddress: address } } };
}

interface AppOptions {
  limiter?: Limiter;
  ipLimit?: number;
  workspaceLimit?: number;
  trustProxy?: boolean | number;
  ipOptions?: Partial<RateLimitOptions>;
}

function buildApp(options: AppOptions = {}) {
  const limiter = options.limiter ?? createMemoryLimiter({ now: () => T0 });
  const app = new Hono<Env>();
  app.use(requestId());
  app.use(
    rateLimit({
      limiter,
      limit: options.ipLimit ?? PER_IP.limit,
      key: byClientIp({ trustProxy: options.trustProxy ?? false }),
      ...options.ipOptions,
    }),
  );
  // Stands in for authentication: the credential names the workspace.
  app.use(async (c, next) => {
    const workspace = c.req.header('x-test-workspace');
    if (workspace) c.set('workspace', workspace);
    await next();
  });
  app.use(
    rateLimit({
      limiter,
      limit: options.workspaceLimit ?? 600,
      key: (c) => {
        const workspace = (c as Context<Env>).get('workspace');
        return workspace ? `wksp:${workspace}` : undefined;
      },
    }),
  );
  app.get('/ok', (c) => c.json({ ok: true }, 200));
  app.get('/raw', () => new Response('plain', { status: 200 }));
  app.get('/forbidden', () => {
    throw fail('forbidden');
  });
  app.get('/boom', () => {
    throw new Error('secret internals');
  });
  app.post('/webhooks/inbound/:slug', async (c) => {
    await enforceRateLimit(c, {
      limiter,
      limit: 2,
      key: `inbound:${c.req.param('slug')}:203.0.113.5`,
      code: 'rate_limited',
    });
    return c.json({ ok: true, code: 'ok' }, 200);
  });
  app.onError(renderError);
  app.notFound((c) => c.json({ error: 'not_found' }, 404));
  return app;
}

function rateHeaders(res: Response) {
  return [res.headers.get('X-RateLimit-Limit'), res.headers.get('X-RateLimit-Remaining'), res.headers.get('X-RateLimit-Reset')];
}

describe('rateLimit middleware', () => {
  it.each([
    ['a 200', '/ok', 200, { ok: true }],
    ['a thrown ServiceError', '/forbidden', 403, { error: 'forbidden' }],
    ['an unexpected error', '/boom', 500, { error: 'internal_error' }],
    ['a 404', '/nowhere', 404, { error: 'not_found' }],
  ])('sets the X-RateLimit-* headers on %s', async (_name, path, status, body) => {
    const res = await buildApp().request(path, {}, socket('203.0.113.9'));
    expect(res.status).toBe(status);
    expect(rateHeaders(res)).toEqual(['60', '59', RESET]);
    expect(await res.json()).toMatchObject(body);
    expect(res.headers.get('X-Request-Id')).toMatch(/^req_/);
  });

  it('sets the headers on a Response the handler built by hand', async () => {
    const res = await buildApp().request('/raw', {}, socket('203.0.113.9'));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('plain');
    expect(rateHeaders(res)).toEqual(['60', '59', RESET]);
  });

  it('answers 429 rate_limit_exceeded with retryAfterSec and Retry-After past the limit', async () => {
    const app = buildApp({ ipLimit: 2 });
    for (let i = 0; i < 2; i += 1) expect((await app.request('/ok', {}, socket('203.0.113.9'))).status).toBe(200);
    const res = await app.request('/ok', {}, socket('203.0.113.9'));
    expect(res.status).toBe(429);
    expect(res.headers.get('Retry-After')).toBe('60');
    // The same wait to the millisecond, and safe to repeat: the request was refused before any work.
    expect(res.headers.get('Retry-After-Ms')).toBe('60000');
    expect(res.headers.get('X-Should-Retry')).toBe('true');
    expect(rateHeaders(res)).toEqual(['2', '0', RESET]);
    expect(res.headers.get('X-Request-Id')).toMatch(/^req_/);
    expect(await res.json()).toEqual({
      error: 'rate_limit_exceeded',
      message: 'Too many requests; retry after 60 s.',
      retryAfterSec: 60,
    });
  });

  it('counts each client address separately and ignores X-Forwarded-For without trustProxy', async () => {
    const app = buildApp({ ipLimit: 1 });
    const spoofed = { headers: { 'X-Forwarded-For': '198.51.100.1' } };
    expect((await app.request('/ok', spoofed, socket('203.0.113.9'))).status).toBe(200);
    expect((await app.request('/ok', { headers: { 'X-Forwarded-For': '198.51.100.2' } }, socket('203.0.113.9'))).status).toBe(429);
    expect((await app.request('/ok', spoofed, socket('203.0.113.10'))).status).toBe(200);
  });

  it('with trustProxy counts the address the proxy appended, not what the client wrote', async () => {
    const app = buildApp({ ipLimit: 1, trustProxy: true });
    const viaProxy = (xff: string) => app.request('/ok', { headers: { 'X-Forwarded-For': xff } }, socket('10.0.0.2'));
    expect((await viaProxy('1.1.1.1, 198.51.100.7')).status).toBe(200);
    // The client forged a different left entry; the proxy still appended the same address.
    expect((await viaProxy('2.2.2.2, 198.51.100.7')).status).toBe(429);
    expect((await viaProxy('198.51.100.8')).status).toBe(200);
  });

  it('counts an IPv6 client by its /64 network', async () => {
    const app = buildApp({ ipLimit: 1 });
    expect((await app.request('/ok', {}, socket('2001:db8:1:2::1'))).status).toBe(200);
    expect((await app.request('/ok', {}, socket('2001:db8:1:2:ffff::9'))).status).toBe(429);
    expect((await app.request('/ok', {}, socket('2001:db8:1:3::1'))).status).toBe(200);
  });

  it('shows the tighter of the IP and workspace limits', async () => {
    const app = buildApp({ ipLimit: 5, workspaceLimit: 3 });
    const call = (ip: string) => app.request('/ok', { headers: { 'x-test-workspace': 'wksp_a' } }, socket(ip));
    // IP 4 left vs workspace 2 left: the workspace is tighter.
    expect(rateHeaders(await call('203.0.113.1'))).toEqual(['3', '2', RESET]);
    // Another IP of the same workspace: workspace has 1 left.
    expect(rateHeaders(await call('203.0.113.2'))).toEqual(['3', '1', RESET]);
    // No workspace (before authentication): only the IP limit applies.
    expect(rateHeaders(await app.request('/ok', {}, socket('203.0.113.1')))).toEqual(['5', '3', RESET]);
    const last = await call('203.0.113.3');
    expect(rateHeaders(last)).toEqual(['3', '0', RESET]);
    const refused = await call('203.0.113.4');
    expect(refused.status).toBe(429);
    expect(rateHeaders(refused)).toEqual(['3', '0', RESET]);
    expect(await refused.json()).toMatchObject({ error: 'rate_limit_exceeded', retryAfterSec: 60 });
  });

  it('shows the IP limit when it is the tighter one, on errors too', async () => {
    const app = buildApp({ ipLimit: 2, workspaceLimit: 600 });
    const res = await app.request('/forbidden', { headers: { 'x-test-workspace': 'wksp_b' } }, socket('203.0.113.1'));
    expect(res.status).toBe(403);
    expect(rateHeaders(res)).toEqual(['2', '1', RESET]);
  });

  describe('with the per-IP hit deferred for a request with a credential (made with the workspace hit)', () => {
    const deferred = (ipLimit: number, workspaceLimit: number) =>
      buildApp({ ipLimit, workspaceLimit, ipOptions: { deferHit: (c) => c.req.header('x-test-workspace') !== undefined } });
    const call = (app: ReturnType<typeof buildApp>, path: string, ip: string, workspace = 'wksp_d') =>
      app.request(path, { headers: { 'x-test-workspace': workspace } }, socket(ip));

    it('counts both and shows the tighter, as when made one after the other', async () => {
      const app = deferred(5, 3);
      expect(rateHeaders(await call(app, '/ok', '203.0.113.1'))).toEqual(['3', '2', RESET]);
      expect(rateHeaders(await call(app, '/ok', '203.0.113.2'))).toEqual(['3', '1', RESET]);
      // The IP's own count moved too: 5 - 1 (above) - 1 (this one).
      expect(rateHeaders(await app.request('/ok', {}, socket('203.0.113.1')))).toEqual(['5', '3', RESET]);
    });

    it('refuses a refused address with 429 and does not count its workspace', async () => {
      const app = deferred(2, 3);
      expect((await call(app, '/ok', '203.0.113.1')).status).toBe(200);
      expect((await call(app, '/ok', '203.0.113.1')).status).toBe(200);
      const refused = await call(app, '/ok', '203.0.113.1');
      expect(refused.status).toBe(429);
      expect(await refused.json()).toMatchObject({ error: 'rate_limit_exceeded', retryAfterSec: 60 });
      expect(rateHeaders(refused)).toEqual(['2', '0', RESET]);
      // The refused one did not count against the workspace: its third request is still admitted.
      const third = await call(app, '/ok', '203.0.113.2');
      expect(third.status).toBe(200);
      expect(rateHeaders(third)).toEqual(['3', '0', RESET]);
    });

    it('counts the address of a request that no later limit reached (a 404) on the way out', async () => {
      const app = deferred(5, 600);
      const missing = await call(app, '/nowhere', '203.0.113.7');
      expect(missing.status).toBe(404);
      expect(rateHeaders(missing)).toEqual(['5', '4', RESET]);
      expect(rateHeaders(await app.request('/ok', {}, socket('203.0.113.7')))).toEqual(['5', '3', RESET]);
    });
  });

  it('lets a route apply its own limit with the inbound webhook code rate_limited', async () => {
    const app = buildApp();
    const post = () => app.request('/webhooks/inbound/crm', { method: 'POST' }, socket('203.0.113.5'));
    expect((await post()).status).toBe(200);
    const second = await post();
    expect(second.status).toBe(200);
    expect(rateHeaders(second)).toEqual(['2', '0', RESET]);
    const refused = await post();
    expect(refused.status).toBe(429);
    expect([refused.headers.get('retry-after'), refused.headers.get('retry-after-ms'), refused.headers.get('x-should-retry')]).toEqual(['60', '60000', 'true']);
    expect(await refused.json()).toMatchObject({ error: 'rate_limited', retryAfterSec: 60 });
  });
});

describe('rateLimit middleware when the Redis backend is down', () => {
  let redis: Redis;
  beforeAll(async () => {
    redis = connectRedis(`redis://127.0.0.1:${await closedPort()}`);
  });
  afterAll(() => {
    redis.disconnect();
  });

  it('fails closed by default: 503 service_unavailable with requestId, Retry-After and one log line', async () => {
    const lines: string[] = [];
    const app = buildApp({
      limiter: createRedisLimiter({ redis, prefix: 'test:down:' }),
      ipOptions: { log: (line) => lines.push(line) },
    });
    const res = await app.request('/ok', { headers: { 'X-Request-Id': 'trace-503' } }, socket('203.0.113.9'));
    expect(res.status).toBe(503);
    expect([res.headers.get('retry-after'), res.headers.get('retry-after-ms'), res.headers.get('x-should-retry')]).toEqual(['5', '5000', 'true']);
    expect(res.headers.get('X-Request-Id')).toBe('trace-503');
    expect(await res.json()).toEqual({
      error: 'service_unavailable',
      message: 'A backing service is temporarily unavailable.',
      requestId: 'trace-503',
    });
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'error', policy: 'fail-closed', requestId: 'trace-503' });
  });

  it('fails open only when asked to, and still logs', async () => {
    const lines: string[] = [];
    const app = buildApp({
      limiter: createRedisLimiter({ redis, prefix: 'test:down:' }),
      ipOptions: { log: (line) => lines.push(line), onBackendError: 'fail-open' },
    });
    const res = await app.request('/ok', {}, socket('203.0.113.9'));
    expect(res.status).toBe(200);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ policy: 'fail-open' });
  });
});

/** A loopback port that was just free: listen on port 0, note it, close it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
