/**
 * @module The app through `app.request`: the mounted routes equal the contract's, and every error
 * code this part owns comes back with its status, body and headers.
 */
import { readFileSync } from 'node:fs';
import { Hono } from 'hono';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { routes as contractRoutes } from './contract.ts';
import { createSessionService } from './domain/sessions/service.ts';
import { totpCode } from './domain/sessions/totp.ts';
import { createUser } from './domain/sessions/users.ts';
import { createWorkspace } from './domain/workspaces/index.ts';
import type { AppEnv } from './app-env.ts';
import { fail } from './errors.ts';
import { handlers } from './routes/index.ts';
import type { RouteSpec } from './routes/route-spec.ts';
import { createTestApp, type TestApp } from '@service/testing/app';
import { honoPath } from './app.ts';

const JSON_HEADERS = { 'content-type': 'application/json' };

let t: TestApp;

const policy = {
  privateBeta: false,
  agentTargeted: false,
  anyRole: false,
  inboundWebhook: false,
  operations: false,
  standingExempt: false,
  ipLimitClass: 'api' as const,
};

// Synthetic routes beside the contract's: one not built, one that crashes, one behind an MCP token.
const extraRoutes: RouteSpec[] = [
  { method: 'get', path: '/test/not-built', operationId: 'testNotBuilt', security: [], policy, request: {}, responses: {} },
  { method: 'get', path: '/test/crash', operationId: 'testCrash', security: [], policy, request: {}, responses: {} },
  { method: 'get', path: '/test/leak', operationId: 'testLeak', security: [], policy, request: {}, responses: {} },
  { method: 'get', path: '/test/leaky-error', operationId: 'testLeakyError', security: [], policy, request: {}, responses: {} },
  {
    method: 'get',
    path: '/test/mcp',
    operationId: 'testMcp',
    security: [{ scheme: 'mcpToken', scopes: ['mcp:tenant'] }],
    policy: { ...policy, ipLimitClass: 'mcp' },
    request: {},
    responses: {},
  },
];

beforeAll(async () => {
  t = await createTestApp({
    app: {
      routes: [...contractRoutes, ...extraRoutes],
      handlers: {
        ...handlers,
        testCrash: () => {
          throw new Error('connect ECONNREFUSED 10.1.2.3:5432 /srv/service/src/store/postgres.ts');
        },
        testLeak: (c) => c.json({ content: 'Answered by gpt-4o-mini via http://10.0.0.5:8000/v1 with key sk-proj-abcdefghijklmnopqrstuvwxyz123456' }, 200),
        testLeakyError: () => {
          throw fail('not_found', 'Run not found in OpenAI thread; see /srv/service/src/engine/openai.ts:42');
        },
        testMcp: (c) => {
          const auth = c.get('auth');
          return c.json({ workspaceId: auth && 'workspaceId' in auth ? auth.workspaceId : undefined }, 200);
        },
      },
    },
  });
});
afterAll(async () => {
  await t?.close();
});
// The per-IP window is 60 requests a minute and app.request has no client address: every test
// starts in a fresh window.
beforeEach(() => {
  t.clock.advance(61_000);
});

