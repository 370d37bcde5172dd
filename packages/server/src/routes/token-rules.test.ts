/**
 * Rules at the moment of use, over the HTTP API on both stores: a single-use link is
 * checked again when it is used against the rules that allowed it to be made, read then.
 * - A reset made by a workspace's admin is refused (`403 forbidden`, nothing used up, the account untouched) once the
 *   account joined another workspace, was made an owner, or its maker was demoted; it works again once the rules hold.
 * - An invitation is refused once its inviter was demoted below the role it grants; the workspace's standing applies
 *   (`403 tenant_forbidden`, `402 payment_not_completed`).
 * - A session's rights follow the member's role now.
 * - Two-step verification set up by a link takes effect only once its first code is confirmed: the first request
 *   answers `202` with the secret and uses nothing up (no account, no member listed, the old second factor kept).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zAccountReset, zAccountResetRedeemed, zInvitation, zInvitationAccepted, zMemberList, zTwoStepSetup } from '../../../../generated/zod.ts';
import { totpCode } from '../domain/sessions/totp.ts';
import { ephemeralSecretKey } from '../domain/webhooks/secret-box.ts';
import { updateWorkspace } from '../domain/workspaces/index.ts';
import { createTestApp, type TestApp } from '@service/testing/app';
import { testBackends, type TestStore } from '@service/testing/store';
import { completeTwoStep } from '@service/testing/two-step';

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
type Role = 'owner' | 'admin' | 'member';

describe.each(testBackends())('tokens checked when used, on $name', ({ open }) => {
  let store: TestStore;
  let a: TestApp;
  let b: TestApp;
  let ownerA: Person;
  let ownerB: Person;

  beforeAll(async () => {
    store = await open();
    // One deployment, two workspaces: its instances share the SECRET_KEY.
    const secretKey = ephemeralSecretKey();
    a = await createTestApp({ db: store.db, deps: { webhooks: { secretKey } } });
    b = await createTestApp({ db: store.db, deps: { webhooks: { secretKey } } });
    ownerA = { userId: '', email: a.admin.email, password: a.admin.password, totpSecret: a.admin.totpSecret };
    ownerB = { userId: '', email: b.admin.email, password: b.admin.password, totpSecret: b.admin.totpSecret };
  });
  afterAll(async () => {
    for (const t of [a, b]) await t?.close();
    await store?.cleanup();
  });

  let address = 0;
  function call(app: TestApp, session: Session | undefined, method: string, path: string, body?: unknown) {
    return app.app.request(path, {
      method,
      // One address per request: the per-IP limit is not what these tests are about.
      headers: {
        'content-type': 'application/json',
        'x-forwarded-for': `10.32.${Math.floor(++address / 250)}.${address % 250}`,
        ...(session ? { cookie: session.cookie, 'x-csrf-token': session.csrfToken } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  function login(person: Person, app = a) {
    // One step further on both clocks: each code is accepted once per account.
    for (const t of [a, b]) t.clock.advance(30_000);
    return call(app, undefined, 'POST', '/auth/login', {
      email: person.email,
      password: person.password,
      totpCode: totpCode(person.totpSecret, app.clock.now()),
    });
  }

  async function signIn(person: Person, app = a): Promise<Session> {
    const res = await login(person, app);
    expect(res.status, await res.clone().text()).toBe(200);
    return { cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]!, csrfToken: ((await res.json()) as { csrfToken: string }).csrfToken };
  }

  async function invite(app: TestApp, inviter: Person, email: string, role: Role) {
    const res = await call(app, await signIn(inviter, app), 'POST', '/workspace/invitations', { email, role });
    expect(res.status, await res.clone().text()).toBe(201);
    return zInvitation.parse(await res.json());
  }

  const accept = (app: TestApp, body: Record<string, unknown>) => call(app, undefined, 'POST', '/invitations/accept', body);
  const redeem = (body: Record<string, unknown>) => call(a, undefined, 'POST', '/account-resets/redeem', body);

  let counter = 0;
  /** A new person of `app`'s workspace with the role, invited by `inviter`, the two-step secret confirmed. */
  async function join(app: TestApp, inviter: Person, role: Role): Promise<Person> {
    const email = `token-rules-${++counter}-${role}@example.com`;
    const { token } = await invite(app, inviter, email, role);
    const password = `a password of ${email}`;
    const res = await completeTwoStep((body) => accept(app, body), app.clock, { token, password });
    expect(res.status, await res.clone().text()).toBe(200);
    const accepted = zInvitationAccepted.parse(await res.json());
    const [row] = await store.db.query<{ id: string }>(`SELECT id FROM users WHERE email = $1`, [email]);
    return { userId: row!.id, email, password, totpSecret: accepted.totpSecret! };
  }

  async function setRole(person: Person, role: Role, app = a, by = ownerA) {
    const res = await call(app, await signIn(by, app), 'PATCH', `/workspace/members/${person.userId}`, { role });
    expect(res.status, await res.clone().text()).toBe(200);
  }

  async function resetBy(actor: Person, target: Person, kind: 'password' | 'totp' | 'both') {
    const res = await call(a, await signIn(actor), 'POST', `/workspace/members/${target.userId}/reset`, { reset: kind });
    expect(res.status, await res.clone().text()).toBe(201);
    return zAccountReset.parse(await res.json());
  }

  async function expectRefused(res: Response, status: number, error: string) {
    expect(res.status, await res.clone().text()).toBe(status);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.json()).toMatchObject({ error, message: expect.any(String) });
  }

  describe('a reset redeemed after its rules stopped holding (items 2 and 3)', () => {
    it("an admin's reset of a member who became an owner of another workspace since: 403 forbidden, the account untouched", async () => {
      const admin = await join(a, ownerA, 'admin');
      const member = await join(a, ownerA, 'member');
      const { token } = await resetBy(admin, member, 'password');
      // The member joins workspace B as its owner, with the account's password.
      const { token: invitation } = await invite(b, ownerB, member.email, 'owner');
      expect((await accept(b, { token: invitation, password: member.password })).status).toBe(200);

      await expectRefused(await call(a, undefined, 'POST', '/account-resets/preview', { token }), 403, 'forbidden');
      await expectRefused(await redeem({ token, password: 'the password of the one holding the link' }), 403, 'forbidden');
      // The account keeps its password, in A and in B where it is an owner.
      expect((await login(member, b)).status).toBe(200);
      expect((await login({ ...member, password: 'the password of the one holding the link' }, b)).status).toBe(401);
    });

    it("an admin's reset of a member who was made an owner since: 403 forbidden; allowed again once the rules hold again", async () => {
      const admin = await join(a, ownerA, 'admin');
      const member = await join(a, ownerA, 'member');
      const { token } = await resetBy(admin, member, 'password');
      await setRole(member, 'owner');

      await expectRefused(await redeem({ token, password: 'the password of the one holding the link' }), 403, 'forbidden');
      expect((await login(member)).status).toBe(200);

      // Nothing was used up: once a member again, the link does what it was made for.
      await setRole(member, 'member');
      const res = await redeem({ token, password: 'a new password after all' });
      expect(res.status, await res.clone().text()).toBe(200);
      expect(zAccountResetRedeemed.parse(await res.json())).toEqual({ email: member.email, reset: 'password', totpSecret: null });
    });

    it('a reset whose maker was demoted to member since: 403 forbidden', async () => {
      const admin = await join(a, ownerA, 'admin');
      const member = await join(a, ownerA, 'member');
      const { token } = await resetBy(admin, member, 'password');
      await setRole(admin, 'member');
      await expectRefused(await redeem({ token, password: 'the password of the one holding the link' }), 403, 'forbidden');
      expect((await login(member)).status).toBe(200);
    });

    it('a reset in a workspace whose payment is pending since: 402 payment_not_completed', async () => {
      const member = await join(a, ownerA, 'member');
      const { token } = await resetBy(ownerA, member, 'password');
      // As `workspaces create --pending-payment` starts one: the operator API only records a payment.
      await store.db.query(`UPDATE workspaces SET payment = 'pending' WHERE id = $1`, [a.workspaceId]);
      try {
        await expectRefused(await redeem({ token, password: 'a new password of the member' }), 402, 'payment_not_completed');
      } finally {
        await updateWorkspace(store.db, a.clock, a.workspaceId, { payment: 'completed' });
      }
      expect((await redeem({ token, password: 'a new password of the member' })).status).toBe(200);
    });
  });

  describe('an invitation accepted after its rules stopped holding (item 3)', () => {
    it('an admin invites X as admin and is demoted to member: X is refused (403 forbidden) and is no member', async () => {
      const admin = await join(a, ownerA, 'admin');
      const email = `invited-by-a-demoted-admin-${++counter}@example.com`;
      const { id, token } = await invite(a, admin, email, 'admin');
      await setRole(admin, 'member');

      await expectRefused(await call(a, undefined, 'POST', '/invitations/preview', { token }), 403, 'forbidden');
      await expectRefused(await completeTwoStep((body) => accept(a, body), a.clock, { token, password: 'a password of the invitee' }), 403, 'forbidden');
      const [user] = await store.db.query(`SELECT 1 FROM users WHERE email = $1`, [email]);
      expect(user).toBeUndefined();

      // Still open: the owner resends it on their own authority, and it is accepted.
      const resent = await call(a, await signIn(ownerA), 'POST', `/workspace/invitations/${id}/resend`);
      expect(resent.status).toBe(201);
      const { token: fresh } = zInvitation.parse(await resent.json());
      const res = await completeTwoStep((body) => accept(a, body), a.clock, { token: fresh, password: 'a password of the invitee' });
      expect(res.status).toBe(200);
      expect(zInvitationAccepted.parse(await res.json())).toMatchObject({ email, role: 'admin' });
    });

    it("an owner's invitation of an owner whose inviter is an admin now: 403 forbidden", async () => {
      const owner2 = await join(a, ownerA, 'owner');
      const { token } = await invite(a, owner2, `owner-invited-${++counter}@example.com`, 'owner');
      await setRole(owner2, 'admin');
      await expectRefused(await completeTwoStep((body) => accept(a, body), a.clock, { token, password: 'a password of the invitee' }), 403, 'forbidden');
    });

    it('an invitation of a workspace suspended since: 403 tenant_forbidden, usable again once it is active', async () => {
      const { token } = await invite(a, ownerA, `invited-before-suspension-${++counter}@example.com`, 'member');
      await updateWorkspace(store.db, a.clock, a.workspaceId, { status: 'suspended' });
      try {
        await expectRefused(await accept(a, { token, password: 'a password of the invitee' }), 403, 'tenant_forbidden');
      } finally {
        await updateWorkspace(store.db, a.clock, a.workspaceId, { status: 'active' });
      }
      expect((await completeTwoStep((body) => accept(a, body), a.clock, { token, password: 'a password of the invitee' })).status).toBe(200);
    });
  });

  it("a session's rights follow the member's role now: an admin demoted to member is refused at the next request", async () => {
    const admin = await join(a, ownerA, 'admin');
    const session = await signIn(admin);
    expect((await call(a, session, 'GET', '/workspace/members')).status).toBe(200);
    await setRole(admin, 'member');
    await expectRefused(await call(a, session, 'GET', '/workspace/members'), 403, 'role_forbidden');
  });

  describe('two-step verification set up by a link takes effect once its first code is confirmed (item 12)', () => {
    async function members(): Promise<{ email: string; twoFactorEnabled: boolean }[]> {
      const res = await call(a, await signIn(ownerA), 'GET', '/workspace/members');
      return zMemberList.parse(await res.json()).data;
    }

    it('a new account: 202 with the secret and nothing used up, the same secret again; a wrong code 401; the code then joins', async () => {
      const email = `two-step-${++counter}@example.com`;
      const { token } = await invite(a, ownerA, email, 'member');
      const body = { token, password: 'a password of the invitee' };

      const first = await accept(a, body);
      expect(first.status).toBe(202);
      const setup = zTwoStepSetup.parse(await first.json());
      expect(setup.email).toBe(email);
      // The tab closed: the link still works, nobody was created, and the same secret comes back.
      expect((await call(a, undefined, 'POST', '/invitations/preview', { token })).status).toBe(200);
      expect((await members()).map((m) => m.email)).not.toContain(email);
      expect(await store.db.query(`SELECT 1 FROM users WHERE email = $1`, [email])).toEqual([]);
      expect(zTwoStepSetup.parse(await (await accept(a, body)).json())).toEqual(setup);

      const wrong = String((Number(totpCode(setup.totpSecret, a.clock.now())) + 1) % 1_000_000).padStart(6, '0');
      await expectRefused(await accept(a, { ...body, totpCode: wrong }), 401, 'not_authenticated');
      expect((await members()).map((m) => m.email)).not.toContain(email);

      const code = totpCode(setup.totpSecret, a.clock.now());
      const done = await accept(a, { ...body, totpCode: code });
      expect(done.status).toBe(200);
      expect(zInvitationAccepted.parse(await done.json())).toEqual({ workspaceId: a.workspaceId, email, role: 'member', totpSecret: setup.totpSecret });
      expect((await members()).find((m) => m.email === email)).toMatchObject({ twoFactorEnabled: true });
      // The link is used up. Confirming is no sign-in: the page signs in with the same code, once.
      expect(await (await accept(a, { ...body, totpCode: code })).json()).toMatchObject({ error: 'expired', reason: 'used' });
      const signIn = () => call(a, undefined, 'POST', '/auth/login', { email, password: body.password, totpCode: code });
      expect((await signIn()).status).toBe(200);
      expect((await signIn()).status).toBe(401);
    });

    it('a totp reset: 202 keeps the old second factor; the confirmed code replaces it', async () => {
      const member = await join(a, ownerA, 'member');
      const { token } = await resetBy(ownerA, member, 'totp');
      const first = await redeem({ token, password: member.password });
      expect(first.status).toBe(202);
      const { totpSecret } = zTwoStepSetup.parse(await first.json());
      expect(totpSecret).not.toBe(member.totpSecret);
      // Leaving here locks nobody out: the old authenticator still signs in.
      expect((await login(member)).status).toBe(200);

      const done = await redeem({ token, password: member.password, totpCode: totpCode(totpSecret, a.clock.now()) });
      expect(done.status).toBe(200);
      expect(zAccountResetRedeemed.parse(await done.json())).toEqual({ email: member.email, reset: 'totp', totpSecret });
      expect((await login(member)).status).toBe(401);
      expect((await login({ ...member, totpSecret })).status).toBe(200);
    });

    it('a reset of both: 202 changes neither the password nor the second factor; a wrong code 401 leaves the link usable', async () => {
      const member = await join(a, ownerA, 'member');
      const { token } = await resetBy(ownerA, member, 'both');
      const body = { token, password: 'the new password of the member' };
      const { totpSecret } = zTwoStepSetup.parse(await (await redeem(body)).json());
      expect((await login(member)).status).toBe(200);
      const wrong = String((Number(totpCode(totpSecret, a.clock.now())) + 1) % 1_000_000).padStart(6, '0');
      await expectRefused(await redeem({ ...body, totpCode: wrong }), 401, 'not_authenticated');
      expect((await login(member)).status).toBe(200);
      const done = await completeTwoStep(redeem, a.clock, body);
      expect(done.status).toBe(200);
      expect((await login({ ...member, password: body.password, totpSecret })).status).toBe(200);
    });
  });
});
