/**
 * @module Every screen of the panel (screens.ts), in Chromium against a real server, twice:
 * - in an ordinary workspace: axe-core finds no serious or critical violation at 1366 and at 390 px, nothing is wider
 *   than the phone, and the screenshots of docs/panel/ are taken (UPDATE_PANEL_SCREENSHOTS=1 writes them there);
 * - in a workspace whose every stored string a screen shows is markup (`<img onerror>`, `<script>`,
 *   `"><svg onload>`): the workspace's name, key names, an agent's pause reason, the kill switch's reason, a run's
 *   request, its answer and tool call, a conversation's turns. Each screen shows it as text, and nothing runs: no
 *   `window.__xss`, no dialog, no element with an event-handler attribute, no fetch of the `<img>`'s source.
 * The browser contexts bypass the panel's CSP (for axe), so these checks do not lean on it.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { join } from 'node:path';
import { sendStream } from '@service/testing/fake-chat-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, chromiumAvailable, clientAddress, type Harness, SHOTS_DIR, startHarness } from './harness.ts';
import { type Screen, SCREENS } from './screens.ts';
import { BENIGN, HOSTILE, MARKUP, seedWorld, type World } from './seed.ts';

if (!chromiumAvailable && process.env.CI) throw new Error('/usr/bin/chromium is missing: the panel suite cannot run (apt-get install chromium).');

const WIDE = { width: 1366, height: 900 };
const PHONE = { width: 390, height: 844 };

interface Browsing {
  signedIn: Page;
  signedOut: Page;
  /** What ran that should not have: dialogs, fetches of the `<img>`'s source `x`. */
  ran: string[];
  close(): Promise<void>;
}