async function call(path: string, init: RequestInit = {}) {
  const res = await t.app.request(path, init);
  const text = await res.text();
  return { res, status: res.status, headers: res.headers, text, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}

/** The headers of every answer; the limit is the per-IP budget of the route's class (60 API, 120 admin). */
function expectCommonHeaders(headers: Headers, limit = '60') {
  expect(headers.get('X-Request-Id')).toMatch(/\S/);
  expect(headers.get('X-RateLimit-Limit')).toBe(limit);
  expect(Number(headers.get('X-RateLimit-Remaining'))).toBeGreaterThanOrEqual(0);
  expect(headers.get('X-RateLimit-Reset')).toMatch(/^\d{10}$/);
}

describe('mounted routes', () => {
  it('are exactly the contract routes, each bound to its operationId', async () => {
    const { app } = (await import('./app.ts')).createApp({ db: t.db });
    // The operation each mounted route answers for, as its first middleware puts it on the context (middleware/route):
    // one request per route of Hono's table (the panel's pages are no operation), seen from outside the app.
    const outer = new Hono<AppEnv>();
    let seen: string | undefined;
    outer.use(async (c, next) => {
      seen = undefined;
      await next();
      seen = c.get('operationId');
    });
    outer.route('/', app);
    const table = new Set(app.routes.filter((r) => r.method !== 'ALL' && !r.path.startsWith('/panel')).map((r) => `${r.method} ${r.path}`));
    const mounted = new Set<string>();
    for (const line of table) {
      const [method, path] = line.split(' ') as [string, string];
      await outer.request(path.replace(/:[^/]+/g, 'x'), { method });
      mounted.add(`${line} ${seen}`);
    }
    // The set is read from the bundled OpenAPI document itself, not from the route table the app uses.
    const document = JSON.parse(readFileSync(new URL('../../../generated/openapi.json', import.meta.url), 'utf8')) as {
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    const contract = new Set(
      Object.entries(document.paths).flatMap(([path, item]) =>
        Object.entries(item)
          .filter(([method]) => ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'].includes(method))
          .map(([method, operation]) => `${method.toUpperCase()} ${honoPath(path)} ${operation.operationId}`),
      ),
    );
    expect(contract.size).toBeGreaterThanOrEqual(41);
    expect([...mounted].sort()).toEqual([...contract].sort());
    // And every operation of the document has a handler of its own in the handler table (not a 501).
    const operationIds = [...contract].map((line) => line.split(' ')[2]).sort();
    expect(Object.keys(handlers).sort()).toEqual(operationIds);
    expect(Object.values(handlers).every((handler) => typeof handler === 'function')).toBe(true);
    // Every contract path also answers 405 for the methods it does not list.
    const fallbacks = new Set(app.routes.filter((r) => r.method === 'ALL' && r.path !== '/*').map((r) => r.path));
    expect([...fallbacks].sort()).toEqual([...new Set(contractRoutes.map((r) => honoPath(r.path)))].sort());
  });
});

describe('routing errors', () => {
  it('answers an unknown path with 404 not_found and the common headers', async () => {
    const r = await call('/nope', { headers: { 'X-Request-Id': 'req-404-test' } });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: 'not_found', message: 'No such route.' });
    expect(r.headers.get('X-Request-Id')).toBe('req-404-test');
    expectCommonHeaders(r.headers);
  });

  it.each([
    ['PUT', '/api-keys', 'GET, HEAD, POST'],
    ['GET', '/auth/login', 'POST'],
    ['POST', '/runs/run_abcdefghijklmnop', 'GET, HEAD'],
    ['PATCH', '/v1/api-keys/key_abcdefghijklmnop', 'DELETE'],
  ])('answers %s %s with 405 method_not_allowed and Allow: %s', async (method, path, allow) => {
    const r = await call(path, { method });
    expect(r.status).toBe(405);
    expect(r.headers.get('Allow')).toBe(allow);
    expect(r.body).toEqual({ error: 'method_not_allowed', message: `Allowed methods: ${allow}.` });
    expectCommonHeaders(r.headers);
  });

  it('answers an operation whose logic is not built with 501 not_implemented and the request id', async () => {
    const r = await call('/test/not-built', { headers: { 'X-Request-Id': 'req-501' } });
    expect(r.status).toBe(501);
    expect(r.body).toEqual({
      error: 'not_implemented',
      message: 'This route is not available on this deployment yet.',
      requestId: 'req-501',
    });
    expectCommonHeaders(r.headers);
  });

  it('serves the inbound webhook route: an unknown slug is 404 webhook_not_found with the common headers', async () => {
    const r = await call('/webhooks/inbound/crm', { method: 'POST', headers: JSON_HEADERS, body: '{}' });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: 'webhook_not_found' });
    expectCommonHeaders(r.headers);
  });

  it('turns a crash into 500 internal_error with the request id and nothing else', async () => {
    const r = await call('/test/crash', { headers: { 'X-Request-Id': 'req-500' } });
    expect(r.status).toBe(500);
    expect(r.body).toEqual({ error: 'internal_error', message: 'An unexpected error occurred.', requestId: 'req-500' });
    for (const leak of ['ECONNREFUSED', '10.1.2.3', '/srv/', 'postgres']) expect(r.text).not.toContain(leak);
    expectCommonHeaders(r.headers);
  });
});

