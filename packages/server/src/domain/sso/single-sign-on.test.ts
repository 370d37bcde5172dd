/**
 * Single sign-on end to end at the API, on each store (PGlite; PostgreSQL when DATABASE_URL is set): the owner's
 * settings routes (owner only, the secret sealed at rest and never answered, the issuer past the destinations'
 * guard), and the sign-in against a real OpenID Connect provider on loopback (`oidc-provider` over HTTPS, allowed as
 * the receivers of the tests are): just-in-time membership, the session it opens, and every refusal (state, nonce,
 * domain, unverified email, the provider's error, not a member), the SSO-required rule and its owner's way back in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '@service/testing/app';
import { createSelfSignedCertificate } from '@service/testing/https-receiver';
import { startTestIdentityProvider, type TestIdentityProvider } from '@service/testing/oidc-provider';
import { caller, type Session } from '@service/testing/panel-sessions';
import { testBackends, type TestStore } from '@service/testing/store';
import { randomBase62 } from '../../random.ts';
import { createUser, totpCode } from '../sessions/index.ts';

/** The address the tests call the service at: the redirect URI is on it. */
const ORIGIN = 'https://service.test';
const REDIRECT_URI = `${ORIGIN}/panel/sso/callback`;
const DOMAIN = 'northwind.example';

