/**
 * Account recovery: an owner or admin resets a member's password and/or two-step verification with a
 * single-use link (role order: an admin never resets an owner; nobody resets themselves; an account of
 * two workspaces only by the operator); the member redeems it once (410 expired when used, replaced or
 * past 24 hours), and may preview it any number of times before; every reset ends the account's
 * sessions on every instance sharing the store; the operator's route does the same by email. PGlite by default, PostgreSQL with DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zAccountReset, zAccountResetPreview, zAccountResetRedeemed, zInvitationAccepted } from '../../../../generated/zod.ts';
import { createOperatorToken } from '../domain/operators/index.ts';
import { RESET_MAX_FAILURES, RESET_TTL_MS } from '../domain/sessions/resets.ts';
import { ephemeralSecretKey } from '../domain/webhooks/secret-box.ts';
import { totpCode } from '../domain/sessions/totp.ts';
import type { OpenDb } from '../store/db.ts';
import { openMemoryStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { completeTwoStep } from '@service/testing/two-step';

let db: OpenDb;
let a: TestApp;
/** A second instance on the same store: a session ended by `a` must be refused here too. */
let other: TestApp;
let b: TestApp;
let operatorToken: string;

interface Session {
  cookie: string;
  csrfToken: string;
}
interface Person {
  userId: string;
  email: string;
  password: string;
  totpSecret: string;
}

beforeAll(async () => {
  db = await openMemoryStore();
  // Two instances of one deployment share its SECRET_KEY (the TOTP secrets are sealed with it).
  const secretKey = ephemeralSecretKey();
  a = await createTestApp({ db, deps: { webhooks: { secretKey } } });
  other = await createTestApp({ db, deps: { webhooks: { secretKey } } });
  b = await createTestApp({ db });
  operatorToken = await createOperatorToken(db, a.clock);
});
afterAll(async () => {
  for (const t of [a, other, b]) await t?.close();
  await db?.close();
});

