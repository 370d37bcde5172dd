/**
 * Pending invitations: listed for owners and admins (pending, then expired after 7 days; never a token),
 * resent (a new invitation and token; the old token answers 410 replaced), revoked (410 revoked), replaced
 * by inviting the same email again, and previewed by the link's holder without using it up (whether the
 * email has an account, the workspace's name). Only an owner resends or revokes an owner's invitation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zInvitation, zInvitationPreview, zPendingInvitationList } from '../../../../generated/zod.ts';
import { INVITATION_TTL_MS } from '../domain/sessions/invitations.ts';
import { totpCode } from '../domain/sessions/totp.ts';
import { createTestApp, type TestApp } from '@service/testing/app';
import { completeTwoStep } from '@service/testing/two-step';

interface Session {
  cookie: string;
  csrfToken: string;
}

let t: TestApp;
let owner: Session;
let admin: Session;

beforeAll(async () => {
  t = await createTestApp();
  owner = await t.login();
  admin = await join('an-admin@northwind.example', 'admin');
});
afterAll(async () => {
  await t?.close();
});

let address = 0;
function call(session: Session | undefined, method: string, path: string, body?: unknown) {
  return t.app.request(path, {
    method,
    // One address per request: the per-IP limit is not what these tests are about.
    headers: {
      'content-type': 'application/json',
      'x-forwarded-for': `10.7.${Math.floor(++address / 250)}.${address % 250}`,
      ...(session ? { cookie: session.cookie, 'x-csrf-token': session.csrfToken } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function invite(session: Session, email: string, role = 'member') {
  const res = await call(session, 'POST', '/workspace/invitations', { email, role });
  expect(res.status, await res.clone().text()).toBe(201);
  return zInvitation.parse(await res.json());
}

async function pending(session: Session = owner) {
  const res = await call(session, 'GET', '/workspace/invitations');
  expect(res.status).toBe(200);
  return zPendingInvitationList.parse(await res.json()).data;
}

/** Accepts as a person does: a new account's two-step secret (the `202`) confirmed with its current code. */
const accept = (token: string, password = 'a password of the invitee') =>
  completeTwoStep((body) => call(undefined, 'POST', '/invitations/accept', body), t.clock, { token, password });
const preview = (token: string) => call(undefined, 'POST', '/invitations/preview', { token });

/** A new account of the workspace with the role, signed in. */
async function join(email: string, role: string): Promise<Session> {
  const invitation = await invite(owner, email, role);
  const accepted = (await (await accept(invitation.token)).json()) as { totpSecret: string };
  t.clock.advance(30_000);
  const res = await call(undefined, 'POST', '/auth/login', {
    email,
    password: 'a password of the invitee',
    totpCode: totpCode(accepted.totpSecret, t.clock.now()),
  });
  expect(res.status).toBe(200);
  return { cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]!, csrfToken: ((await res.json()) as { csrfToken: string }).csrfToken };
}

describe('the pending invitations', () => {
  it('lists pending ones newest first, without tokens; past 7 days one reads expired; accepted ones are gone', async () => {
    const first = await invite(owner, 'first@northwind.example');
    t.clock.advance(60_000);
    const second = await invite(admin, 'second@northwind.example', 'admin');
    const listed = await pending();
    expect(listed.slice(0, 2)).toEqual([
      { id: second.id, email: 'second@northwind.example', role: 'admin', status: 'pending', createdAt: expect.any(String), expiresAt: second.expiresAt },
      { id: first.id, email: 'first@northwind.example', role: 'member', status: 'pending', createdAt: expect.any(String), expiresAt: first.expiresAt },
    ]);
    expect(JSON.stringify(listed)).not.toContain('service_inv_');
    // An admin reads the same list; the invitation accepted by the admin is not in it.
    expect(await pending(admin)).toEqual(listed);
    expect(listed.map((i) => i.email)).not.toContain('an-admin@northwind.example');

    t.clock.advance(INVITATION_TTL_MS);
    owner = await t.login();
    admin = await join('a-second-admin@northwind.example', 'admin');
    const later = await pending();
    expect(later.find((i) => i.id === first.id)?.status).toBe('expired');
    expect((await preview(first.token)).status).toBe(410);
    expect(await (await preview(first.token)).json()).toMatchObject({ error: 'expired', reason: 'expired' });
  });

  it('a member may not list them (role_forbidden)', async () => {
    const member = await join('a-member@northwind.example', 'member');
    const res = await call(member, 'GET', '/workspace/invitations');
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: 'role_forbidden' });
  });
});

