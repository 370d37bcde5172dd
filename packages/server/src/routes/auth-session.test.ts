/**
 * Who am I (`GET /auth/session`): the cookie's session read again with its CSRF token, bound to that session, for
 * the panel to restore itself after a reload; 401 once the session expired or ended on another instance sharing
 * the store. PGlite by default.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zAdminSession } from '../../../../generated/zod.ts';
import { sha256Hex } from '../crypto.ts';
import { SESSION_TTL_MS } from '../domain/sessions/index.ts';
import { totpCode } from '../domain/sessions/totp.ts';
import { ephemeralSecretKey } from '../domain/webhooks/secret-box.ts';
import type { OpenDb } from '../store/db.ts';
import { caller, memberSession, type Session } from '@service/testing/panel-sessions';
import { openMemoryStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';

let db: OpenDb;
/** Two instances of one deployment on one store, and a second workspace (its own owner). */
let a: TestApp;
let other: TestApp;
let b: TestApp;

beforeAll(async () => {
  db = await openMemoryStore();
  const secretKey = ephemeralSecretKey();
  a = await createTestApp({ db, deps: { webhooks: { secretKey } } });
  other = await createTestApp({ db, deps: { webhooks: { secretKey } } });
  b = await createTestApp({ db, deps: { webhooks: { secretKey } } });
});
afterAll(async () => {
  for (const t of [a, other, b]) await t?.close();
  await db?.close();
});

/** Signs the admin of `t` in and keeps the whole login answer. */
async function signIn(t: TestApp) {
  t.clock.advance(30_000);
  const res = await caller(t)(undefined, 'POST', '/auth/login', {
    email: t.admin.email,
    password: t.admin.password,
    totpCode: totpCode(t.admin.totpSecret, t.clock.now()),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  // The login's answer holds the CSRF token too: never cached either.
  expect(res.headers.get('cache-control')).toBe('no-store');
  const session: Session = { cookie: String(res.headers.get('set-cookie')).split(';')[0]!, csrfToken: res.body.csrfToken };
  return { session, login: res.body };
}

const whoAmI = (t: TestApp, session: Session | undefined, headers: Record<string, string> = {}) =>
  caller(t)(session, 'GET', '/auth/session', undefined, headers);

describe('GET /auth/session', () => {
  it("answers the login's session again: user, role, workspace, expiry and the same CSRF token, never cached", async () => {
    const { session, login } = await signIn(a);
    const res = await whoAmI(a, { cookie: session.cookie, csrfToken: '' });
    expect(res.status).toBe(200);
    expect(zAdminSession.safeParse(res.body).success).toBe(true);
    expect(res.body).toEqual(login);
    expect(res.body.user).toMatchObject({ email: a.admin.email, role: 'owner', twoFactorEnabled: true });
    expect(res.headers.get('cache-control')).toBe('no-store');
    // The cookie's value is no part of the body.
    expect(JSON.stringify(res.body)).not.toContain(session.cookie.split('=')[1]);
    // The token it answers is the one writes need.
    const write = await caller(a)(session, 'POST', '/api-keys', { name: 'after a reload', scopes: ['usage:read'] });
    expect(write.status, JSON.stringify(write.body)).toBe(201);
  });

  it("binds the token to its session: another session's token is refused for writes", async () => {
    const first = (await signIn(a)).session;
    const second = (await signIn(a)).session;
    const [one, two] = [(await whoAmI(a, first)).body.csrfToken, (await whoAmI(a, second)).body.csrfToken];
    expect(one).toBe(first.csrfToken);
    expect(two).toBe(second.csrfToken);
    expect(one).not.toBe(two);
    const crossed = await caller(a)({ cookie: second.cookie, csrfToken: one }, 'POST', '/api-keys', { name: 'crossed', scopes: ['usage:read'] });
    expect(crossed.status).toBe(403);
    expect(crossed.body).toMatchObject({ error: 'forbidden' });
  });

  it('answers 401 not_authenticated without a cookie, or with one that names no session', async () => {
    for (const session of [undefined, { cookie: 'service_session=not-a-session-at-all', csrfToken: '' }]) {
      const res = await whoAmI(a, session);
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ error: 'not_authenticated' });
      expect(JSON.stringify(res.body)).not.toContain('csrfToken');
    }
  });

  it('answers 401 once the session has expired', async () => {
    const { session } = await signIn(a);
    a.clock.advance(SESSION_TTL_MS - 1000);
    expect((await whoAmI(a, session)).status).toBe(200);
    a.clock.advance(1000);
    const ended = await whoAmI(a, session);
    expect(ended.status).toBe(401);
    expect(ended.body).toMatchObject({ error: 'not_authenticated' });
  });

  it('answers 401 on one instance once the session signed out on another', async () => {
    const { session } = await signIn(a);
    expect((await whoAmI(other, session)).status).toBe(200);
    expect((await caller(other)(session, 'POST', '/auth/logout')).status).toBe(204);
    const ended = await whoAmI(a, session);
    expect(ended.status).toBe(401);
    expect(ended.body).toMatchObject({ error: 'not_authenticated' });
  });

  it("follows the selected workspace: its id, the user's role there, every workspace of the user", async () => {
    // b's owner invites a's owner as a member; a's owner accepts with their own password.
    const bOwner = (await signIn(b)).session;
    const invited = await caller(b)(bOwner, 'POST', '/workspace/invitations', { email: a.admin.email, role: 'member' });
    expect(invited.status, JSON.stringify(invited.body)).toBe(201);
    const accepted = await caller(b)(undefined, 'POST', '/invitations/accept', { token: invited.body.token, password: a.admin.password });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    const { session } = await signIn(a);
    const selected = await caller(a)(session, 'POST', '/auth/workspace', { workspaceId: b.workspaceId });
    expect(selected.status, JSON.stringify(selected.body)).toBe(200);
    const res = await whoAmI(a, session);
    expect(res.body).toMatchObject({ workspaceId: b.workspaceId, user: { role: 'member' }, csrfToken: session.csrfToken });
    expect((res.body.workspaces as { id: string; role: string }[]).map((w) => [w.id, w.role]).sort()).toEqual(
      [
        [a.workspaceId, 'owner'],
        [b.workspaceId, 'member'],
      ].sort(),
    );
  });

  it('is readable by a member of any role', async () => {
    const owner = (await signIn(a)).session;
    const member = await memberSession(a, owner);
    const res = await whoAmI(a, member);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ workspaceId: a.workspaceId, user: { id: member.userId, role: 'member' }, csrfToken: member.csrfToken });
  });

  it('binds a session opened before tokens were derived from the cookie to the token it answers', async () => {
    const { session } = await signIn(a);
    // Such a session holds the hash of a random token.
    const old = 'a-random-token-of-an-older-server-000000000';
    await db.query(`UPDATE sessions SET csrf_hash = $1 WHERE token_hash = $2`, [sha256Hex(old), sha256Hex(session.cookie.split('=')[1]!)]);
    expect((await caller(a)({ cookie: session.cookie, csrfToken: old }, 'POST', '/api-keys', { name: 'old', scopes: ['usage:read'] })).status).toBe(201);
    const res = await whoAmI(a, session);
    expect(res.status).toBe(200);
    expect(res.body.csrfToken).toBe(session.csrfToken);
    expect((await caller(a)(session, 'POST', '/api-keys', { name: 'rebound', scopes: ['usage:read'] })).status).toBe(201);
    expect((await caller(a)({ cookie: session.cookie, csrfToken: old }, 'POST', '/api-keys', { name: 'stale', scopes: ['usage:read'] })).status).toBe(403);
  });
});