let address = 0;
function call(app: TestApp, session: Session | { bearer: string } | undefined, method: string, path: string, body?: unknown) {
  const auth =
    session === undefined
      ? {}
      : 'bearer' in session
        ? { authorization: `Bearer ${session.bearer}` }
        : { cookie: session.cookie, 'x-csrf-token': session.csrfToken };
  return app.app.request(path, {
    method,
    // One address per request: the per-IP limit is not what these tests are about.
    headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.9.${Math.floor(++address / 250)}.${address % 250}`, ...auth },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function login(person: Pick<Person, 'email' | 'password' | 'totpSecret'>, app = a): Promise<Response> {
  // One step further for every instance: each code is accepted once per account.
  for (const t of [a, other, b]) t.clock.advance(30_000);
  return call(app, undefined, 'POST', '/auth/login', {
    email: person.email,
    password: person.password,
    totpCode: totpCode(person.totpSecret, app.clock.now()),
  });
}

async function signIn(person: Pick<Person, 'email' | 'password' | 'totpSecret'>, app = a): Promise<Session> {
  const res = await login(person, app);
  expect(res.status, await res.clone().text()).toBe(200);
  const body = (await res.json()) as { csrfToken: string };
  return { cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]!, csrfToken: body.csrfToken };
}

const owner = (): Person => ({ userId: '', email: a.admin.email, password: a.admin.password, totpSecret: a.admin.totpSecret });

let counter = 0;
/** A new person in `t`'s workspace with the role, invited by its owner. */
async function join(t: TestApp, role: 'owner' | 'admin' | 'member'): Promise<Person> {
  const inviter = await signIn({ email: t.admin.email, password: t.admin.password, totpSecret: t.admin.totpSecret }, t);
  const email = `person-${++counter}-${role}@example.com`;
  const invited = await call(t, inviter, 'POST', '/workspace/invitations', { email, role });
  expect(invited.status).toBe(201);
  const { token } = (await invited.json()) as { token: string };
  const password = `a password of ${email}`;
  const accept = (body: Record<string, unknown>) => call(t, undefined, 'POST', '/invitations/accept', body);
  const accepted = zInvitationAccepted.parse(await (await completeTwoStep(accept, t.clock, { token, password })).json());
  const [row] = await db.query<{ id: string }>(`SELECT id FROM users WHERE email = $1`, [email]);
  return { userId: row!.id, email, password, totpSecret: accepted.totpSecret! };
}

async function reset(actor: Session, target: Person, kind: 'password' | 'totp' | 'both', app = a) {
  return call(app, actor, 'POST', `/workspace/members/${target.userId}/reset`, { reset: kind });
}

async function created(actor: Session, target: Person, kind: 'password' | 'totp' | 'both') {
  const res = await reset(actor, target, kind);
  expect(res.status, await res.clone().text()).toBe(201);
  return zAccountReset.parse(await res.json());
}

/** Redeems as a person does: a new two-step secret (the `202`) confirmed with its current code. */
function redeem(token: string, password: string, app = a) {
  return completeTwoStep((body) => call(app, undefined, 'POST', '/account-resets/redeem', body), app.clock, { token, password });
}

describe('who may reset whom', () => {
  // Resets only end sessions until redeemed, so the same people serve every case.
  const people: Partial<Record<'owner' | 'owner2' | 'admin' | 'admin2' | 'member' | 'member2', Person>> = {};
  beforeAll(async () => {
    people.owner = await join(a, 'owner');
    people.owner2 = await join(a, 'owner');
    people.admin = await join(a, 'admin');
    people.admin2 = await join(a, 'admin');
    people.member = await join(a, 'member');
    people.member2 = await join(a, 'member');
  });
  const targetOf = (role: 'owner' | 'admin' | 'member') => people[`${role}2`]!;

  // actor role → target → expected answer; `self` is the actor's own account.
  const TABLE = [
    ['owner', 'owner', 201],
    ['owner', 'admin', 201],
    ['owner', 'member', 201],
    ['owner', 'self', 'forbidden'],
    ['admin', 'owner', 'forbidden'],
    ['admin', 'admin', 201],
    ['admin', 'member', 201],
    ['admin', 'self', 'forbidden'],
    ['member', 'owner', 'role_forbidden'],
    ['member', 'admin', 'role_forbidden'],
    ['member', 'member', 'role_forbidden'],
    ['member', 'self', 'role_forbidden'],
  ] as const;

  for (const [actorRole, targetRole, expected] of TABLE) {
    it(`${actorRole} resets ${targetRole === 'self' ? 'their own account' : `an ${targetRole}`}: ${expected}`, async () => {
      const actor = people[actorRole]!;
      const target = targetRole === 'self' ? actor : targetOf(targetRole);
      const res = await reset(await signIn(actor), target, 'both');
      if (expected === 201) {
        expect(res.status).toBe(201);
        expect(zAccountReset.parse(await res.json())).toMatchObject({ userId: target.userId, email: target.email, reset: 'both' });
      } else {
        expect(res.status).toBe(403);
        expect(await res.json()).toMatchObject({ error: expected });
      }
    });
  }

  it("an account that also belongs to another workspace is the operator's to reset: 403 forbidden", async () => {
    const person = await join(b, 'member');
    const ownerA = await signIn(owner());
    const invited = (await (await call(a, ownerA, 'POST', '/workspace/invitations', { email: person.email, role: 'member' })).json()) as { token: string };
    expect((await call(a, undefined, 'POST', '/invitations/accept', { token: invited.token, password: person.password })).status).toBe(200);
    const res = await reset(ownerA, person, 'password');
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: 'forbidden' });
  });

  it('a user who is not a member of the workspace is member_not_found', async () => {
    const stranger = await join(b, 'member');
    const res = await reset(await signIn(owner()), stranger, 'password');
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: 'member_not_found' });
  });
});

describe('a reset ends the sessions and is redeemed once', () => {
  it('creating a reset ends every session of the account, on this instance and on another one', async () => {
    const member = await join(a, 'admin');
    const here = await signIn(member, a);
    const there = await signIn(member, other);
    for (const [app, session] of [
      [a, here],
      [other, there],
    ] as const)
      expect((await call(app, session, 'GET', '/workspace/members')).status).toBe(200);
    await created(await signIn(owner()), member, 'totp');
    for (const [app, session] of [
      [a, here],
      [other, there],
      [other, here],
      [a, there],
    ] as const) {
      const res = await call(app, session, 'GET', '/workspace/members');
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: 'not_authenticated' });
    }
    // The old credentials still work until the link is redeemed (a mistaken reset locks nobody out).
    expect((await login(member)).status).toBe(200);
  });

  it('password: a new password, two-step verification kept; the old password fails; sessions made meanwhile end', async () => {
    const member = await join(a, 'member');
    const link = await created(await signIn(owner()), member, 'password');
    const stored = await db.query(`SELECT * FROM account_resets WHERE id = $1`, [link.id]);
    expect(JSON.stringify(stored)).not.toContain(link.token);
    const meanwhile = await signIn(member, other);

    const res = await redeem(link.token, 'the new password of the member');
    expect(res.status).toBe(200);
    expect(zAccountResetRedeemed.parse(await res.json())).toEqual({ email: member.email, reset: 'password', totpSecret: null });
    expect((await call(other, meanwhile, 'GET', '/runs')).status).toBe(401);
    expect((await login(member)).status).toBe(401);
    expect((await login({ ...member, password: 'the new password of the member' })).status).toBe(200);
  });

  it('totp: proven with the current password; a new secret, the old one fails', async () => {
    const member = await join(a, 'admin');
    const link = await created(await signIn(owner()), member, 'totp');
    const wrong = await redeem(link.token, 'not the current password');
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ error: 'not_authenticated' });

    const res = await redeem(link.token, member.password);
    expect(res.status).toBe(200);
    const body = zAccountResetRedeemed.parse(await res.json());
    expect(body).toMatchObject({ email: member.email, reset: 'totp' });
    expect(body.totpSecret).toMatch(/^[A-Z2-7]{32}$/);
    expect(body.totpSecret).not.toBe(member.totpSecret);
    expect((await login(member)).status).toBe(401);
    const session = await signIn({ ...member, totpSecret: body.totpSecret! });
    // Still an admin with two-step verification: may manage the workspace.
    expect((await call(a, session, 'GET', '/workspace/members')).status).toBe(200);
  });

  it('both: a new password and a new secret', async () => {
    const member = await join(a, 'member');
    const link = await created(await signIn(owner()), member, 'both');
    const body = zAccountResetRedeemed.parse(await (await redeem(link.token, 'another new password')).json());
    expect(body.totpSecret).toMatch(/^[A-Z2-7]{32}$/);
    expect((await login({ ...member, password: 'another new password' })).status).toBe(401);
    expect((await login({ ...member, password: 'another new password', totpSecret: body.totpSecret! })).status).toBe(200);
  });

  it('single use: a used, a replaced and an expired link are 410 expired; an unknown one 404', async () => {
    const member = await join(a, 'member');
    const ownerSession = await signIn(owner());
    const used = await created(ownerSession, member, 'password');
    expect((await redeem(used.token, 'a first new password')).status).toBe(200);
    const again = await redeem(used.token, 'a second new password');
    expect(again.status).toBe(410);
    expect(await again.json()).toMatchObject({ error: 'expired', message: 'This reset link has expired, was replaced or was already used.' });

    const replaced = await created(ownerSession, member, 'password');
    const newer = await created(await signIn(owner()), member, 'password');
    expect((await redeem(replaced.token, 'a third new password')).status).toBe(410);

    a.clock.advance(RESET_TTL_MS);
    expect((await redeem(newer.token, 'a third new password')).status).toBe(410);

    const unknown = await redeem(`service_rst_${'A'.repeat(32)}`, 'a third new password');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: 'not_found' });
  });

  it('a link previews what it renews without using it up; used, it previews 410 expired; unknown, 404', async () => {
    const member = await join(a, 'member');
    const link = await created(await signIn(owner()), member, 'totp');
    const preview = (token: string) => call(a, undefined, 'POST', '/account-resets/preview', { token });
    for (let i = 0; i < 2; i++) {
      const res = await preview(link.token);
      expect(res.status).toBe(200);
      expect(zAccountResetPreview.parse(await res.json())).toEqual({ email: member.email, reset: 'totp', expiresAt: link.expiresAt });
    }
    expect((await redeem(link.token, member.password)).status).toBe(200);
    const used = await preview(link.token);
    expect(used.status).toBe(410);
    expect(await used.json()).toMatchObject({ error: 'expired' });
    expect((await preview(`service_rst_${'A'.repeat(32)}`)).status).toBe(404);
  });

  it(`a totp link is burnt after ${RESET_MAX_FAILURES} wrong current passwords`, async () => {
    const member = await join(a, 'member');
    const link = await created(await signIn(owner()), member, 'totp');
    for (let i = 0; i < RESET_MAX_FAILURES; i++) expect((await redeem(link.token, 'a wrong current password')).status).toBe(401);
    expect((await redeem(link.token, member.password)).status).toBe(410);
  });
});

describe("the operator's reset", () => {
  function operator(body: unknown) {
    return call(a, { bearer: operatorToken }, 'POST', '/operator/users/resets', body);
  }

  it("resets a workspace's last owner by email and ends their sessions", async () => {
    const theOwner = { email: b.admin.email, password: b.admin.password, totpSecret: b.admin.totpSecret };
    const session = await signIn(theOwner, b);
    const res = await operator({ email: b.admin.email.toUpperCase(), reset: 'totp' });
    expect(res.status).toBe(201);
    const link = zAccountReset.parse(await res.json());
    expect(link).toMatchObject({ email: b.admin.email, reset: 'totp' });
    expect((await call(b, session, 'GET', '/workspace/members')).status).toBe(401);
    const body = zAccountResetRedeemed.parse(await (await redeem(link.token, b.admin.password, b)).json());
    const signedIn = await signIn({ ...theOwner, totpSecret: body.totpSecret! }, b);
    expect((await call(b, signedIn, 'GET', '/workspace/members')).status).toBe(200);
    b.admin.totpSecret = body.totpSecret!;
  });

  it('an unknown email is 404 not_found; no operator token is 401', async () => {
    const res = await operator({ email: 'nobody-here@example.com', reset: 'password' });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: 'not_found', message: 'No account has this email.' });
    expect((await call(a, { bearer: a.apiKey }, 'POST', '/operator/users/resets', { email: a.admin.email, reset: 'password' })).status).toBe(401);
  });
});
