import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../clock.ts';
import { sha256Hex } from '../../crypto.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import { createWorkspace } from '../workspaces/index.ts';
import { createSessionService, requireAdmin, requireCsrf, SESSION_TTL_MS } from './service.ts';
import { totpCode } from './totp.ts';
import { createUser } from './users.ts';
import { createSecretBox, ephemeralSecretKey } from '../webhooks/secret-box.ts';

const PASSWORD = 'correct horse battery';

describe.each(testBackends())('admin sessions on $name', ({ open }) => {
  let store: TestStore;
  let workspaceId: string;
  const clock = fixedClock('2026-02-01T10:00:00Z');
  const secretBox = createSecretBox(ephemeralSecretKey());

  beforeAll(async () => {
    store = await open();
    workspaceId = (await createWorkspace(store.db, clock, 'Acme')).id;
  });
  afterAll(async () => {
    await store?.cleanup();
  });

  async function admin(email: string, withTotp = true) {
    return createUser(store.db, clock, workspaceId, { email, password: PASSWORD, role: 'admin', withTotp, secretBox });
  }

  it('logs in with email, password and TOTP code, and the cookie value authenticates', async () => {
    const sessions = createSessionService({ db: store.db, clock, secretBox });
    const user = await admin('ada@example.com');
    const result = await sessions.login({
      email: 'ADA@example.com ',
      password: PASSWORD,
      totpCode: totpCode(user.totpSecret!, clock.now()),
    });
    expect(result.sessionToken).toMatch(/^[0-9A-Za-z]{43}$/);
    expect(result.csrfToken).toMatch(/^[0-9A-Za-z]{43}$/);
    expect(result.expiresAt.getTime()).toBe(clock.now().getTime() + SESSION_TTL_MS);
    const session = await sessions.authenticate(result.sessionToken);
    expect(session).toMatchObject({ userId: user.id, workspaceId, role: 'admin', totpEnabled: true });
    expect(() => requireAdmin(session)).not.toThrow();
    expect(() => requireCsrf(session, result.csrfToken)).not.toThrow();
    expect(() => requireCsrf(session, undefined)).toThrow(expect.objectContaining({ code: 'forbidden', status: 403 }));
    expect(() => requireCsrf(session, result.sessionToken)).toThrow(expect.objectContaining({ code: 'forbidden' }));
    // Only hashes are stored.
    const rows = await store.db.query(`SELECT * FROM sessions WHERE user_id = $1`, [user.id]);
    expect(JSON.stringify(rows)).not.toContain(result.sessionToken);
    expect(JSON.stringify(rows)).toContain(sha256Hex(result.sessionToken));
  });

  it('refuses a wrong password, a wrong code and a replayed code with not_authenticated', async () => {
    const sessions = createSessionService({ db: store.db, clock, secretBox });
    const user = await admin('bob@example.com');
    const code = totpCode(user.totpSecret!, clock.now());
    const bad = { code: 'not_authenticated', status: 401 };
    await expect(sessions.login({ email: user.email, password: 'wrong password!', totpCode: code })).rejects.toMatchObject(bad);
    await expect(sessions.login({ email: user.email, password: PASSWORD, totpCode: '000000' === code ? '111111' : '000000' })).rejects.toMatchObject(bad);
    await expect(sessions.login({ email: 'nobody@example.com', password: PASSWORD, totpCode: code })).rejects.toMatchObject(bad);
    await sessions.login({ email: user.email, password: PASSWORD, totpCode: code });
    await expect(sessions.login({ email: user.email, password: PASSWORD, totpCode: code })).rejects.toMatchObject(bad);
  });

  it('answers too_many_attempts after 5 failures in 15 minutes, even to the right credentials', async () => {
    const local = fixedClock('2026-02-01T10:00:00Z');
    const sessions = createSessionService({ db: store.db, clock: local, secretBox });
    const user = await admin('eve@example.com');
    for (let i = 0; i < 5; i += 1) {
      await expect(sessions.login({ email: user.email, password: 'nope nope nope', totpCode: '123456' })).rejects.toMatchObject({
        code: 'not_authenticated',
      });
      local.advance(60_000);
    }
    // Five failures at 10:00..10:04; now 10:05. The oldest leaves the window at 10:15.
    const right = () => ({ email: user.email, password: PASSWORD, totpCode: totpCode(user.totpSecret!, local.now()) });
    await expect(sessions.login(right())).rejects.toMatchObject({
      code: 'too_many_attempts',
      status: 429,
      headers: { 'Retry-After': '600', 'Retry-After-Ms': '600000', 'X-Should-Retry': 'false' },
      extras: { retryAfterSec: 600 },
    });
    local.advance(10 * 60_000 + 1);
    const ok = await sessions.login(right());
    expect(ok.user).toEqual({ id: user.id, email: 'eve@example.com', role: 'admin', twoFactorEnabled: true });
  });

  it('lets no burst of concurrent guesses past the limit', async () => {
    const sessions = createSessionService({ db: store.db, clock, secretBox });
    const user = await admin('mallory@example.com');
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, () => sessions.login({ email: user.email, password: 'guess guess guess', totpCode: '1' })),
    );
    const codes = results.map((r) => (r.status === 'rejected' ? (r.reason as { code: string }).code : 'ok'));
    // However the attempts interleave, at most 5 guesses are judged; every other one is refused.
    const judged = codes.filter((c) => c === 'not_authenticated').length;
    expect(judged).toBeLessThanOrEqual(5);
    expect(codes.filter((c) => c === 'too_many_attempts')).toHaveLength(12 - judged);
  });

  it('refuses key management to a member and to an admin without two-step verification', async () => {
    const sessions = createSessionService({ db: store.db, clock, secretBox });
    const member = await createUser(store.db, clock, workspaceId, {
      email: 'mem@example.com',
      password: PASSWORD,
      role: 'member',
      withTotp: true,
      secretBox,
    });
    const noTotp = await admin('plain@example.com', false);
    const m = await sessions.login({ email: member.email, password: PASSWORD, totpCode: totpCode(member.totpSecret!, clock.now()) });
    const p = await sessions.login({ email: noTotp.email, password: PASSWORD, totpCode: '' });
    for (const token of [m.sessionToken, p.sessionToken]) {
      const session = await sessions.authenticate(token);
      expect(() => requireAdmin(session)).toThrow(expect.objectContaining({ code: 'role_forbidden', status: 403 }));
    }
  });

  it('ends a session at logout and at expiry', async () => {
    const local = fixedClock('2026-02-01T10:00:00Z');
    const sessions = createSessionService({ db: store.db, clock: local, secretBox });
    const user = await admin('carol@example.com');
    const login = () => sessions.login({ email: user.email, password: PASSWORD, totpCode: totpCode(user.totpSecret!, local.now()) });
    const first = await login();
    await sessions.logout(await sessions.authenticate(first.sessionToken));
    await expect(sessions.authenticate(first.sessionToken)).rejects.toMatchObject({ code: 'not_authenticated', status: 401 });
    local.advance(30_000);
    const second = await login();
    local.advance(SESSION_TTL_MS);
    await expect(sessions.authenticate(second.sessionToken)).rejects.toMatchObject({ code: 'not_authenticated' });
    await expect(sessions.authenticate(undefined)).rejects.toMatchObject({ code: 'not_authenticated' });
  });
});
