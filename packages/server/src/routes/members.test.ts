/**
 * Members and roles: invitations (single use, 7 days, 410 expired), accepted with a new account or an
 * existing one, a user of two workspaces switching between them (403 tenant_forbidden on a third),
 * role changes and removal with the last owner kept, and member_not_found for anyone else.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zInvitation, zInvitationAccepted, zMemberList, zSessionWorkspaces, zTwoStepSetup } from '../../../../generated/zod.ts';
import { totpCode } from '../domain/sessions/totp.ts';
import type { OpenDb } from '../store/db.ts';
import { openMemoryStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { completeTwoStep } from '@service/testing/two-step';

let db: OpenDb;
let a: TestApp;
let b: TestApp;
let third: TestApp;
let ownerA: Session;
let ownerB: Session;

interface Session {
  cookie: string;
  csrfToken: string;
}

beforeAll(async () => {
  db = await openMemoryStore();
  [a, b, third] = [await createTestApp({ db }), await createTestApp({ db }), await createTestApp({ db })];
  ownerA = await a.login();
  ownerB = await b.login();
});
afterAll(async () => {
  for (const t of [a, b, third]) await t?.close();
  await db?.close();
});

function as(session: Session | undefined, method: string, path: string, body?: unknown) {
  return a.app.request(path, {
    method,
    headers: { 'content-type': 'application/json', ...(session ? { cookie: session.cookie, 'x-csrf-token': session.csrfToken } : {}) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function login(email: string, password: string, totpSecret: string) {
  a.clock.advance(30_000);
  const res = await as(undefined, 'POST', '/auth/login', { email, password, totpCode: totpCode(totpSecret, a.clock.now()) });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { csrfToken: string; workspaceId: string; workspaces: { id: string; role: string }[]; user: { role: string } };
  return { session: { cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]!, csrfToken: body.csrfToken }, body };
}

async function invite(session: Session, email: string, role = 'member') {
  const res = await as(session, 'POST', '/workspace/invitations', { email, role });
  expect(res.status).toBe(201);
  return zInvitation.parse(await res.json());
}

const PASSWORD = 'a password of the new member';

describe('invitations', () => {
  let dana: { email: string; totpSecret: string };

  it('an admin invites; the invitee accepts once with a new account, with two-step verification', async () => {
    const invitation = await invite(ownerA, 'Dana@Northwind.example');
    expect(invitation).toMatchObject({ email: 'dana@northwind.example', role: 'member' });
    const stored = await db.query(`SELECT * FROM invitations WHERE id = $1`, [invitation.id]);
    expect(JSON.stringify(stored)).not.toContain(invitation.token);

    // First the two-step secret (202, nothing used up), then its current code completes the acceptance.
    const setup = await as(undefined, 'POST', '/invitations/accept', { token: invitation.token, password: PASSWORD });
    expect(setup.status).toBe(202);
    const { totpSecret } = zTwoStepSetup.parse(await setup.json());
    const accepted = await as(undefined, 'POST', '/invitations/accept', {
      token: invitation.token,
      password: PASSWORD,
      totpCode: totpCode(totpSecret, a.clock.now()),
    });
    expect(accepted.status).toBe(200);
    const body = zInvitationAccepted.parse(await accepted.json());
    expect(body).toMatchObject({ workspaceId: a.workspaceId, email: 'dana@northwind.example', role: 'member', totpSecret });
    expect(body.totpSecret).toMatch(/^[A-Z2-7]{32}$/);
    dana = { email: body.email, totpSecret: body.totpSecret! };

    const again = await as(undefined, 'POST', '/invitations/accept', { token: invitation.token, password: PASSWORD });
    expect(again.status).toBe(410);
    expect(await again.json()).toMatchObject({ error: 'expired', message: 'This invitation has expired or was already used.' });

    const members = zMemberList.parse(await (await as(ownerA, 'GET', '/workspace/members')).json());
    expect(members.data.map((m) => [m.email, m.role])).toEqual([
      [a.admin.email, 'owner'],
      ['dana@northwind.example', 'member'],
    ]);
  });

  it('a member signs in, reads, and sees no key management (role_forbidden from the server)', async () => {
    const { session, body } = await login(dana.email, PASSWORD, dana.totpSecret);
    expect(body.user.role).toBe('member');
    const keys = await as(session, 'GET', '/api-keys');
    expect(keys.status).toBe(403);
    expect(await keys.json()).toMatchObject({ error: 'role_forbidden' });
    const forged = await as(session, 'POST', '/workspace/invitations', { email: 'mallory@example.com', role: 'owner' });
    expect(forged.status).toBe(403);
  });

  it("a member's session reads the workspace's runs and usage, and nothing of another workspace", async () => {
    const { session } = await login(dana.email, PASSWORD, dana.totpSecret);
    const run = await a.app.request('/v1/inference', {
      method: 'POST',
      headers: { authorization: `Bearer ${a.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ alias: 'Prelude', agentSlug: 'sales', messages: [{ role: 'user', content: 'Hello' }] }),
    });
    const { runId } = (await run.json()) as { runId: string };
    for (const path of ['/runs', '/v1/runs', `/runs/${runId}`, `/v1/runs/${runId}`, '/usage/current', '/v1/usage']) {
      const res = await a.app.request(path, { headers: { cookie: session.cookie } });
      expect(res.status, path).toBe(200);
    }
    const list = (await (await a.app.request('/runs', { headers: { cookie: session.cookie } })).json()) as { data: { id: string }[] };
    expect(list.data.map((r) => r.id)).toContain(runId);
    // A member may cancel the workspace's runs from the panel (a completed run is answered unchanged).
    const cancel = await a.app.request(`/runs/${runId}/cancel`, { method: 'POST', headers: { cookie: session.cookie, 'x-csrf-token': session.csrfToken } });
    expect(cancel.status).toBe(200);
    expect(await cancel.json()).toMatchObject({ id: runId, status: 'completed' });
    // B's run is not_found to A's member.
    const other = await b.app.request('/v1/inference', {
      method: 'POST',
      headers: { authorization: `Bearer ${b.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ alias: 'Prelude', agentSlug: 'sales', messages: [{ role: 'user', content: 'Hello' }] }),
    });
    const otherRunId = ((await other.json()) as { runId: string }).runId;
    const foreign = await a.app.request(`/runs/${otherRunId}`, { headers: { cookie: session.cookie } });
    expect(foreign.status).toBe(404);
    const foreignCancel = await a.app.request(`/runs/${otherRunId}/cancel`, {
      method: 'POST',
      headers: { cookie: session.cookie, 'x-csrf-token': session.csrfToken },
    });
    expect(foreignCancel.status).toBe(404);
    // An unknown session cookie is not_authenticated, as the contract documents.
    const stale = await a.app.request('/usage/current', { headers: { cookie: 'service_session=unknown' } });
    expect(stale.status).toBe(401);
    expect(await stale.json()).toMatchObject({ error: 'not_authenticated' });
  });

  it('an invitation past its 7 days is 410 expired; an unknown token is 404 not_found', async () => {
    const invitation = await invite(ownerA, 'late@northwind.example');
    a.clock.advance(7 * 86_400_000 + 1000);
    const late = await as(undefined, 'POST', '/invitations/accept', { token: invitation.token, password: PASSWORD });
    expect(late.status).toBe(410);
    const unknown = await as(undefined, 'POST', '/invitations/accept', { token: `service_inv_${'A'.repeat(32)}`, password: PASSWORD });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: 'not_found' });
    // Sessions last 12 hours: the owner signs in again after the week.
    ownerA = (await login(a.admin.email, a.admin.password, a.admin.totpSecret)).session;
  });

  it('inviting a member again is invalid_body', async () => {
    const res = await as(ownerA, 'POST', '/workspace/invitations', { email: a.admin.email });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_body' });
  });
});

describe('a user of two workspaces', () => {
  it('accepts with the password of the account, switches between them, and is refused a third', async () => {
    // B's owner invites A's owner, who already has an account.
    const res = await b.app.request('/workspace/invitations', {
      method: 'POST',
      headers: { cookie: ownerB.cookie, 'x-csrf-token': ownerB.csrfToken, 'content-type': 'application/json' },
      body: JSON.stringify({ email: a.admin.email, role: 'admin' }),
    });
    const { token } = zInvitation.parse(await res.json());
    // Accepted on B's app: its clock is the one the invitation was made with.
    const acceptOnB = (password: string) =>
      b.app.request('/invitations/accept', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token, password }) });
    const wrong = await acceptOnB('not the password at all');
    expect(wrong.status).toBe(401);
    const accepted = zInvitationAccepted.parse(await (await acceptOnB(a.admin.password)).json());
    expect(accepted).toMatchObject({ workspaceId: b.workspaceId, role: 'admin', totpSecret: null });

    const { session, body } = await login(a.admin.email, a.admin.password, a.admin.totpSecret);
    expect(body.workspaceId).toBe(a.workspaceId);
    expect(body.workspaces.map((w) => [w.id, w.role])).toEqual([
      [a.workspaceId, 'owner'],
      [b.workspaceId, 'admin'],
    ]);
    const aKeys = (await (await as(session, 'GET', '/api-keys')).json()) as { data: { id: string }[] };

    const switched = await as(session, 'POST', '/auth/workspace', { workspaceId: b.workspaceId });
    expect(switched.status).toBe(200);
    expect(zSessionWorkspaces.parse(await switched.json())).toMatchObject({ workspaceId: b.workspaceId, role: 'admin' });
    const bKeys = (await (await as(session, 'GET', '/api-keys')).json()) as { data: { id: string }[] };
    expect(bKeys.data.map((k) => k.id)).toEqual((await b.services.keys.list(b.workspaceId)).map((k) => k.id));
    expect(bKeys.data.some((k) => aKeys.data.some((other) => other.id === k.id))).toBe(false);

    const refused = await as(session, 'POST', '/auth/workspace', { workspaceId: third.workspaceId });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: 'tenant_forbidden', message: 'You are not a member of this workspace.' });
    // The session stayed on B.
    expect(((await (await as(session, 'GET', '/api-keys')).json()) as { data: { id: string }[] }).data).toEqual(bKeys.data);
    // Switching needs the CSRF token like every write.
    const noCsrf = await a.app.request('/auth/workspace', {
      method: 'POST',
      headers: { cookie: session.cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ workspaceId: a.workspaceId }),
    });
    expect(noCsrf.status).toBe(403);
    expect(await noCsrf.json()).toMatchObject({ error: 'forbidden' });
  });
});

describe('roles', () => {
  it('the last owner can be neither demoted nor removed; another owner first, then it can', async () => {
    const members = zMemberList.parse(await (await as(ownerA, 'GET', '/workspace/members')).json()).data;
    const owner = members.find((m) => m.role === 'owner')!;
    const member = members.find((m) => m.role === 'member')!;
    for (const [method, body] of [
      ['PATCH', { role: 'admin' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await as(ownerA, method, `/workspace/members/${owner.userId}`, body);
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ error: 'forbidden', message: 'A workspace keeps at least one owner: make another member an owner first.' });
    }
    const promoted = await as(ownerA, 'PATCH', `/workspace/members/${member.userId}`, { role: 'owner' });
    expect(promoted.status).toBe(200);
    expect(await promoted.json()).toMatchObject({ userId: member.userId, role: 'owner' });
    const demoted = await as(ownerA, 'PATCH', `/workspace/members/${member.userId}`, { role: 'member' });
    expect(await demoted.json()).toMatchObject({ role: 'member' });
  });

  it('removing a member ends their sessions in this workspace; anyone else is member_not_found', async () => {
    const invitation = await invite(ownerA, 'temp@northwind.example');
    const accept = (body: Record<string, unknown>) => as(undefined, 'POST', '/invitations/accept', body);
    const accepted = zInvitationAccepted.parse(await (await completeTwoStep(accept, a.clock, { token: invitation.token, password: PASSWORD })).json());
    const { session } = await login(accepted.email, PASSWORD, accepted.totpSecret!);
    const temp = zMemberList.parse(await (await as(ownerA, 'GET', '/workspace/members')).json()).data.find((m) => m.email === accepted.email)!;
    expect((await as(ownerA, 'DELETE', `/workspace/members/${temp.userId}`)).status).toBe(204);
    const after = await as(session, 'GET', '/workspace/members');
    expect(after.status).toBe(401);
    expect(await after.json()).toMatchObject({ error: 'not_authenticated' });

    const bOwner = zMemberList
      .parse(await (await b.app.request('/workspace/members', { headers: { cookie: ownerB.cookie } })).json())
      .data.find((m) => m.role === 'owner')!;
    for (const userId of [temp.userId, bOwner.userId, 'usr_AAAAAAAAAAAAAAAAAAAA']) {
      const res = await as(ownerA, 'PATCH', `/workspace/members/${userId}`, { role: 'admin' });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: 'member_not_found' });
    }
  });
});
