/**
 * The per-IP budgets by route class: an address that spent its 60 API requests a minute can still
 * sign in and use the admin routes, and its MCP calls and operator calls count in buckets of their own.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { routes } from '../../contract.ts';
import { totpCode } from '../../domain/sessions/totp.ts';
import { createTestApp, type TestApp } from '@service/testing/app';
import { PER_IP_BY_CLASS } from './index.ts';

let t: TestApp;
const ADDRESS = '203.0.113.40';
const OPERATOR_TOKEN = 'operator-token-of-the-rate-limit-class-test';

beforeAll(async () => {
  t = await createTestApp({ deps: { config: { trustProxy: 1 }, operatorToken: OPERATOR_TOKEN } });
});
afterAll(async () => {
  await t.close();
});

const from = (headers: Record<string, string> = {}) => ({ headers: { 'x-forwarded-for': ADDRESS, ...headers } });

it('an address past its API budget still signs in; admin, MCP and operator routes show their own limits', async () => {
  const api = () => t.app.request('/usage/current', from({ authorization: `Bearer ${t.apiKey}` }));
  for (let i = 0; i < PER_IP_BY_CLASS.api.limit; i += 1) expect((await api()).status).toBe(200);
  const refused = await api();
  expect(refused.status).toBe(429);
  expect(await refused.json()).toMatchObject({ error: 'rate_limit_exceeded' });

  t.clock.advance(30_000);
  const login = await t.app.request('/auth/login', {
    method: 'POST',
    ...from({ 'content-type': 'application/json' }),
    body: JSON.stringify({ email: t.admin.email, password: t.admin.password, totpCode: totpCode(t.admin.totpSecret, t.clock.now()) }),
  });
  expect(login.status).toBe(200);
  expect(login.headers.get('x-ratelimit-limit')).toBe(String(PER_IP_BY_CLASS.admin.limit));
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
  const keys = await t.app.request('/api-keys', from({ cookie }));
  expect(keys.status).toBe(200);
  expect([keys.headers.get('x-ratelimit-limit'), keys.headers.get('x-ratelimit-remaining')]).toEqual([
    String(PER_IP_BY_CLASS.admin.limit),
    String(PER_IP_BY_CLASS.admin.limit - 2),
  ]);

  const operator = await t.app.request('/operator/workspaces', from({ authorization: `Bearer ${OPERATOR_TOKEN}` }));
  expect(operator.status).toBe(200);
  expect(operator.headers.get('x-ratelimit-limit')).toBe(String(PER_IP_BY_CLASS.operator.limit));

  // The API budget itself is still spent.
  expect((await api()).status).toBe(429);
});

it("each operation's class comes from the contract (x-ip-limit-class): session routes and the sign-in routes admin, MCP mcp, operator operator", () => {
  // The rule the classes follow, by the route's first credential; a new session route without the extension fails here.
  const SIGN_IN = new Set(['login', 'startSsoSignIn', 'finishSsoSignIn', 'previewInvitation', 'acceptInvitation', 'previewAccountReset', 'redeemAccountReset']);
  const expected = (scheme: string | undefined, operationId: string) =>
    scheme === 'adminSession' || SIGN_IN.has(operationId) ? 'admin' : scheme === 'mcpToken' ? 'mcp' : scheme === 'operatorToken' ? 'operator' : 'api';
  const limited = routes.filter((route) => !route.policy.operations && !route.policy.inboundWebhook);
  expect(limited.map((route) => [route.operationId, route.policy.ipLimitClass])).toEqual(
    limited.map((route) => [route.operationId, expected(route.security[0]?.scheme, route.operationId)]),
  );
  // Health and inbound routes are outside the per-IP budgets and name none.
  for (const route of routes.filter((r) => r.policy.operations || r.policy.inboundWebhook)) expect(route.policy.ipLimitClass).toBe('api');
  expect(new Set(routes.map((route) => route.policy.ipLimitClass))).toEqual(new Set(Object.keys(PER_IP_BY_CLASS)));
});
