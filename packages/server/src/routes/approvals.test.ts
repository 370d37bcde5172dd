/**
 * The approval requests in the panel: any member lists them by state (pending by default, a pending
 * one past its expiry reads as expired), only an owner or admin decides, and the decision names the
 * deciding user. Approvals are asked for by real runs (the local engine's sales agent sending an email).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zApprovalList } from '../../../../generated/zod.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { caller, memberSession, type Session } from '@service/testing/panel-sessions';

describe.each(testBackends())('listApprovals on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  let admin: Session;
  let member: Session;
  let adminUserId: string;
  let call: ReturnType<typeof caller>;

  beforeAll(async () => {
    store = await open();
    t = await createTestApp({ db: store.db });
    call = caller(t);
    admin = await t.login();
    member = await memberSession(t, admin);
    adminUserId = (await store.db.query<{ user_id: string }>(`SELECT user_id FROM memberships WHERE workspace_id = $1 AND role = 'owner'`, [t.workspaceId]))[0]!
      .user_id;
  });
  afterAll(async () => {
    await t?.close();
    await store?.cleanup();
  });

  /** A run of the sales agent that asks to send an email: one pending approval. */
  async function askForApproval(): Promise<string> {
    const res = await t.app.request('/v1/inference', {
      method: 'POST',
      headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ alias: 'Sonata', agentSlug: 'sales', messages: [{ role: 'user', content: 'Send an email to the new lead' }] }),
    });
    expect(res.status).toBe(200);
    const { runId } = (await res.json()) as { runId: string };
    const [row] = await store.db.query<{ id: string }>(`SELECT id FROM approvals WHERE run_id = $1`, [runId]);
    return row!.id;
  }

  const ids = (body: unknown) => zApprovalList.parse(body).data.map((a) => a.id);

  it('a member lists the pending requests, decides none; an admin decides; the lists follow', async () => {
    const first = await askForApproval();
    t.clock.advance(1_000); // the fixed clock: one second apart, so the order is defined
    const second = await askForApproval();

    const pending = await call(member, 'GET', '/approvals');
    expect(pending.status).toBe(200);
    const page = zApprovalList.parse(pending.body);
    expect(page).toMatchObject({ total: 2, limit: 50, offset: 0 });
    expect(page.data.map((a) => a.id)).toEqual([first, second]); // soonest to expire first
    expect(page.data[0]).toMatchObject({ agentSlug: 'sales', action: expect.stringMatching(/^email\./), status: 'pending', decidedBy: null, decidedAt: null });

    const refused = await call(member, 'POST', `/approvals/${first}/decision`, { decision: 'approved' });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('role_forbidden');

    const decided = await call(admin, 'POST', `/approvals/${first}/decision`, { decision: 'approved' });
    expect(decided.status).toBe(200);
    const approved = await call(member, 'GET', '/approvals?status=approved');
    expect(zApprovalList.parse(approved.body).data).toEqual([expect.objectContaining({ id: first, status: 'approved', decidedBy: adminUserId })]);
    expect(ids((await call(member, 'GET', '/approvals')).body)).toEqual([second]);
    expect(ids((await call(member, 'GET', '/approvals?status=rejected')).body)).toEqual([]);

    const paged = await call(member, 'GET', '/approvals?status=all&limit=1&offset=1');
    expect(paged.body).toMatchObject({ total: 2, limit: 1, offset: 1 });
    expect(ids(paged.body)).toEqual([first]); // the others newest first: the second was asked later
  });

  it('a pending request past its expiry reads as expired and can no longer be decided', async () => {
    const before = ids((await call(member, 'GET', '/approvals')).body);
    expect(before.length).toBeGreaterThan(0);
    t.clock.advance(73 * 3_600_000);
    member = await memberSession(t, (admin = await t.login()));
    expect(ids((await call(member, 'GET', '/approvals')).body)).toEqual([]);
    const expired = zApprovalList.parse((await call(member, 'GET', '/approvals?status=expired')).body);
    expect(expired.data.map((a) => a.id).sort()).toEqual([...before].sort());
    expect(expired.data.every((a) => a.status === 'expired')).toBe(true);
    const late = await call(admin, 'POST', `/approvals/${before[0]}/decision`, { decision: 'approved' });
    expect(late.status).toBe(400);
  });

  it('needs a session, and a known status', async () => {
    const anonymous = await call(undefined, 'GET', '/approvals');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error).toBe('not_authenticated');
    const withKey = await t.app.request('/approvals', { headers: { authorization: `Bearer ${t.apiKey}` } });
    expect(withKey.status).toBe(401);
    const bad = await call(member, 'GET', '/approvals?status=maybe');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid_request');
  });
});
