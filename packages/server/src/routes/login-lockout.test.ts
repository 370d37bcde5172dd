/**
 * The failed-login lock over app.request, with client addresses from X-Forwarded-For (TRUST_PROXY
 * 1): wrong passwords for an email from one address lock that address out of that email, but not
 * the admin signing in from another address; one address guessing across emails is locked too;
 * guessing spread over many addresses does not lock the owner out but leaves each address
 * one guess at that email; and a TOTP code sent a second time is refused without counting as a failure.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { totpCode } from '../domain/sessions/totp.ts';
import { LOGIN_LIMITS } from '../domain/sessions/service.ts';
import { clientKey } from '../middleware/rate-limit/index.ts';
import { createTestApp, type TestApp } from '@service/testing/app';

describe('failed-login lock', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ deps: { config: { trustProxy: 1 } } });
  });
  afterEach(async () => {
    await t.close();
  });

  const login = (from: string, body: { email?: string; password?: string; totpCode?: string } = {}) =>
    t.app.request('/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
      body: JSON.stringify({
        email: body.email ?? t.admin.email,
        password: body.password ?? t.admin.password,
        totpCode: body.totpCode ?? totpCode(t.admin.totpSecret, t.clock.now()),
      }),
    });
  const wrong = (from: string, email?: string) => login(from, { password: 'not-the-password', ...(email ? { email } : {}) });
  /** A fresh TOTP step, so the next right code has not been used. */
  const nextStep = () => t.clock.advance(30_000);

  it('5 wrong passwords from one address lock that address out of the email, not the admin at another address', async () => {
    for (let i = 0; i < LOGIN_LIMITS.emailAndSource; i += 1) expect((await wrong('203.0.113.9')).status).toBe(401);

    nextStep();
    const locked = await login('203.0.113.9');
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Math.ceil(Number(locked.headers.get('retry-after-ms')) / 1000)).toBe(Number(locked.headers.get('retry-after')));
    // A lock of minutes, lifted by waiting: the SDKs must not loop on it.
    expect(locked.headers.get('x-should-retry')).toBe('false');
    expect(await locked.json()).toEqual({ error: 'too_many_attempts', message: expect.any(String), retryAfterSec: Number(locked.headers.get('retry-after')) });

    const admin = await login('198.51.100.4');
    expect(admin.status).toBe(200);
    expect(await admin.json()).toMatchObject({ user: { email: t.admin.email } });
  });

  it('one address guessing across many emails is locked for every email', async () => {
    for (let i = 0; i < LOGIN_LIMITS.source; i += 1) expect((await wrong('203.0.113.77', `guess${i}@example.com`)).status).toBe(401);
    nextStep();
    expect((await login('203.0.113.77')).status).toBe(429);
    expect((await login('198.51.100.5')).status).toBe(200);
  });

  it('guessing spread over many addresses does not lock the owner out: a clean address with the right password and code gets in', async () => {
    // Issue 20: 105 wrong logins over 21 addresses (IPv6, one /56: each /64 is an address of its own).
    const attackers = Array.from({ length: 21 }, (_, i) => `2001:db8:0:${(0x1200 + i).toString(16)}::1`);
    // The first 20 addresses' 100 failures as the store records them (each real one costs a scrypt: minutes
    // on a loaded machine); the 21st address's five go over the API, and cross the per-email count.
    for (const [n, from] of attackers.slice(0, 20).entries()) {
      for (let i = 0; i < LOGIN_LIMITS.emailAndSource; i += 1) {
        await t.db.query(`INSERT INTO login_attempts (id, email, source, attempted_at) VALUES ($1, $2, $3, $4)`, [
          `att_seed_${n}_${i}`,
          t.admin.email,
          clientKey(from),
          t.clock.now(),
        ]);
      }
    }
    const last = [];
    for (let i = 0; i < LOGIN_LIMITS.emailAndSource; i += 1) last.push((await wrong(attackers[20]!)).status);

    nextStep();
    const owner = await login('198.51.100.20');
    expect(owner.status).toBe(200);
    expect(await owner.json()).toMatchObject({ user: { email: t.admin.email } });
    // The 21st address was refused from its second guess on: one guess per address while the email is
    // under attack (before the fix, the 101st failure locked the email for everyone).
    expect(last).toEqual([401, 429, 429, 429, 429]);

    // The attackers' addresses stay throttled, even with the right password.
    nextStep();
    for (const from of attackers.slice(0, 3)) {
      const res = await login(from);
      expect(res.status).toBe(429);
      expect(await res.json()).toMatchObject({ error: 'too_many_attempts' });
    }
    // While the email is under attack, a new address gets one guess at it, not five.
    const fresh = '2001:db8:0:1300::1';
    expect((await wrong(fresh)).status).toBe(401);
    const second = await wrong(fresh);
    expect(second.status).toBe(429);
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(0);
    // And the owner still signs in from yet another clean address.
    nextStep();
    expect((await login('192.0.2.200')).status).toBe(200);
  }, 120_000);

  it('a TOTP code sent a second time is refused, and does not count toward the lock', async () => {
    for (let i = 0; i < LOGIN_LIMITS.emailAndSource - 1; i += 1) expect((await wrong('192.0.2.1')).status).toBe(401);
    nextStep();
    const code = totpCode(t.admin.totpSecret, t.clock.now());
    expect((await login('192.0.2.1', { totpCode: code })).status).toBe(200);
    // The success cleared this address's failures: 4 more wrong ones, and the code replayed 3 times.
    for (let i = 0; i < LOGIN_LIMITS.emailAndSource - 1; i += 1) expect((await wrong('192.0.2.1')).status).toBe(401);
    for (let i = 0; i < 3; i += 1) {
      const replay = await login('192.0.2.1', { totpCode: code });
      expect(replay.status).toBe(401);
      expect(await replay.json()).toMatchObject({ error: 'not_authenticated' });
    }
    nextStep();
    expect((await login('192.0.2.1')).status).toBe(200);
  });
});
