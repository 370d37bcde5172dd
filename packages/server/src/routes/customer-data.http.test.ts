/**
 * Issue 20, item 6, the opposite error: text the customer wrote is its own data and comes back
 * verbatim, although it names a provider or a model ("Claude's team", "gpt-4 migration"). The
 * contract marks those fields `x-customer-data`; every other string still passes the redactor.
 * Over real HTTP: the operator's workspaces, API keys, agent pause reasons (also in the 403 of an
 * invocation), the manual kill switch's reason, invitations, the session's workspaces.
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDACTED } from '../redact/index.ts';
import { createTestApp, type TestApp } from '@service/testing/app';

const OPERATOR_TOKEN = 'op_customer_data_test_token_0123456789';
const WORKSPACE_NAME = "Claude's team";
const RENAMED = 'gpt-4 migration';
const KEY_NAME = 'gpt-4 migration (OpenAI fallback)';
const PAUSE_REASON = 'Llama 3 rollout after the OpenAI outage';
const SWITCH_REASON = 'Claude 3.5 Sonnet budget review';
const EMAIL = 'claude.gemini@anthropic-fans.example';

let t: TestApp;
let server: ServerType;
let base: string;
let session: { cookie: string; csrfToken: string };

beforeAll(async () => {
  t = await createTestApp({ deps: { operatorToken: OPERATOR_TOKEN } });
  server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  session = await t.login();
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await t.close();
});

async function call(method: string, path: string, body: unknown, auth: 'operator' | 'session' | 'key'): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (auth === 'operator') headers.authorization = `Bearer ${OPERATOR_TOKEN}`;
  if (auth === 'key') headers.authorization = `Bearer ${t.apiKey}`;
  if (auth === 'session') Object.assign(headers, { cookie: session.cookie, 'x-csrf-token': session.csrfToken });
  const res = await fetch(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

describe("the customer's own text comes back verbatim", () => {
  it("a workspace's name, on creation, read, rename and list (operator)", async () => {
    const created = await call('POST', '/operator/workspaces', { name: WORKSPACE_NAME, adminEmail: EMAIL }, 'operator');
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.workspace.name).toBe(WORKSPACE_NAME);
    expect(created.body.admin.email).toBe(EMAIL);
    const id = created.body.workspaceId as string;
    expect((await call('GET', `/operator/workspaces/${id}`, undefined, 'operator')).body.name).toBe(WORKSPACE_NAME);
    const renamed = await call('PATCH', `/operator/workspaces/${id}`, { name: RENAMED }, 'operator');
    expect(renamed.status).toBe(200);
    expect(renamed.body.name).toBe(RENAMED);
    const list = await call('GET', '/operator/workspaces', undefined, 'operator');
    expect(list.body.data.map((w: { name: string }) => w.name)).toContain(RENAMED);
  });

  it("an API key's name, on creation and in the list", async () => {
    const created = await call('POST', '/api-keys', { name: KEY_NAME, scopes: ['usage:read'] }, 'session');
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.name).toBe(KEY_NAME);
    const list = await call('GET', '/api-keys', undefined, 'session');
    expect(list.body.data.map((k: { name: string }) => k.name)).toContain(KEY_NAME);
  });

  it("an agent's pause reason, in the panel and in the invocation's 403", async () => {
    const paused = await call('POST', '/agents/finance/pause', { reason: PAUSE_REASON }, 'session');
    expect(paused.status, JSON.stringify(paused.body)).toBe(200);
    expect(paused.body.pausedReason).toBe(PAUSE_REASON);
    const agents = await call('GET', '/agents', undefined, 'session');
    expect(agents.body.data.find((a: { slug: string }) => a.slug === 'finance').pausedReason).toBe(PAUSE_REASON);
    const refused = await call('POST', '/v1/agents/finance/messages', { alias: 'Sonata', messages: [{ role: 'user', content: 'Close the books' }] }, 'key');
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: 'agent_disabled', agentSlug: 'finance', reason: PAUSE_REASON });
    expect((await call('POST', '/agents/finance/resume', undefined, 'session')).status).toBe(200);
  });

  it("an invitation's email", async () => {
    const invited = await call('POST', '/workspace/invitations', { email: EMAIL, role: 'member' }, 'session');
    expect(invited.status, JSON.stringify(invited.body)).toBe(201);
    expect(invited.body.email).toBe(EMAIL);
  });

  it("the manual kill switch's reason", async () => {
    const engaged = await call('PUT', '/kill-switches/manual', { engaged: true, reason: SWITCH_REASON }, 'session');
    expect(engaged.status, JSON.stringify(engaged.body)).toBe(200);
    expect(engaged.body.manual.reason).toBe(SWITCH_REASON);
    expect((await call('GET', '/kill-switches', undefined, 'session')).body.manual.reason).toBe(SWITCH_REASON);
    expect((await call('PUT', '/kill-switches/manual', { engaged: false }, 'session')).status).toBe(200);
  });

  it("what is not the customer's own still passes the redactor (an error message naming a model)", async () => {
    // The unknown agent's slug is echoed in the message, not in a customer-data field: redacted.
    const res = await call('POST', '/v1/agents/gpt-4o/messages', { alias: 'Sonata', messages: [{ role: 'user', content: 'x' }] }, 'key');
    expect(JSON.stringify(res.body)).not.toMatch(/gpt-4o/i);
    expect(JSON.stringify(res.body)).toContain(REDACTED);
  });
});