describe('resending', () => {
  it('issues a new invitation and token; the old token answers 410 replaced; the new one is accepted', async () => {
    const old = await invite(owner, 'resent@northwind.example');
    const res = await call(admin, 'POST', `/workspace/invitations/${old.id}/resend`);
    expect(res.status).toBe(201);
    const resent = zInvitation.parse(await res.json());
    expect(resent).toMatchObject({ email: 'resent@northwind.example', role: 'member' });
    expect(resent.id).not.toBe(old.id);
    expect(resent.token).not.toBe(old.token);
    const stored = await t.db.query(`SELECT * FROM invitations WHERE email = 'resent@northwind.example'`);
    expect(stored).toHaveLength(2);
    expect(JSON.stringify(stored)).not.toContain(resent.token.slice('service_inv_'.length));
    expect(JSON.stringify(stored)).not.toContain(old.token.slice('service_inv_'.length));

    const listed = (await pending()).filter((i) => i.email === 'resent@northwind.example');
    expect(listed.map((i) => i.id)).toEqual([resent.id]);
    const refused = await accept(old.token);
    expect(refused.status).toBe(410);
    expect(await refused.json()).toMatchObject({ error: 'expired', reason: 'replaced' });
    expect((await accept(resent.token)).status).toBe(200);
    expect((await pending()).map((i) => i.email)).not.toContain('resent@northwind.example');
  });

  it('an expired invitation is resent for 7 more days', async () => {
    const old = await invite(owner, 'late@northwind.example');
    await t.db.query(`UPDATE invitations SET expires_at = $2 WHERE id = $1`, [old.id, new Date(t.clock.now().getTime() - 1000)]);
    const res = await call(owner, 'POST', `/workspace/invitations/${old.id}/resend`);
    expect(res.status).toBe(201);
    const resent = zInvitation.parse(await res.json());
    expect(Date.parse(resent.expiresAt)).toBe(t.clock.now().getTime() + INVITATION_TTL_MS);
    expect(zInvitationPreview.parse(await (await preview(resent.token)).json())).toMatchObject({ email: 'late@northwind.example' });
  });

  it('an accepted, a replaced or a revoked invitation, and an unknown id, are 404 not_found', async () => {
    const accepted = await invite(owner, 'joined@northwind.example');
    expect((await accept(accepted.token)).status).toBe(200);
    const replaced = await invite(owner, 'twice@northwind.example');
    await invite(owner, 'twice@northwind.example');
    const revoked = await invite(owner, 'revoked@northwind.example');
    expect((await call(owner, 'DELETE', `/workspace/invitations/${revoked.id}`)).status).toBe(204);
    for (const id of [accepted.id, replaced.id, revoked.id, 'inv_AAAAAAAAAAAAAAAAAAAA']) {
      const res = await call(owner, 'POST', `/workspace/invitations/${id}/resend`);
      expect(res.status, id).toBe(404);
      expect(await res.json()).toMatchObject({ error: 'not_found' });
    }
  });
});

