/**
 * TOTP secrets are sealed at rest (PGlite, and PostgreSQL when DATABASE_URL is set): the users row
 * never holds the Base32 secret; a secret an earlier version stored in clear still works, and the
 * start-up step seals it, once.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { sealClearTotpSecrets } from './totp-secret.ts';

describe.each(testBackends())('TOTP secrets at rest on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  beforeEach(async () => {
    store = await open();
    t = await createTestApp({ db: store.db });
  });
  afterEach(async () => {
    await t.close();
    await store.cleanup();
  });

  const stored = async () => (await store.db.query<{ totp_secret: string }>(`SELECT totp_secret FROM users WHERE email = $1`, [t.admin.email]))[0]!.totp_secret;

  it('stores the secret sealed, and the admin signs in with codes of the secret shown at init', async () => {
    const value = await stored();
    expect(value).toMatch(/^v1\./);
    expect(value).not.toContain(t.admin.totpSecret);
    await expect(t.login()).resolves.toMatchObject({ csrfToken: expect.any(String) });
  });

  it('seals a secret stored in clear by an earlier version; sign-in works before and after', async () => {
    await store.db.query(`UPDATE users SET totp_secret = $2 WHERE email = $1`, [t.admin.email, t.admin.totpSecret]);
    await expect(t.login()).resolves.toMatchObject({ csrfToken: expect.any(String) });
    expect(await sealClearTotpSecrets(store.db, t.services.webhooks.secretBox)).toBe(1);
    expect(await stored()).toMatch(/^v1\./);
    expect(await sealClearTotpSecrets(store.db, t.services.webhooks.secretBox)).toBe(0);
    await expect(t.login()).resolves.toMatchObject({ csrfToken: expect.any(String) });
  });
});
