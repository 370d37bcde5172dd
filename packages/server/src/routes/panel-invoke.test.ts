/**
 * Trying an agent from the panel: a member's session invokes (`POST /v1/agents/{slug}/messages` or
 * `POST /v1/inference`) with the CSRF header, as JSON or as a stream; the run is the session's
 * workspace's, with `source: panel`; the workspace's standing, paused agents and the private beta
 * apply as the contract says.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zRunDetail } from '../../../../generated/zod.ts';
import { pauseAgent, resumeAgent } from '../domain/agents/settings.ts';
import { createWorkspace, updateWorkspace } from '../domain/workspaces/index.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { caller, memberSession, type Session } from '@service/testing/panel-sessions';
import { parseSse } from '@service/testing/sse';

const ask = (content: string, extra: Record<string, unknown> = {}) => ({ alias: 'Sonata', messages: [{ role: 'user', content }], ...extra });

describe.each(testBackends())('trying an agent from the panel on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  let member: Session;
  let call: ReturnType<typeof caller>;

  beforeAll(async () => {
    store = await open();
    t = await createTestApp({ db: store.db });
    call = caller(t);
    member = await memberSession(t, await t.login());
  });
  afterAll(async () => {
    await t?.close();
    await store?.cleanup();
  });

  it("a member invokes one agent as JSON; the run is the workspace's, source panel", async () => {
    const res = await call(member, 'POST', '/v1/agents/finance/messages', ask('Which invoices are overdue?'));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ agentSlug: 'finance', alias: 'Sonata', content: expect.any(String), usage: { inputTokens: expect.any(Number) } });
    const detail = await call(member, 'GET', `/runs/${res.body.runId}`);
    expect(zRunDetail.parse(detail.body).run).toMatchObject({ id: res.body.runId, source: 'panel', agentSlug: 'finance', status: 'completed' });
    // The key of the same workspace reads it too: it is the workspace's run.
    const withKey = await t.app.request(`/runs/${res.body.runId}`, { headers: { authorization: `Bearer ${t.apiKey}` } });
    expect(withKey.status).toBe(200);
  });

  it('streams the answer: fragments, then the end event with the run id', async () => {
    const res = await call(member, 'POST', '/v1/agents/sales/messages', ask('Draft a follow-up email to Dana', { stream: true }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = parseSse(res.body as string);
    expect(events.filter((e) => e.event === 'message').length).toBeGreaterThan(0);
    const end = events.at(-1)!;
    expect(end).toMatchObject({ event: 'end', data: { done: true, runId: expect.stringMatching(/^run_/) } });
    const text = events
      .filter((e) => e.event === 'message')
      .map((e) => (e.data as { delta: string }).delta)
      .join('');
    const detail = await call(member, 'GET', `/runs/${(end.data as { runId: string }).runId}`);
    expect(detail.body.run).toMatchObject({ source: 'panel', content: text });
  });

  it('POST /v1/inference takes the session too (the orchestrator routes)', async () => {
    const res = await call(member, 'POST', '/v1/inference', ask('Which invoices are more than 60 days overdue?'));
    expect(res.status).toBe(200);
    expect(res.body.agentSlug).toBe('finance');
  });

  it('refuses a session write without the CSRF token, and no credential at all', async () => {
    const noCsrf = await call({ cookie: member.cookie, csrfToken: '' }, 'POST', '/v1/agents/finance/messages', ask('Hello'));
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.body.error).toBe('forbidden');
    const wrong = await call({ cookie: member.cookie, csrfToken: 'csrf_wrong_token_of_20' }, 'POST', '/v1/agents/finance/messages', ask('Hello'));
    expect(wrong.status).toBe(403);
    const none = await call(undefined, 'POST', '/v1/agents/finance/messages', ask('Hello'));
    expect(none.status).toBe(401);
    expect(none.body.error).toBe('missing_bearer');
  });

  it('a paused agent answers 403 agent_disabled with its slug and reason', async () => {
    await pauseAgent(store.db, t.clock, t.workspaceId, 'legal', 'Contract review freeze');
    const res = await call(member, 'POST', '/v1/agents/legal/messages', ask('Review this NDA'));
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ error: 'agent_disabled', agentSlug: 'legal', reason: 'Contract review freeze' });
    await resumeAgent(store.db, t.workspaceId, 'legal');
  });

  it('a suspended workspace spends nothing from the panel either: 403 tenant_forbidden', async () => {
    await updateWorkspace(store.db, t.clock, t.workspaceId, { status: 'suspended' });
    try {
      const res = await call(member, 'POST', '/v1/agents/finance/messages', ask('Hello'));
      expect(res.status).toBe(403);
      expect(res.body.error).toBe('tenant_forbidden');
    } finally {
      await updateWorkspace(store.db, t.clock, t.workspaceId, { status: 'active' });
    }
  });

  it('a member cancels an in_progress run from the panel (with the CSRF token); another workspace cannot', async () => {
    // [[hang]]: one fragment, then the engine waits until it is aborted.
    const res = await t.app.request('/v1/agents/strategy/messages', {
      method: 'POST',
      headers: { cookie: member.cookie, 'x-csrf-token': member.csrfToken, 'content-type': 'application/json' },
      body: JSON.stringify(ask('Update the roadmap [[hang]]', { stream: true })),
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read();
    let runId: string | undefined;
    while (!runId) runId = (await call(member, 'GET', '/runs?status=in_progress&source=panel')).body.data[0]?.id;

    const noCsrf = await t.app.request(`/runs/${runId}/cancel`, { method: 'POST', headers: { cookie: member.cookie } });
    expect(noCsrf.status).toBe(403);
    expect(await noCsrf.json()).toMatchObject({ error: 'forbidden' });

    const outsider = await createWorkspace(t.db, t.clock, 'Outsider');
    const outsiderKey = (await t.services.keys.create(outsider.id, { name: 'o', scopes: ['orchestrator:invoke'] })).secret;
    const foreign = await t.app.request(`/runs/${runId}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${outsiderKey}` } });
    expect(foreign.status).toBe(404);

    const canceled = await call(member, 'POST', `/runs/${runId}/cancel`);
    expect(canceled.status, JSON.stringify(canceled.body)).toBe(200);
    expect(canceled.body).toMatchObject({ id: runId, status: 'canceled', source: 'panel' });
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read());
  });

  it('an Idempotency-Key from a session answers the first run on a retry', async () => {
    const headers = { 'Idempotency-Key': 'panel-try-1' };
    const first = await call(member, 'POST', '/v1/agents/hr/messages', ask('Onboarding checklist'), headers);
    const again = await call(member, 'POST', '/v1/agents/hr/messages', ask('Onboarding checklist'), headers);
    expect(first.status).toBe(200);
    expect(again.body.runId).toBe(first.body.runId);
  });
});

describe('the private beta and the panel', () => {
  let t: TestApp;
  let member: Session;
  beforeAll(async () => {
    t = await createTestApp({ deps: { config: { trustProxy: 0, privateBeta: true, corsOrigins: [] } } });
    member = await memberSession(t, await t.login());
  });
  afterAll(async () => t?.close());

  it('API keys read the agent API as absent; the panel session still invokes and reads runs', async () => {
    const call = caller(t);
    const keyed = await t.app.request('/v1/agents/finance/messages', {
      method: 'POST',
      headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(ask('Hello')),
    });
    expect(keyed.status).toBe(404);
    expect(await keyed.json()).toMatchObject({ error: 'not_found' });
    const fromPanel = await call(member, 'POST', '/v1/agents/finance/messages', ask('Hello'));
    expect(fromPanel.status).toBe(200);
    const runs = await call(member, 'GET', '/runs');
    expect(runs.status).toBe(200);
    expect(runs.body.data.map((r: { id: string }) => r.id)).toContain(fromPanel.body.runId);
    // A cookie that is no session is refused by authentication, not let through.
    const forged = await call({ cookie: 'service_session=forged', csrfToken: 'x'.repeat(20) }, 'GET', '/runs');
    expect(forged.status).toBe(401);
    // A key with a session cookie beside it is still a key: absent.
    const both = await t.app.request('/runs', { headers: { authorization: `Bearer ${t.apiKey}`, cookie: member.cookie } });
    expect(both.status).toBe(404);
  });
});
