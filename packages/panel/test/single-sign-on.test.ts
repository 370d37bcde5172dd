/**
 * @module Single sign-on in the browser (Debian's Chromium through playwright-core, a real `service serve`) against a
 * real OpenID Connect provider on loopback (`oidc-provider` over HTTPS, its certificate the one the server trusts, its
 * address allowed as the suite's receivers are): the owner sets it up in Settings (the client secret never shown
 * again), a new person of the allowed domain signs in with "Sign in with SSO" and lands in the panel as a member made
 * at sign-in; an unverified email and a domain no workspace signs in are said in words, with no session; Audit lists
 * the setup and the sign-in. axe-core on the new screens; screenshots at 1366 and 390 px.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestIdentityProvider, type TestIdentityProvider } from '@service/testing/oidc-provider';
import { axeViolations, chromiumAvailable, clientAddress, type Harness, shot, signIn, startHarness } from './harness.ts';

if (!chromiumAvailable && process.env.CI) throw new Error('/usr/bin/chromium is missing: the panel suite cannot run (apt-get install chromium).');

const SLOW = { timeout: 15_000, interval: 100 };
const WIDE = { width: 1366, height: 900 };
const PHONE = { width: 390, height: 844 };
const DOMAIN = 'northwind.example';

describe.skipIf(!chromiumAvailable)('single sign-on in the browser', { timeout: 120_000 }, () => {
  let h: Harness;
  let idp: TestIdentityProvider;
  let owner: Page;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    h = await startHarness();
    idp = await startTestIdentityProvider({ certificate: h.certificate, redirectUris: [`${h.url}/panel/sso/callback`] });
    owner = (await h.newPage(WIDE)).page;
    await signIn(owner, h.admin);
    await owner.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
  }, 240_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await idp?.close();
    await h?.close();
  });

  /** A browser of its own (no cookie of the owner's) that accepts the provider's self-signed certificate. */
  async function newBrowser(): Promise<Page> {
    // bypassCSP only so that axe-core can be injected, as the harness's own pages do.
    const context = await h.browser.newContext({
      viewport: WIDE,
      ignoreHTTPSErrors: true,
      bypassCSP: true,
      baseURL: h.url,
      extraHTTPHeaders: { 'x-forwarded-for': clientAddress() },
    });
    contexts.push(context);
    return context.newPage();
  }

  async function shots(page: Page, name: string) {
    await shot(page, name);
    await page.setViewportSize(PHONE);
    expect(await page.evaluate('document.documentElement.scrollWidth'), `${name} at 390 px`).toBeLessThanOrEqual(PHONE.width);
    await shot(page, `${name}-390px`);
    expect(await axeViolations(page), `axe on ${name} at 390 px`).toEqual([]);
    await page.setViewportSize(WIDE);
  }

  async function startSso(page: Page, email: string) {
    await page.goto('/panel');
    await page.getByRole('heading', { name: 'Sign in with SSO' }).waitFor();
    await page.getByLabel('Work address').fill(email);
    await page.getByRole('button', { name: 'Continue with your identity provider' }).click();
  }

  it('the owner sets single sign-on up in Settings; the client secret is never shown again', async () => {
    await owner.getByRole('navigation', { name: 'Panel' }).getByRole('link', { name: 'Settings', exact: true }).click();
    await owner.getByRole('heading', { name: 'Single sign-on (SSO)' }).waitFor();
    await expect.poll(() => owner.getByRole('status').first().textContent(), SLOW).toContain('Single sign-on is off.');
    await expect.poll(() => owner.locator('code').first().textContent(), SLOW).toBe(`${h.url}/panel/sso/callback`);
    expect(await axeViolations(owner), 'axe on Settings').toEqual([]);
    await owner.getByLabel('Issuer URL').fill(idp.issuer);
    await owner.getByLabel('Client ID').fill(idp.clientId);
    await owner.getByLabel('Client secret').fill(idp.clientSecret);
    await owner.getByLabel('Allowed email domains').fill(DOMAIN);
    await owner.getByLabel('Make a person of these domains a member at their first sign-in').check();
    await owner.getByRole('button', { name: 'Save single sign-on' }).click();
    await owner.getByText('Saved.').waitFor(SLOW);
    await expect.poll(() => owner.getByRole('status').first().textContent(), SLOW).toContain('Single sign-on is on');
    expect(await owner.getByLabel('Client secret').inputValue()).toBe('');
    expect(await owner.content()).not.toContain(idp.clientSecret);
    await owner.reload();
    await owner.getByRole('heading', { name: 'Single sign-on (SSO)' }).waitFor();
    await expect.poll(() => owner.getByLabel('Issuer URL').inputValue(), SLOW).toBe(idp.issuer);
    expect(await owner.content()).not.toContain(idp.clientSecret);
    await shots(owner, 'settings-sso');
  });

  it('a new person of the allowed domain signs in with SSO and becomes a member', async () => {
    idp.user = { email: `dana@${DOMAIN}`, emailVerified: true };
    const page = await newBrowser();
    await page.goto('/panel');
    await page.getByRole('heading', { name: 'Sign in with SSO' }).waitFor();
    expect(await axeViolations(page), 'axe on the sign-in page').toEqual([]);
    await shots(page, 'sign-in-sso');
    const before = idp.requests;
    await startSso(page, `dana@${DOMAIN}`);
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor(SLOW);
    expect(idp.requests).toBeGreaterThan(before);
    expect(new URL(page.url()).pathname).toBe('/panel');
    await expect.poll(() => page.locator('header .who').textContent(), SLOW).toContain(`dana@${DOMAIN} · member`);
    // The same session as a password's: who am I answers it from the cookie.
    const me = await page.request.get('/auth/session');
    expect(me.status()).toBe(200);
    expect(await me.json()).toMatchObject({ user: { email: `dana@${DOMAIN}`, role: 'member' } });

    await owner.getByRole('navigation', { name: 'Panel' }).getByRole('link', { name: 'Audit', exact: true }).click();
    await owner.getByRole('heading', { name: 'Audit', level: 1 }).waitFor();
    await expect.poll(() => owner.locator('main').textContent(), SLOW).toContain('member.joined_by_sso');
    const text = (await owner.locator('main').textContent()) ?? '';
    expect(text).toContain('sso.configured');
  });

  it('an unverified email is refused in words, with no session', async () => {
    idp.user = { email: `erin@${DOMAIN}`, emailVerified: false };
    const page = await newBrowser();
    await startSso(page, `erin@${DOMAIN}`);
    await page.getByRole('heading', { name: 'Single sign-on', level: 1 }).waitFor(SLOW);
    await page.getByText('The identity provider has not verified this email address.').waitFor(SLOW);
    expect(new URL(page.url()).search).toBe('');
    expect((await page.request.get('/auth/session')).status()).toBe(401);
    expect(await axeViolations(page), 'axe on the refused sign-in').toEqual([]);
    await shot(page, 'sso-refused');
    await page.getByRole('link', { name: 'Back to sign-in' }).click();
    await page.getByRole('heading', { name: 'Sign in to the panel' }).waitFor(SLOW);
  });

  it('a domain no workspace signs in is said on the sign-in page', async () => {
    const page = await newBrowser();
    await startSso(page, 'frank@elsewhere.example');
    await page.getByText('No workspace signs in addresses of this domain with SSO.').waitFor(SLOW);
    expect(new URL(page.url()).origin).toBe(h.url);
  });
});
