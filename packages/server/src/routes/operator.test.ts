/**
 * The operator API and what it controls: its own credential (stored token or OPERATOR_TOKEN), a
 * second workspace created beside the first, a pending payment (402 until recorded), a suspension
 * (403 tenant_forbidden on keys, MCP tokens and inbound webhooks; nothing deleted), the
 * per-workspace ceiling in the headers and in force, the quota override, and deletion with every row.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  zApiKey,
  zApiKeyCreated,
  zApiKeyList,
  zKillSwitches,
  zOperatorWorkspace,
  zOperatorWorkspaceList,
  zWorkspaceAgent,
  zWorkspaceAgentList,
  zWorkspaceCreated,
  zWorkspaceUserCreated,
  zWorkspaceUserList,
} from '../../../../generated/zod.ts';
import { createOperatorToken } from '../domain/operators/index.ts';
import { totpCode } from '../domain/sessions/totp.ts';
import { signInboundBody } from '../domain/webhooks/inbound-signature.ts';
import { createTestApp, type TestApp } from '@service/testing/app';

const ENV_TOKEN = 'operator-token-from-the-environment-0123456789';
let t: TestApp;
let stored: string;

beforeAll(async () => {
  t = await createTestApp({ deps: { operatorToken: ENV_TOKEN, config: { trustProxy: 1 } } });
  stored = await createOperatorToken(t.db, t.clock);
});
afterAll(async () => {
  await t.close();
});

function operator(method: string, path: string, body?: unknown, token = stored) {
  return t.app.request(path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

function withKey(key: string, method: string, path: string, body?: unknown) {
  return t.app.request(path, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function newWorkspace(body: Record<string, unknown> = {}) {
  const res = await operator('POST', '/operator/workspaces', { name: 'Customer', ...body });
  expect(res.status).toBe(201);
  return zWorkspaceCreated.parse(await res.json());
}

const ask = { alias: 'Prelude', agentSlug: 'sales', messages: [{ role: 'user', content: 'Hello' }] };

describe('the operator credential', () => {
  it('is required: none is missing_bearer, an API key or a made-up token is not_authenticated', async () => {
    const none = await t.app.request('/operator/workspaces');
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ error: 'missing_bearer' });
    for (const token of [t.apiKey, `service_op_${'a'.repeat(32)}`, `${ENV_TOKEN}x`]) {
      const res = await operator('GET', '/operator/workspaces', undefined, token);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: 'not_authenticated', message: 'Unknown operator token.' });
    }
  });

  it('is a stored token (only its hash is kept) or OPERATOR_TOKEN', async () => {
    const rows = await t.db.query<{ token_hash: string }>(`SELECT token_hash FROM operator_tokens`);
    expect(JSON.stringify(rows)).not.toContain(stored);
    for (const token of [stored, ENV_TOKEN]) expect((await operator('GET', '/operator/workspaces', undefined, token)).status).toBe(200);
  });

  it('an operator token is not an API key', async () => {
    const res = await withKey(stored, 'GET', '/usage/current');
    expect(res.status).toBe(401);
  });
});

describe('workspaces', () => {
  it('a second workspace is served beside the first, each key seeing only its own', async () => {
    const created = await newWorkspace({ name: 'Second', plan: 'starter', adminEmail: 'owner@second.example' });
    expect(created.workspace).toMatchObject({
      id: created.workspaceId,
      name: 'Second',
      status: 'active',
      payment: 'completed',
      plan: 'starter',
      rpmLimit: 600,
    });
    expect(created.workspace.quotaStu).toBe(2_000_000);
    expect(created.admin.email).toBe('owner@second.example');

    const list = zOperatorWorkspaceList.parse(await (await operator('GET', '/operator/workspaces')).json());
    expect(list.data.map((w) => w.id)).toEqual(expect.arrayContaining([t.workspaceId, created.workspaceId]));

    // The new key works, on its own workspace: a run it makes is not in the first workspace's list.
    const run = await withKey(created.apiKey, 'POST', '/v1/inference', ask);
    expect(run.status).toBe(200);
    const { runId } = (await run.json()) as { runId: string };
    expect((await withKey(created.apiKey, 'GET', `/runs/${runId}`)).status).toBe(200);
    const other = await withKey(t.apiKey, 'GET', `/runs/${runId}`);
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({ error: 'not_found' });
  });

  it('an admin email already in use is invalid_body, and nothing is created', async () => {
    const before = zOperatorWorkspaceList.parse(await (await operator('GET', '/operator/workspaces')).json()).data.length;
    const res = await operator('POST', '/operator/workspaces', { name: 'Clash', adminEmail: t.admin.email });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_body' });
    expect(zOperatorWorkspaceList.parse(await (await operator('GET', '/operator/workspaces')).json()).data).toHaveLength(before);
  });

  it('validation follows the contract exactly: an empty update (minProperties 1) and a limit that is not plain decimal are 400', async () => {
    const empty = await operator('PATCH', `/operator/workspaces/${t.workspaceId}`, {});
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({ error: 'invalid_body' });
    for (const limit of ['0x10', '%205', '1e1', '+5']) {
      const res = await withKey(t.apiKey, 'GET', `/v1/runs?limit=${limit}`);
      expect(res.status, limit).toBe(400);
      expect(await res.json()).toMatchObject({ error: 'invalid_request' });
    }
    expect((await withKey(t.apiKey, 'GET', '/v1/runs?limit=5')).status).toBe(200);
  });

  it('an unknown workspace is not_found on get, update and delete', async () => {
    const id = 'wksp_AAAAAAAAAAAAAAAAAAAA';
    for (const [method, body] of [['GET'], ['PATCH', { rpmLimit: 10 }], ['DELETE']] as const) {
      const res = await operator(method, `/operator/workspaces/${id}`, body);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: 'not_found' });
    }
  });

  it('pending payment: 402 payment_not_completed on every key route until the payment is recorded', async () => {
    const created = await newWorkspace({ pendingPayment: true });
    expect(created.workspace.payment).toBe('pending');
    for (const [method, path, body] of [
      ['GET', '/usage/current'],
      ['GET', '/runs'],
      ['POST', '/v1/inference', ask],
      ['GET', '/v1/agents'],
    ] as const) {
      const res = await withKey(created.apiKey, method, path, body);
      expect(res.status, path).toBe(402);
      expect(await res.json()).toMatchObject({ error: 'payment_not_completed', message: 'The payment of this workspace is not completed.' });
    }
    const paid = await operator('PATCH', `/operator/workspaces/${created.workspaceId}`, { payment: 'completed' });
    expect(zOperatorWorkspace.parse(await paid.json()).payment).toBe('completed');
    expect((await withKey(created.apiKey, 'GET', '/usage/current')).status).toBe(200);
  });

  it('suspended: 403 tenant_forbidden on keys, MCP tokens and inbound webhooks; resuming restores everything', async () => {
    const created = await newWorkspace();
    const token = await withKey(created.apiKey, 'POST', '/v1/mcp/tenant/tokens', {});
    expect(token.status).toBe(201);
    const { token: mcpToken } = (await token.json()) as { token: string };
    const done = await withKey(created.apiKey, 'POST', '/v1/inference', ask);
    const { runId } = (await done.json()) as { runId: string };
    // An inbound webhook of that workspace, created by its admin.
    const login = await signIn(created.admin);
    const hook = await t.app.request('/inbound-webhooks', {
      method: 'POST',
      headers: { cookie: login.cookie, 'x-csrf-token': login.csrfToken, 'content-type': 'application/json' },
      body: JSON.stringify({ slug: `crm-${created.workspaceId.slice(5, 13).toLowerCase()}`, agentSlug: 'sales' }),
    });
    expect(hook.status).toBe(201);
    const { slug, secret } = (await hook.json()) as { slug: string; secret: string };

    const suspended = await operator('PATCH', `/operator/workspaces/${created.workspaceId}`, { status: 'suspended' });
    expect(zOperatorWorkspace.parse(await suspended.json()).status).toBe('suspended');

    const byKey = await withKey(created.apiKey, 'GET', `/runs/${runId}`);
    expect(byKey.status).toBe(403);
    expect(await byKey.json()).toMatchObject({ error: 'tenant_forbidden', message: 'This workspace is suspended.' });
    const byToken = await t.app.request('/v1/mcp/tenant/rpc', {
      method: 'POST',
      headers: { authorization: `Bearer ${mcpToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(byToken.status).toBe(403);
    expect(await byToken.json()).toMatchObject({ error: 'tenant_forbidden' });
    const raw = JSON.stringify({ event: 'lead', id: 'evt-1' });
    const inbound = await t.app.request(`/webhooks/inbound/${slug}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-signature': signInboundBody(raw, secret, 'sha256') },
      body: raw,
    });
    expect(inbound.status).toBe(403);
    expect(await inbound.json()).toMatchObject({ error: 'tenant_forbidden' });

    // Nothing was deleted: resuming gives everything back as it was.
    await operator('PATCH', `/operator/workspaces/${created.workspaceId}`, { status: 'active' });
    const again = await withKey(created.apiKey, 'GET', `/runs/${runId}`);
    expect(again.status).toBe(200);
  });

  it('the ceiling: a workspace raised to 5000 requests a minute admits more than 600, and its headers say 5000 when it binds', async () => {
    const created = await newWorkspace();
    const agents = (ip: string) => t.app.request('/v1/agents', { headers: { authorization: `Bearer ${created.apiKey}`, 'x-forwarded-for': ip } });
    // The headers show the tighter limit: a fresh address's 60 a minute before the workspace's 600.
    expect((await agents('192.0.2.1')).headers.get('x-ratelimit-limit')).toBe('60');
    await operator('PATCH', `/operator/workspaces/${created.workspaceId}`, { rpmLimit: 5000 });
    let admitted = 0;
    for (let i = 0; i < 650; i += 1) {
      // Spread over addresses: the per-IP limit (60 a minute) is not what this measures.
      if ((await agents(`198.51.100.${i % 250}`)).status === 200) admitted += 1;
    }
    expect(admitted).toBe(650);
    // Nearly the whole ceiling used (the limiter's own counter, as 4,300 more requests would leave it):
    // now the workspace's limit is the tighter one, and the headers name it.
    for (let i = 0; i < 4300; i += 1) await t.services.limiter.hit(`wksp:${created.workspaceId}`, 5000, 60_000);
    const near = await agents('203.0.113.77');
    expect(near.status).toBe(200);
    expect([near.headers.get('x-ratelimit-limit'), near.headers.get('x-ratelimit-remaining')]).toEqual(['5000', '48']);
    const past = await Promise.all(Array.from({ length: 60 }, (_, i) => agents(`203.0.113.${100 + i}`)));
    expect(past.filter((r) => r.status === 429)).toHaveLength(12);
  });

  it("the ceiling holds for the workspace's sessions too: a session sees the raised limit when the workspace binds", async () => {
    // The panel's session shares the workspace's counter with its keys, so it must carry the same ceiling.
    await operator('PATCH', `/operator/workspaces/${t.workspaceId}`, { rpmLimit: 5000 });
    const { cookie } = await t.login();
    for (let i = 0; i < 4960; i += 1) await t.services.limiter.hit(`wksp:${t.workspaceId}`, 5000, 60_000);
    const res = await t.app.request('/usage/current', { headers: { cookie, 'x-forwarded-for': '203.0.113.250' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('5000');
    await operator('PATCH', `/operator/workspaces/${t.workspaceId}`, { rpmLimit: 600 });
  });

  it('the quota override replaces the plan quota in usage, and null returns to it', async () => {
    const created = await newWorkspace({ plan: 'starter' });
    const set = zOperatorWorkspace.parse(await (await operator('PATCH', `/operator/workspaces/${created.workspaceId}`, { quotaOverride: 123_456 })).json());
    expect(set).toMatchObject({ plan: 'starter', quotaStu: 123_456, quotaOverride: 123_456 });
    const usage = (await (await withKey(created.apiKey, 'GET', '/usage/current')).json()) as { quotaStu: number };
    expect(usage.quotaStu).toBe(123_456);
    const back = zOperatorWorkspace.parse(await (await operator('PATCH', `/operator/workspaces/${created.workspaceId}`, { quotaOverride: null })).json());
    expect(back).toMatchObject({ quotaStu: 2_000_000, quotaOverride: null });
  });

  it('deleting removes the workspace and every row of it; its key is refused at once', async () => {
    const created = await newWorkspace();
    expect((await withKey(created.apiKey, 'POST', '/v1/inference', ask)).status).toBe(200);
    const res = await operator('DELETE', `/operator/workspaces/${created.workspaceId}`);
    expect(res.status).toBe(204);
    expect((await withKey(created.apiKey, 'GET', '/usage/current')).status).toBe(401);
    const tables = await t.db.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.columns WHERE column_name = 'workspace_id' AND table_schema = current_schema()`,
    );
    expect(tables.length).toBeGreaterThan(10);
    for (const { table_name } of tables) {
      const [row] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table_name} WHERE workspace_id = $1`, [created.workspaceId]);
      expect(row!.n, table_name).toBe(0);
    }
    expect((await operator('GET', `/operator/workspaces/${created.workspaceId}`)).status).toBe(404);
  });
});

async function signIn(admin: { email: string; password: string; totpSecret: string }) {
  t.clock.advance(30_000);
  const res = await t.app.request('/auth/login', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: admin.email, password: admin.password, totpCode: totpCode(admin.totpSecret, t.clock.now()) }),
  });
  expect(res.status).toBe(200);
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
  const { csrfToken } = (await res.json()) as { csrfToken: string };
  return { cookie, csrfToken };
}

describe("a workspace's keys and kill switches, by the operator", () => {
  it('lists, creates, rotates and revokes the keys of the workspace named in the path, its audit naming the operator', async () => {
    const b = await newWorkspace({ name: 'Keys by the operator' });
    const base = `/operator/workspaces/${b.workspaceId}/api-keys`;
    const listed = zApiKeyList.parse(await (await operator('GET', base)).json());
    expect(listed.data).toHaveLength(1);

    const created = await operator('POST', base, { name: 'reporting', scopes: ['usage:read'], expiresInDays: 30 });
    expect(created.status).toBe(201);
    const key = zApiKeyCreated.parse(await created.json());
    expect((await withKey(key.secret, 'GET', '/usage/current')).status).toBe(200);
    const events = await t.db.query<{ actor_type: string; action: string }>(
      `SELECT actor_type, action FROM audit_events WHERE workspace_id = $1 AND target_id = $2`,
      [b.workspaceId, key.id],
    );
    expect(events).toEqual([{ actor_type: 'operator', action: 'key.created' }]);

    const rotated = await operator('POST', `${base}/${key.id}/rotate`);
    expect(rotated.status).toBe(201);
    const next = zApiKeyCreated.parse(await rotated.json());
    expect((await withKey(key.secret, 'GET', '/usage/current')).status).toBe(401);
    expect((await withKey(next.secret, 'GET', '/usage/current')).status).toBe(200);

    const revoked = await operator('DELETE', `${base}/${next.id}`);
    expect(revoked.status).toBe(200);
    expect(zApiKey.parse(await revoked.json())).toMatchObject({ id: next.id, status: 'revoked' });
    expect((await withKey(next.secret, 'GET', '/usage/current')).status).toBe(401);
  });

  it('turns the manual kill switch of the named workspace on and off; the other workspace keeps invoking', async () => {
    const b = await newWorkspace({ name: 'Switch by the operator' });
    const c = await newWorkspace({ name: 'Switch left alone' });
    const on = await operator('PUT', `/operator/workspaces/${b.workspaceId}/kill-switches/manual`, { engaged: true, reason: 'Operator stop' });
    expect(on.status).toBe(200);
    expect(zKillSwitches.parse(await on.json()).manual).toMatchObject({ engaged: true, reason: 'Operator stop' });
    expect((await withKey(b.apiKey, 'POST', '/v1/inference', ask)).status).toBe(429);
    expect((await withKey(c.apiKey, 'POST', '/v1/inference', ask)).status).toBe(200);
    const read = zKillSwitches.parse(await (await operator('GET', `/operator/workspaces/${b.workspaceId}/kill-switches`)).json());
    expect(read.manual.engaged).toBe(true);
    const off = await operator('PUT', `/operator/workspaces/${b.workspaceId}/kill-switches/manual`, { engaged: false });
    expect(zKillSwitches.parse(await off.json()).manual.engaged).toBe(false);
    expect((await withKey(b.apiKey, 'POST', '/v1/inference', ask)).status).toBe(200);
  });

  it('pauses and resumes an agent of the named workspace only, its audit naming the operator', async () => {
    const b = await newWorkspace({ name: 'Agents by the operator' });
    const c = await newWorkspace({ name: 'Agents left alone' });
    const paused = await operator('POST', `/operator/workspaces/${b.workspaceId}/agents/sales/pause`, { reason: 'Operator pause' });
    expect(paused.status).toBe(200);
    expect(zWorkspaceAgent.parse(await paused.json())).toMatchObject({ slug: 'sales', state: 'paused', pausedReason: 'Operator pause' });
    expect((await withKey(b.apiKey, 'POST', '/v1/inference', ask)).status).toBe(403);
    expect((await withKey(c.apiKey, 'POST', '/v1/inference', ask)).status).toBe(200);
    const listed = zWorkspaceAgentList.parse(await (await operator('GET', `/operator/workspaces/${b.workspaceId}/agents`)).json());
    expect(listed.data.find((a) => a.slug === 'sales')).toMatchObject({ state: 'paused' });
    const events = await t.db.query<{ actor_type: string }>(`SELECT actor_type FROM audit_events WHERE workspace_id = $1 AND action LIKE 'agent.%'`, [
      b.workspaceId,
    ]);
    expect(events).toEqual([{ actor_type: 'operator' }]);
    const resumed = await operator('POST', `/operator/workspaces/${b.workspaceId}/agents/sales/resume`);
    expect(zWorkspaceAgent.parse(await resumed.json())).toMatchObject({ state: 'active' });
    expect((await withKey(b.apiKey, 'POST', '/v1/inference', ask)).status).toBe(200);
    expect((await operator('POST', `/operator/workspaces/wksp_AAAAAAAAAAAAAAAAAAAA/agents/sales/pause`, { reason: 'x' })).status).toBe(404);
  });

  it('answers 404 not_found for an unknown workspace, and for a key of another workspace; tenants get 401', async () => {
    const b = await newWorkspace({ name: 'Not found' });
    const otherKey = zApiKeyList.parse(await (await operator('GET', `/operator/workspaces/${b.workspaceId}/api-keys`)).json()).data[0]!.id;
    const unknown = 'wksp_AAAAAAAAAAAAAAAAAAAA';
    for (const [method, path, body] of [
      ['GET', `/operator/workspaces/${unknown}/api-keys`],
      ['POST', `/operator/workspaces/${unknown}/api-keys`, { name: 'x', scopes: ['usage:read'] }],
      ['DELETE', `/operator/workspaces/${unknown}/api-keys/${otherKey}`],
      ['POST', `/operator/workspaces/${unknown}/api-keys/${otherKey}/rotate`],
      ['GET', `/operator/workspaces/${unknown}/kill-switches`],
      ['PUT', `/operator/workspaces/${unknown}/kill-switches/manual`, { engaged: true }],
    ] as const) {
      const res = await operator(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(await res.json()).toMatchObject({ error: 'not_found' });
    }
    // B's key through the first workspace's path: not found there, and still active.
    const [first] = zOperatorWorkspaceList.parse(await (await operator('GET', '/operator/workspaces')).json()).data;
    expect((await operator('DELETE', `/operator/workspaces/${first!.id}/api-keys/${otherKey}`)).status).toBe(404);
    expect((await withKey(b.apiKey, 'GET', '/usage/current')).status).toBe(200);
    expect((await withKey(t.apiKey, 'GET', `/operator/workspaces/${b.workspaceId}/api-keys`)).status).toBe(401);
  });
});

describe("a workspace's users, webhooks and approvals, by the operator", () => {
  it('adds a user to the named workspace only, the password and TOTP secret in that answer only, audited member.added', async () => {
    const b = await newWorkspace({ name: 'Users by the operator' });
    const c = await newWorkspace({ name: 'Users left alone' });
    const res = await operator('POST', `/operator/workspaces/${b.workspaceId}/users`, { email: 'Kim@Users.example', role: 'member' });
    expect(res.status).toBe(201);
    const added = zWorkspaceUserCreated.parse(await res.json());
    expect(added).toMatchObject({ email: 'kim@users.example', role: 'member', password: expect.stringMatching(/^[0-9A-Za-z]{24}$/) });
    expect(added.totpSecret).toMatch(/^[A-Z2-7]{32}$/);
    const listed = await operator('GET', `/operator/workspaces/${b.workspaceId}/users`);
    const users = zWorkspaceUserList.parse(await listed.json());
    expect(users.data.find((u) => u.id === added.id)).toEqual({ id: added.id, email: 'kim@users.example', role: 'member', twoFactorEnabled: true });
    expect(JSON.stringify(users)).not.toContain(added.password);
    const others = zWorkspaceUserList.parse(await (await operator('GET', `/operator/workspaces/${c.workspaceId}/users`)).json());
    expect(others.data.map((u) => u.email)).not.toContain('kim@users.example');
    const events = await t.db.query<{ workspace_id: string; actor_type: string; target_id: string; details: unknown }>(
      `SELECT workspace_id, actor_type, target_id, details FROM audit_events WHERE action = 'member.added'`,
    );
    expect(events).toEqual([{ workspace_id: b.workspaceId, actor_type: 'operator', target_id: added.id, details: { role: 'member', twoFactorEnabled: true } }]);
    // Bodies the contract refuses, an email in use, an unknown workspace.
    for (const body of [{ email: 'not an email' }, { email: 'lee@users.example', password: 'short' }, { email: 'lee@users.example', role: 'boss' }]) {
      const refused = await operator('POST', `/operator/workspaces/${b.workspaceId}/users`, body);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ error: 'invalid_body' });
    }
    const taken = await operator('POST', `/operator/workspaces/${c.workspaceId}/users`, { email: 'kim@users.example' });
    expect(taken.status).toBe(400);
    expect(await taken.json()).toMatchObject({ error: 'invalid_body', param: 'email' });
    const unknown = await operator('POST', '/operator/workspaces/wksp_AAAAAAAAAAAAAAAAAAAA/users', { email: 'lee@users.example' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: 'not_found' });
  });

  it("creates an inbound webhook and a destination in the named workspace only; another workspace's are not found", async () => {
    const b = await newWorkspace({ name: 'Webhooks by the operator' });
    const c = await newWorkspace({ name: 'Webhooks left alone' });
    const hook = await operator('POST', `/operator/workspaces/${b.workspaceId}/inbound-webhooks`, { slug: 'operator-made-hook', agentSlug: 'sales' });
    expect(hook.status).toBe(201);
    const { secret } = (await hook.json()) as { secret: string };
    const event = JSON.stringify({ event: 'lead.created', id: 'lead_op_1' });
    const ingested = await t.app.request('/webhooks/inbound/operator-made-hook', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-signature': signInboundBody(event, secret), 'x-forwarded-for': '203.0.113.77' },
      body: event,
    });
    expect(ingested.status).toBe(200);
    const { runId } = (await ingested.json()) as { runId: string };
    const [run] = await t.db.query<{ workspace_id: string }>(`SELECT workspace_id FROM runs WHERE id = $1`, [runId]);
    expect(run?.workspace_id).toBe(b.workspaceId);
    expect((await operator('POST', `/operator/workspaces/${c.workspaceId}/inbound-webhooks/operator-made-hook/pause`)).status).toBe(404);
    expect(await (await operator('GET', `/operator/workspaces/${c.workspaceId}/inbound-webhooks`)).json()).toEqual({ data: [] });

    const dst = await operator('POST', `/operator/workspaces/${b.workspaceId}/webhook-destinations`, {
      url: 'https://hooks.example.com/operator',
      events: ['run.completed'],
    });
    expect(dst.status).toBe(201);
    const { id } = (await dst.json()) as { id: string };
    expect((await operator('POST', `/operator/workspaces/${c.workspaceId}/webhook-destinations/${id}/rotate-secret`)).status).toBe(404);
    const paused = await operator('POST', `/operator/workspaces/${b.workspaceId}/webhook-destinations/${id}/pause`);
    expect(await paused.json()).toMatchObject({ id, status: 'paused' });
    const events = await t.db.query<{ action: string; actor_type: string }>(
      `SELECT action, actor_type FROM audit_events WHERE workspace_id = $1 AND (action LIKE 'destination.%' OR action LIKE 'inbound_webhook.%') ORDER BY action`,
      [b.workspaceId],
    );
    expect(events).toEqual([
      { action: 'destination.created', actor_type: 'operator' },
      { action: 'destination.paused', actor_type: 'operator' },
      { action: 'inbound_webhook.created', actor_type: 'operator' },
    ]);
  });
});