describe('parameter validation', () => {
  it('answers invalid_request naming the query parameter or header, never the value', async () => {
    const auth = { Authorization: `Bearer ${t.apiKey}` };
    const query = await call('/runs?limit=0', { headers: auth });
    expect(query.status).toBe(400);
    expect(query.body).toEqual({ error: 'invalid_request', message: "Invalid query parameter 'limit': must be at least 1.", param: 'limit' });
    const header = await call('/runs', { headers: { ...auth, 'X-Request-Id': 'x'.repeat(201) } });
    expect(header.status).toBe(400);
    expect(header.body).toEqual({ error: 'invalid_request', message: "Invalid header 'x-request-id': must be at most 200 characters.", param: 'x-request-id' });
    expect(header.text).not.toContain('x'.repeat(201));
    expectCommonHeaders(header.headers);
  });
});

describe('redaction', () => {
  it('passes every body, success or error, through the redactor', async () => {
    for (const path of ['/test/leak', '/test/leaky-error']) {
      const r = await call(path);
      for (const leak of ['gpt-4o', '10.0.0.5', 'sk-proj-', 'OpenAI', '/srv/service', 'openai.ts']) expect(r.text).not.toContain(leak);
    }
    const err = await call('/test/leaky-error');
    expect(err.status).toBe(404);
    expect(err.body).toMatchObject({ error: 'not_found' });
  });
});

describe('API key authentication', () => {
  const tokens = '/v1/mcp/tenant/tokens';

  it('answers missing_bearer without an Authorization bearer', async () => {
    for (const headers of [{}, { Authorization: 'Basic dXNlcjpwYXNz' }] as Record<string, string>[]) {
      const r = await call(tokens, { method: 'POST', headers });
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ error: 'missing_bearer' });
      expectCommonHeaders(r.headers);
    }
  });

  it('answers api_key_not_found for an unknown, revoked or expired key and api_key_invalid for a bad secret', async () => {
    const unknown = await call(tokens, { method: 'POST', headers: { Authorization: `Bearer service_sk_live_${'Z'.repeat(24)}` } });
    expect(unknown.status).toBe(401);
    expect(unknown.body).toMatchObject({ error: 'api_key_not_found' });
    const forged = `${t.apiKey.slice(0, 22)}${'0'.repeat(18)}`;
    const invalid = await call(tokens, { method: 'POST', headers: { Authorization: `Bearer ${forged}` } });
    expect(invalid.status).toBe(401);
    expect(invalid.body).toMatchObject({ error: 'api_key_invalid' });
    expect(invalid.text).not.toContain(forged);
  });

  it('answers scope_required naming the missing scope', async () => {
    const key = await t.keyWith('usage:read');
    const r = await call(tokens, { method: 'POST', headers: { Authorization: `Bearer ${key}` } });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: 'scope_required', message: "This credential lacks the scope 'mcp:tenant'." });
    expectCommonHeaders(r.headers);
  });

  it('names every alternative when none is held', async () => {
    const key = await t.keyWith('usage:read');
    const r = await call('/runs', { headers: { Authorization: `Bearer ${key}` } });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({
      error: 'scope_required',
      message: "This credential lacks the scope 'orchestrator:invoke' or 'tenant:read'.",
    });
  });

  it('exchanges a key for an MCP token that opens MCP routes of the same workspace', async () => {
    const key = await t.keyWith('mcp:tenant');
    const issued = await call(tokens, { method: 'POST', headers: { Authorization: `Bearer ${key}` } });
    expect(issued.status).toBe(201);
    expect(issued.body).toEqual({
      token: expect.stringMatching(/^service_mcp_[0-9A-Za-z]{32}$/),
      tokenType: 'Bearer',
      scopes: ['mcp:tenant'],
      expiresAt: new Date(t.clock.now().getTime() + 3_600_000).toISOString(),
    });
    const ok = await call('/test/mcp', { headers: { Authorization: `Bearer ${issued.body!.token as string}` } });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ workspaceId: t.workspaceId });

    const missing = await call('/test/mcp');
    expect(missing.status).toBe(401);
    expect(missing.body).toMatchObject({ error: 'missing_bearer' });
    // An API key is not an MCP token.
    const wrong = await call('/test/mcp', { headers: { Authorization: `Bearer ${key}` } });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toMatchObject({ error: 'not_authenticated' });
  });

  it('takes a lifetime for the MCP token and validates it', async () => {
    const key = await t.keyWith('mcp:tenant');
    const auth = { Authorization: `Bearer ${key}`, ...JSON_HEADERS };
    const short = await call(tokens, { method: 'POST', headers: auth, body: JSON.stringify({ expiresInSeconds: 120 }) });
    expect(short.status).toBe(201);
    expect(short.body!.expiresAt).toBe(new Date(t.clock.now().getTime() + 120_000).toISOString());
    const bad = await call(tokens, { method: 'POST', headers: auth, body: JSON.stringify({ expiresInSeconds: 10 }) });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'invalid_body', message: "Invalid body field 'expiresInSeconds': must be at least 60.", param: 'expiresInSeconds' });
  });
});

