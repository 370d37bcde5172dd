/**
 * The failed-login lock over app.request, with client addresses from X-Forwarded-For (TRUST_PROXY
 * 1): wrong passwords for an email from one address lock that address out of that email, but not
 * the admin signing in from another address; one address guessing across emails is locked too;
 * and a TOTP code sent a second time is refused without counting as a failure.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { totpCode } from '../domain/sessions/totp.ts';
import { LOGIN_LIMITS } from '../domain/sessions/service.ts';
import { createTestApp, type TestApp } from '../testing.ts';

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
