/**
 * @module Invitations and recovery in the browser (Debian's Chromium through playwright-core, a real `service serve`):
 * an admin invites from Members, the invitee opens the link in a second browser context, chooses a password, scans the
 * QR code (read from the page's pixels, as a phone would) and signs in with its code; Members lists a pending
 * invitation, resends it (the old link says it was replaced) and revokes another (its link says so); an admin resets a
 * member's two-step verification and the member re-enrols through the link; the Audit screen lists each of those actions
 * with its actor; a workspace name of markup stays text (on the invitation, in the panel, on the Audit screen).
 * axe-core on every new screen; screenshots at 1366 and 390 px.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../server/src/domain/sessions/totp.ts';
import { axeViolations, chromiumAvailable, type Harness, shot, signIn, startHarness } from './harness.ts';
import { parseOtpauth, readQrCode } from './qr.ts';

if (!chromiumAvailable && process.env.CI) throw new Error('/usr/bin/chromium is missing: the panel suite cannot run (apt-get install chromium).');

const SLOW = { timeout: 15_000, interval: 100 };
const WIDE = { width: 1366, height: 900 };
const PHONE = { width: 390, height: 844 };
const INVITEE = 'dana@example.com';
const PASSWORD = 'dana-chose-a-long-password';

describe.skipIf(!chromiumAvailable)('invitations and recovery in the browser', { timeout: 90_000 }, () => {
  let h: Harness;
  let admin: Page;
  /** The invitee's own browser: no cookie of the admin's. */
  let invitee: { context: BrowserContext; page: Page };
  let firstSecret = '';

  beforeAll(async () => {
    h = await startHarness();
    admin = (await h.newPage(WIDE)).page;
    await signIn(admin, h.admin);
    await admin.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    invitee = await h.newPage(WIDE);
  }, 240_000);

  afterAll(async () => {
    await h?.close();
  });

  async function expectAccessible(page: Page, name: string) {
    expect(await axeViolations(page), `axe on ${name}`).toEqual([]);
  }

  /** The screen at 1366 px and at 390 px (nothing wider than the phone), then back. */
  async function shots(page: Page, name: string) {
    await shot(page, name);
    await page.setViewportSize(PHONE);
    expect(await page.evaluate('document.documentElement.scrollWidth'), `${name} at 390 px`).toBeLessThanOrEqual(PHONE.width);
    await shot(page, `${name}-390px`);
    await expectAccessible(page, `${name} at 390 px`);
    await page.setViewportSize(WIDE);
  }

  async function openMembers() {
    await admin.getByRole('navigation', { name: 'Panel' }).getByRole('link', { name: 'Members', exact: true }).click();
    await admin.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
  }

  /** Invites from the Members screen; the link shown once. */
  async function invite(email: string, role = 'member'): Promise<string> {
    await admin.getByRole('button', { name: 'Invite someone' }).click();
    await admin.getByLabel('Email', { exact: true }).fill(email);
    await admin.getByLabel('Role', { exact: true }).selectOption(role);
    await admin.getByRole('button', { name: 'Invite' }).click();
    const link = await admin.getByRole('textbox', { name: `Invitation link for ${email}` }).inputValue();
    expect(link).toMatch(new RegExp(`^${h.url}/panel/invitations/service_inv_[0-9A-Za-z]{32}$`));
    return link;
  }

  /** The secret the page's QR code holds, checked against the secret shown as text and the account it names. */
  async function scan(page: Page, email: string): Promise<string> {
    const code = page.getByRole('img', { name: `QR code of the two-step secret for ${email}` });
    await code.waitFor();
    const uri = parseOtpauth(await readQrCode(code));
    expect(uri).toMatchObject({ type: 'totp', label: `Agent Invocation Service:${email}`, issuer: 'Agent Invocation Service', digits: '6', period: '30' });
    expect(uri.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect((await page.getByLabel('Two-step secret', { exact: true }).inputValue()).replace(/\s/g, '')).toBe(uri.secret);
    return uri.secret;
  }

  /** The code of the phone's authenticator, typed in to sign in. */
  async function signInWithCode(page: Page, secret: string) {
    await page.getByLabel('Six-digit code').fill(totpCode(secret, new Date()));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
  }

  it('invite → the invitee accepts in a second browser, sets up two-step verification from the QR code and signs in', async () => {
    await openMembers();
    const link = await invite(INVITEE);
    await admin.getByRole('button', { name: 'Done' }).click();
    const pending = admin.getByRole('region', { name: 'Pending invitations' });
    await expect.poll(() => pending.getByRole('row').filter({ hasText: INVITEE }).textContent(), SLOW).toContain('member');

    const { page } = invitee;
    await page.goto(link);
    await page.getByRole('heading', { name: /^Join / }).waitFor();
    expect(await page.locator('main').textContent()).toContain(`${INVITEE} is invited to join`);
    await expectAccessible(page, 'invitation');
    await page.getByLabel('New password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Repeat the new password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Accept and set up two-step verification' }).click();
    firstSecret = await scan(page, INVITEE);
    // Nothing is used up before the first code is confirmed: the tab closed here, the link opens again, the
    // invitation still stands and shows the same secret.
    await page.reload();
    await page.getByLabel('New password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Repeat the new password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Accept and set up two-step verification' }).click();
    expect(await scan(page, INVITEE)).toBe(firstSecret);
    await shots(page, 'invitation-two-step');
    await expectAccessible(page, 'invitation, two-step set-up');
    await signInWithCode(page, firstSecret);
    await page.getByText(`${INVITEE} · member`).waitFor();
    // The session is the invitee's own: the admin screens are not theirs.
    expect(await page.getByRole('navigation', { name: 'Panel' }).getByRole('link', { name: 'Members' }).count()).toBe(0);

    // Accepted: gone from the pending list, listed as a member with two-step verification on; the link is used up.
    await admin.getByRole('button', { name: 'Refresh members' }).click();
    const member = admin.getByRole('table', { name: 'Members of the workspace' }).getByRole('row').filter({ hasText: INVITEE });
    await expect.poll(() => member.getByRole('cell').nth(2).textContent(), SLOW).toBe('on');
    expect(await member.getByRole('combobox', { name: `Role of ${INVITEE}` }).inputValue()).toBe('member');
    await expect.poll(() => pending.getByRole('row').filter({ hasText: INVITEE }).count(), SLOW).toBe(0);
    const again = await h.browser.newContext({ baseURL: h.url });
    const used = await again.newPage();
    await used.goto(link);
    await used.getByText('This invitation was already accepted.').waitFor();
    await again.close();
  });

  it('Members lists pending invitations: resending makes a new link (the old one says it was replaced), revoking ends one (its link says so)', async () => {
    await openMembers();
    const oldLink = await invite('lee@example.com', 'admin');
    await admin.getByRole('button', { name: 'Done' }).click();
    const revokedLink = await invite('sam@example.com');
    await admin.getByRole('button', { name: 'Done' }).click();
    const pending = admin.getByRole('region', { name: 'Pending invitations' });
    const lee = pending.getByRole('row').filter({ hasText: 'lee@example.com' });
    await expect.poll(() => lee.textContent(), SLOW).toMatch(/admin.*\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/s);
    await expectAccessible(admin, 'members with pending invitations');

    await lee.getByRole('button', { name: 'Resend the invitation of lee@example.com' }).click();
    await lee.getByRole('button', { name: 'Resend now' }).click();
    const newLink = await admin.getByRole('textbox', { name: 'Invitation link for lee@example.com' }).inputValue();
    expect(newLink).toMatch(/\/panel\/invitations\/service_inv_/);
    expect(newLink).not.toBe(oldLink);
    await admin.getByRole('button', { name: 'Done' }).click();
    await expect.poll(() => pending.getByRole('row').filter({ hasText: 'lee@example.com' }).count(), SLOW).toBe(1);

    const sam = pending.getByRole('row').filter({ hasText: 'sam@example.com' });
    await sam.getByRole('button', { name: 'Revoke the invitation of sam@example.com' }).click();
    await sam.getByRole('button', { name: 'Revoke now' }).click();
    await expect.poll(() => pending.getByRole('row').filter({ hasText: 'sam@example.com' }).count(), SLOW).toBe(0);

    const context = await h.browser.newContext({ baseURL: h.url, viewport: WIDE, bypassCSP: true });
    const page = await context.newPage();
    await page.goto(revokedLink);
    await page.getByRole('heading', { name: 'This invitation cannot be used' }).waitFor();
    await page.getByText('This invitation was revoked by an admin of the workspace.').waitFor();
    await shots(page, 'invitation-revoked');
    await expectAccessible(page, 'a revoked invitation');
    await page.goto(oldLink);
    await page.getByText('A newer invitation was sent to you: use the link of the latest one.').waitFor();
    // A link cut short, and one with a token never issued.
    for (const token of [newLink.split('/').pop()!.slice(0, 20), `service_inv_${'A'.repeat(32)}`]) {
      await page.goto(`/panel/invitations/${token}`);
      await page.getByText('This invitation link is not valid.').waitFor();
    }
    await page.goto(newLink);
    await page.getByRole('heading', { name: /^Join / }).waitFor();
    expect(await page.locator('main').textContent()).toContain('lee@example.com is invited to join');
    await context.close();
  });

  it("an admin resets a member's two-step verification; the member re-enrols through the link and signs in", async () => {
    await openMembers();
    const row = admin.getByRole('table', { name: 'Members of the workspace' }).getByRole('row').filter({ hasText: INVITEE });
    await row.getByRole('combobox', { name: `What to reset for ${INVITEE}` }).selectOption('totp');
    await row.getByRole('button', { name: `Reset password / two-step of ${INVITEE}` }).click();
    await row.getByRole('button', { name: 'Reset now' }).click();
    const link = await admin.getByRole('textbox', { name: `Reset link for ${INVITEE}` }).inputValue();
    expect(link).toMatch(new RegExp(`^${h.url}/panel/account-resets/service_rst_[0-9A-Za-z]{32}$`));
    await admin.getByRole('button', { name: 'Done' }).click();

    const { page } = invitee;
    await page.goto(link);
    await page.getByRole('heading', { name: 'Set up two-step verification again', level: 1 }).waitFor();
    await expectAccessible(page, 'a two-step reset link');
    await page.getByLabel('Your current password').fill('not the password at all');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByText('The password is wrong.').waitFor();
    await page.getByLabel('Your current password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Continue' }).click();
    const secret = await scan(page, INVITEE);
    expect(secret).not.toBe(firstSecret);
    await shots(page, 'account-reset-two-step');
    await expectAccessible(page, 'a two-step reset, set-up');
    await signInWithCode(page, secret);
    await page.getByText(`${INVITEE} · member`).waitFor();

    // The old authenticator no longer signs in.
    const old = await fetch(`${h.url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: INVITEE, password: PASSWORD, totpCode: totpCode(firstSecret, new Date(Date.now() + 30_000)) }),
    });
    expect(old.status).toBe(401);
  });

  it('the Audit screen lists the invitation, the acceptance, the sign-ins, the reset and its redemption, each with its actor', async () => {
    await admin.getByRole('navigation', { name: 'Panel' }).getByRole('link', { name: 'Audit', exact: true }).click();
    await admin.getByRole('heading', { name: 'Audit', level: 1 }).waitFor();
    const table = admin.getByRole('table', { name: 'Audit events, newest first' });
    const row = (action: string, actor: string) => table.getByRole('row').filter({ hasText: action }).filter({ hasText: actor });
    const expected: [string, string][] = [
      ['member.invited', h.admin.email],
      ['invitation.accepted', INVITEE],
      ['session.signed_in', INVITEE],
      ['session.signed_in', h.admin.email],
      ['invitation.resent', h.admin.email],
      ['invitation.revoked', h.admin.email],
      ['member.reset', h.admin.email],
      ['account_reset.redeemed', INVITEE],
    ];
    for (const [action, actor] of expected) await expect.poll(() => row(action, actor).count(), SLOW).toBeGreaterThan(0);
    // The reset names its target, the member; the redemption happened after it (newest first).
    expect(await row('member.reset', h.admin.email).first().textContent()).toContain(INVITEE);
    const actions = await table.locator('tbody tr td:nth-child(2)').allTextContents();
    expect(actions.indexOf('account_reset.redeemed')).toBeLessThan(actions.indexOf('member.reset'));
    const time = row('member.invited', h.admin.email).first().locator('time');
    expect(await time.getAttribute('title')).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
    await shots(admin, 'audit-after-invitations');
    await expectAccessible(admin, 'audit');

    // Filters apply as they change: one action, then one actor.
    await admin.getByLabel('Action', { exact: true }).selectOption('account_reset.redeemed');
    await expect
      .poll(async () => new Set(await table.locator('tbody tr td:nth-child(2)').allTextContents()), SLOW)
      .toEqual(new Set(['account_reset.redeemed']));
    await admin.getByLabel('Action', { exact: true }).selectOption('');
    await admin.getByLabel('Actor (email or key prefix)').fill(INVITEE);
    await admin.getByLabel('Actor (email or key prefix)').press('Enter');
    // One poll of both: the table still filtered by the action above (one row, the invitee's redemption) already
    // passes "every actor is the invitee", so the count is waited for too, not read once after it.
    await expect
      .poll(async () => {
        const actors = await table.locator('tbody tr td:nth-child(3)').allTextContents();
        return actors.length > 2 && actors.every((text) => text.startsWith(INVITEE));
      }, SLOW)
      .toBe(true);
  });

  it('a workspace name of markup (<script>, <img onerror>) is shown as text on the invitation and in the panel, never run', async () => {
    const hostile = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>';
    const json = { 'content-type': 'application/json' };
    const created = await fetch(`${h.url}/operator/workspaces`, {
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${h.operatorToken}` },
      body: JSON.stringify({ name: hostile, adminEmail: 'owner@hostile.example' }),
    });
    expect(created.status).toBe(201);
    const owner = ((await created.json()) as { admin: { email: string; password: string; totpSecret: string } }).admin;
    const login = await fetch(`${h.url}/auth/login`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email: owner.email, password: owner.password, totpCode: totpCode(owner.totpSecret, new Date()) }),
    });
    const session = { cookie: login.headers.get('set-cookie')!.split(';')[0]!, 'x-csrf-token': ((await login.json()) as { csrfToken: string }).csrfToken };
    // An email cannot carry markup at all: the contract's pattern refuses it before anything is stored.
    const refused = await fetch(`${h.url}/workspace/invitations`, {
      method: 'POST',
      headers: { ...json, ...session },
      body: JSON.stringify({ email: '<script>alert(1)</script>@example.com' }),
    });
    expect(refused.status).toBe(400);
    const invited = await fetch(`${h.url}/workspace/invitations`, {
      method: 'POST',
      headers: { ...json, ...session },
      body: JSON.stringify({ email: 'kim@example.com' }),
    });
    const { token } = (await invited.json()) as { token: string };

    const context = await h.browser.newContext({ baseURL: h.url, viewport: WIDE, bypassCSP: true });
    const page = await context.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await page.goto(`/panel/invitations/${token}`);
    await page.getByRole('heading', { name: `Join ${hostile}` }).waitFor();
    expect(await page.locator('main img').count()).toBe(0);
    await page.getByLabel('New password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Repeat the new password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Accept and set up two-step verification' }).click();
    await signInWithCode(page, await scan(page, 'kim@example.com'));
    await page.getByText(hostile, { exact: true }).waitFor();
    expect(await page.evaluate('window.__xss')).toBeUndefined();
    expect(await page.locator('img').count()).toBe(0);
    expect(dialogs).toEqual([]);
    await context.close();

    // The owner's Audit screen shows the workspace's name of markup (its creation's target) as text too.
    const ownerContext = await h.browser.newContext({ baseURL: h.url, viewport: WIDE, bypassCSP: true });
    await ownerContext.addCookies([{ name: 'service_session', value: session.cookie.split('=')[1]!, url: h.url }]);
    const ownerPage = await ownerContext.newPage();
    ownerPage.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await ownerPage.goto('/panel/audit');
    const creation = ownerPage.getByRole('table', { name: 'Audit events, newest first' }).getByRole('row').filter({ hasText: 'workspace.created' });
    await expect.poll(() => creation.textContent(), SLOW).toContain(hostile);
    expect(await ownerPage.evaluate('window.__xss')).toBeUndefined();
    expect(await ownerPage.locator('img').count()).toBe(0);
    expect(dialogs).toEqual([]);
    await ownerContext.close();
  });
});