describe('admin session and key management', () => {
  it('logs in with a Secure, HttpOnly, SameSite=Strict cookie and a csrfToken', async () => {
    t.clock.advance(30_000);
    const r = await call('/auth/login', {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify({
        email: t.admin.email,
        password: t.admin.password,
        totpCode: totpCode(t.admin.totpSecret, t.clock.now()),
      }),
    });
    expect(r.status).toBe(200);
    const cookie = r.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^service_session=[0-9A-Za-z]{43}; Max-Age=43200; Path=\/; HttpOnly; Secure; SameSite=Strict$/);
    expect(r.body).toEqual({
      user: { id: expect.stringMatching(/^usr_/), email: t.admin.email, role: 'owner', twoFactorEnabled: true },
      workspaceId: t.workspaceId,
      workspaces: [{ id: t.workspaceId, name: 'Default workspace', role: 'owner' }],
      expiresAt: new Date(t.clock.now().getTime() + 43_200_000).toISOString(),
      csrfToken: expect.stringMatching(/^[0-9A-Za-z]{43}$/),
    });
    expect(r.text).not.toContain(cookie.split(';')[0]!.split('=')[1]);
  });

  it('refuses wrong credentials with not_authenticated, then too_many_attempts with Retry-After', async () => {
    const other = await createUser(t.db, t.clock, t.workspaceId, {
      email: 'locked@example.com',
      password: 'a long enough password',
      role: 'admin',
      withTotp: true,
      secretBox: t.services.webhooks.secretBox,
    });
    const attempt = (password: string) =>
      call('/auth/login', {
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify({ email: other.email, password, totpCode: totpCode(other.totpSecret!, t.clock.now()) }),
      });
    for (let i = 0; i < 5; i += 1) {
      const r = await attempt('wrong password');
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ error: 'not_authenticated', message: 'Email, password or code is incorrect.' });
    }
    const locked = await attempt('a long enough password');
    expect(locked.status).toBe(429);
    expect(locked.body).toEqual({
      error: 'too_many_attempts',
      message: 'Too many failed logins; wait before trying again.',
      retryAfterSec: 900,
    });
    expect(locked.headers.get('Retry-After')).toBe('900');
    expectCommonHeaders(locked.headers, '120');
  });

  it('validates the login body and names the field', async () => {
    const r = await call('/auth/login', {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify({ email: t.admin.email, password: 'p', totpCode: '12ab56' }),
    });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'invalid_body', message: "Invalid body field 'totpCode': must match the pattern ^[0-9]{6}$.", param: 'totpCode' });
    const broken = await call('/auth/login', { method: 'POST', headers: JSON_HEADERS, body: '{"email": ' });
    expect(broken.status).toBe(400);
    expect(broken.body).toEqual({ error: 'invalid_body', message: 'The request body is not valid JSON.' });
  });

  it('answers not_authenticated without or with a bad session cookie', async () => {
    for (const headers of [{}, { Cookie: 'service_session=forged' }] as Record<string, string>[]) {
      const r = await call('/api-keys', { headers });
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ error: 'not_authenticated' });
      expectCommonHeaders(r.headers, '120');
    }
  });

  it('answers role_forbidden to a member and to an admin without TOTP, and forbidden to a write without the CSRF token', async () => {
    const sessions = createSessionService({ db: t.db, clock: t.clock, secretBox: t.services.webhooks.secretBox });
    for (const [role, withTotp] of [
      ['member', true],
      ['admin', false],
    ] as const) {
      const user = await createUser(t.db, t.clock, t.workspaceId, {
        email: `${role}-${withTotp}@example.com`,
        password: 'a long enough password',
        role,
        withTotp,
        secretBox: t.services.webhooks.secretBox,
      });
      const login = await sessions.login({
        email: user.email,
        password: 'a long enough password',
        totpCode: user.totpSecret ? totpCode(user.totpSecret, t.clock.now()) : '000000',
      });
      const r = await call('/api-keys', { headers: { Cookie: `service_session=${login.sessionToken}` } });
      expect(r.status).toBe(403);
      expect(r.body).toMatchObject({ error: 'role_forbidden' });
    }
    const { cookie, csrfToken } = await t.login();
    const body = JSON.stringify({ name: 'k', scopes: ['usage:read'] });
    // A wrong token: the last character changed (to one it is not, or the test would pass it 1 time in 62).
    const wrong = `${csrfToken.slice(0, -1)}${csrfToken.endsWith('x') ? 'y' : 'x'}`;
    for (const extra of [{}, { 'X-CSRF-Token': wrong }] as Record<string, string>[]) {
      const r = await call('/api-keys', { method: 'POST', headers: { Cookie: cookie, ...JSON_HEADERS, ...extra }, body });
      expect(r.status).toBe(403);
      // Not a role problem: the session's holder may do this, the request is not proven to come from them.
      expect(r.body).toEqual({
        error: 'forbidden',
        message: 'Send the X-CSRF-Token header with the csrfToken given at login.',
      });
    }
  });

  it.each([
    ['Set A', ''],
    ['Set B', '/v1'],
  ])('creates, lists, rotates and revokes keys (%s)', async (_set, prefix) => {
    const { cookie, csrfToken } = await t.login();
    const write = { Cookie: cookie, 'X-CSRF-Token': csrfToken, ...JSON_HEADERS };
    const created = await call(`${prefix}/api-keys`, {
      method: 'POST',
      headers: write,
      body: JSON.stringify({ name: 'CRM', scopes: ['mcp:tenant', 'usage:read'], expiresInDays: 30 }),
    });
    expect(created.status).toBe(201);
    const key = created.body as Record<string, string>;
    expect(key).toEqual({
      id: expect.stringMatching(/^key_[0-9A-Za-z]{20}$/),
      name: 'CRM',
      prefix: key.secret!.slice(0, 22),
      secret: expect.stringMatching(/^service_sk_live_[0-9A-Za-z]{24}$/),
      scopes: ['mcp:tenant', 'usage:read'],
      status: 'active',
      createdAt: t.clock.now().toISOString(),
      expiresAt: new Date(t.clock.now().getTime() + 30 * 86_400_000).toISOString(),
      lastUsedAt: null,
      revokedAt: null,
    });
    const useKey = (secret: string) => call('/v1/mcp/tenant/tokens', { method: 'POST', headers: { Authorization: `Bearer ${secret}` } });
    expect((await useKey(key.secret!)).status).toBe(201);

    const listed = await call(`${prefix}/api-keys`, { headers: { Cookie: cookie } });
    expect(listed.status).toBe(200);
    const data = (listed.body as { data: Record<string, unknown>[] }).data;
    expect(data[0]).toMatchObject({ id: key.id, status: 'active', lastUsedAt: t.clock.now().toISOString() });
    expect(listed.text).not.toContain(key.secret);
    expect(listed.text).not.toMatch(/hash/i);

    const rotated = await call(`${prefix}/api-keys/${key.id}/rotate`, { method: 'POST', headers: write });
    expect(rotated.status).toBe(201);
    expect(rotated.body).toMatchObject({ name: 'CRM', scopes: ['mcp:tenant', 'usage:read'], status: 'active' });
    expect((await useKey(key.secret!)).body).toMatchObject({ error: 'api_key_not_found' });
    const fresh = rotated.body as Record<string, string>;
    expect((await useKey(fresh.secret!)).status).toBe(201);

    const revoked = await call(`${prefix}/api-keys/${fresh.id}`, { method: 'DELETE', headers: write });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: fresh.id, status: 'revoked', revokedAt: t.clock.now().toISOString() });
    expect(revoked.body).not.toHaveProperty('secret');
    const after = await useKey(fresh.secret!);
    expect(after.status).toBe(401);
    expect(after.body).toMatchObject({ error: 'api_key_not_found' });
  });

  it("answers not_found for another workspace's key", async () => {
    const other = await createWorkspace(t.db, t.clock, 'Other');
    const theirs = await t.services.keys.create(other.id, { name: 'theirs', scopes: ['usage:read'] });
    const { cookie, csrfToken } = await t.login();
    const write = { Cookie: cookie, 'X-CSRF-Token': csrfToken };
    for (const [method, path] of [
      ['DELETE', `/api-keys/${theirs.id}`],
      ['POST', `/v1/api-keys/${theirs.id}/rotate`],
    ]) {
      const r = await call(path!, { method, headers: write });
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: 'not_found', message: 'No API key with this id.' });
    }
    const listed = await call('/api-keys', { headers: { Cookie: cookie } });
    expect(listed.text).not.toContain(theirs.id);
  });

  it('validates key creation and names the field, never the value', async () => {
    const { cookie, csrfToken } = await t.login();
    const write = { Cookie: cookie, 'X-CSRF-Token': csrfToken, ...JSON_HEADERS };
    const cases: [unknown, string, string | undefined][] = [
      [{}, "Missing body field 'name'.", 'name'],
      [{ name: 'x', scopes: [] }, "Invalid body field 'scopes': must hold at least 1 item.", 'scopes'],
      [{ name: 'x', scopes: ['usage:read'], expiresInDays: 731 }, "Invalid body field 'expiresInDays': must be at most 730.", 'expiresInDays'],
      [{ name: 'x', scopes: ['usage:read'], expiresInDays: 'soon' }, "Invalid body field 'expiresInDays': must be a number.", 'expiresInDays'],
      [{ name: 'x', scopes: ['usage:read'], owner: 'wksp_evil' }, "Unknown body field 'owner'.", 'owner'],
      [{ name: 'x', scopes: ['usage:read'], 'own<script>': 1 }, 'Unknown body field.', undefined],
      [{ name: 'x', scopes: ['*:*'] }, "Invalid body field 'scopes[0]': must match the pattern the contract sets.", 'scopes[0]'],
      [{ name: 'x', scopes: ['usage:read', 'secret<script>'] }, "Invalid body field 'scopes[1]': must match the pattern the contract sets.", 'scopes[1]'],
      [[1], 'The request body is invalid: it must be an object.', undefined],
    ];
    for (const [body, message, param] of cases) {
      const r = await call('/api-keys', { method: 'POST', headers: write, body: JSON.stringify(body) });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error: 'invalid_body', message, ...(param ? { param } : {}) });
      expect(r.text).not.toContain('<script>');
      expect(r.text).not.toContain('soon');
    }
    const badId = await call('/api-keys/not-a-key-id', { method: 'DELETE', headers: write });
    expect(badId.status).toBe(400);
    expect(badId.body).toEqual({ error: 'invalid_request', message: "Invalid path parameter 'id': must be at least 20 characters.", param: 'id' });
  });

  it('logs out: 204, the cookie is cleared and the session no longer works', async () => {
    const { cookie, csrfToken } = await t.login();
    const r = await call('/auth/logout', { method: 'POST', headers: { Cookie: cookie, 'X-CSRF-Token': csrfToken } });
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    expect(r.headers.get('set-cookie')).toMatch(/^service_session=; Max-Age=0; Path=\/; HttpOnly; Secure; SameSite=Strict/);
    const after = await call('/api-keys', { headers: { Cookie: cookie } });
    expect(after.status).toBe(401);
    expect(after.body).toMatchObject({ error: 'not_authenticated' });
  });
});

