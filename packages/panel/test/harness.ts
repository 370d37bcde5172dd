/**
 * @module Test harness of the panel's browser suite: a real `service serve` on loopback with a fresh data
 * directory (the first admin from `init`), loopback HTTPS receivers for outbound
 * deliveries (self-signed, trusted through NODE_EXTRA_CA_CERTS, allowed by WEBHOOK_ALLOW_HOSTS), a fake Chat
 * Completions server behind the `Symphony` alias (a run that streams as slowly as a test says), a fresh panel
 * build, and Debian's Chromium driven by playwright-core.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { totpCode } from '../../server/src/domain/sessions/totp.ts';
import { type FakeChatServer, sendStream, startFakeChatServer } from '@service/testing/fake-chat-server';
import {
  createSelfSignedCertificate,
  type HttpsTestReceiver,
  type ReceiverAnswer,
  startHttpsTestReceiver,
  type TestCertificate,
} from '@service/testing/https-receiver';
import { type CliProcesses, cliProcesses } from '@service/testing/cli-processes';
import { completeTwoStep } from '@service/testing/two-step';

export const CHROMIUM = '/usr/bin/chromium';
/**
 * Where the suite's screenshots go: `docs/panel/` (the pictures of docs/panel.md) when run with
 * UPDATE_PANEL_SCREENSHOTS=1, else `packages/panel/test-results/` (ignored by git), so that an ordinary test run
 * leaves the working tree clean.
 */
export const SHOTS_DIR = fileURLToPath(new URL(process.env.UPDATE_PANEL_SCREENSHOTS === '1' ? '../../../docs/panel/' : '../test-results/', import.meta.url));
const require = createRequire(import.meta.url);

export interface User {
  email: string;
  password: string;
  totpSecret: string;
}

export interface Harness {
  url: string;
  apiKey: string;
  operatorToken: string;
  admin: User;
  cli: CliProcesses;
  browser: Browser;
  /** The loopback certificate the server trusts (NODE_EXTRA_CA_CERTS), for another test server on loopback. */
  certificate: TestCertificate;
  /** A receiver that answers 200, one that answers 503, and one that answers 410 Gone. */
  healthy: HttpsTestReceiver;
  failing: HttpsTestReceiver;
  gone: HttpsTestReceiver;
  /**
   * The engine behind `Symphony` (every other alias is the local engine): a loopback Chat Completions server whose
   * `handle` a test sets to answer at its own pace; by default it streams a short answer at once.
   */
  chat: FakeChatServer;
  newPage(viewport?: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }>;
  close(): Promise<void>;
}

/**
 * A name that resolves to the loopback server but is not localhost: the panel over plain HTTP on another host, where
 * the browser drops the `Secure` session cookie.
 */
export const PLAIN_HTTP_HOST = 'panel.test';

/** Chromium's flags for a closed network (no background or component traffic); PLAIN_HTTP_HOST resolves to loopback. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  `--host-resolver-rules=MAP ${PLAIN_HTTP_HOST} 127.0.0.1`,
];

export async function startHarness(): Promise<Harness> {
  // The panel as it is now: vitest.global-setup.ts built dist/ once before any suite (never here: another suite's
  // server may be serving it).
  const dir = mkdtempSync(join(tmpdir(), 'panel-e2e-'));
  const certificate = createSelfSignedCertificate();
  writeFileSync(join(dir, 'receiver-ca.pem'), certificate.cert);
  const healthy = await startHttpsTestReceiver(certificate, (): ReceiverAnswer => ({ status: 200 }));
  const failing = await startHttpsTestReceiver(certificate, (): ReceiverAnswer => ({ status: 503, body: 'down for maintenance' }));
  const gone = await startHttpsTestReceiver(certificate, (): ReceiverAnswer => ({ status: 410 }));
  const chat = await startFakeChatServer();
  chat.handle = (request, res) => sendStream(res, String(request.body.model), ['Here is ', 'the answer.'], { prompt_tokens: 20, completion_tokens: 4 });
  const env: NodeJS.ProcessEnv = { ...process.env };
  // Its own embedded store: DATABASE_URL and REDIS_URL (set in CI) are shared by other suites.
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'DATA_DIR', 'PORT', 'SECRET_KEY', 'CORS_ORIGINS']) delete env[name];
  Object.assign(env, { WEBHOOK_ALLOW_HOSTS: '127.0.0.1', WEBHOOK_POLL_MS: '100', NODE_EXTRA_CA_CERTS: join(dir, 'receiver-ca.pem') });
  // Each browser context (and each test of the shared page, clientAddress) is its own client address, so the suite's
  // requests are not all counted against one address's per-minute budget, as one person's browser would not be.
  Object.assign(env, { TRUST_PROXY: '1' });
  Object.assign(env, { ENGINE_SYMPHONY: 'openai-compatible', OPENAI_COMPATIBLE_BASE_URL: chat.baseURL, OPENAI_COMPATIBLE_MODEL_SYMPHONY: 'panel-paced' });
  const cli = cliProcesses(dir, env);
  const init = JSON.parse(await cli.run('init', '--json')) as { apiKey: string; admin: User; operatorToken: string };
  const server = await cli.serve();
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  mkdirSync(SHOTS_DIR, { recursive: true });
  return {
    url: server.url,
    apiKey: init.apiKey,
    operatorToken: init.operatorToken,
    admin: init.admin,
    cli,
    browser,
    certificate,
    healthy,
    failing,
    gone,
    chat,
    async newPage(viewport = { width: 1280, height: 900 }) {
      // bypassCSP only so that axe-core can be injected; the panel's own CSP is asserted separately.
      const context = await browser.newContext({ viewport, bypassCSP: true, baseURL: server.url, extraHTTPHeaders: { 'x-forwarded-for': clientAddress() } });
      const page = await context.newPage();
      return { context, page };
    },
    async close() {
      await browser.close().catch(() => undefined);
      cli.killAll();
      await healthy.close();
      await failing.close();
      await gone.close();
      await chat.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The current TOTP code; `stepOffset` picks a neighbouring 30-second step, for a second sign-in of the
 * same user within one step (a code is accepted once).
 */