describe.each(testBackends())('single sign-on on $name', { timeout: 60_000 }, (backend) => {
  let store: TestStore;
  let t: TestApp;
  let idp: TestIdentityProvider;
  let owner: Session;
  let call: ReturnType<typeof caller>;

  const settings = (extra: Record<string, unknown> = {}) => ({
    issuer: idp.issuer,
    clientId: idp.clientId,
    clientSecret: idp.clientSecret,
    allowedDomains: [DOMAIN],
    ...extra,
  });

  beforeAll(async () => {
    store = await backend.open();
    const certificate = createSelfSignedCertificate();
    idp = await startTestIdentityProvider({ certificate, redirectUris: [REDIRECT_URI] });
    // The provider is on loopback: allowed as the tests' receivers are (WEBHOOK_ALLOW_HOSTS), trusted through `ca`.
    t = await createTestApp({ db: store.db, deps: { webhooks: { allowList: ['127.0.0.1'] }, sso: { ca: certificate.cert } } });
    owner = await t.login();
    call = caller(t);
  });

  afterAll(async () => {
    await idp?.close();
    await t?.close();
    await store?.cleanup();
  });

  /** A person of the workspace with `role`, two-step verification on, signed in with a password. */
  async function person(role: 'admin' | 'member' | 'owner', email = `${role}-${randomBase62(6).toLowerCase()}@${DOMAIN}`) {
    const password = 'a password of this person';
    const user = await createUser(store.db, t.clock, t.workspaceId, { email, password, role, withTotp: true, secretBox: t.services.webhooks.secretBox });
    const login = async () => {
      t.clock.advance(30_000);
      return call(undefined, 'POST', '/auth/login', { email, password, totpCode: totpCode(user.totpSecret!, t.clock.now()) });
    };
    const res = await login();
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const session: Session = { cookie: res.headers.get('set-cookie')!.split(';')[0]!, csrfToken: res.body.csrfToken };
    return { email, session, login, userId: user.id };
  }

  /** Starts a sign-in as `email`: the authorization URL and the flow cookie. */
  async function start(email: string) {
    const res = await t.app.request(`${ORIGIN}/auth/sso/start`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email }),
    });
    const body = (await res.json()) as { authorizationUrl: string };
    expect(res.status, JSON.stringify(body)).toBe(200);
    return {
      authorizationUrl: new URL(body.authorizationUrl as string),
      setCookie: res.headers.get('set-cookie')!,
      cookie: res.headers.get('set-cookie')!.split(';')[0]!,
    };
  }

  /** Sends what the provider returned to the callback, with the flow cookie. */
  async function finish(cookie: string | undefined, returned: URL) {
    const body = Object.fromEntries(
      ['state', 'code', 'iss', 'error'].flatMap((name) => (returned.searchParams.has(name) ? [[name, returned.searchParams.get(name)]] : [])),
    );
    const res = await t.app.request(`${ORIGIN}/auth/sso/callback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
      body: JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as any };
  }

  /** The workspace's single sign-on with the test provider, making admins at sign-in unless `extra` says otherwise. */
  async function configure(extra: Record<string, unknown> = {}) {
    const res = await call(owner, 'PUT', '/workspace/sso', settings({ jitMembership: true, defaultRole: 'admin', ...extra }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }

  /** A whole sign-in as the provider's current user. */
  async function signInAs(email: string, emailVerified = true) {
    idp.user = { email, emailVerified };
    const started = await start(email);
    return finish(started.cookie, await idp.follow(started.authorizationUrl.toString()));
  }

  it('answers 404 while the workspace has no single sign-on, and refuses a first setup without a client secret', async () => {
    const none = await call(owner, 'GET', '/workspace/sso');
    expect(none.status).toBe(404);
    expect(none.body).toMatchObject({ error: 'not_found' });
    const noSecret = await call(owner, 'PUT', '/workspace/sso', { ...settings(), clientSecret: undefined });
    expect(noSecret.status).toBe(400);
    expect(noSecret.body).toMatchObject({ error: 'invalid_body', param: 'clientSecret' });
  });

  it('lets only an owner read, set and remove it; the client secret is sealed at rest and never answered', async () => {
    const set = await call(owner, 'PUT', '/workspace/sso', settings({ jitMembership: true, defaultRole: 'admin' }));
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toEqual({
      issuer: idp.issuer,
      clientId: idp.clientId,
      clientSecretSet: true,
      allowedDomains: [DOMAIN],
      jitMembership: true,
      defaultRole: 'admin',
      ssoRequired: false,
      redirectPath: '/panel/sso/callback',
      updatedAt: t.clock.now().toISOString(),
    });
    const read = await call(owner, 'GET', '/workspace/sso');
    expect(read.status).toBe(200);
    expect(read.body).toEqual(set.body);
    for (const answer of [set, read]) expect(JSON.stringify(answer.body)).not.toContain(idp.clientSecret);
    const [stored] = await store.db.query<{ sealed: string }>(`SELECT client_secret_encrypted AS sealed FROM sso_settings WHERE workspace_id = $1`, [
      t.workspaceId,
    ]);
    expect(stored!.sealed).toMatch(/^v1\./);
    expect(stored!.sealed).not.toContain(idp.clientSecret);
    expect(t.services.webhooks.secretBox.open(stored!.sealed)).toBe(idp.clientSecret);

    // A change without a secret keeps the stored one.
    const changed = await call(owner, 'PUT', '/workspace/sso', { ...settings({ jitMembership: true, defaultRole: 'admin' }), clientSecret: undefined });
    expect(changed.status).toBe(200);
    const [kept] = await store.db.query<{ sealed: string }>(`SELECT client_secret_encrypted AS sealed FROM sso_settings WHERE workspace_id = $1`, [
      t.workspaceId,
    ]);
    expect(t.services.webhooks.secretBox.open(kept!.sealed)).toBe(idp.clientSecret);

    const admin = await person('admin');
    const member = await person('member');
    for (const who of [admin, member]) {
      for (const [method, body] of [['GET'], ['PUT', settings()], ['DELETE']] as const) {
        const res = await call(who.session, method, '/workspace/sso', body);
        expect(res.status, `${method} as another role`).toBe(403);
        expect(res.body).toMatchObject({ error: 'role_forbidden' });
      }
    }
    const anonymous = await call(undefined, 'GET', '/workspace/sso');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ error: 'not_authenticated' });
    const noCsrf = await call({ cookie: owner.cookie, csrfToken: 'wrong' }, 'PUT', '/workspace/sso', settings());
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.body).toMatchObject({ error: 'forbidden' });

    const audit = await call(owner, 'GET', '/audit-events?limit=50');
    const actions = (audit.body.data as { action: string; details: unknown }[]).map((e) => e.action);
    expect(actions).toContain('sso.configured');
    expect(actions).toContain('sso.updated');
    expect(JSON.stringify(audit.body)).not.toContain(idp.clientSecret);
  });

  it("refuses a bad issuer, an owner's role for new members and bad domains with the spec's error body", async () => {
    for (const [body, param] of [
      [settings({ issuer: 'http://login.northwind.example' }), 'issuer'],
      [settings({ issuer: 'https://10.1.2.3' }), 'issuer'],
      [settings({ issuer: 'https://169.254.169.254' }), 'issuer'],
      [settings({ defaultRole: 'owner' }), 'defaultRole'],
      [settings({ allowedDomains: [] }), 'allowedDomains'],
      [settings({ allowedDomains: ['not a domain'] }), 'allowedDomains[0]'],
    ] as const) {
      const res = await call(owner, 'PUT', '/workspace/sso', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toMatchObject({ error: 'invalid_body', param });
    }
  });

  it('signs a new person of an allowed domain in, making them a member with the default role (PKCE, state and nonce)', async () => {
    await configure();
    const email = `dana-${randomBase62(6).toLowerCase()}@${DOMAIN}`;
    idp.user = { email, emailVerified: true };
    const started = await start(email);
    expect(started.authorizationUrl.origin).toBe(idp.issuer);
    const params = started.authorizationUrl.searchParams;
    expect(params.get('redirect_uri')).toBe(REDIRECT_URI);
    expect(params.get('code_challenge_method')).toBe('S256');
    for (const name of ['state', 'nonce', 'code_challenge']) expect(params.get(name)).toMatch(/^[\w-]{20,}$/);
    expect(started.setCookie).toMatch(/^service_sso=v1\.[^;]+; Max-Age=600; Path=\/auth\/sso; HttpOnly; Secure; SameSite=Strict/);

    const returned = await idp.follow(started.authorizationUrl.toString());
    expect(returned.origin + returned.pathname).toBe(REDIRECT_URI);
    const done = await finish(started.cookie, returned);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body).toMatchObject({
      user: { email, role: 'admin', twoFactorEnabled: false },
      workspaceId: t.workspaceId,
      workspaces: [{ id: t.workspaceId, role: 'admin' }],
    });
    expect(done.headers.get('cache-control')).toBe('no-store');
    const cookies = done.headers.getSetCookie();
    expect(cookies.some((c) => /^service_sso=;/.test(c))).toBe(true);
    const sessionCookie = cookies.find((c) => c.startsWith('service_session='))!;
    expect(sessionCookie).toMatch(/HttpOnly; Secure; SameSite=Strict/);
    const session: Session = { cookie: sessionCookie.split(';')[0]!, csrfToken: done.body.csrfToken };

    // The same session a password opens: who am I, and admin rights (the provider's sign-in stands for two-step).
    const me = await call(session, 'GET', '/auth/session');
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ user: { email }, workspaceId: t.workspaceId, csrfToken: session.csrfToken });
    expect((await call(session, 'GET', '/api-keys')).status).toBe(200);

    const audit = await call(owner, 'GET', '/audit-events?limit=50');
    const events = audit.body.data as { action: string; actor: { label: string }; details: Record<string, unknown> }[];
    expect(events.find((e) => e.action === 'member.joined_by_sso' && e.actor.label === email)?.details).toEqual({ role: 'admin' });
    expect(events.find((e) => e.action === 'session.signed_in' && e.actor.label === email)?.details).toEqual({ method: 'sso' });

    // A flow cookie is used once: the same answer again opens nothing.
    const again = await finish(started.cookie, returned);
    expect(again.status).toBe(401);
    expect(again.body).toMatchObject({ error: 'not_authenticated' });
  });

  it("refuses a state of another sign-in, a wrong nonce, no flow cookie and the provider's error, with no session", async () => {
    await configure();
    const email = `erin-${randomBase62(6).toLowerCase()}@${DOMAIN}`;
    idp.user = { email, emailVerified: true };

    const first = await start(email);
    const second = await start(email);
    const returned = await idp.follow(second.authorizationUrl.toString());
    const otherState = await finish(first.cookie, returned);
    expect(otherState.status).toBe(401);
    expect(otherState.body).toEqual({ error: 'not_authenticated', message: expect.stringContaining('not started in this browser') });
    expect(otherState.headers.getSetCookie().some((c) => c.startsWith('service_session='))).toBe(false);

    const noCookie = await finish(undefined, await idp.follow((await start(email)).authorizationUrl.toString()));
    expect(noCookie.status).toBe(401);

    // The nonce the provider signs into the ID token is not this sign-in's.
    const tampered = await start(email);
    tampered.authorizationUrl.searchParams.set('nonce', 'a-nonce-of-another-sign-in-entirely');
    const wrongNonce = await finish(tampered.cookie, await idp.follow(tampered.authorizationUrl.toString()));
    expect(wrongNonce.status).toBe(401);
    expect(wrongNonce.body).toEqual({ error: 'not_authenticated', message: expect.stringContaining('nonce') });
    expect(wrongNonce.headers.getSetCookie().some((c) => c.startsWith('service_session='))).toBe(false);

    idp.deny = true;
    try {
      const denied = await start(email);
      const back = await idp.follow(denied.authorizationUrl.toString());
      expect(back.searchParams.get('error')).toBe('access_denied');
      const refused = await finish(denied.cookie, back);
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual({ error: 'not_authenticated', message: expect.stringContaining('access_denied') });
    } finally {
      idp.deny = false;
    }
    const members = await call(owner, 'GET', '/workspace/members');
    expect(JSON.stringify(members.body)).not.toContain(email);
  });

  it('refuses an unverified email and one outside the allowed domains', async () => {
    await configure();
    const unverified = await signInAs(`frank-${randomBase62(6).toLowerCase()}@${DOMAIN}`, false);
    expect(unverified.status).toBe(401);
    expect(unverified.body).toEqual({ error: 'not_authenticated', message: 'The identity provider has not verified this email address.' });
    // The provider vouches for an address of another domain than the one the sign-in started with.
    idp.user = { email: 'gina@elsewhere.example', emailVerified: true };
    const started = await start(`gina@${DOMAIN}`);
    const outside = await finish(started.cookie, await idp.follow(started.authorizationUrl.toString()));
    expect(outside.status).toBe(401);
    expect(outside.body).toEqual({ error: 'not_authenticated', message: 'This workspace does not sign in addresses of this email domain.' });
    const unknown = await call(undefined, 'POST', '/auth/sso/start', { email: 'gina@elsewhere.example' });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: 'not_found' });
  });

  it('without just-in-time membership signs members in and refuses everyone else', async () => {
    await configure({ jitMembership: false });
    const stranger = await signInAs(`hugo-${randomBase62(6).toLowerCase()}@${DOMAIN}`);
    expect(stranger.status).toBe(403);
    expect(stranger.body).toMatchObject({ error: 'tenant_forbidden' });
    const member = await person('member');
    const known = await signInAs(member.email);
    expect(known.status, JSON.stringify(known.body)).toBe(200);
    expect(known.body.user).toMatchObject({ email: member.email, role: 'member' });
  });

  it('when required, closes the password sign-in to members (their open sessions too) but not to owners', async () => {
    const member = await person('member');
    const secondOwner = await person('owner');
    await configure({ ssoRequired: true });
    try {
      const refused = await member.login();
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual({ error: 'not_authenticated', message: expect.stringContaining('single sign-on') });
      expect((await call(member.session, 'GET', '/auth/session')).status).toBe(401);
      // The owners' way back in when the provider fails.
      expect((await secondOwner.login()).status).toBe(200);
      expect((await call(secondOwner.session, 'GET', '/auth/session')).status).toBe(200);
      // Single sign-on opens it to the member.
      const sso = await signInAs(member.email);
      expect(sso.status).toBe(200);
    } finally {
      expect((await call(owner, 'PUT', '/workspace/sso', settings({ ssoRequired: false }))).status).toBe(200);
    }
  });

  it('keeps a single sign-on session on its workspace, and removes the settings', async () => {
    await configure();
    const member = await person('member');
    const signed = await signInAs(member.email);
    expect(signed.status).toBe(200);
    const session: Session = {
      cookie: signed.headers
        .getSetCookie()
        .find((c) => c.startsWith('service_session='))!
        .split(';')[0]!,
      csrfToken: signed.body.csrfToken,
    };
    const elsewhere = await call(session, 'POST', '/auth/workspace', { workspaceId: 'wksp_another0000000000' });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body).toMatchObject({ error: 'tenant_forbidden' });

    expect((await call(owner, 'DELETE', '/workspace/sso')).status).toBe(204);
    expect((await call(owner, 'GET', '/workspace/sso')).status).toBe(404);
    expect((await call(owner, 'DELETE', '/workspace/sso')).status).toBe(404);
    const actions = ((await call(owner, 'GET', '/audit-events?limit=100')).body.data as { action: string }[]).map((e) => e.action);
    expect(actions).toContain('sso.removed');
  });
});

describe('single sign-on without an allow-list', () => {
  it('refuses an issuer on loopback, as webhook destinations are refused', async () => {
    const t = await createTestApp();
    try {
      const owner = await t.login();
      const res = await caller(t)(owner, 'PUT', '/workspace/sso', {
        issuer: 'https://127.0.0.1:8443',
        clientId: 'c',
        clientSecret: 's',
        allowedDomains: [DOMAIN],
      });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 'invalid_body', param: 'issuer' });
    } finally {
      await t.close();
    }
  });
});