describe('revoking', () => {
  it('the token answers 410 revoked (accept and preview); the list drops it; revoking again changes nothing', async () => {
    const invitation = await invite(owner, 'revoke-me@northwind.example');
    expect((await preview(invitation.token)).status).toBe(200);
    const res = await call(admin, 'DELETE', `/workspace/invitations/${invitation.id}`);
    expect(res.status).toBe(204);
    for (const answer of [await accept(invitation.token), await preview(invitation.token)]) {
      expect(answer.status).toBe(410);
      expect(await answer.json()).toMatchObject({ error: 'expired', message: 'This invitation was revoked.', reason: 'revoked' });
    }
    expect((await pending()).map((i) => i.id)).not.toContain(invitation.id);
    expect((await call(admin, 'DELETE', `/workspace/invitations/${invitation.id}`)).status).toBe(204);
    expect(await (await accept(invitation.token)).json()).toMatchObject({ reason: 'revoked' });
  });

  it('an accepted invitation is 404 not_found (remove the member instead)', async () => {
    const invitation = await invite(owner, 'already-in@northwind.example');
    expect((await accept(invitation.token)).status).toBe(200);
    const res = await call(owner, 'DELETE', `/workspace/invitations/${invitation.id}`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: 'not_found', message: 'This invitation was accepted; the person is a member now.' });
  });
});

describe("an owner's invitation", () => {
  it('only an owner resends or revokes it: an admin gets role_forbidden and nothing changes', async () => {
    const invitation = await invite(owner, 'next-owner@northwind.example', 'owner');
    for (const [method, path] of [
      ['POST', `/workspace/invitations/${invitation.id}/resend`],
      ['DELETE', `/workspace/invitations/${invitation.id}`],
    ] as const) {
      const res = await call(admin, method, path);
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ error: 'role_forbidden' });
    }
    expect((await preview(invitation.token)).status).toBe(200);
    const resent = await call(owner, 'POST', `/workspace/invitations/${invitation.id}/resend`);
    expect(resent.status).toBe(201);
    expect(zInvitation.parse(await resent.json()).role).toBe('owner');
  });
});

describe('inviting an email again', () => {
  it('replaces its open invitation: the first token answers 410 replaced', async () => {
    const first = await invite(owner, 'again@northwind.example');
    const second = await invite(admin, 'again@northwind.example', 'admin');
    const refused = await accept(first.token);
    expect(refused.status).toBe(410);
    expect(await refused.json()).toMatchObject({
      error: 'expired',
      message: 'This invitation was replaced by a newer one; use the latest link.',
      reason: 'replaced',
    });
    expect((await pending()).filter((i) => i.email === 'again@northwind.example').map((i) => i.id)).toEqual([second.id]);
    expect((await accept(second.token)).status).toBe(200);
  });
});

describe('previewing a link', () => {
  it('says what it offers and whether the email has an account, any number of times, without using it up', async () => {
    const [workspace] = await t.db.query<{ name: string }>(`SELECT name FROM workspaces WHERE id = $1`, [t.workspaceId]);
    const invitation = await invite(owner, 'preview@northwind.example', 'admin');
    for (let i = 0; i < 2; i++) {
      const res = await preview(invitation.token);
      expect(res.status).toBe(200);
      expect(zInvitationPreview.parse(await res.json())).toEqual({
        workspaceName: workspace!.name,
        email: 'preview@northwind.example',
        role: 'admin',
        expiresAt: invitation.expiresAt,
        hasAccount: false,
      });
    }
    expect((await accept(invitation.token)).status).toBe(200);
    expect(await (await preview(invitation.token)).json()).toMatchObject({ error: 'expired', reason: 'used' });
  });

  it('an existing account is named as such; an unknown token is 404 not_found', async () => {
    const other = await createTestApp({ db: t.db });
    try {
      const otherOwner = await other.login();
      const res = await other.app.request('/workspace/invitations', {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: otherOwner.cookie, 'x-csrf-token': otherOwner.csrfToken },
        body: JSON.stringify({ email: t.admin.email }),
      });
      const { token } = zInvitation.parse(await res.json());
      // Through the other app: its clock is the one the invitation was made by.
      const seen = await other.app.request('/invitations/preview', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token }),
      });
      expect(zInvitationPreview.parse(await seen.json()).hasAccount).toBe(true);
    } finally {
      await other.close();
    }
    const unknown = await preview(`service_inv_${'A'.repeat(32)}`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: 'not_found' });
  });
});