export function codeOf(user: User, stepOffset = 0): string {
  return totpCode(user.totpSecret, new Date(Date.now() + stepOffset * 30_000));
}

export async function signIn(page: Page, user: User, code = codeOf(user)): Promise<void> {
  await page.goto('/panel');
  await submitSignIn(page, user, code);
}

let clients = 0;

/** A client address of its own (believed through TRUST_PROXY=1, as behind the deployment's proxy). */
export function clientAddress(): string {
  clients += 1;
  return `10.77.${Math.floor(clients / 250)}.${(clients % 250) + 1}`;
}

/** Fills and sends the sign-in form of the page as it is (a deep link's, a session that ended). */
export async function submitSignIn(page: Page, user: User, code = codeOf(user)): Promise<void> {
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByLabel('Six-digit code').fill(code);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * A second workspace ("Acme", created by the operator) where `user` is a member, so that the user's sign-in lists
 * two workspaces: its owner invites the user, who accepts with their own password.
 */
export async function joinSecondWorkspace(h: Pick<Harness, 'url' | 'operatorToken'>, user: User): Promise<void> {
  const json = { 'content-type': 'application/json' };
  const created = await fetch(`${h.url}/operator/workspaces`, {
    method: 'POST',
    headers: { ...json, authorization: `Bearer ${h.operatorToken}` },
    body: JSON.stringify({ name: 'Acme', adminEmail: 'owner@acme.example' }),
  });
  if (created.status !== 201) throw new Error(`createWorkspace answered ${created.status}: ${await created.text()}`);
  const owner = ((await created.json()) as { admin: User }).admin;
  const login = await fetch(`${h.url}/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ ...loginOf(owner) }) });
  if (login.status !== 200) throw new Error(`login answered ${login.status}`);
  const session = { cookie: login.headers.get('set-cookie')!.split(';')[0]!, 'x-csrf-token': ((await login.json()) as { csrfToken: string }).csrfToken };
  const invited = await fetch(`${h.url}/workspace/invitations`, {
    method: 'POST',
    headers: { ...json, ...session },
    body: JSON.stringify({ email: user.email, role: 'member' }),
  });
  if (invited.status !== 201) throw new Error(`createInvitation answered ${invited.status}`);
  const { token } = (await invited.json()) as { token: string };
  const accept = (body: Record<string, unknown>) => fetch(`${h.url}/invitations/accept`, { method: 'POST', headers: json, body: JSON.stringify(body) });
  const accepted = await completeTwoStep(accept, { now: () => new Date() }, { token, password: user.password });
  if (accepted.status !== 200) throw new Error(`acceptInvitation answered ${accepted.status}`);
}

/** A new workspace created by the operator: its owner (a user of no other workspace, with their own TOTP codes) and its key. */
export async function newWorkspace(h: Pick<Harness, 'url' | 'operatorToken'>, name: string): Promise<{ owner: User; apiKey: string }> {
  const created = await fetch(`${h.url}/operator/workspaces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${h.operatorToken}` },
    body: JSON.stringify({ name }),
  });
  if (created.status !== 201) throw new Error(`createWorkspace answered ${created.status}: ${await created.text()}`);
  const body = (await created.json()) as { admin: User; apiKey: string };
  return { owner: body.admin, apiKey: body.apiKey };
}

function loginOf(user: User) {
  return { email: user.email, password: user.password, totpCode: codeOf(user) };
}

/** axe-core's serious and critical violations on the page as it is now (none expected). */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
  // Runs in the page (the browser's globals, not this file's Node ones).
  const violations = await page.evaluate(async () => {
    const page = globalThis as unknown as { document: unknown; axe: { run(context: unknown, options: object): Promise<{ violations: AxeViolation[] }> } };
    return (await page.axe.run(page.document, { resultTypes: ['violations'] })).violations;
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS_DIR, `${name}.png`), fullPage: true });
}

export const chromiumAvailable = existsSync(CHROMIUM);
