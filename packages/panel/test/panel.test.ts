/**
 * @module The panel in a real browser (Debian's Chromium through playwright-core) against a real
 * `service serve` on loopback: sign-in with TOTP, a session that survives a reload, a new tab and a deep link and
 * ends with a message, keys (secret once, rotate, revoke), outbound webhooks with
 * the delivery log, approvals, trying an agent, a member's panel, axe-core on every screen. The run leaves
 * screenshots of a few states in docs/panel/ (every screen's are every-screen.test.ts's).
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  axeViolations,
  chromiumAvailable,
  clientAddress,
  codeOf,
  type Harness,
  joinSecondWorkspace,
  newWorkspace,
  PLAIN_HTTP_HOST,
  SHOTS_DIR,
  shot,
  signIn,
  startHarness,
  submitSignIn,
  type User,
} from './harness.ts';
import { countRunRequests, eventsSoFar, invokeAgent, startPacedRun } from './paced-run.ts';
import { completeTwoStep } from '@service/testing/two-step';

// In CI the browser suite must run (.ci/run installs chromium); elsewhere it is skipped, saying why.
if (!chromiumAvailable && process.env.CI) throw new Error('/usr/bin/chromium is missing: the panel suite cannot run (apt-get install chromium).');
if (!chromiumAvailable) console.warn('panel browser suite skipped: /usr/bin/chromium is missing (apt-get install chromium).');

/** vitest's default poll budget is 1 s; a shared 2-core machine needs more. */
const SLOW = { timeout: 15_000, interval: 100 };

/** The token at the end of a link the panel shows once (`/panel/invitations/<token>`, `/panel/account-resets/<token>`). */
function tokenOf(link: string): string {
  const token = /\/panel\/(?:invitations|account-resets)\/(service_(?:inv|rst)_[0-9A-Za-z]{32})$/.exec(link)?.[1];
  if (!token) throw new Error(`not a link of the panel: ${link}`);
  return token;
}