describe('rate limits', () => {
  it('answers the 61st request of a minute from one address with 429 rate_limit_exceeded', async () => {
    let last = await call('/nope');
    for (let i = 1; i < 60; i += 1) last = await call('/nope');
    expect(last.status).toBe(404);
    expect(last.headers.get('X-RateLimit-Remaining')).toBe('0');
    const limited = await call('/nope');
    expect(limited.status).toBe(429);
    const retry = Number(limited.headers.get('Retry-After'));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    expect(limited.body).toEqual({
      error: 'rate_limit_exceeded',
      message: `Too many requests; retry after ${retry} s.`,
      retryAfterSec: retry,
    });
    expectCommonHeaders(limited.headers);
  });

  it('counts authenticated calls per workspace too (limit 600)', async () => {
    const r = await call('/v1/mcp/tenant/tokens', { method: 'POST', headers: { Authorization: `Bearer ${t.apiKey}` } });
    expect(r.status).toBe(201);
    // The tighter of the two limits is shown: per IP (60) is tighter than per workspace (600).
    expect(r.headers.get('X-RateLimit-Limit')).toBe('60');
    const hits = await t.services.limiter.hit(`wksp:${t.workspaceId}`, 600, 60_000);
    expect(hits.remaining).toBe(598);
  });
});

