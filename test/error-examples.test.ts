/**
 * @module The contract's error examples are what the real server answers. For every operation of
 * generated/openapi.json and every example of its 4xx/5xx responses, the situation the example
 * describes is provoked on that operation of an in-process server (createTestApp), and the answer
 * must carry the example's status, its `error` code, the same body fields (validated against the
 * response schema), and `Retry-After` exactly when the response documents it.
 *
 * The provokers form one table keyed by (operations, status, code). An example that no row covers
 * fails the suite, so a new example needs a way to provoke it; a row may instead say why the server
 * never sends that code, which keeps the example visible here as a `todo`.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { routes } from '../generated/routes.ts';
import { pauseAgent, resumeAgent, setPlan } from '../packages/server/src/domain/agents/settings.ts';
import { setManualKillSwitch } from '../packages/server/src/domain/spending/index.ts';
import { LOGIN_LIMITS } from '../packages/server/src/domain/sessions/service.ts';
import { totpCode } from '../packages/server/src/domain/sessions/totp.ts';
import { resetUserByEmail } from '../packages/server/src/domain/sessions/resets.ts';
import { createUser } from '../packages/server/src/domain/sessions/users.ts';
import { invalidateKeyCaches } from '../packages/server/src/domain/keys/index.ts';
import { KILL_SWITCH_LIMITS, killSwitchWindows, periodOf } from '../packages/server/src/domain/usage/index.ts';
import { signInboundBody } from '../packages/server/src/domain/webhooks/inbound-signature.ts';
import { clientKey, PER_IP, PER_IP_BY_CLASS } from '../packages/server/src/middleware/rate-limit/index.ts';
import type { RouteSpec } from '../packages/server/src/routes/route-spec.ts';
import type { OpenDb } from '../packages/server/src/store/db.ts';
import { openStore } from '../packages/server/src/store/open.ts';
import { createTestApp, type TestApp } from '@service/testing/app';
import { createSelfSignedCertificate } from '@service/testing/https-receiver';
import { startTestIdentityProvider, type TestIdentityProvider } from '@service/testing/oidc-provider';
import { completeTwoStep } from '@service/testing/two-step';
import { compileResponseValidator, type Bundle } from './support/bundle.ts';

type Json = Record<string, unknown>;

const bundle = JSON.parse(readFileSync(new URL('../generated/openapi.json', import.meta.url), 'utf8')) as Bundle & Json;

/** Follows local `$ref`s of the bundle. */
function deref<T>(node: T): T {
  let current: unknown = node;
  for (let hops = 0; hops < 10 && current && typeof current === 'object' && '$ref' in current; hops += 1) {
    const ref = (current as { $ref: string }).$ref;
    current = ref
      .replace(/^#\//, '')
      .split('/')
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((at, key) => (at as Json | undefined)?.[key], bundle);
  }
  return current as T;
}

// ── The documented error examples ─────────────────────────────────────────────────────────────

interface ExampleCase {
  operationId: string;
  route: RouteSpec;
  /** The operation object of the bundle. */
  op: Parameters<typeof compileResponseValidator>[1];
  status: number;
  name: string;
  example: Json & { error: string };
  /** The response's documented headers, by name. */
  headers: Record<string, Json>;
}

const cases: ExampleCase[] = Object.values(bundle.paths).flatMap((item) =>
  Object.entries(item as unknown as Record<string, Json>)
    .filter(([method]) => ['get', 'post', 'delete', 'put', 'patch'].includes(method))
    .flatMap(([, op]) => {
      const operationId = op.operationId as string;
      const route = routes.find((r) => r.operationId === operationId);
      if (!route) throw new Error(`${operationId} is not in generated/routes.ts`);
      return Object.entries(op.responses as Record<string, Json>)
        .filter(([status]) => Number(status) >= 400)
        .flatMap(([status, declared]) => {
          const response = deref(declared) as Json & { headers?: Record<string, Json>; content?: Record<string, Json> };
          const examples = (response.content?.['application/json']?.examples ?? {}) as Record<string, Json>;
          const headers = Object.fromEntries(Object.entries(response.headers ?? {}).map(([name, header]) => [name, deref(header)]));
          return Object.entries(examples).map(([name, example]) => ({
            operationId,
            route,
            op: op as unknown as ExampleCase['op'],
            status: Number(status),
            name,
            example: deref(example).value as ExampleCase['example'],
            headers,
          }));
        });
    }),
);

/**
 * The documented `Retry-After` of one example: the header's example of the same name when the
 * header gives one per example (Prism itself always serves the first), else its single example.
 */
function documentedRetryAfter(c: ExampleCase): unknown {
  const header = c.headers['Retry-After'];
  if (!header) return undefined;
  const examples = header.examples as Record<string, Json> | undefined;
  if (examples) return deref(examples[c.name] ?? Object.values(examples)[0])?.value;
  return header.example;
}

// ── The server under test ─────────────────────────────────────────────────────────────────────

/** The store of both apps, which a case can make fail (500 for a bug, 503 for an outage). */
function faultable(db: OpenDb) {
  let fault: Error | undefined;
  const wrapped: OpenDb = {
    driver: db.driver,
    query: (sql, params) => (fault ? Promise.reject(fault) : db.query(sql, params)),
    transaction: (fn) => (fault ? Promise.reject(fault) : db.transaction(fn)),
    exec: (sql) => (fault ? Promise.reject(fault) : db.exec(sql)),
    close: () => db.close(),
  };
  return {
    db: wrapped,
    async failing(error: Error, send: () => Promise<Response>): Promise<Response> {
      fault = error;
      try {
        return await send();
      } finally {
        fault = undefined;
      }
    },
  };
}

let store: OpenDb;
let faults: ReturnType<typeof faultable>;
let t: TestApp;
/** The same store in private beta: the public agent API answers 404 before authentication. */
let beta: TestApp;
let admin: { cookie: string; csrfToken: string; at: number };
/** A member's session cookie, and when it was made (renewed as the admin's is). */
let member: { cookie: string; at: number };
let memberLogin: () => Promise<string>;
let mcpToken: string;
let inboundSecrets: Record<string, string>;
/** A second workspace whose standing the 402 and tenant_forbidden cases change: its key, MCP token and inbound webhook. */
let other: TestApp;
/** The identity provider of `t`'s single sign-on cases, on loopback. */
let idp: TestIdentityProvider;
let otherMcpToken: string;
const OPERATOR_TOKEN = 'the-operator-token-of-this-test-deployment';

// Every request comes from its own address (TRUST_PROXY 1), so no case eats into another's limits.
let addresses = 0;
function nextAddress(): string {
  addresses += 1;
  return `10.${(addresses >> 16) & 255}.${(addresses >> 8) & 255}.${addresses & 255}`;
}

beforeAll(async () => {
  faults = faultable((store = await openStore()));
  const certificate = createSelfSignedCertificate();
  idp = await startTestIdentityProvider({ certificate, redirectUris: ['http://localhost/panel/sso/callback'] });
  // Its single sign-on reaches the loopback provider (allowed and trusted as the tests' receivers are).
  t = await createTestApp({
    db: faults.db,
    deps: { config: { trustProxy: 1 }, operatorToken: OPERATOR_TOKEN, webhooks: { allowList: ['127.0.0.1'] }, sso: { ca: certificate.cert } },
  });
  other = await createTestApp({ db: faults.db, deps: { config: { trustProxy: 1 } } });
  beta = await createTestApp({ db: faults.db, deps: { config: { trustProxy: 1, privateBeta: true } } });
  admin = { ...(await t.login()), at: t.clock.now().getTime() };

  const password = 'a long enough password for a member';
  const user = await createUser(t.db, t.clock, t.workspaceId, {
    email: 'member@example.com',
    password,
    role: 'member',
    withTotp: true,
    secretBox: t.services.webhooks.secretBox,
  });
  memberLogin = async () => {
    const session = await t.services.sessions.login({ email: user.email, password, totpCode: totpCode(user.totpSecret!, t.clock.now()) });
    return `service_session=${session.sessionToken}`;
  };
  member = { cookie: await memberLogin(), at: t.clock.now().getTime() };

  const token = await t.app.request('/v1/mcp/tenant/tokens', {
    method: 'POST',
    headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json', 'x-forwarded-for': nextAddress() },
    body: JSON.stringify({ expiresInSeconds: 86_400 }),
  });
  mcpToken = ((await token.json()) as { token: string }).token;

  inboundSecrets = {};
  for (const [slug, extra] of [
    ['crm-leads', {}],
    ['paused-hook', {}],
    ['limited-hook', { requestsPerMinute: 1 }],
  ] as const) {
    const res = await adminRequest('POST', '/inbound-webhooks', { slug, agentSlug: 'sales', ...extra });
    expect(res.status, `create inbound webhook ${slug}`).toBe(201);
    inboundSecrets[slug] = ((await res.json()) as { secret: string }).secret;
  }
  expect((await adminRequest('POST', '/inbound-webhooks/paused-hook/pause')).status).toBe(200);

  const otherToken = await other.app.request('/v1/mcp/tenant/tokens', {
    method: 'POST',
    headers: { authorization: `Bearer ${other.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ expiresInSeconds: 86_400 }),
  });
  otherMcpToken = ((await otherToken.json()) as { token: string }).token;
  const otherAdmin = await other.login();
  const hook = await other.app.request('/inbound-webhooks', {
    method: 'POST',
    headers: { cookie: otherAdmin.cookie, 'x-csrf-token': otherAdmin.csrfToken, 'content-type': 'application/json' },
    body: JSON.stringify({ slug: 'other-tenant-hook', agentSlug: 'sales' }),
  });
  expect(hook.status).toBe(201);
  inboundSecrets['other-tenant-hook'] = ((await hook.json()) as { secret: string }).secret;
});

afterAll(async () => {
  await idp?.close();
  await other?.close();
  await beta?.close();
  await t?.close();
  await store?.close();
});

// A fresh minute for every case: the per-workspace limit (600/min) is never reached by accident.
beforeEach(() => {
  t.clock.advance(61_000);
});

/** A fresh invitation of `email` to the workspace of `app`, made by its admin. */
async function invitationFor(email: string, app: TestApp): Promise<string> {
  const session = app === t ? await adminSession() : await app.login();
  const res = await app.app.request('/workspace/invitations', {
    method: 'POST',
    headers: { cookie: session.cookie, 'x-csrf-token': session.csrfToken, 'content-type': 'application/json', 'x-forwarded-for': nextAddress() },
    body: JSON.stringify({ email }),
  });
  expect(res.status, 'invitation').toBe(201);
  return ((await res.json()) as { token: string }).token;
}

/** A reset link of a new member of the first workspace (its password is RESET_PASSWORD). */
async function accountResetFor(reset: 'password' | 'totp'): Promise<string> {
  const email = `reset-${addresses}-${reset}@example.com`;
  await createUser(t.db, t.clock, t.workspaceId, { email, password: RESET_PASSWORD, role: 'member', withTotp: true, secretBox: t.services.webhooks.secretBox });
  return (await resetUserByEmail(t.db, t.clock, { email, reset })).token;
}
const RESET_PASSWORD = 'the password of a member to reset';

async function adminSession(): Promise<{ cookie: string; csrfToken: string }> {
  // Sessions last 12 h of the fake clock, which moves a minute per case.
  if (t.clock.now().getTime() - admin.at > 2 * 3600_000) admin = { ...(await t.login()), at: t.clock.now().getTime() };
  return admin;
}

/** The member's cookie, signed in again before its 12 hours run out (the fake clock moves a minute per case). */
async function memberSession(): Promise<string> {
  if (t.clock.now().getTime() - member.at > 2 * 3600_000) member = { cookie: await memberLogin(), at: t.clock.now().getTime() };
  return member.cookie;
}

async function adminRequest(method: string, path: string, body?: unknown): Promise<Response> {
  return await t.app.request(path, {
    method,
    headers: {
      cookie: admin.cookie,
      'x-csrf-token': admin.csrfToken,
      'content-type': 'application/json',
      'x-forwarded-for': nextAddress(),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

// ── Requests ──────────────────────────────────────────────────────────────────────────────────

interface Call {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body?: string;
}

/** Path parameters: one that is well formed but names nothing, and one the validator refuses. */
const PATH_VALUES: { path: RegExp; name: string; unknown: string; malformed: string }[] = [
  { path: /\/runs\/\{run_id\}/, name: 'run_id', unknown: 'run_7Hk2Lm9QvX4pT8sW3nB6', malformed: 'run-7Hk2' },
  { path: /\/api-keys\/\{id\}/, name: 'id', unknown: 'key_4Fq8Zr2Mx7Lp1Vt9', malformed: 'key-4Fq8' },
  { path: /\/webhook-destinations\/\{id\}/, name: 'id', unknown: 'dst_5Lx2Qw8Nm4Rt7Vb1K', malformed: 'dst-5Lx2' },
  { path: /\/integrations\/\{id\}/, name: 'id', unknown: 'int_3Fg7Hj1Kl5Zx9Cv2Bn', malformed: 'int-3Fg7' },
  { path: /\/approvals\/\{approval_id\}/, name: 'approval_id', unknown: 'apr_6Wm1Kp8Zt3Qx7Nv2Lb', malformed: 'apr-6Wm1' },
  { path: /\/drafts\/\{draft_id\}/, name: 'draft_id', unknown: 'drf_3Jv9Xc5Mq1Lt7Rb4Wz', malformed: 'drf-3Jv9' },
  { path: /^\/inbound-webhooks\/\{slug\}/, name: 'slug', unknown: 'no-such-hook', malformed: 'No_Such_Hook' },
  { path: /\/workspace\/members\/\{user_id\}/, name: 'user_id', unknown: 'usr_AAAAAAAAAAAAAAAAAAAA', malformed: 'usr-AAAA' },
  { path: /\/workspace\/invitations\/\{invitation_id\}/, name: 'invitation_id', unknown: 'inv_AAAAAAAAAAAAAAAAAAAA', malformed: 'inv-AAAA' },
  { path: /^\/operator\/workspaces\/\{workspace_id\}\/inbound-webhooks\/\{slug\}/, name: 'slug', unknown: 'no-such-hook', malformed: 'No_Such_Hook' },
  { path: /\/operator\/workspaces\/\{workspace_id\}/, name: 'workspace_id', unknown: 'wksp_AAAAAAAAAAAAAAAAAAAA', malformed: 'wksp-AAAA' },
  { path: /\/webhooks\/inbound\/\{slug\}/, name: 'slug', unknown: 'crm-leads', malformed: 'No_Such_Hook' },
  { path: /\/agents\/\{slug\}/, name: 'slug', unknown: 'sales', malformed: 'Sales!' },
];

function pathWith(route: RouteSpec, values: Record<string, string> = {}, kind: 'unknown' | 'malformed' = 'unknown'): string {
  return route.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (values[name] !== undefined) return encodeURIComponent(values[name]);
    const entry = PATH_VALUES.find((p) => p.name === name && p.path.test(route.path));
    if (!entry) throw new Error(`no value for path parameter ${name} of ${route.path}`);
    return encodeURIComponent(entry[kind]);
  });
}

const ask = { alias: 'Prelude', messages: [{ role: 'user', content: 'Which invoices are more than 60 days overdue?' }] };
const lead = { event: 'lead.created', id: 'lead_000184', contact: { name: 'Dana Whitfield' } };

/** A body the operation accepts; the cases that reach the handler need one. */
const VALID_BODIES: Record<string, unknown> = {
  createInference: ask,
  sendAgentMessage: ask,
  sendOrchestratorMessage: ask,
  callMcpRpc: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
  createMcpToken: { expiresInSeconds: 3600 },
  createApiKey: { name: 'CRM integration', scopes: ['usage:read'] },
  createApiKeyV1: { name: 'CRM integration', scopes: ['usage:read'] },
  login: { email: 'nobody@example.com', password: 'not the password', totpCode: '000000' },
  createInboundWebhook: { slug: 'another-hook' },
  createWebhookDestination: { url: 'https://hooks.northwind.example/agent-events', events: ['run.completed'] },
  decideApproval: { decision: 'approved' },
  createIntegration: { integration: 'crm', url: 'https://mcp.crm.northwind.example/mcp' },
  ingestInboundEvent: lead,
  ingestInboundEventV1: lead,
  createWorkspace: { name: 'Northwind' },
  selectWorkspace: { workspaceId: 'wksp_AAAAAAAAAAAAAAAAAAAA' },
  updateMember: { role: 'admin' },
  createInvitation: { email: 'invitee@example.com' },
  previewInvitation: { token: `service_inv_${'A'.repeat(32)}` },
  acceptInvitation: { token: `service_inv_${'A'.repeat(32)}`, password: 'a long enough password' },
  resetMember: { reset: 'both' },
  previewAccountReset: { token: `service_rst_${'A'.repeat(32)}` },
  redeemAccountReset: { token: `service_rst_${'A'.repeat(32)}`, password: 'a long enough password' },
  createUserReset: { email: 'nobody-at-all@example.com', reset: 'password' },
  updateWorkspace: { rpmLimit: 600 },
  pauseAgent: { reason: 'Month-end close' },
  pauseAgentOfWorkspace: { reason: 'Month-end close' },
  createWorkspaceApiKey: { name: 'CRM integration', scopes: ['usage:read'] },
  createWorkspaceUser: { email: 'new-user@example.com' },
  createInboundWebhookOfWorkspace: { slug: 'another-hook' },
  createWebhookDestinationOfWorkspace: { url: 'https://hooks.northwind.example/agent-events', events: ['run.completed'] },
  sendWebhookDestinationTestEventOfWorkspace: { type: 'run.completed' },
  decideApprovalOfWorkspace: { decision: 'approved' },
  setWorkspaceManualKillSwitch: { engaged: false },
  updateAgentConfiguration: { instructions: null, stepLimit: 8, tools: null, approvals: {} },
  setManualKillSwitch: { engaged: false },
  sendWebhookDestinationTestEvent: { type: 'run.completed' },
  updateSsoSettings: { issuer: 'https://login.northwind.example', clientId: 'agent-service', clientSecret: 'a secret', allowedDomains: ['northwind.example'] },
  startSsoSignIn: { email: 'dana@nobody-signs-in.example' },
  finishSsoSignIn: { state: 'a-state-of-no-sign-in', code: 'a-code' },
};

/** A body the validator refuses, naming a field. */
const INVALID_BODIES: Record<string, unknown> = {
  createInference: { ...ask, messages: [] },
  sendAgentMessage: { ...ask, messages: [] },
  sendOrchestratorMessage: { ...ask, messages: [] },
  callMcpRpc: { jsonrpc: '1.0', id: 1, method: 'tools/list' },
  createMcpToken: { expiresInSeconds: 5 },
  login: { email: 'nobody@example.com' },
  decideApproval: { decision: 'maybe' },
  updateWorkspace: { rpmLimit: 0 },
  updateMember: { role: 'boss' },
  createInvitation: { email: 'not an email' },
  previewInvitation: { token: 'nope' },
  acceptInvitation: { token: 'nope', password: 'short' },
  resetMember: { reset: 'everything' },
  previewAccountReset: { token: 'nope' },
  redeemAccountReset: { token: 'nope', password: 'short' },
  sendWebhookDestinationTestEvent: { type: 'run.exploded' },
  sendWebhookDestinationTestEventOfWorkspace: { type: 'run.exploded' },
  decideApprovalOfWorkspace: { decision: 'maybe' },
  createWorkspaceUser: { email: 'new-user@example.com', password: 'short' },
  createUserReset: { email: 'not an email', reset: 'password' },
  selectWorkspace: { workspaceId: 'nope' },
  updateSsoSettings: { issuer: 'http://login.northwind.example', clientId: 'agent-service', allowedDomains: ['northwind.example'] },
  startSsoSignIn: { email: 'not an email' },
  finishSsoSignIn: { state: '' },
};

type Scheme = 'apiKey' | 'adminSession' | 'mcpToken' | 'inboundSignature' | 'operatorToken' | 'none';
const schemeOf = (route: RouteSpec): Scheme => (route.security[0]?.scheme as Scheme | undefined) ?? 'none';
const isWrite = (route: RouteSpec) => route.method !== 'get';

/** The request that would succeed (or fail only in its handler), with a valid credential. */
async function baseCall(route: RouteSpec, options: { key?: string; path?: Record<string, string>; body?: unknown } = {}): Promise<Call> {
  const headers: Record<string, string> = { 'x-forwarded-for': nextAddress() };
  switch (schemeOf(route)) {
    case 'apiKey':
      headers.authorization = `Bearer ${options.key ?? t.apiKey}`;
      break;
    case 'mcpToken':
      headers.authorization = `Bearer ${mcpToken}`;
      break;
    case 'operatorToken':
      headers.authorization = `Bearer ${OPERATOR_TOKEN}`;
      break;
    case 'adminSession': {
      const session = await adminSession();
      headers.cookie = session.cookie;
      if (isWrite(route)) headers['x-csrf-token'] = session.csrfToken;
      break;
    }
    default:
      break;
  }
  const call: Call = { method: route.method.toUpperCase(), path: pathWith(route, options.path), query: {}, headers };
  const body = options.body ?? VALID_BODIES[route.operationId];
  if (route.request.body && body !== undefined) withBody(call, JSON.stringify(body));
  if (schemeOf(route) === 'inboundSignature') sign(call, 'crm-leads');
  return call;
}

function withBody(call: Call, body: string): Call {
  call.body = body;
  call.headers['content-type'] = 'application/json';
  return call;
}

function sign(call: Call, slug: string): Call {
  call.headers['x-service-signature'] = signInboundBody(call.body ?? '', inboundSecrets[slug]!);
  return call;
}

async function send(call: Call, app: TestApp = t): Promise<Response> {
  const query = new URLSearchParams(call.query).toString();
  return await app.app.request(`${call.path}${query ? `?${query}` : ''}`, {
    method: call.method,
    headers: call.headers,
    ...(call.body === undefined ? {} : { body: call.body }),
  });
}

// ── The provokers ─────────────────────────────────────────────────────────────────────────────

interface Provoker {
  status: number;
  code: string;
  /** Which operations this row is for (all of that status and code when absent). */
  on?: (route: RouteSpec) => boolean;
  /** How the situation is brought about, in words. */
  how: string;
  provoke?: (route: RouteSpec) => Promise<Response>;
  /** Instead of `provoke`: why this server never sends the code (the example stays a todo). */
  neverSent?: string;
}

const INVOCATIONS = new Set(['createInference', 'sendAgentMessage', 'sendOrchestratorMessage']);
const INBOUND = (route: RouteSpec) => schemeOf(route) === 'inboundSignature';
const invocation = (route: RouteSpec) => INVOCATIONS.has(route.operationId);
const ENTITY_PATH = /\{(run_id|id|approval_id|draft_id|workspace_id|invitation_id)\}|^\/inbound-webhooks\/\{slug\}/;
/** The routes a workspace's own credentials call: its standing (suspended, unpaid) decides them. */
const TENANT_CREDENTIAL = (route: RouteSpec) => ['apiKey', 'mcpToken', 'inboundSignature'].includes(schemeOf(route));

/** A session write that a suspended or unpaid workspace refuses (not x-standing-exempt). */
const STANDING_BOUND_WRITE = (route: RouteSpec) => schemeOf(route) === 'adminSession' && isWrite(route) && !route.policy.standingExempt;

/** The admin's own request while its workspace has the given standing; restored afterwards. */
/** The single-use links a workspace's owner or admin makes, checked again when used. */
const TOKEN_LINK = (route: RouteSpec) => ['previewInvitation', 'acceptInvitation', 'previewAccountReset', 'redeemAccountReset'].includes(route.operationId);

/** A body for a link route: an invitation of the first workspace's owner, or its owner's reset of a new member. */
async function linkBody(route: RouteSpec): Promise<Json> {
  if (route.operationId.endsWith('Invitation')) {
    const token = await invitationFor(`link-${addresses}@example.com`, t);
    return route.operationId === 'acceptInvitation' ? { token, password: 'a long enough password' } : { token };
  }
  const email = `link-reset-${addresses}@example.com`;
  const user = await createUser(t.db, t.clock, t.workspaceId, {
    email,
    password: RESET_PASSWORD,
    role: 'member',
    withTotp: true,
    secretBox: t.services.webhooks.secretBox,
  });
  await adminSession();
  const res = await adminRequest('POST', `/workspace/members/${user.id}/reset`, { reset: 'password' });
  expect(res.status, 'reset').toBe(201);
  const { token } = (await res.json()) as { token: string };
  return route.operationId === 'redeemAccountReset' ? { token, password: 'a long enough new password' } : { token };
}

/** A link of the first workspace used while the workspace has the given standing; restored afterwards. */
async function linkUsedIn(route: RouteSpec, standing: { status: string; payment: string }): Promise<Response> {
  const call = await baseCall(route, { body: await linkBody(route) });
  await t.db.query(`UPDATE workspaces SET status = $2, payment = $3 WHERE id = $1`, [t.workspaceId, standing.status, standing.payment]);
  try {
    return await send(call);
  } finally {
    await t.db.query(`UPDATE workspaces SET status = 'active', payment = 'completed' WHERE id = $1`, [t.workspaceId]);
  }
}

let ssoPeople = 0;

/**
 * A single sign-on of a new person of `t`'s workspace (which makes members at sign-in) started and returned by the
 * provider; `finish` sends the callback with its flow cookie, while the workspace has `standing` and inside `around`
 * (a store fault). The settings are removed afterwards.
 */
async function ssoFinish(
  standing: { status: string; payment: string },
  around: (send: () => Promise<Response>) => Promise<Response> = (f) => f(),
): Promise<Response> {
  ssoPeople += 1;
  const email = `jit-${ssoPeople}@sso.example`;
  idp.user = { email, emailVerified: true };
  const set = await adminRequest('PUT', '/workspace/sso', {
    issuer: idp.issuer,
    clientId: idp.clientId,
    clientSecret: idp.clientSecret,
    allowedDomains: ['sso.example'],
    jitMembership: true,
  });
  expect(set.status, await set.clone().text()).toBe(200);
  try {
    const started = await t.app.request('/auth/sso/start', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': nextAddress() },
      body: JSON.stringify({ email }),
    });
    const { authorizationUrl } = (await started.json()) as { authorizationUrl: string };
    const returned = await idp.follow(authorizationUrl);
    const call = withBody(
      {
        method: 'POST',
        path: '/auth/sso/callback',
        query: {},
        headers: { 'x-forwarded-for': nextAddress(), cookie: started.headers.get('set-cookie')!.split(';')[0]! },
      },
      JSON.stringify({ state: returned.searchParams.get('state'), code: returned.searchParams.get('code'), iss: returned.searchParams.get('iss') }),
    );
    await t.db.query(`UPDATE workspaces SET status = $2, payment = $3 WHERE id = $1`, [t.workspaceId, standing.status, standing.payment]);
    try {
      return await around(() => send(call));
    } finally {
      await t.db.query(`UPDATE workspaces SET status = 'active', payment = 'completed' WHERE id = $1`, [t.workspaceId]);
    }
  } finally {
    await adminRequest('DELETE', '/workspace/sso');
  }
}

async function asOwnWorkspaceIn(route: RouteSpec, standing: { status: string; payment: string }): Promise<Response> {
  const call = await baseCall(route);
  await t.db.query(`UPDATE workspaces SET status = $2, payment = $3 WHERE id = $1`, [t.workspaceId, standing.status, standing.payment]);
  try {
    return await send(call);
  } finally {
    await t.db.query(`UPDATE workspaces SET status = 'active', payment = 'completed' WHERE id = $1`, [t.workspaceId]);
  }
}

/**
 * The same request made with the second workspace's credential (key, MCP token or inbound webhook)
 * while that workspace has the given standing; restored afterwards.
 */
async function asOtherWorkspace(route: RouteSpec, standing: { status: string; payment: string }): Promise<Response> {
  const call = await baseCall(route);
  if (schemeOf(route) === 'apiKey') call.headers.authorization = `Bearer ${other.apiKey}`;
  if (schemeOf(route) === 'mcpToken') call.headers.authorization = `Bearer ${otherMcpToken}`;
  if (INBOUND(route)) {
    call.path = route.path.replace('{slug}', 'other-tenant-hook');
    sign(call, 'other-tenant-hook');
  }
  const set = async (value: { status: string; payment: string }) => {
    await t.db.transaction(async (tx) => {
      await tx.query(`UPDATE workspaces SET status = $2, payment = $3 WHERE id = $1`, [other.workspaceId, value.status, value.payment]);
      await invalidateKeyCaches(tx);
    });
  };
  await set(standing);
  try {
    // Through the second workspace's own app: its inbound secrets are sealed with that app's key.
    return await send(call, other);
  } finally {
    await set({ status: 'active', payment: 'completed' });
  }
}

/** An invocation naming `agent` the operation's own way (body, path, or none for the orchestrator), `options.body` merged in. */
function invoke(route: RouteSpec, agent: string | undefined, options: { key?: string; body?: Json } = {}): Promise<Response> {
  const body: Json = { ...ask, ...options.body };
  if (route.operationId === 'createInference' && agent) body.agentSlug = agent;
  const path: Record<string, string> = route.operationId === 'sendAgentMessage' ? { slug: agent ?? 'sales' } : {};
  return baseCall(route, { body, path, ...(options.key ? { key: options.key } : {}) }).then(send);
}

/** The agent an invocation names (the orchestrator itself for sendOrchestratorMessage). */
const targetOf = (route: RouteSpec, department: string) => (route.operationId === 'sendOrchestratorMessage' ? 'orchestrator' : department);

/** Spends the per-IP budget of the route's class (API, admin, MCP, operator) for the call's address. */
async function exhaustAddress(route: RouteSpec, call: Call): Promise<void> {
  const { bucket, limit } = PER_IP_BY_CLASS[route.policy.ipLimitClass];
  const key = `${bucket}:${clientKey(call.headers['x-forwarded-for'])}`;
  for (let i = 0; i < limit; i += 1) await t.services.limiter.hit(key, limit, PER_IP.windowMs);
}

const PROVOKERS: Provoker[] = [
  // 400
  {
    status: 400,
    code: 'invalid_request',
    on: (route) => !INBOUND(route),
    how: 'a malformed path parameter, else a query parameter out of range, else an X-Request-Id of 201 characters',
    async provoke(route) {
      const call = await baseCall(route);
      if (/\{[^}]+\}/.test(route.path)) call.path = pathWith(route, {}, 'malformed');
      else if (route.operationId.startsWith('listRuns')) call.query = { limit: '1000' };
      else if (route.operationId === 'callMcpRpc') call.query = { sessionId: 'not-a-session' };
      else call.headers['x-request-id'] = 'r'.repeat(201);
      return send(call);
    },
  },
  {
    status: 400,
    code: 'invalid_body',
    on: (route) => route.request.body !== undefined && !INBOUND(route),
    how: 'a JSON body that breaks a field rule (a missing required field, or one out of range)',
    async provoke(route) {
      return send(withBody(await baseCall(route), JSON.stringify(INVALID_BODIES[route.operationId] ?? {})));
    },
  },
  {
    status: 400,
    code: 'payload_invalid',
    on: INBOUND,
    how: 'a correctly signed body that is not JSON',
    async provoke(route) {
      return send(sign(withBody(await baseCall(route), '{"event": "lead.created"'), 'crm-leads'));
    },
  },
  // 401
  {
    status: 401,
    code: 'missing_bearer',
    on: (route) => ['apiKey', 'mcpToken', 'operatorToken'].includes(schemeOf(route)),
    how: 'no Authorization header',
    async provoke(route) {
      const call = await baseCall(route);
      delete call.headers.authorization;
      return send(call);
    },
  },
  {
    status: 401,
    code: 'api_key_not_found',
    on: (route) => schemeOf(route) === 'apiKey',
    how: 'a well-formed API key that was never issued',
    provoke: (route) => baseCall(route, { key: 'service_sk_live_Xb7Qm2Lp9Tn4Vr8Kc1Zw5Hd3' }).then(send),
  },
  {
    status: 401,
    code: 'api_key_invalid',
    on: (route) => schemeOf(route) === 'apiKey',
    how: "the workspace key's visible prefix with another secret",
    provoke: (route) => baseCall(route, { key: `${t.apiKey.slice(0, -1)}${t.apiKey.endsWith('A') ? 'B' : 'A'}` }).then(send),
  },
  {
    status: 401,
    code: 'not_authenticated',
    on: (route) => schemeOf(route) === 'adminSession',
    how: 'no session cookie',
    async provoke(route) {
      const call = await baseCall(route);
      delete call.headers.cookie;
      return send(call);
    },
  },
  {
    status: 401,
    code: 'not_authenticated',
    on: (route) => schemeOf(route) === 'mcpToken',
    how: 'a well-formed MCP token that was never issued',
    async provoke(route) {
      const call = await baseCall(route);
      call.headers.authorization = 'Bearer service_mcp_Vb8Nk4R9Qe3Tx7Lm2Hd6Zc1Wq5Jp0Ys3';
      return send(call);
    },
  },
  {
    status: 401,
    code: 'not_authenticated',
    on: (route) => schemeOf(route) === 'apiKey' && route.security.some((s) => s.scheme === 'adminSession'),
    how: 'a session cookie of no session instead of the API key (the route also takes a member session)',
    async provoke(route) {
      const call = await baseCall(route);
      delete call.headers.authorization;
      call.headers.cookie = 'service_session=no-such-session';
      return send(call);
    },
  },
  {
    status: 401,
    code: 'not_authenticated',
    on: (route) => schemeOf(route) === 'operatorToken',
    how: 'an API key where the operator token belongs',
    async provoke(route) {
      const call = await baseCall(route);
      call.headers.authorization = `Bearer ${t.apiKey}`;
      return send(call);
    },
  },
  {
    status: 401,
    code: 'not_authenticated',
    on: (route) => route.operationId === 'acceptInvitation',
    how: "an invitation of an existing account's email, with a wrong password",
    async provoke(route) {
      const token = await invitationFor('member@example.com', other);
      return send(await baseCall(route, { body: { token, password: 'not the password at all' } }), other);
    },
  },
  {
    status: 401,
    code: 'not_authenticated',
    on: (route) => route.operationId === 'redeemAccountReset',
    how: 'a two-step reset redeemed with a wrong current password',
    async provoke(route) {
      const token = await accountResetFor('totp');
      return send(await baseCall(route, { body: { token, password: 'not the current password' } }));
    },
  },
  {
    status: 401,
    code: 'not_authenticated',
    on: (route) => route.operationId === 'login',
    how: 'a wrong password',
    async provoke(route) {
      return send(await baseCall(route, { body: { email: t.admin.email, password: 'not the password', totpCode: '000000' } }));
    },
  },
  {
    status: 401,
    code: 'not_authenticated',
    on: (route) => route.operationId === 'finishSsoSignIn',
    how: 'no service_sso cookie: no sign-in was started in this browser',
    provoke: (route) => baseCall(route).then(send),
  },
  {
    status: 402,
    code: 'payment_not_completed',
    on: (route) => route.operationId === 'finishSsoSignIn',
    how: 'a single sign-on that would make a member while the workspace payment is pending',
    provoke: () => ssoFinish({ status: 'active', payment: 'pending' }),
  },
  {
    status: 403,
    code: 'tenant_forbidden',
    on: (route) => route.operationId === 'finishSsoSignIn',
    how: 'a single sign-on that would make a member while the operator has suspended the workspace',
    provoke: () => ssoFinish({ status: 'suspended', payment: 'completed' }),
  },
  {
    status: 404,
    code: 'not_found',
    on: (route) => ['getSsoSettings', 'removeSsoSettings', 'startSsoSignIn'].includes(route.operationId),
    how: 'a workspace without single sign-on; an email of a domain no workspace signs in',
    provoke: (route) => baseCall(route).then(send),
  },
  {
    status: 401,
    code: 'signature_invalid',
    on: INBOUND,
    how: 'a signature that is not the HMAC of the body',
    async provoke(route) {
      const call = await baseCall(route);
      call.headers['x-service-signature'] = 'a'.repeat(64);
      return send(call);
    },
  },
  // 402
  {
    status: 402,
    code: 'payment_not_completed',
    on: TENANT_CREDENTIAL,
    how: 'a credential of a workspace whose payment is pending (created with --pending-payment)',
    provoke: (route) => asOtherWorkspace(route, { status: 'active', payment: 'pending' }),
  },
  {
    status: 403,
    code: 'tenant_forbidden',
    on: TENANT_CREDENTIAL,
    how: 'a credential of a workspace the operator suspended',
    provoke: (route) => asOtherWorkspace(route, { status: 'suspended', payment: 'completed' }),
  },
  {
    status: 402,
    code: 'payment_not_completed',
    on: STANDING_BOUND_WRITE,
    how: "the owner's session writing while the workspace's payment is pending",
    provoke: (route) => asOwnWorkspaceIn(route, { status: 'active', payment: 'pending' }),
  },
  {
    status: 403,
    code: 'tenant_forbidden',
    on: STANDING_BOUND_WRITE,
    how: "the owner's session writing while the operator has suspended the workspace",
    provoke: (route) => asOwnWorkspaceIn(route, { status: 'suspended', payment: 'completed' }),
  },
  // 403
  {
    status: 403,
    code: 'scope_required',
    on: (route) => schemeOf(route) === 'apiKey',
    how: 'a key whose only scope is one the operation does not accept',
    async provoke(route) {
      const wanted = route.security.flatMap((s) => s.scopes);
      const other = ['departments:read', 'usage:read'].find((scope) => !wanted.includes(scope))!;
      return send(await baseCall(route, { key: await t.keyWith(other) }));
    },
  },
  {
    status: 403,
    code: 'role_forbidden',
    on: (route) => schemeOf(route) === 'adminSession',
    how: 'the session of a member (not an owner or admin)',
    async provoke(route) {
      const call = await baseCall(route);
      call.headers.cookie = await memberSession();
      return send(call);
    },
  },
  {
    status: 403,
    code: 'forbidden',
    on: (route) => schemeOf(route) === 'adminSession',
    how: "the admin's session without X-CSRF-Token",
    async provoke(route) {
      const call = await baseCall(route);
      delete call.headers['x-csrf-token'];
      return send(call);
    },
  },
  {
    status: 403,
    code: 'forbidden',
    on: (route) => schemeOf(route) === 'apiKey' && route.security.some((s) => s.scheme === 'adminSession') && isWrite(route) && !invocation(route),
    how: "a member's session without X-CSRF-Token instead of the API key (the route also takes a session)",
    async provoke(route) {
      const call = await baseCall(route);
      delete call.headers.authorization;
      call.headers.cookie = (await adminSession()).cookie;
      return send(call);
    },
  },
  {
    status: 403,
    code: 'forbidden',
    on: invocation,
    how: 'the alias Concerto, outside the default plan',
    provoke: (route) => invoke(route, undefined, { body: { alias: 'Concerto' } }),
  },
  {
    status: 403,
    code: 'agent_disabled',
    on: invocation,
    how: 'the agent the operation names is paused',
    async provoke(route) {
      const agent = targetOf(route, 'finance');
      await pauseAgent(t.db, t.clock, t.workspaceId, agent, 'Paused by an admin during the month-end close.');
      try {
        return await invoke(route, agent);
      } finally {
        await resumeAgent(t.db, t.workspaceId, agent);
      }
    },
  },
  {
    status: 403,
    code: 'agent_unknown',
    on: invocation,
    how: 'an agent slug that is not in the catalog',
    provoke: (route) => invoke(route, 'procurement'),
  },
  {
    status: 403,
    code: 'agent_not_in_plan',
    on: invocation,
    how: 'the starter plan, and an agent it does not include',
    async provoke(route) {
      await setPlan(t.db, t.clock, t.workspaceId, 'starter');
      try {
        return await invoke(route, targetOf(route, 'legal'));
      } finally {
        await setPlan(t.db, t.clock, t.workspaceId, 'growth');
      }
    },
  },
  {
    status: 403,
    code: 'agent_not_allowed',
    on: invocation,
    how: 'a key bound to the sales agent naming the hr agent',
    provoke: async (route) => invoke(route, targetOf(route, 'hr'), { key: await t.keyWith('orchestrator:invoke:agent:sales') }),
  },
  {
    status: 403,
    code: 'not_a_member',
    on: invocation,
    how: "a caller that is not a member of the agent's tenant",
    neverSent: "a key belongs to its workspace and can only name that workspace's agents",
  },
  {
    status: 402,
    code: 'payment_not_completed',
    on: TOKEN_LINK,
    how: "an owner's invitation or reset link used while the workspace's payment is pending",
    provoke: async (route) => linkUsedIn(route, { status: 'active', payment: 'pending' }),
  },
  {
    status: 403,
    code: 'tenant_forbidden',
    on: TOKEN_LINK,
    how: "an owner's invitation or reset link used while the operator has suspended the workspace",
    provoke: async (route) => linkUsedIn(route, { status: 'suspended', payment: 'completed' }),
  },
  {
    status: 403,
    code: 'forbidden',
    on: TOKEN_LINK,
    how: 'an invitation or reset link whose maker is no longer an owner or admin of the workspace',
    async provoke(route) {
      const call = await baseCall(route, { body: await linkBody(route) });
      const [owner] = await t.db.query<{ id: string }>(`SELECT id FROM users WHERE email = $1`, [t.admin.email]);
      await t.db.query(`UPDATE memberships SET role = 'member' WHERE workspace_id = $1 AND user_id = $2`, [t.workspaceId, owner!.id]);
      try {
        return await send(call);
      } finally {
        await t.db.query(`UPDATE memberships SET role = 'owner' WHERE workspace_id = $1 AND user_id = $2`, [t.workspaceId, owner!.id]);
      }
    },
  },
  {
    status: 403,
    code: 'tenant_forbidden',
    on: (route) => route.operationId === 'selectWorkspace',
    how: 'a workspace the user is not a member of',
    provoke: async (route) => send(await baseCall(route, { body: { workspaceId: other.workspaceId } })),
  },
  // 404
  {
    status: 404,
    code: 'not_found',
    on: (route) => ['previewInvitation', 'acceptInvitation', 'previewAccountReset', 'redeemAccountReset', 'createUserReset'].includes(route.operationId),
    how: 'a well-formed invitation or reset token that was never issued; an email no account has',
    provoke: async (route) => send(await baseCall(route)),
  },
  {
    status: 404,
    code: 'not_found',
    on: (route) => ['postMcpMessage', 'endMcpSession'].includes(route.operationId),
    how: 'an Mcp-Session-Id of no session this instance holds',
    async provoke(route) {
      const call = await baseCall(route, { body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
      call.headers['mcp-session-id'] = `mcs_${'A'.repeat(32)}`;
      return send(call);
    },
  },
  {
    status: 404,
    code: 'member_not_found',
    on: (route) => /\{user_id\}/.test(route.path),
    how: 'a well-formed user id that is no member of the workspace',
    provoke: async (route) => send(await baseCall(route)),
  },
  {
    status: 404,
    code: 'agent_not_found',
    on: (route) => route.path.startsWith('/agents/{slug}/') || route.path.startsWith('/operator/workspaces/{workspace_id}/agents/{slug}/'),
    how: "a slug that names no agent of the catalog (for the operator's route, in the test app's workspace)",
    provoke: async (route) => send(await baseCall(route, { path: { slug: 'travel', workspace_id: t.workspaceId } })),
  },
  {
    status: 404,
    code: 'member_not_found',
    on: (route) => route.operationId === 'decideApprovalOfWorkspace',
    how: "the operator's decision recorded for an email of no owner or admin of the test app's workspace",
    provoke: async (route) =>
      send(await baseCall(route, { path: { workspace_id: t.workspaceId }, body: { decision: 'approved', decidedBy: 'nobody-decides@example.com' } })),
  },
  // 410
  {
    status: 410,
    code: 'expired',
    on: (route) => ['previewInvitation', 'acceptInvitation'].includes(route.operationId),
    how: 'an invitation that was already accepted (its reason: used)',
    async provoke(route) {
      const token = await invitationFor(`once-${addresses}@example.com`, t);
      const accept = (body: Record<string, unknown>) =>
        t.app.request('/invitations/accept', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': nextAddress() },
          body: JSON.stringify(body),
        });
      const accepted = await completeTwoStep(accept, t.clock, { token, password: 'a long enough password' });
      expect(accepted.status).toBe(200);
      const body = route.operationId === 'acceptInvitation' ? { token, password: 'a long enough password' } : { token };
      return send(await baseCall(route, { body }));
    },
  },
  {
    status: 410,
    code: 'expired',
    on: (route) => ['previewAccountReset', 'redeemAccountReset'].includes(route.operationId),
    how: 'a reset that was already redeemed',
    async provoke(route) {
      const token = await accountResetFor('password');
      const redeemed = await t.app.request('/account-resets/redeem', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': nextAddress() },
        body: JSON.stringify({ token, password: 'a long enough new password' }),
      });
      expect(redeemed.status).toBe(200);
      const body = route.operationId === 'redeemAccountReset' ? { token, password: 'a long enough new password' } : { token };
      return send(await baseCall(route, { body }));
    },
  },
  {
    status: 404,
    code: 'not_found',
    on: (route) => ENTITY_PATH.test(route.path) || route.policy.privateBeta,
    how: 'a well-formed id that names nothing, else the same request to the app in private beta',
    async provoke(route) {
      const call = await baseCall(route);
      return ENTITY_PATH.test(route.path) ? send(call) : send(call, beta);
    },
  },
  {
    status: 404,
    code: 'webhook_not_found',
    on: INBOUND,
    how: 'a slug no webhook has',
    async provoke(route) {
      return send(await baseCall({ ...route, path: route.path.replace('{slug}', 'no-such-hook') }));
    },
  },
  {
    status: 404,
    code: 'webhook_unavailable',
    on: INBOUND,
    how: 'a paused webhook',
    async provoke(route) {
      return send(sign(await baseCall({ ...route, path: route.path.replace('{slug}', 'paused-hook') }), 'paused-hook'));
    },
  },
  // 413
  {
    status: 413,
    code: 'payload_too_large',
    on: (route) => route.request.body !== undefined,
    how: "a body one byte over the operation's cap",
    async provoke(route) {
      const call = await baseCall(route);
      const cap = route.request.body!.maxBytes;
      return send(withBody(call, `{"x":"${'a'.repeat(cap - 7)}"}`));
    },
  },
  // 429
  {
    status: 429,
    code: 'rate_limit_exceeded',
    on: (route) => !INBOUND(route),
    how: "one request past the per-IP budget of the route's class (60, 120 admin, 300 MCP, 120 operator) from one address",
    async provoke(route) {
      const call = await baseCall(route);
      await exhaustAddress(route, call);
      return send(call);
    },
  },
  {
    status: 429,
    code: 'too_many_attempts',
    on: (route) => route.operationId === 'login',
    how: `${LOGIN_LIMITS.emailAndSource} wrong passwords for the email from one address, then another login`,
    async provoke(route) {
      const call = await baseCall(route, { body: { email: t.admin.email, password: 'not the password', totpCode: '000000' } });
      for (let i = 0; i < LOGIN_LIMITS.emailAndSource; i += 1) expect((await send(call)).status).toBe(401);
      return send(call);
    },
  },
  {
    status: 429,
    code: 'quota_exceeded',
    on: invocation,
    how: "the period's consumption at 120 % of the quota (hard stop)",
    async provoke(route) {
      const period = periodOf(t.clock.now());
      const [before] = await t.db.query<{ consumed: number }>(
        `SELECT consumed_stu::float8 AS consumed FROM usage_periods WHERE workspace_id = $1 AND period = $2`,
        [t.workspaceId, period],
      );
      // The default plan's quota is 10 M STU with no rollover: 12 M is its hard stop.
      await t.db.query(
        `INSERT INTO usage_periods (workspace_id, period, rollover_stu, consumed_stu, created_at) VALUES ($1, $2, 0, 12000000, $3)
         ON CONFLICT (workspace_id, period) DO UPDATE SET consumed_stu = EXCLUDED.consumed_stu`,
        [t.workspaceId, period, t.clock.now()],
      );
      try {
        return await invoke(route, targetOf(route, 'sales'));
      } finally {
        await t.db.query(`UPDATE usage_periods SET consumed_stu = $3 WHERE workspace_id = $1 AND period = $2`, [
          t.workspaceId,
          period,
          Number(before?.consumed ?? 0),
        ]);
      }
    },
  },
  {
    status: 429,
    code: 'kill_switch',
    on: invocation,
    how: 'the manual spending kill switch on',
    async provoke(route) {
      await setManualKillSwitch(t.db, t.workspaceId, true, t.clock.now());
      try {
        return await invoke(route, targetOf(route, 'sales'));
      } finally {
        await setManualKillSwitch(t.db, t.workspaceId, false, t.clock.now());
      }
    },
  },
  {
    status: 429,
    code: 'budget_reserved',
    on: invocation,
    how: "the hour window's room all held by runs in progress (reservations, nothing charged)",
    async provoke(route) {
      const hour = killSwitchWindows(t.clock.now()).hour.start;
      await t.db.query(
        `INSERT INTO usage_windows (workspace_id, scope, window_start, reserved_stu) VALUES ($1, 'hour', $2, $3)
         ON CONFLICT (workspace_id, scope, window_start) DO UPDATE SET reserved_stu = EXCLUDED.reserved_stu`,
        [t.workspaceId, hour, KILL_SWITCH_LIMITS.hour],
      );
      try {
        return await invoke(route, targetOf(route, 'sales'));
      } finally {
        await t.db.query(`UPDATE usage_windows SET reserved_stu = 0 WHERE workspace_id = $1 AND scope = 'hour' AND window_start = $2`, [t.workspaceId, hour]);
      }
    },
  },
  {
    status: 429,
    code: 'rate_limited',
    on: INBOUND,
    how: 'a second event within the minute to a webhook that allows one per minute and address',
    async provoke(route) {
      const call = sign(await baseCall({ ...route, path: route.path.replace('{slug}', 'limited-hook') }), 'limited-hook');
      await send(call);
      return send(call);
    },
  },
  // 5xx
  {
    status: 500,
    code: 'internal_error',
    on: (route) => route.policy.operations,
    how: 'a crash of a health route',
    neverSent:
      'the health routes catch every failure of what they check (a store that throws is 503 on /readyz, and /healthz reads nothing); 500 is documented for a crash only',
  },
  {
    status: 500,
    code: 'internal_error',
    on: (route) => route.operationId === 'finishSsoSignIn',
    how: 'the store throws an unexpected error once the provider returned (the flow cookie read, before any store)',
    provoke: () => ssoFinish({ status: 'active', payment: 'completed' }, (f) => faults.failing(new Error('unexpected failure inside the store'), f)),
  },
  {
    status: 503,
    code: 'service_unavailable',
    on: (route) => route.operationId === 'finishSsoSignIn',
    how: 'the store cannot be reached once the provider returned',
    provoke: () => ssoFinish({ status: 'active', payment: 'completed' }, (f) => faults.failing(new Error('Connection terminated unexpectedly'), f)),
  },
  {
    status: 500,
    code: 'internal_error',
    on: (route) => !route.policy.operations && route.operationId !== 'finishSsoSignIn',
    how: 'the store throws an unexpected error',
    async provoke(route) {
      const call = await baseCall(route);
      return faults.failing(new Error('unexpected failure inside the store'), () => send(call));
    },
  },
  {
    status: 503,
    code: 'service_unavailable',
    on: (route) => route.operationId !== 'finishSsoSignIn',
    how: 'the store cannot be reached',
    async provoke(route) {
      const call = await baseCall(route);
      return faults.failing(new Error('Connection terminated unexpectedly'), () => send(call));
    },
  },
];

function provokerOf(c: ExampleCase): Provoker[] {
  return PROVOKERS.filter((p) => p.status === c.status && p.code === c.example.error && (p.on?.(c.route) ?? true));
}

const label = (c: ExampleCase) => `${c.operationId} ${c.status} ${c.name}`;

// ── The checks ────────────────────────────────────────────────────────────────────────────────

describe('error examples of the contract', () => {
  it('are many, and each is covered by exactly one provoker', () => {
    expect(cases.length).toBeGreaterThan(200);
    const uncovered = cases.filter((c) => provokerOf(c).length !== 1).map((c) => `${label(c)} (error ${c.example.error}): ${provokerOf(c).length} provokers`);
    expect(uncovered.join('\n'), 'an example the server cannot be made to answer on this operation, or a provoker to add').toBe('');
  });

  it('document a Retry-After of its own for every example that waits: retryAfterSec, or one named after the example', () => {
    const wrong = cases
      .filter((c) => c.headers['Retry-After'] && c.status === 429)
      .filter((c) =>
        typeof c.example.retryAfterSec === 'number'
          ? documentedRetryAfter(c) !== c.example.retryAfterSec
          : (c.headers['Retry-After']?.examples as Json | undefined)?.[c.name] === undefined,
      )
      .map((c) => `${label(c)}: Retry-After ${String(documentedRetryAfter(c))}, retryAfterSec ${String(c.example.retryAfterSec)}`);
    expect(wrong.join('\n')).toBe('');
  });

  for (const c of cases) {
    const [provoker] = provokerOf(c);
    if (!provoker) continue; // reported by the coverage test above
    if (provoker.neverSent) {
      it.todo(`${label(c)}: ${provoker.neverSent}`);
      continue;
    }
    it(`${label(c)}: ${provoker.how}`, async () => {
      const res = await provoker.provoke!(c.route);
      const text = await res.text();
      const body = JSON.parse(text) as Json;
      expect({ status: res.status, error: body.error }, text).toEqual({ status: c.status, error: c.example.error });
      const fields = `body fields: server ${text}, example ${JSON.stringify(c.example)}`;
      expect(Object.keys(body).sort(), fields).toEqual(Object.keys(c.example).sort());
      const validate = compileResponseValidator(bundle, c.op, String(c.status));
      expect(validate(body), JSON.stringify(validate.errors)).toBe(true);

      for (const name of Object.keys(c.headers)) expect(res.headers.get(name), `documented header ${name}`).not.toBeNull();
      const retryAfter = res.headers.get('retry-after');
      if (!c.headers['Retry-After']) expect(retryAfter, 'Retry-After, not documented for this response').toBeNull();
      if (typeof body.retryAfterSec === 'number') expect(retryAfter).toBe(String(body.retryAfterSec));
      if (typeof body.resetAt === 'string') {
        // A quota error is waited out until the reset: Retry-After counts the seconds to resetAt.
        expect(Number(retryAfter)).toBe(Math.ceil((Date.parse(body.resetAt) - t.clock.now().getTime()) / 1000));
      }
    });
  }
});