describe.skipIf(!chromiumAvailable)('every screen of the panel', { timeout: 180_000 }, () => {
  let h: Harness;
  let benign: World;
  let hostile: World;

  beforeAll(async () => {
    h = await startHarness();
    benign = await seedWorld(h, BENIGN, 'northwind');
    hostile = await seedWorld(h, HOSTILE, 'hostile');
  }, 240_000);

  afterAll(async () => {
    await h?.close();
  });

  /** A browser with the world owner's session (its cookie, as after a sign-in) and one without. */
  async function browse(world: World): Promise<Browsing> {
    const ran: string[] = [];
    const contexts: BrowserContext[] = [];
    const open = async () => {
      const { context, page } = await h.newPage(WIDE);
      contexts.push(context);
      page.on('dialog', (dialog) => {
        ran.push(`dialog: ${dialog.message()}`);
        void dialog.dismiss();
      });
      page.on('request', (request) => new URL(request.url()).pathname.endsWith('/x') && ran.push(`fetched ${request.url()}`));
      return page;
    };
    const signedIn = await open();
    const { hostname } = new URL(h.url);
    await signedIn
      .context()
      .addCookies([{ name: 'service_session', value: world.cookie, domain: hostname, path: '/', httpOnly: true, secure: true, sameSite: 'Strict' }]);
    const signedOut = await open();
    return { signedIn, signedOut, ran, close: async () => void (await Promise.all(contexts.map((c) => c.close()))) };
  }

  /** Opens the screen from an address of its own (the per-address budget) and checks the strings it shows. */
  async function visit(browsing: Browsing, screen: Screen, world: World): Promise<Page> {
    const page = screen.signedOut ? browsing.signedOut : browsing.signedIn;
    await page.setExtraHTTPHeaders({ 'x-forwarded-for': clientAddress() });
    await screen.open(page, world);
    const shown = await page.locator('main').textContent();
    for (const text of screen.shows(world.texts)) expect(shown, `${screen.name} shows ${text}`).toContain(text);
    return page;
  }

  async function shoot(page: Page, name: string) {
    await page.screenshot({ path: join(SHOTS_DIR, `${name}.png`), fullPage: true, animations: 'disabled', caret: 'hide' });
  }

  it('in an ordinary workspace: no serious or critical axe violation at 1366 and 390 px; the screenshots', async () => {
    const browsing = await browse(benign);
    const failures: string[] = [];
    for (const screen of SCREENS) {
      const page = await visit(browsing, screen, benign);
      await shoot(page, screen.name);
      failures.push(...(await axeViolations(page)).map((v) => `${screen.name} at 1366 px: ${v}`));
      await page.setViewportSize(PHONE);
      const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
      if (width > PHONE.width) failures.push(`${screen.name} at 390 px is ${width} px wide: ${await overflowing(page)}`);
      await shoot(page, `${screen.name}-390px`);
      failures.push(...(await axeViolations(page)).map((v) => `${screen.name} at 390 px: ${v}`));
      await page.setViewportSize(WIDE);
    }
    expect(failures).toEqual([]);
    expect(browsing.ran).toEqual([]);
    await browsing.close();
  });

  it('in a workspace whose every stored string is markup: each screen shows it as text and nothing runs', async () => {
    // The engine behind Symphony (Try an agent's alias in this workspace) answers markup too.
    h.chat.handle = (request, res) =>
      sendStream(res, String(request.body.model), [HOSTILE.answer.slice(0, 40), HOSTILE.answer.slice(40)], { prompt_tokens: 20, completion_tokens: 30 });
    const browsing = await browse(hostile);
    for (const screen of SCREENS) {
      const page = await visit(browsing, screen, hostile);
      expect(await ranIn(page), screen.name).toEqual({ xss: null, handlers: 0, inlineScripts: 0 });
    }
    // The answer as stored: the Symphony run's page (the conversation of Try an agent).
    const { signedIn: page } = browsing;
    const runs = await fetch(`${h.url}/runs?alias=Symphony`, { headers: { authorization: `Bearer ${hostile.apiKey}` } });
    const [symphony] = ((await runs.json()) as { data: { id: string }[] }).data;
    await page.goto(`/panel/runs/${symphony!.id}`);
    await page.getByText('Content (redacted)').waitFor();
    await expect.poll(() => page.locator('main').textContent(), { timeout: 15_000 }).toContain(HOSTILE.answer);
    // The workspace's name is in the top bar of every signed-in screen.
    expect(await page.locator('header').textContent()).toContain(HOSTILE.workspace);
    expect(await ranIn(page)).toEqual({ xss: null, handlers: 0, inlineScripts: 0 });
    expect(browsing.ran).toEqual([]);
    await browsing.close();
  });

  it('an error whose message is markup (as a proxy in front might answer) is shown as text', async () => {
    const browsing = await browse(hostile);
    const page = browsing.signedIn;
    // The server never repeats a value it was sent in a message; an answer of markup can only come from elsewhere.
    await page.route(
      (url) => url.pathname === '/api-keys',
      (route) =>
        route.fulfill({
          status: 502,
          contentType: 'application/json',
          body: JSON.stringify({ error: 'bad_gateway', message: `M ${MARKUP}`, requestId: MARKUP }),
        }),
    );
    await page.goto('/panel/keys');
    await expect.poll(() => page.getByRole('alert').textContent(), { timeout: 15_000 }).toContain(`M ${MARKUP}`);
    expect(await page.getByRole('alert').textContent()).toContain(`request id ${MARKUP}`);
    expect(await ranIn(page)).toEqual({ xss: null, handlers: 0, inlineScripts: 0 });
    expect(browsing.ran).toEqual([]);
    await browsing.close();
  });
});

/** What the markup would have left behind had it been parsed: the flag it sets, handler attributes, inline scripts. */
async function ranIn(page: Page) {
  return page.evaluate(`({
    xss: window.__xss ?? null,
    handlers: document.querySelectorAll('[onerror], [onload]').length,
    inlineScripts: [...document.scripts].filter((s) => !s.src).length,
  })`);
}

/** The elements that reach past the viewport's right edge outside any scrolling box, named for a failure message. */
async function overflowing(page: Page): Promise<string> {
  return page.evaluate(`[...document.querySelectorAll('body *')]
    .filter((e) => e.getBoundingClientRect().right > innerWidth)
    .filter((e) => { for (let a = e.parentElement; a; a = a.parentElement) if (getComputedStyle(a).overflowX !== 'visible') return false; return true; })
    .slice(0, 5)
    .map((e) => e.tagName.toLowerCase() + (e.className ? '.' + String(e.className).replace(/ /g, '.') : '') + ' ' + Math.round(e.getBoundingClientRect().right))
    .join(', ')`);
}