describe.skipIf(!chromiumAvailable)('the panel in Chromium against a real server', { timeout: 60_000 }, () => {
  let h: Harness;
  let page: Page;
  let firstSecret = '';
  /** Invited through the Members screen, signed up through the API. */
  let member: User | undefined;
  const bearer = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });

  beforeAll(async () => {
    h = await startHarness();
    await joinSecondWorkspace(h, h.admin);
    page = (await h.newPage()).page;
  }, 240_000);

  afterAll(async () => {
    await h?.close();
  });

  // Each test from an address of its own: the suite's requests would otherwise share one address's budget.
  beforeEach(async () => {
    await page?.setExtraHTTPHeaders({ 'x-forwarded-for': clientAddress() });
  });

  async function expectAccessible(name: string) {
    expect(await axeViolations(page), `axe on ${name}`).toEqual([]);
  }

  async function open(title: string) {
    await page.getByRole('navigation', { name: 'Panel' }).getByRole('link', { name: title, exact: true }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).first().textContent(), SLOW).toContain(title === 'Overview' ? 'Overview' : title);
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

  it('runs under its own CSP: the page renders and the browser reports no violation', async () => {
    const context = await h.browser.newContext({ baseURL: h.url });
    const strict = await context.newPage();
    const problems: string[] = [];
    // The one expected failure: the session read on load answers 401 to a browser that has none.
    const noSession = (m: { text(): string; location(): { url: string } }) => m.text().includes('401') && m.location().url.endsWith('/auth/session');
    strict.on('console', (m) => m.type() === 'error' && !noSession(m) && problems.push(m.text()));
    strict.on('pageerror', (e) => problems.push(e.message));
    const outside: string[] = [];
    strict.on('request', (r) => !r.url().startsWith(h.url) && !r.url().startsWith('data:') && outside.push(r.url()));
    await strict.goto('/panel/runs');
    await strict.getByRole('heading', { name: 'Sign in to the panel' }).waitFor();
    expect(problems).toEqual([]);
    expect(outside).toEqual([]);
    await context.close();
  });

  it('signs in with email, password and TOTP; a wrong code is named clearly', async () => {
    await signIn(page, h.admin, '000000' === codeOf(h.admin) ? '111111' : '000000');
    await expect.poll(() => page.getByRole('alert').textContent(), SLOW).toContain('six-digit code is wrong');
    await expectAccessible('sign-in');
    await page.getByLabel('Six-digit code').fill(codeOf(h.admin));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    // The session is an HttpOnly cookie: no script can read it, and nothing is kept in web storage.
    expect(await page.evaluate('document.cookie')).toBe('');
    expect(await page.evaluate('localStorage.length + sessionStorage.length')).toBe(0);
    const cookie = (await page.context().cookies()).find((c) => c.name === 'service_session')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', secure: true });
  });

  describe('a session that survives a reload', () => {
    /** Signed in as the owner of a workspace of its own (its own TOTP codes), with a run to link to. */
    let tabs: Page[] = [];
    let runId = '';

    it('a deep link opens its page after sign-in; a reload, a new tab and a write keep the session', async () => {
      const { owner, apiKey } = await newWorkspace(h, 'Globex');
      const invoked = await fetch(`${h.url}/v1/inference`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ alias: 'Sonata', messages: [{ role: 'user', content: 'Which invoices are more than 60 days overdue?' }] }),
      });
      expect(invoked.status).toBe(200);
      runId = ((await invoked.json()) as { runId: string }).runId;
      const { context, page: tab } = await h.newPage();
      tabs = [tab];
      await tab.goto(`/panel/runs/${runId}`);
      await tab.getByRole('heading', { name: 'Sign in to the panel' }).waitFor();
      await submitSignIn(tab, owner);
      // The page the link named, not the overview.
      await tab.getByRole('heading', { name: new RegExp(`Run ${runId}`) }).waitFor();
      expect(new URL(tab.url()).pathname).toBe(`/panel/runs/${runId}`);
      // A reload reads the session from the cookie: the same page, no sign-in.
      await tab.reload();
      await tab.getByRole('heading', { name: new RegExp(`Run ${runId}`) }).waitFor();
      expect(await tab.getByRole('heading', { name: 'Sign in to the panel' }).count()).toBe(0);
      expect(await tab.evaluate('localStorage.length + sessionStorage.length')).toBe(0);
      expect(await axeViolations(tab), 'axe on a run page opened by a reload').toEqual([]);
      // A new tab on another deep link, then a write: the CSRF token came back with the session.
      const second = await context.newPage();
      tabs.push(second);
      await second.goto('/panel/keys');
      await second.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
      await second.getByRole('button', { name: 'New key' }).click();
      await second.getByLabel('Name').fill('after-a-reload');
      await second.getByRole('checkbox', { name: /tenant:read/ }).check();
      await second.getByRole('button', { name: 'Create key' }).click();
      expect(await second.getByRole('textbox', { name: 'Secret of after-a-reload' }).inputValue()).toMatch(/^service_sk_live_/);
      await second.getByRole('button', { name: 'I have copied it' }).click();
    });

    it('a session ended elsewhere sends the page back to sign-in with a message, on the same route, with no card of errors', async () => {
      const [tab] = tabs;
      // Signed out from outside this browser (another device, another instance of the service): the cookie stays here.
      const cookie = (await tab!.context().cookies()).find((c) => c.name === 'service_session')!;
      const asHolder = { cookie: `service_session=${cookie.value}` };
      const session = await fetch(`${h.url}/auth/session`, { headers: asHolder });
      expect(session.status).toBe(200);
      const { csrfToken } = (await session.json()) as { csrfToken: string };
      expect((await fetch(`${h.url}/auth/logout`, { method: 'POST', headers: { ...asHolder, 'x-csrf-token': csrfToken } })).status).toBe(204);
      expect((await tab!.context().cookies()).some((c) => c.name === 'service_session')).toBe(true);
      // The next call of the page finds out.
      await tab!.getByRole('navigation', { name: 'Panel' }).getByRole('link', { name: 'Runs', exact: true }).click();
      await tab!.getByRole('heading', { name: 'Sign in to the panel' }).waitFor();
      expect(await tab!.getByRole('alert').textContent()).toContain('You were signed out.');
      expect(new URL(tab!.url()).pathname).toBe('/panel/runs');
      expect(await tab!.locator('.card, .error').count()).toBe(0);
      await shot(tab!, 'sign-in-session-ended');
      expect(await axeViolations(tab!), 'axe on sign-in after a session ended').toEqual([]);
      await tab!.context().close();
    });

    it('at its expiry the session ends in the page too: sign-in says it expired', async () => {
      const { owner } = await newWorkspace(h, 'Initech');
      const { context, page: tab } = await h.newPage();
      // The page's clock (timers and Date), moved on below; the server keeps the real time.
      await tab.clock.install();
      await signIn(tab, owner);
      await tab.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
      // 12 hours, and a few seconds for the server's Date header, which has whole seconds.
      await tab.clock.fastForward('12:00:05');
      await tab.getByRole('heading', { name: 'Sign in to the panel' }).waitFor();
      expect(await tab.getByRole('alert').textContent()).toContain('Your session expired.');
      expect(await tab.locator('.card').count()).toBe(0);
      await context.close();
    });

    it('over plain HTTP on a host other than localhost, says the panel needs HTTPS, before and after signing in', async () => {
      const { owner } = await newWorkspace(h, 'Umbrella');
      const { context, page: tab } = await h.newPage();
      await tab.goto(`http://${PLAIN_HTTP_HOST}:${new URL(h.url).port}/panel`);
      const needsHttps = tab.getByRole('alert').filter({ has: tab.getByRole('heading', { name: 'The panel needs HTTPS (or localhost)' }) });
      await needsHttps.waitFor();
      expect(await needsHttps.textContent()).toContain(`${PLAIN_HTTP_HOST}:`);
      await shot(tab, 'sign-in-needs-https');
      expect(await axeViolations(tab), 'axe on sign-in over plain HTTP').toEqual([]);
      await submitSignIn(tab, owner);
      // The login is accepted, the browser drops the Secure cookie: the panel says so instead of showing cards that fail.
      await expect.poll(() => needsHttps.textContent(), SLOW).toContain('did not keep the session cookie');
      expect(await context.cookies()).toEqual([]);
      expect(await tab.getByRole('navigation', { name: 'Panel' }).count()).toBe(0);
      await context.close();
    });
  });

  it('overview shows the period usage with its level', async () => {
    await page.getByText(/Usage of \d{4}-\d{2}/).waitFor();
    await expect.poll(() => page.locator('.badge').first().textContent(), SLOW).toMatch(/green|warning|critical|overage|grace|hardstop/);
    // Each chart has a value axis: 0, half and the top, in STU.
    await expect.poll(() => page.locator('.chart .axis text').count(), SLOW).toBe(6);
    expect((await page.locator('.chart .axis text').allTextContents()).slice(0, 3)[0]).toBe('0');
    await expectAccessible('overview');
  });

  it('engages and releases the manual kill switch from Spending settings, after a confirmation that names the consequence', async () => {
    await page.getByRole('link', { name: 'Spending settings' }).click();
    await page.getByRole('heading', { name: 'Spending settings', level: 1 }).waitFor();
    const manual = page.getByRole('row').filter({ hasText: 'Manual switch' });
    // States in words: never a green "off" that reads as "the protection is off".
    await expect.poll(() => manual.textContent(), SLOW).toContain('not engaged');
    expect(await page.getByRole('row').filter({ hasText: 'Hourly budget' }).textContent()).toContain('not tripped');
    await page.getByLabel('Reason (optional)').fill('Incident drill');
    await page.getByRole('button', { name: 'Engage the manual switch' }).click();
    await page.getByText(/Stop all spending in this workspace\? Every new invocation/).waitFor();
    await expectAccessible('spending settings (confirmation)');
    await page.getByRole('button', { name: 'Stop all spending now' }).click();
    await expect.poll(() => manual.textContent(), SLOW).toContain('Incident drill');
    expect(await manual.textContent()).toContain('engaged: spending stopped');
    const refused = await fetch(`${h.url}/v1/inference`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ alias: 'Prelude', messages: [{ role: 'user', content: 'Hello' }] }),
    });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: 'kill_switch' });
    await page.getByRole('button', { name: 'Turn the manual switch off' }).click();
    await expect.poll(() => manual.textContent(), SLOW).not.toContain('spending stopped');
    expect(await manual.textContent()).toContain('not engaged');
  });

  it('creates a key: the secret once with a warning, then only the prefix', async () => {
    await open('API keys');
    // The form is behind "New key"; the agents a key may invoke are checkboxes, found by a search.
    expect(await page.getByLabel('Name').count()).toBe(0);
    await page.getByRole('button', { name: 'New key' }).click();
    await page.getByLabel('Name').fill('reporting');
    await page.getByRole('checkbox', { name: /tenant:read/ }).check();
    await page.getByLabel('Search agents').fill('fin');
    await expect.poll(() => page.getByRole('checkbox', { name: /^(orchestrator|sales|finance|legal)$/ }).count(), SLOW).toBe(1);
    await page.getByRole('checkbox', { name: 'finance', exact: true }).check();
    await page.getByLabel('Search agents').fill('');
    // The spec's default lifetime, 365 days, unless the admin changes it.
    expect(await page.getByLabel('Expires in (days)').inputValue()).toBe('365');
    await page.getByLabel('Expires in (days)').fill('30');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secretBox = page.getByRole('textbox', { name: 'Secret of reporting' });
    await secretBox.waitFor();
    const secret = await secretBox.inputValue();
    expect(secret).toMatch(/^service_sk_live_[A-Za-z0-9]{24}$/);
    firstSecret = secret;
    await expect.poll(() => page.getByText('It is shown only once').count(), SLOW).toBe(1);
    expect((await fetch(`${h.url}/runs`, bearer(secret))).status).toBe(200);
    await expectAccessible('api keys (secret shown)');
    await page.getByRole('button', { name: 'I have copied it' }).click();
    const row = page.getByRole('row').filter({ hasText: 'reporting' });
    await expect.poll(() => row.textContent(), SLOW).toContain(secret.slice(0, 'service_sk_live_'.length + 6));
    expect(await row.textContent()).toContain('orchestrator:invoke:agent:finance');
    expect(await page.content()).not.toContain(secret);
  });

  it('rotates and revokes a key, each confirmed; the old secret answers 401 at once', async () => {
    const before = await page.getByRole('row').filter({ hasText: 'reporting' }).textContent();
    // One menu of actions per row.
    expect(await page.getByRole('button', { name: 'Rotate reporting' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Actions for reporting' }).click();
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
    // The list is read again after the rotation: a menu opened before that re-render closes with it, so open it until
    // its action shows.
    const revoke = active.getByRole('button', { name: 'Revoke reporting' });
    await vi.waitFor(async () => {
      if (!(await revoke.isVisible())) await active.getByRole('button', { name: 'Actions for reporting' }).click();
      expect(await revoke.isVisible()).toBe(true);
    }, SLOW);
    await revoke.click();
    await page.getByRole('button', { name: 'Revoke now' }).click();
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'reporting' }).filter({ hasText: 'active' }).count(), SLOW).toBe(0);
    const refused = await fetch(`${h.url}/runs`, bearer(newSecret));
    expect(refused.status).toBe(401);
  });

  it('adds an outbound destination to a loopback HTTPS receiver and pings it; the log shows it delivered', async () => {
    await open('Webhooks');
    // No destination yet: what they are for and how a receiver verifies one.
    await page.getByRole('heading', { name: 'Get told when something happens' }).waitFor();
    expect(await page.locator('.empty').textContent()).toContain('standardwebhooks');
    await expectAccessible('webhooks (no destination yet)');
    await page.getByRole('button', { name: 'New destination' }).click();
    await page.getByLabel('HTTPS URL').fill(`${h.healthy.origin}/hook`);
    await page.getByRole('button', { name: 'Add destination' }).click();
    const secret = await page.getByRole('textbox', { name: `Signing secret of ${h.healthy.origin}/hook` }).inputValue();
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await page.getByRole('button', { name: `Ping ${h.healthy.origin}/hook` }).click();
    await expect.poll(() => h.healthy.received.length, { timeout: 20_000 }).toBeGreaterThan(0);
    expect(h.healthy.received[0]!.headers['x-service-event-type']).toBe('ping');
    const card = page.getByRole('listitem', { name: `Destination ${h.healthy.origin}/hook` });
    await card.getByRole('button', { name: 'Delivery log' }).click();
    const log = page.getByRole('region', { name: `Delivery log of ${h.healthy.origin}/hook` });
    await expect.poll(async () => log.textContent(), { timeout: 20_000 }).toMatch(/ping.*delivered/s);
    await expect.poll(async () => log.textContent(), SLOW).toContain('200');
    await expectAccessible('webhooks');
  });

  it('sends a test event of a chosen type to a failing receiver: attempted once; the log opens to its request and response', async () => {
    await page.getByRole('button', { name: 'New destination' }).click();
    await page.getByLabel('HTTPS URL').fill(`${h.failing.origin}/hook`);
    await page.getByRole('button', { name: 'Add destination' }).click();
    await page.getByRole('button', { name: 'I have copied it' }).click();
    const card = page.getByRole('listitem', { name: `Destination ${h.failing.origin}/hook` });
    await card.getByRole('button', { name: 'Delivery log' }).click();
    const log = page.getByRole('region', { name: `Delivery log of ${h.failing.origin}/hook` });
    const form = log.getByRole('form', { name: `Send a test event to ${h.failing.origin}/hook` });
    await form.getByLabel('Event type').selectOption('approval.created');
    await form.getByRole('button', { name: 'Send test event' }).click();
    await expect.poll(async () => form.textContent(), SLOW).toContain('Test event approval.created queued');
    await expect.poll(() => h.failing.received.length, { timeout: 20_000 }).toBe(1);
    const sent = h.failing.received[0]!;
    expect(sent.headers['x-service-event-type']).toBe('approval.created');
    const event = JSON.parse(sent.body.toString('utf8')) as { type: string; test?: boolean };
    expect(event).toMatchObject({ type: 'approval.created', test: true });

    // A test event is not retried: the log says it failed (gave up) after its one attempt.
    await expect.poll(async () => log.textContent(), { timeout: 20_000 }).toMatch(/approval\.created.*test.*failed/s);
    expect(await log.textContent()).toContain('HTTP 503 · gave up');
    const attempt = log.getByText('Request and response of attempt 1');
    await attempt.click();
    // The exact body sent, the headers by the contract's names, the receiver's status and answer, all as text.
    const requestBody = log.getByRole('figure', { name: 'Request body of attempt 1' }).locator('pre');
    expect(await requestBody.textContent()).toBe(sent.body.toString('utf8'));
    const headers = log.getByRole('table', { name: 'Headers sent by attempt 1' });
    for (const name of [
      'X-SERVICE-Signature',
      'X-SERVICE-Timestamp',
      'X-SERVICE-Event-Id',
      'X-SERVICE-Event-Type',
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
    ]) {
      expect(await headers.getByRole('rowheader', { name, exact: true }).count(), name).toBe(1);
    }
    const signature = sent.headers['x-service-signature'] as string;
    expect(await headers.getByRole('row', { name: /X-SERVICE-Signature/ }).textContent()).toContain(`${signature.slice(0, 12)}…`);
    expect(await log.textContent()).not.toContain(signature);
    expect(await log.textContent()).toContain('Status 503');
    expect(await log.getByRole('figure', { name: 'Response body of attempt 1' }).locator('pre').textContent()).toBe('down for maintenance');
    await expectAccessible('webhooks with a failing destination and an opened attempt');
    await page.setViewportSize({ width: 1366, height: 900 });
    await log.screenshot({ path: join(SHOTS_DIR, 'webhooks-delivery-log.png') });
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate('document.documentElement.scrollWidth'), 'webhooks at 390 px').toBeLessThanOrEqual(390);
    await log.screenshot({ path: join(SHOTS_DIR, 'webhooks-delivery-log-390px.png') });
    await expectAccessible('the delivery log at 390 px');
    await page.setViewportSize({ width: 1280, height: 900 });
    // Still one request: nothing retried it.
    expect(h.failing.received).toHaveLength(1);
  });

  it('flags a destination whose receiver answered 410 Gone as paused, with that reason', async () => {
    await page.getByRole('button', { name: 'New destination' }).click();
    await page.getByLabel('HTTPS URL').fill(`${h.gone.origin}/hook`);
    await page.getByRole('button', { name: 'Add destination' }).click();
    await page.getByRole('button', { name: 'I have copied it' }).click();
    // Real traffic (a test event's 410 pauses nothing): a run's `run.completed`, which the destination subscribes to.
    const run = await fetch(`${h.url}/v1/inference`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ alias: 'Sonata', messages: [{ role: 'user', content: 'Summarise the open renewals.' }] }),
    });
    expect(run.status).toBe(200);
    await expect.poll(() => h.gone.received.length, { timeout: 20_000 }).toBeGreaterThan(0);
    const card = page.getByRole('listitem', { name: `Destination ${h.gone.origin}/hook` });
    // The list is read when the screen opens: open it again until the pause shows.
    await expect
      .poll(async () => {
        await open('Overview');
        await open('Webhooks');
        return card.textContent();
      }, SLOW)
      .toContain('the receiver answered 410 Gone');
    expect(await card.textContent()).toContain('paused');
    // Not a failures pause: what happens meanwhile is not queued for it (the card says so, not that it waits).
    expect(await card.textContent()).toContain('events that happen meanwhile are not sent to it');
    await expectAccessible('webhooks with a destination paused for gone');
  });

  it('adds an inbound webhook with what the API takes (header, timestamp, per-IP rate, template): the secret once with the signing instructions; pause and resume', async () => {
    // The tab's list is held until the form is filled: its arrival re-renders the screen, which must keep what was
    // typed (a field rendered with a fixed `value` was reset to its default by that render, under load in a full run).
    let releaseList: () => void = () => {};
    const listHeld = new Promise<void>((resolve) => (releaseList = resolve));
    await page.route('**/inbound-webhooks', async (route) => {
      if (route.request().method() === 'GET') await listHeld;
      return route.continue();
    });
    // Inbound webhooks are on their own tab, reached by the arrow key from Outbound.
    await page.getByRole('tab', { name: 'Outbound' }).focus();
    await page.keyboard.press('ArrowRight');
    expect(await page.getByRole('tab', { name: 'Inbound' }).getAttribute('aria-selected')).toBe('true');
    await page.getByRole('button', { name: 'New inbound webhook' }).click();
    await page.getByLabel('Slug').fill('crm-leads');
    // The API's defaults, shown; then changed.
    expect(await page.getByLabel('Signature header').inputValue()).toBe('X-SERVICE-Signature');
    expect(await page.getByLabel('Requests per minute per IP address').inputValue()).toBe('60');
    await page.getByLabel('Signature header').fill('X-Crm-Signature');
    await page.getByRole('checkbox', { name: /Require X-SERVICE-Timestamp/ }).check();
    await page.getByLabel('Requests per minute per IP address').fill('120');
    const template = 'New lead: {{ contact.name }} ({{ contact.company }}).';
    await page.getByLabel('Template (optional)').fill(template);
    const listed = page.waitForResponse((res) => res.url().endsWith('/inbound-webhooks') && res.request().method() === 'GET');
    releaseList();
    await listed;
    await page.unroute('**/inbound-webhooks');
    // Two frames: the list's render has happened.
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
    expect(await page.getByLabel('Signature header').inputValue()).toBe('X-Crm-Signature');
    expect(await page.getByLabel('Requests per minute per IP address').inputValue()).toBe('120');
    await page.getByRole('button', { name: 'Add inbound webhook' }).click();
    const secret = await page.getByRole('textbox', { name: 'Secret of inbound webhook crm-leads' }).inputValue();
    expect(secret).toMatch(/^whsec_/);
    await page.getByText('/v1/webhooks/inbound/crm-leads').waitFor();
    // The signing instructions name the webhook's own header.
    await page.getByText('X-Crm-Signature', { exact: true }).first().waitFor();
    const stored = (await page.evaluate(() => fetch('/inbound-webhooks').then((r) => r.json()))) as { data: Record<string, unknown>[] };
    expect(stored.data.find((w) => w.slug === 'crm-leads')).toMatchObject({
      signatureHeader: 'X-Crm-Signature',
      timestampRequired: true,
      requestsPerMinute: 120,
      template,
    });
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.content()).not.toContain(secret);
    await page.getByRole('button', { name: 'Pause crm-leads' }).click();
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'crm-leads' }).textContent(), SLOW).toContain('paused');
    await page.getByRole('button', { name: 'Resume crm-leads' }).click();
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'crm-leads' }).textContent(), SLOW).toContain('active');
  });

  it('approves a pending approval; the decision names the deciding user', async () => {
    await invokeAgent(h, 'sales', 'Please send the follow-up email to Dana about the renewal.');
    await open('Approvals');
    const row = page.getByRole('row').filter({ hasText: 'email.send' });
    await row.waitFor();
    await expectAccessible('approvals');
    await row.getByRole('button', { name: /^Approve/ }).click();
    await page.getByRole('button', { name: 'Approve now' }).click();
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'email.send' }).count(), SLOW).toBe(0);
    await expect.poll(() => page.getByRole('status').textContent(), SLOW).toContain('approved');
    // The decision names the deciding user: the signed-in admin.
    await page.getByLabel('Show').selectOption('approved');
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'email.send' }).textContent(), SLOW).toMatch(/approved.*by you/s);
  });

  it('reads the draft a run wrote: listed under Drafts, opened to its subject and text, linked to its run', async () => {
    const runId = await invokeAgent(h, 'marketing', 'Write a proposal for the spring campaign.');
    await open('Drafts');
    await page.getByLabel('Agent').selectOption('marketing');
    const row = page.getByRole('table', { name: 'Drafts, newest first' }).getByRole('row').filter({ hasText: runId });
    await row.waitFor();
    await expect.poll(() => row.textContent(), SLOW).toContain('proposal');
    await expectAccessible('drafts');
    await row.getByRole('link').first().click();
    await expect.poll(() => page.locator('dl.facts').textContent(), SLOW).toContain(runId);
    expect(await page.locator('pre.content').textContent()).not.toBe('');
    await expectAccessible('draft');
  });

  it('configures an agent: its own instructions, step limit, tools and an approval rule, saved and read back; the default again', async () => {
    await open('Agents');
    await page.getByRole('link', { name: 'Configure Sales' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), SLOW).toBe('Sales: configuration');
    await expect.poll(() => page.getByRole('checkbox', { name: "Use the department's default instructions" }).isChecked(), SLOW).toBe(true);
    await expectAccessible('agent configuration');
    await page.getByRole('checkbox', { name: "Use the department's default instructions" }).uncheck();
    await page.getByLabel('Instructions', { exact: true }).fill('You are the Sales agent. Qualify leads only.');
    await page.getByLabel('Step limit').fill('5');
    await page.getByRole('checkbox', { name: 'Every connected tool' }).uncheck();
    await page.getByLabel('Allowed tools').fill('crm\nemail.draft');
    await page.getByRole('button', { name: 'Add an approval rule' }).click();
    await page.getByLabel('Tool of rule 1').fill('crm.update');
    await page.getByRole('button', { name: 'Save configuration' }).click();
    await expect.poll(() => page.getByRole('status').textContent(), SLOW).toContain('Configuration saved');
    const saved = (await (
      await fetch(`${h.url}/agents/sales/configuration`, {
        headers: { cookie: (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ') },
      })
    ).json()) as Record<string, unknown>;
    expect(saved).toMatchObject({
      instructions: 'You are the Sales agent. Qualify leads only.',
      customInstructions: true,
      stepLimit: 5,
      tools: ['crm', 'email.draft'],
      approvals: { 'crm.update': 'required' },
    });
    // A step limit past 32 is refused by the server, named.
    await page.getByLabel('Step limit').evaluate((input) => input.removeAttribute('max'));
    await page.getByLabel('Step limit').fill('40');
    await page.getByRole('button', { name: 'Save configuration' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), SLOW).toContain('stepLimit');
    await page.getByLabel('Step limit').fill('8');
    await page.getByRole('checkbox', { name: "Use the department's default instructions" }).check();
    await page.getByRole('button', { name: 'Save configuration' }).click();
    await expect.poll(() => page.getByRole('status').textContent(), SLOW).toContain('Configuration saved');
  });

  it('tries an agent: the answer streams in, a second message continues the conversation, and the runs are listed under Runs', async () => {
    await open('Try an agent');
    await page.getByLabel('Agent', { exact: true }).selectOption('finance');
    await page.getByLabel('Message').fill('Which invoices are more than 60 days overdue?');
    const response = page.waitForResponse((r) => r.url().endsWith('/v1/agents/finance/messages'));
    await page.getByRole('button', { name: 'Send' }).click();
    const streamed = await response;
    expect(streamed.status()).toBe(200);
    expect(streamed.headers()['content-type']).toMatch(/^text\/event-stream/);
    const runLink = page.getByRole('link', { name: /^run_/ });
    await runLink.waitFor({ timeout: 30_000 });
    expect((await page.getByLabel('Streamed answer').textContent())?.length).toBeGreaterThan(20);
    // A second message: the same conversation, its turns shown one after the other.
    await page.getByLabel('Message').fill('And which of them are above 10,000?');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.getByRole('link', { name: /^run_/ }).count(), SLOW).toBe(2);
    await expect
      .poll(() => page.getByRole('listitem').filter({ hasText: 'You' }).allTextContents(), SLOW)
      .toEqual([expect.stringContaining('60 days overdue'), expect.stringContaining('above 10,000')]);
    const conversation = await page
      .locator('p', { hasText: /^Conversation/ })
      .locator('code')
      .textContent();
    expect(conversation).toMatch(/^try-[A-Za-z0-9]+$/);
    const [runId, secondRunId] = (await page.getByRole('link', { name: /^run_/ }).allTextContents()) as [string, string];
    for (const id of [runId, secondRunId]) {
      const read = await fetch(`${h.url}/runs/${id}`, { headers: { authorization: `Bearer ${h.apiKey}` } });
      expect(((await read.json()) as { run: { conversationId: string; agentSlug: string } }).run).toMatchObject({
        conversationId: conversation,
        agentSlug: 'finance',
      });
    }
    await expectAccessible('try an agent');
    await open('Runs');
    await page.getByRole('link', { name: runId }).waitFor();
    // Filters, applied as they change: the run came from the panel; none of it failed.
    await page.getByLabel('Source').selectOption('panel');
    await expect.poll(async () => (await page.getByRole('link', { name: /^run_/ }).allTextContents()).sort(), SLOW).toEqual([runId, secondRunId].sort());
    await page.getByLabel('Status').selectOption('failed');
    await page.getByText('No runs match.').waitFor();
    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Source').selectOption('');
    await page.getByRole('link', { name: runId }).waitFor();
    // Each row says what the run was asked (the start of its request).
    await expect
      .poll(
        () =>
          page
            .getByRole('row')
            .filter({ has: page.getByRole('link', { name: runId }) })
            .textContent(),
        SLOW,
      )
      .toContain('Which invoices are more than 60 days overdue?');
    await expectAccessible('runs');
    await page.getByRole('link', { name: runId }).click();
    await page.getByRole('heading', { name: /Run run_/ }).waitFor();
    await page.getByText('Content (redacted)').waitFor();
    await expectAccessible('run detail');
  });

  it('lists a run the orchestrator routed under the department that answered, and says so', async () => {
    const invoked = await fetch(`${h.url}/v1/inference`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ alias: 'Sonata', messages: [{ role: 'user', content: 'Which invoices are more than 60 days overdue?' }] }),
    });
    expect(invoked.status).toBe(200);
    const { runId } = (await invoked.json()) as { runId: string };
    await open('Runs');
    await page.getByLabel('Agent', { exact: true }).selectOption('finance');
    const row = page.getByRole('row').filter({ hasText: runId });
    await expect.poll(() => row.textContent(), SLOW).toMatch(/orchestrator → finance/);
    // When it started in the viewer's time zone and relative to now, UTC on hover; how long it took.
    expect(await row.locator('time').getAttribute('title')).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
    expect(await row.locator('time').textContent()).toMatch(/\(.*(now|ago|sec|min)/);
    expect(await row.textContent()).toMatch(/\d+(\.\d)? s/);
    const requests = countRunRequests(page, runId);
    await page.getByRole('link', { name: runId }).click();
    await page.getByRole('heading', { name: /Run run_/ }).waitFor();
    await expect.poll(() => page.locator('dl.facts').textContent(), SLOW).toMatch(/Routed tofinance/);
    // A finished run is read once; there is nothing to follow.
    expect({ reads: requests.reads, streams: requests.streams }).toEqual({ reads: 1, streams: [] });
    requests.stop();
  });

  it('follows an in_progress run live from its event stream: the answer grows, then its final state, without polling', async () => {
    const paced = await startPacedRun(h, 'Which invoices are more than 60 days overdue?');
    await open('Runs');
    const requests = countRunRequests(page, paced.runId);
    await page.getByRole('link', { name: paced.runId }).click();
    await page.getByRole('heading', { name: /Run run_/ }).waitFor();
    const content = page.locator('pre.content');
    const facts = page.locator('dl.facts');
    const status = page.getByRole('status');
    await expect.poll(() => facts.textContent(), SLOW).toMatch(/Agentfinance/);
    await expect.poll(() => status.textContent(), SLOW).toMatch(/^(Live: the page follows the run as it happens\.|finance is answering\.)$/);
    expect(await facts.locator('.badge').textContent()).toBe('in progress');
    paced.fragment('Overdue by more than 60 days: ');
    await expect.poll(() => content.textContent(), SLOW).toContain('Overdue by more than 60');
    // Longer than the 1.5 s re-read this page used to make: a poller would have asked again by now.
    await page.waitForTimeout(2000);
    paced.fragment('INV-1042 and <b>INV-1077</b>, ');
    await expect.poll(() => content.textContent(), SLOW).toContain('Overdue by more than 60 days: INV-1042 and <b>INV-1077');
    // The answer is text, never markup.
    expect(await content.locator('b').count()).toBe(0);
    await shot(page, 'run-live');
    await expectAccessible('run detail, followed live');
    paced.fragment('both with the wholesale team.');
    await expect.poll(() => content.textContent(), SLOW).toContain('both with the wholesale');
    expect(await facts.locator('.badge').textContent()).toBe('in progress');
    expect({ reads: requests.reads, streams: requests.streams }).toEqual({ reads: 1, streams: [''] });
    await paced.finish();
    await expect.poll(() => status.textContent(), SLOW).toBe('The run completed.');
    await expect.poll(() => facts.locator('.badge').textContent(), SLOW).toBe('completed');
    // The final state comes from one read after the terminal event: when it completed, usage, steps, the whole answer.
    await expect.poll(() => requests.reads, SLOW).toBe(2);
    await expect.poll(() => facts.textContent(), SLOW).toMatch(/Completed\d{4}-\d{2}-\d{2} /);
    expect(await facts.textContent()).toMatch(/[1-9]\d* STU · \d+ input tokens · \d+ output tokens/);
    expect(await page.locator('ol.steps li').count()).toBeGreaterThan(0);
    expect(await content.textContent()).toBe('Overdue by more than 60 days: INV-1042 and <b>INV-1077</b>, both with the wholesale team.');
    await page.waitForTimeout(2000);
    expect({ reads: requests.reads, streams: requests.streams }).toEqual({ reads: 2, streams: [''] });
    requests.stop();
  });

  it('resumes a dropped event stream after the last event it received, repeating no text', async () => {
    const paced = await startPacedRun(h, 'Which invoices are more than 60 days overdue?');
    paced.fragment('Two invoices are overdue, ');
    // The page's first connection gets the log's events so far and then ends, as a dropped connection would.
    const head = await eventsSoFar(h, paced.runId, 'Two invoices');
    let first = true;
    await page.route(`**/runs/${paced.runId}/events`, async (route) => {
      if (!first) return route.continue();
      first = false;
      return route.fulfill({ status: 200, headers: { 'content-type': 'text/event-stream' }, body: head.text });
    });
    await open('Runs');
    const requests = countRunRequests(page, paced.runId);
    await page.getByRole('link', { name: paced.runId }).click();
    const content = page.locator('pre.content');
    await expect.poll(() => content.textContent(), SLOW).toContain('Two invoices');
    // Resumed after the last id it received, on the real stream.
    await expect.poll(() => requests.streams, SLOW).toEqual(['', String(head.lastId)]);
    await expect.poll(() => page.getByRole('status').textContent(), SLOW).toBe('Live: the page follows the run as it happens.');
    paced.fragment('INV-2001 and INV-2002.');
    // The redactor may hold the answer's last characters back until the end: the rest is checked after it.
    await expect.poll(() => content.textContent(), SLOW).toContain('Two invoices are overdue, INV-2001');
    // The events before the drop were not shown again.
    expect((await content.textContent())?.split('Two invoices').length).toBe(2);
    await paced.finish();
    await expect.poll(() => page.getByRole('status').textContent(), SLOW).toBe('The run completed.');
    await expect.poll(() => requests.reads, SLOW).toBe(2);
    await expect.poll(() => page.locator('dl.facts').textContent(), SLOW).toMatch(/Completed\d{4}-\d{2}-\d{2} /);
    expect(await content.textContent()).toBe('Two invoices are overdue, INV-2001 and INV-2002.');
    expect(requests.streams).toHaveLength(2);
    requests.stop();
    await page.unroute(`**/runs/${paced.runId}/events`);
  });

  it('cancels an in_progress run from its page, confirmed; the run reads canceled', async () => {
    // [[hang]]: one fragment, then the local engine waits until the run is canceled.
    const started = await fetch(`${h.url}/v1/inference`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.apiKey}`, 'content-type': 'application/json' },
      // It writes the draft first (draft.create, a tool call), then answers: one fragment, then it hangs.
      body: JSON.stringify({
        agentSlug: 'strategy',
        alias: 'Sonata',
        stream: true,
        messages: [{ role: 'user', content: 'Write a memo about the roadmap [[hang]]' }],
      }),
    });
    expect(started.status).toBe(200);
    const reader = started.body!.getReader();
    await reader.read();
    let runId: string | undefined;
    await expect
      .poll(async () => {
        const list = (await (await fetch(`${h.url}/runs?status=in_progress`, bearer(h.apiKey))).json()) as { data: { id: string }[] };
        runId = list.data[0]?.id;
        return runId;
      }, SLOW)
      .toMatch(/^run_/);
    await open('Runs');
    const requests = countRunRequests(page, runId!);
    await page.getByRole('link', { name: runId }).click();
    await page.getByRole('heading', { name: /Run run_/ }).waitFor();
    // What the run did before it hung arrives from its events: the tool call, then the first fragment.
    const toolCalls = page.locator('h2:has-text("Tool calls") + ul');
    await expect.poll(() => toolCalls.textContent(), SLOW).toMatch(/called/);
    await expect.poll(async () => (await page.locator('pre.content').textContent())?.replace('…', '').length, SLOW).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Cancel this run' }).click();
    await page.getByRole('button', { name: 'Cancel now' }).click();
    await page.getByText('canceled', { exact: true }).first().waitFor({ timeout: 30_000 });
    await expect.poll(() => page.getByRole('status').textContent(), SLOW).toBe('The run was canceled.');
    // One read, the stream, one read after its terminal event (run.canceled); the cancel itself is a POST.
    await expect.poll(() => requests.reads, SLOW).toBe(2);
    expect(requests.streams).toEqual(['']);
    requests.stop();
    const run = (await (await fetch(`${h.url}/runs/${runId}`, bearer(h.apiKey))).json()) as { run: { status: string } };
    expect(run.run.status).toBe('canceled');
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read());
  });

  it('agents, members and the overview pass the axe check', async () => {
    await open('Agents');
    const legal = page.getByRole('row').filter({ hasText: 'legal' });
    await legal.getByRole('button', { name: /^Pause / }).click();
    await legal.getByRole('textbox', { name: /^Reason for pausing/ }).fill('Month-end close');
    await legal.getByRole('button', { name: 'Pause now' }).click();
    await expect.poll(() => legal.textContent(), SLOW).toContain('Month-end close');
    const refused = await fetch(`${h.url}/v1/inference`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agentSlug: 'legal', alias: 'Sonata', messages: [{ role: 'user', content: 'Review this contract clause.' }] }),
    });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: 'agent_disabled' });
    await expectAccessible('agents');
    await legal.getByRole('button', { name: /^Resume / }).click();
    await expect.poll(() => legal.textContent(), SLOW).not.toContain('Month-end close');
    await open('Members');
    await page.getByRole('button', { name: 'Invite someone' }).click();
    await page.getByLabel('Email', { exact: true }).fill('member@example.com');
    await page.getByLabel('Role', { exact: true }).selectOption('member');
    await page.getByRole('button', { name: 'Invite' }).click();
    const token = tokenOf(await page.getByRole('textbox', { name: 'Invitation link for member@example.com' }).inputValue());
    const password = 'a-member-password-of-some-length';
    const accept = (body: Record<string, unknown>) =>
      fetch(`${h.url}/invitations/accept`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    // A new account: its two-step secret first (202), then its current code makes the account (200).
    const accepted = await completeTwoStep(accept, { now: () => new Date() }, { token, password });
    expect(accepted.status).toBe(200);
    const { email, totpSecret } = (await accepted.json()) as { email: string; totpSecret: string };
    member = { email, password, totpSecret };
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('button', { name: 'Refresh members' }).click();
    // In the members' table: the pending invitation's row goes once that list is read again.
    await page.getByRole('table', { name: 'Members of the workspace' }).getByRole('row').filter({ hasText: 'member@example.com' }).waitFor();
    await expectAccessible('members');
    await open('Overview');
    await page.getByText(/Usage of \d{4}-\d{2}/).waitFor();
    // The runs of this suite are in the chart by now.
    await expect.poll(() => page.getByRole('img', { name: /^By agent: [1-9]\d* STU/ }).count(), SLOW).toBe(1);
    await expectAccessible('overview after activity');
  });

  it("resets a member's password from Members, confirmed: the token once; the member redeems it and signs in with the new password", async () => {
    await open('Members');
    const row = page.getByRole('table', { name: 'Members of the workspace' }).getByRole('row').filter({ hasText: 'member@example.com' });
    await row.getByRole('combobox', { name: 'What to reset for member@example.com' }).selectOption('password');
    await row.getByRole('button', { name: 'Reset password / two-step of member@example.com' }).click();
    await row.getByRole('button', { name: 'Reset now' }).click();
    const token = tokenOf(await page.getByRole('textbox', { name: 'Reset link for member@example.com' }).inputValue());
    expect(token).toMatch(/^service_rst_[0-9A-Za-z]{32}$/);
    const password = 'the-member-chose-a-new-password';
    const redeemed = await fetch(`${h.url}/account-resets/redeem`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token, password }),
    });
    expect(redeemed.status).toBe(200);
    expect(await redeemed.json()).toMatchObject({ email: 'member@example.com', reset: 'password', totpSecret: null });
    member = { ...member!, password };
    await page.getByRole('button', { name: 'Done' }).click();
    // No reset on one's own row (the signed-in owner).
    expect(await page.getByRole('button', { name: /^Reset password \/ two-step of admin@example.com/ }).count()).toBe(0);
  });

  it('an admin cannot raise itself to owner nor change the owner: the refusal is named and the roles stay', async () => {
    // The owner invites an admin through the Members screen.
    await open('Members');
    await page.getByRole('button', { name: 'Invite someone' }).click();
    await page.getByLabel('Email', { exact: true }).fill('second-admin@example.com');
    await page.getByLabel('Role', { exact: true }).selectOption('admin');
    await page.getByRole('button', { name: 'Invite' }).click();
    const token = tokenOf(await page.getByRole('textbox', { name: 'Invitation link for second-admin@example.com' }).inputValue());
    const password = 'an-admin-password-of-some-length';
    const accept = (body: Record<string, unknown>) =>
      fetch(`${h.url}/invitations/accept`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    // A new account: its two-step secret first (202), then its current code makes the account (200).
    const accepted = await completeTwoStep(accept, { now: () => new Date() }, { token, password });
    expect(accepted.status).toBe(200);
    const { email, totpSecret } = (await accepted.json()) as { email: string; totpSecret: string };
    await page.getByRole('button', { name: 'Done' }).click();

    const { context, page: adminPage } = await h.newPage();
    await signIn(adminPage, { email, password, totpSecret });
    await adminPage.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await adminPage.getByRole('navigation', { name: 'Panel' }).getByRole('link', { name: 'Members', exact: true }).click();
    const ownRole = adminPage.getByRole('combobox', { name: `Role of ${email}` });
    await ownRole.waitFor();
    for (const [select, to, stays] of [
      [ownRole, 'owner', 'admin'],
      [adminPage.getByRole('combobox', { name: 'Role of admin@example.com' }), 'member', 'owner'],
    ] as const) {
      const answer = adminPage.waitForResponse((r) => r.url().includes('/workspace/members/') && r.request().method() === 'PATCH');
      await select.selectOption(to);
      expect((await answer).status()).toBe(403);
      await expect.poll(() => adminPage.getByRole('alert').textContent(), SLOW).toContain('role_forbidden');
      // The list is read again: the select shows the role the member really has.
      await expect.poll(() => select.inputValue(), SLOW).toBe(stays);
    }
    await context.close();
    // The owner's view, read again from the server: nothing changed.
    await page.getByRole('button', { name: 'Refresh members' }).click();
    await expect.poll(() => page.getByRole('combobox', { name: `Role of ${email}` }).inputValue(), SLOW).toBe('admin');
    expect(await page.getByRole('combobox', { name: 'Role of admin@example.com' }).inputValue()).toBe('owner');
  });

  it('switches the workspace: a member of the other one, the admin screens are gone', async () => {
    const switcher = page.getByRole('combobox', { name: 'Workspace' });
    const defaultWorkspace = await switcher.inputValue();
    const acme = await switcher.locator('option', { hasText: 'Acme' }).getAttribute('value');
    await switcher.selectOption(acme!);
    await page.getByText('admin@example.com · member').waitFor();
    const nav = page.getByRole('navigation', { name: 'Panel' });
    expect(await nav.getByRole('link', { name: 'API keys' }).count()).toBe(0);
    await switcher.selectOption(defaultWorkspace);
    await page.getByText('admin@example.com · owner').waitFor();
    await nav.getByRole('link', { name: 'API keys' }).waitFor();
  });

  it('signs out', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to the panel' }).waitFor();
    expect((await fetch(`${h.url}/panel`)).status).toBe(200);
  });

  it('a member sees no admin controls (nor the decision of a run waiting for an approval), and a forged admin write from their session is refused', async () => {
    const { context, page: memberPage } = await h.newPage({ width: 390, height: 844 });
    const login = memberPage.waitForResponse((r) => r.url().endsWith('/auth/login'));
    await signIn(memberPage, member!);
    const csrfToken = ((await (await login).json()) as { csrfToken: string }).csrfToken;
    await memberPage.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    const nav = memberPage.getByRole('navigation', { name: 'Panel' });
    expect(await nav.getByRole('link', { name: 'API keys' }).count()).toBe(0);
    expect(await nav.getByRole('link', { name: 'Webhooks' }).count()).toBe(0);
    expect(await nav.getByRole('link', { name: 'Members' }).count()).toBe(0);
    // Responsive: nothing wider than a 390 px screen.
    expect(await memberPage.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await memberPage.screenshot({ path: `${SHOTS_DIR}member-390px.png`, fullPage: true });
    expect(await axeViolations(memberPage), 'axe on the member overview at 390 px').toEqual([]);
    // A deep link to an admin screen: the session is restored, the screen is not offered to a member.
    await memberPage.goto('/panel/keys');
    await memberPage.getByRole('heading', { name: 'Not available', level: 1 }).waitFor();
    // A run waiting for an approval: the member sees it wait, and who decides it, but no decision of their own.
    const runId = await invokeAgent(h, 'sales', 'Please send the renewal email to Dana.');
    await memberPage.goto(`/panel/runs/${runId}`);
    const waiting = memberPage.getByRole('region', { name: 'Waiting for an approval' });
    await waiting.waitFor();
    await expect.poll(() => waiting.textContent(), SLOW).toContain('An owner or admin of the workspace decides it');
    expect(await waiting.getByRole('button').count()).toBe(0);
    await expect.poll(() => memberPage.getByRole('status').textContent(), SLOW).toBe('Waiting for an approval: email.send.');
    // The member's own session cookie and CSRF token, used for an admin write the panel never offers them.
    const forged = await memberPage.evaluate(async (token) => {
      const res = await fetch('/api-keys', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': token },
        body: JSON.stringify({ name: 'forged', scopes: ['tenant:read'], expiresInDays: 1 }),
      });
      return { status: res.status, body: (await res.json()) as { error: string } };
    }, csrfToken);
    expect(forged).toMatchObject({ status: 403, body: { error: 'role_forbidden' } });
    await context.close();
  });

  it('after repeated wrong codes, says how long to wait (too_many_attempts)', async () => {
    const { context, page: locked } = await h.newPage();
    const wrong = codeOf(member!) === '000000' ? '111111' : '000000';
    // Each attempt waits for its own answer (a page reloaded before it would cancel the request, and an attempt
    // would not count): until the lock answers 429.
    for (let attempt = 0; attempt < 6; attempt += 1) {
      const answered = locked.waitForResponse((r) => r.url().endsWith('/auth/login') && r.request().method() === 'POST');
      await signIn(locked, member!, wrong);
      if ((await answered).status() === 429) break;
    }
    await expect
      .poll(() => locked.getByRole('alert').textContent(), SLOW)
      .toMatch(/Too many failed attempts\. Wait \d+ (seconds|minutes) before signing in again/);
    await context.close();
  });
});
