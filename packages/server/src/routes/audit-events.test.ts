/**
 * The audit log (GET /audit-events) on both stores: each family of changes writes its event with the actor the
 * credential proved, the target, the client address (X-Forwarded-For under TRUST_PROXY) and the request id; a change
 * and its event commit together; the filters and pages; owners and admins only; never a secret in any row.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zAuditEventList } from '../../../../generated/zod.ts';
import { totpCode } from '../domain/sessions/totp.ts';
import { createTestApp, type TestApp } from '@service/testing/app';
import { testBackends, type TestStore } from '@service/testing/store';
import { completeTwoStep } from '@service/testing/two-step';

interface Session {
  cookie: string;
  csrfToken: string;
}

describe.each(testBackends())('the audit log on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  let owner: Session;
  let ownerId: string;
  /** Every secret and token the changes below showed once: none may be found in a row. */
  const secrets: string[] = [];
  let request = 0;

  beforeAll(async () => {
    store = await open();
    t = await createTestApp({ db: store.db, deps: { config: { trustProxy: 1 }, webhooks: { allowList: ['127.0.0.1'] } } });
    secrets.push(t.admin.password, t.admin.totpSecret, t.apiKey);
    owner = await signIn(t.admin.email, t.admin.password, t.admin.totpSecret);
    [{ id: ownerId }] = (await store.db.query<{ id: string }>(`SELECT id FROM users WHERE email = $1`, [t.admin.email])) as [{ id: string }];
  });
  afterAll(async () => {
    await t?.close();
    await store?.cleanup();
  });

  /** A request from 203.0.113.<n>, with the request id `req-audit-<n>`. */
  function call(session: Session | undefined, method: string, path: string, body?: unknown) {
    request += 1;
    return t.app.request(path, {
      method,
      headers: {
        'content-type': 'application/json',
        'x-forwarded-for': `203.0.113.${request % 250}`,
        'x-request-id': `req-audit-${request}`,
        ...(session ? { cookie: session.cookie, 'x-csrf-token': session.csrfToken } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  async function ok(res: Response, status: number) {
    expect(res.status, await res.clone().text()).toBe(status);
    return status === 204 ? {} : ((await res.json()) as Record<string, unknown>);
  }

  async function signIn(email: string, password: string, totpSecret: string): Promise<Session> {
    t.clock.advance(30_000);
    const res = await call(undefined, 'POST', '/auth/login', { email, password, totpCode: totpCode(totpSecret, t.clock.now()) });
    const body = (await ok(res, 200)) as { csrfToken: string };
    secrets.push(body.csrfToken, (res.headers.get('set-cookie') ?? '').split(';')[0]!.split('=')[1]!);
    return { cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]!, csrfToken: body.csrfToken };
  }

  async function events(query = '', session = owner) {
    const res = await call(session, 'GET', `/audit-events${query}`);
    expect(res.status, await res.clone().text()).toBe(200);
    return zAuditEventList.parse(await res.json());
  }

  /** The newest event of the action, with what the request that made it sent. */
  async function latest(action: string) {
    const [event] = (await events(`?action=${action}&limit=1`)).data;
    expect(event, action).toBeDefined();
    return event!;
  }

  it('records the key changes with the user, the key, the address and the request id', async () => {
    const created = (await ok(await call(owner, 'POST', '/api-keys', { name: 'CRM sync', scopes: ['orchestrator:invoke'] }), 201)) as {
      id: string;
      secret: string;
      prefix: string;
    };
    const sent = request;
    secrets.push(created.secret);
    expect(await latest('key.created')).toMatchObject({
      actor: { type: 'user', id: ownerId, label: t.admin.email },
      target: { type: 'api_key', id: created.id, label: 'CRM sync' },
      address: `203.0.113.${sent % 250}`,
      requestId: `req-audit-${sent}`,
      details: { prefix: created.prefix, scopes: ['orchestrator:invoke'] },
    });
    const rotated = (await ok(await call(owner, 'POST', `/api-keys/${created.id}/rotate`), 201)) as { id: string; secret: string };
    secrets.push(rotated.secret);
    expect(await latest('key.rotated')).toMatchObject({ target: { id: created.id }, details: { replacedBy: rotated.id } });
    await ok(await call(owner, 'DELETE', `/api-keys/${rotated.id}`), 200);
    const revokedBy = `req-audit-${request}`;
    expect(await latest('key.revoked')).toMatchObject({ target: { type: 'api_key', id: rotated.id }, requestId: revokedBy });
  });

  it('records destinations, inbound webhooks, agents and the kill switch', async () => {
    const destination = (await ok(await call(owner, 'POST', '/webhook-destinations', { url: 'https://127.0.0.1:9/hook', events: ['run.completed'] }), 201)) as {
      id: string;
      secret: string;
    };
    secrets.push(destination.secret);
    const rotated = (await ok(await call(owner, 'POST', `/webhook-destinations/${destination.id}/rotate-secret`), 200)) as { secret: string };
    secrets.push(rotated.secret);
    for (const step of ['pause', 'resume', 'ping', 'replay']) {
      await ok(await call(owner, 'POST', `/webhook-destinations/${destination.id}/${step}`), step === 'ping' || step === 'replay' ? 202 : 200);
    }
    await ok(await call(owner, 'POST', `/webhook-destinations/${destination.id}/test-events`, { type: 'run.completed' }), 202);
    expect(await latest('destination.test_sent')).toMatchObject({ details: { type: 'run.completed' } });
    expect(await latest('destination.pinged')).toMatchObject({ details: { type: 'ping' } });
    for (const action of ['created', 'secret_rotated', 'paused', 'resumed', 'pinged', 'test_sent', 'replayed']) {
      expect(await latest(`destination.${action}`)).toMatchObject({ target: { type: 'destination', id: destination.id, label: 'https://127.0.0.1:9/hook' } });
    }
    const inbound = (await ok(await call(owner, 'POST', '/inbound-webhooks', { slug: 'audit-crm' }), 201)) as { secret: string };
    secrets.push(inbound.secret);
    for (const step of ['pause', 'resume']) await ok(await call(owner, 'POST', `/inbound-webhooks/audit-crm/${step}`), 200);
    await ok(await call(owner, 'DELETE', '/inbound-webhooks/audit-crm'), 200);
    for (const action of ['created', 'paused', 'resumed', 'revoked']) {
      expect(await latest(`inbound_webhook.${action}`)).toMatchObject({ target: { type: 'inbound_webhook', id: 'audit-crm' } });
    }
    await ok(await call(owner, 'POST', '/agents/sales/pause', { reason: 'Quarter close' }), 200);
    expect(await latest('agent.paused')).toMatchObject({ target: { type: 'agent', id: 'sales' }, details: { reason: 'Quarter close' } });
    await ok(await call(owner, 'POST', '/agents/sales/resume'), 200);
    expect(await latest('agent.resumed')).toMatchObject({ target: { type: 'agent', id: 'sales' } });
    await ok(await call(owner, 'PUT', '/kill-switches/manual', { engaged: true, reason: 'Runaway loop' }), 200);
    expect(await latest('kill_switch.engaged')).toMatchObject({ actor: { id: ownerId }, details: { reason: 'Runaway loop' } });
    await ok(await call(owner, 'PUT', '/kill-switches/manual', { engaged: false }), 200);
    expect(await latest('kill_switch.released')).toMatchObject({ target: { type: 'kill_switch', id: 'manual' } });
  });

  it('records invitations, sign-ins, failed sign-ins, roles, resets and removals; a member may not read the log', async () => {
    const email = 'dana@northwind.example';
    const invitation = (await ok(await call(owner, 'POST', '/workspace/invitations', { email, role: 'member' }), 201)) as { id: string; token: string };
    secrets.push(invitation.token);
    expect(await latest('member.invited')).toMatchObject({ actor: { id: ownerId }, target: { type: 'invitation', id: invitation.id, label: email } });
    const password = 'a password of the invitee';
    const accept = (body: Record<string, unknown>) => call(undefined, 'POST', '/invitations/accept', body);
    const accepted = (await ok(await completeTwoStep(accept, t.clock, { token: invitation.token, password }), 200)) as { totpSecret: string };
    secrets.push(password, accepted.totpSecret);
    const acceptedEvent = await latest('invitation.accepted');
    expect(acceptedEvent).toMatchObject({ actor: { type: 'user', label: email }, target: { id: invitation.id } });
    const danaId = acceptedEvent.actor.id;
    const member = await signIn(email, password, accepted.totpSecret);
    const signedInFrom = `203.0.113.${request % 250}`;
    expect(await latest('session.signed_in')).toMatchObject({ actor: { id: danaId, label: email }, address: signedInFrom });

    // A member does not read the log; nobody without a session does.
    expect((await call(member, 'GET', '/audit-events')).status).toBe(403);
    const anonymous = await call(undefined, 'GET', '/audit-events');
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ error: 'not_authenticated' });

    // A wrong password of a known account is recorded in its workspace; an unknown email records nothing.
    const before = (await events()).total;
    await ok(await call(undefined, 'POST', '/auth/login', { email, password: 'not the password', totpCode: '000000' }), 401);
    const failedBy = `req-audit-${request}`;
    expect(await latest('session.sign_in_failed')).toMatchObject({ actor: { id: danaId, label: email }, requestId: failedBy });
    await ok(await call(undefined, 'POST', '/auth/login', { email: 'nobody@northwind.example', password: 'whatever it is', totpCode: '000000' }), 401);
    expect((await events()).total).toBe(before + 1);

    await ok(await call(owner, 'PATCH', `/workspace/members/${danaId}`, { role: 'admin' }), 200);
    expect(await latest('member.role_changed')).toMatchObject({
      target: { type: 'member', id: danaId, label: email },
      details: { from: 'member', to: 'admin' },
    });
    const reset = (await ok(await call(owner, 'POST', `/workspace/members/${danaId}/reset`, { reset: 'totp' }), 201)) as { token: string };
    secrets.push(reset.token);
    expect(await latest('member.reset')).toMatchObject({ actor: { id: ownerId }, target: { id: danaId }, details: { reset: 'totp' } });
    const redeem = (body: Record<string, unknown>) => call(undefined, 'POST', '/account-resets/redeem', body);
    const redeemed = (await ok(await completeTwoStep(redeem, t.clock, { token: reset.token, password }), 200)) as { totpSecret: string };
    secrets.push(redeemed.totpSecret);
    expect(await latest('account_reset.redeemed')).toMatchObject({ actor: { type: 'user', id: danaId }, details: { reset: 'totp' } });
    await ok(await call(owner, 'DELETE', `/workspace/members/${danaId}`), 204);
    expect(await latest('member.removed')).toMatchObject({ target: { id: danaId }, details: { role: 'admin' } });
  });

  it('writes no event for a change that failed, and no change without its event', async () => {
    const before = (await events()).total;
    await ok(await call(owner, 'DELETE', '/api-keys/key_doesNotExist0000000'), 404);
    expect((await events()).total).toBe(before);
    // The event cannot be written: the key is not created either.
    await store.db.exec(`ALTER TABLE audit_events ADD CONSTRAINT audit_refused CHECK (action <> 'key.created') NOT VALID`);
    try {
      expect((await call(owner, 'POST', '/api-keys', { name: 'Never written', scopes: ['tenant:read'] })).status).toBe(500);
    } finally {
      await store.db.exec(`ALTER TABLE audit_events DROP CONSTRAINT audit_refused`);
    }
    expect(await store.db.query(`SELECT 1 FROM api_keys WHERE name = 'Never written'`)).toEqual([]);
    expect((await events()).total).toBe(before);
  });

  it('filters by action, actor, target and time, and pages newest first', async () => {
    const all = await events('?limit=200');
    expect(all.total).toBe(all.data.length);
    const times = all.data.map((event) => event.createdAt);
    expect([...times].sort().reverse()).toEqual(times);
    const keyEvents = await events('?action=key.created');
    expect(keyEvents.data.every((event) => event.action === 'key.created')).toBe(true);
    const byEmail = await events(`?actor=${encodeURIComponent(t.admin.email.toUpperCase())}`);
    const byId = await events(`?actor=${ownerId}`);
    expect(byEmail.total).toBeGreaterThan(0);
    expect(byEmail.total).toBe(byId.total);
    const target = keyEvents.data[0]!.target.id;
    expect((await events(`?target=${target}`)).data.map((event) => event.target.id)).toContain(target);
    const middle = all.data[Math.floor(all.data.length / 2)]!.createdAt;
    const since = await events(`?since=${encodeURIComponent(middle)}&limit=200`);
    const until = await events(`?until=${encodeURIComponent(middle)}&limit=200`);
    expect(since.total + until.total).toBe(all.total);
    const first = await events('?limit=3');
    const second = await events('?limit=3&offset=3');
    expect([...first.data, ...second.data].map((event) => event.id)).toEqual(all.data.slice(0, 6).map((event) => event.id));
    expect(second.total).toBe(all.total);
    // A page past the end has no row to carry the count: it is counted apart, the same.
    const beyond = await events(`?offset=${all.total + 10}`);
    expect({ data: beyond.data, total: beyond.total }).toEqual({ data: [], total: all.total });
    expect((await call(owner, 'GET', '/audit-events?action=key.exploded')).status).toBe(400);
  });

  it('holds no secret, token or password in any row', async () => {
    const rows = JSON.stringify(await store.db.query(`SELECT * FROM audit_events`));
    expect(secrets.length).toBeGreaterThan(10);
    for (const secret of secrets) expect(rows.includes(secret), 'a secret in the audit log').toBe(false);
  });
});
