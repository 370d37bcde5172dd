/**
 * The agents in the panel: any member reads every agent with its alias and state; an admin pauses
 * (with a reason) and resumes one, with the same switch as `service agents pause`; a paused agent
 * answers invocations `403 agent_disabled` with its slug and reason, through the route.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zWorkspaceAgent, zWorkspaceAgentList } from '../../../../generated/zod.ts';
import { AGENT_SLUGS } from '../vocabulary/catalog.ts';
import { pausedAgents, setPlan } from '../domain/agents/settings.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { caller, memberSession, type Session } from '@service/testing/panel-sessions';

describe.each(testBackends())("the panel's agents on $name", ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  let admin: Session;
  let member: Session;
  let call: ReturnType<typeof caller>;

  beforeAll(async () => {
    store = await open();
    t = await createTestApp({ db: store.db });
    call = caller(t);
    admin = await t.login();
    member = await memberSession(t, admin);
  });
  afterAll(async () => {
    await t?.close();
    await store?.cleanup();
  });

  const invoke = (slug: string) =>
    t.app.request(`/v1/agents/${slug}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ alias: 'Sonata', messages: [{ role: 'user', content: 'Close the books' }] }),
    });

  it('any member lists every agent of the catalog with its alias and state', async () => {
    const res = await call(member, 'GET', '/agents');
    expect(res.status).toBe(200);
    const list = zWorkspaceAgentList.parse(res.body);
    expect(list.plan).toBe('growth');
    expect(list.data.map((a) => a.slug)).toEqual([...AGENT_SLUGS]);
    expect(list.data[0]).toMatchObject({ slug: 'orchestrator', kind: 'orchestrator', alias: 'Prelude', state: 'active', pausedReason: null, pausedAt: null });
  });

  it('an admin pauses an agent: invoking it answers 403 agent_disabled with the reason; resumed, it answers again', async () => {
    const paused = await call(admin, 'POST', '/agents/finance/pause', { reason: '  Month-end close ' });
    expect(paused.status).toBe(200);
    expect(zWorkspaceAgent.parse(paused.body)).toMatchObject({
      slug: 'finance',
      state: 'paused',
      pausedReason: 'Month-end close',
      pausedAt: t.clock.now().toISOString(),
    });
    // The CLI's switch: the same row.
    expect((await pausedAgents(store.db, t.workspaceId)).get('finance')).toBe('Month-end close');

    const refused = await invoke('finance');
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: 'agent_disabled', agentSlug: 'finance', reason: 'Month-end close' });
    const listed = zWorkspaceAgentList.parse((await call(member, 'GET', '/agents')).body).data.find((a) => a.slug === 'finance');
    expect(listed).toMatchObject({ state: 'paused', pausedReason: 'Month-end close' });

    const resumed = await call(admin, 'POST', '/agents/finance/resume');
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ state: 'active', pausedReason: null, pausedAt: null });
    expect((await invoke('finance')).status).toBe(200);
    // Resuming an agent that is not paused changes nothing.
    expect((await call(admin, 'POST', '/agents/finance/resume')).body.state).toBe('active');
  });

  it('shows an agent outside the plan as not_in_plan', async () => {
    await setPlan(store.db, t.clock, t.workspaceId, 'starter');
    try {
      const list = zWorkspaceAgentList.parse((await call(member, 'GET', '/agents')).body);
      expect(list.plan).toBe('starter');
      expect(list.data.find((a) => a.slug === 'finance')?.state).toBe('not_in_plan');
      expect(list.data.find((a) => a.slug === 'sales')?.state).toBe('active');
    } finally {
      await setPlan(store.db, t.clock, t.workspaceId, 'growth');
    }
  });

  it('refuses members, a missing CSRF token, an empty reason and an unknown agent', async () => {
    const asMember = await call(member, 'POST', '/agents/finance/pause', { reason: 'No' });
    expect(asMember.status).toBe(403);
    expect(asMember.body.error).toBe('role_forbidden');
    const noCsrf = await call({ cookie: admin.cookie, csrfToken: '' }, 'POST', '/agents/finance/pause', { reason: 'No' });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.body.error).toBe('forbidden');
    const empty = await call(admin, 'POST', '/agents/finance/pause', { reason: '   ' });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toBe('invalid_body');
    const unknown = await call(admin, 'POST', '/agents/travel/pause', { reason: 'No' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('agent_not_found');
    expect((await pausedAgents(store.db, t.workspaceId)).size).toBe(0);
    expect((await call(undefined, 'GET', '/agents')).status).toBe(401);
  });
});