describe('ServiceError statuses', () => {
  it('come from the contract table', () => {
    expect(fail('too_many_attempts', undefined, { retryAfterSec: 1 }).status).toBe(429);
    expect(fail('method_not_allowed').status).toBe(405);
    expect(fail('not_implemented').status).toBe(501);
  });
});

describe('responses match the contract', () => {
  /** Validates a response against the schema the contract gives its operation and status. */
  async function conforms(operationId: string, path: string, init: RequestInit = {}) {
    const r = await call(path, init);
    const route = contractRoutes.find((x) => x.operationId === operationId)!;
    const spec = route.responses[String(r.status)];
    expect(spec, `${operationId} does not list status ${r.status}`).toBeDefined();
    if (spec!.schema) {
      const parsed = spec!.schema.safeParse(r.body);
      expect(parsed.success, `${operationId} ${r.status}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
    } else {
      expect(r.text).toBe('');
    }
    return r;
  }

  it('for login, key management, MCP tokens and logout, successes and errors alike', async () => {
    const json = (body: unknown) => ({ method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(body) });
    await conforms('login', '/auth/login', json({ email: t.admin.email, password: 'wrong', totpCode: '123456' }));
    await conforms('login', '/auth/login', json({ email: 'x' }));
    const { cookie, csrfToken } = await t.login();
    const read = { headers: { Cookie: cookie } };
    const write = { Cookie: cookie, 'X-CSRF-Token': csrfToken, ...JSON_HEADERS };
    for (const [suffix, prefix] of [
      ['', ''],
      ['V1', '/v1'],
    ] as const) {
      await conforms(`listApiKeys${suffix}`, `${prefix}/api-keys`, read);
      await conforms(`listApiKeys${suffix}`, `${prefix}/api-keys`);
      const created = await conforms(`createApiKey${suffix}`, `${prefix}/api-keys`, {
        method: 'POST',
        headers: write,
        body: JSON.stringify({ name: 'contract', scopes: ['orchestrator:invoke:agent:sales', 'usage:*'] }),
      });
      expect(created.status).toBe(201);
      const id = created.body!.id as string;
      await conforms(`createApiKey${suffix}`, `${prefix}/api-keys`, { method: 'POST', headers: write, body: '{}' });
      await conforms(`createApiKey${suffix}`, `${prefix}/api-keys`, { method: 'POST', headers: { Cookie: cookie }, body: '{}' });
      const rotated = await conforms(`rotateApiKey${suffix}`, `${prefix}/api-keys/${id}/rotate`, { method: 'POST', headers: write });
      expect(rotated.status).toBe(201);
      await conforms(`rotateApiKey${suffix}`, `${prefix}/api-keys/${id}/rotate`, { method: 'POST', headers: write });
      expect((await conforms(`revokeApiKey${suffix}`, `${prefix}/api-keys/${rotated.body!.id as string}`, { method: 'DELETE', headers: write })).status).toBe(
        200,
      );
      await conforms(`revokeApiKey${suffix}`, `${prefix}/api-keys/key_00000000000000000000`, { method: 'DELETE', headers: write });
    }
    const mcpKey = await t.keyWith('mcp:tenant');
    const noScope = await t.keyWith('tenant:read');
    await conforms('createMcpToken', '/v1/mcp/tenant/tokens', { method: 'POST', headers: { Authorization: `Bearer ${mcpKey}` } });
    await conforms('createMcpToken', '/v1/mcp/tenant/tokens', { method: 'POST' });
    await conforms('createMcpToken', '/v1/mcp/tenant/tokens', { method: 'POST', headers: { Authorization: `Bearer ${noScope}` } });
    await conforms('logout', '/auth/logout', { method: 'POST', headers: { Cookie: cookie } });
    expect((await conforms('logout', '/auth/logout', { method: 'POST', headers: write })).status).toBe(204);
  });
});
