/**
 * @module Every screen of the panel, in one list: how to open it in a seeded workspace and wait until its content is
 * there, and which of the workspace's stored strings it shows. every-screen.test.ts visits each one twice: in an
 * ordinary workspace (axe at 1366 and 390 px, the screenshots of docs/panel/) and in one whose every stored string is
 * markup (shown as text, never run). A new screen is one more entry here.
 */
import type { Page } from 'playwright-core';
import type { Texts, World } from './seed.ts';

export interface Screen {
  /** The screenshots' names: docs/panel/<name>.png and <name>-390px.png. */
  name: string;
  /** Opened in a browser without a session (sign-in, the pages a link opens). */
  signedOut?: boolean;
  /** Goes to the screen (a fresh page load) and waits until its content is shown. */
  open(page: Page, world: World): Promise<void>;
  /** The stored strings the screen shows in its main area. */
  shows(texts: Texts): string[];
}

const WAIT = { timeout: 20_000 };

async function heading(page: Page, name: string | RegExp): Promise<void> {
  await page.getByRole('heading', { name, level: 1 }).waitFor(WAIT);
}

async function openPath(page: Page, path: string, title: string | RegExp): Promise<void> {
  await page.goto(path);
  await heading(page, title);
}

export const SCREENS: Screen[] = [
  {
    name: 'sign-in',
    signedOut: true,
    open: (page) => openPath(page, '/panel', 'Sign in to the panel'),
    shows: () => [],
  },
  {
    name: 'overview',
    async open(page) {
      await openPath(page, '/panel', 'Overview');
      await page.getByRole('img', { name: /^By agent: [1-9]\d* STU/ }).waitFor(WAIT);
    },
    shows: () => [],
  },
  {
    name: 'runs',
    async open(page, world) {
      await openPath(page, '/panel/runs', 'Runs');
      await page.getByRole('link', { name: world.runId }).waitFor(WAIT);
    },
    shows: () => [],
  },
  {
    name: 'run-detail',
    async open(page, world) {
      await openPath(page, `/panel/runs/${world.runId}`, /^Run run_/);
      await page.getByText('Content (redacted)').waitFor(WAIT);
      await page.locator('dl.facts .badge').getByText('completed', { exact: true }).waitFor(WAIT);
    },
    // The page shows the answer, not the request; the local engine's answer quotes the request, less its closing
    // punctuation (and so does its tool call's arguments, as JSON).
    shows: (t) => [t.request.replace(/[.!?]+$/, '')],
  },
  {
    name: 'try-an-agent',
    async open(page, world) {
      await openPath(page, '/panel/try', 'Try an agent');
      await page.getByLabel('Agent', { exact: true }).selectOption('finance');
      await page.getByLabel('Alias', { exact: true }).selectOption(world.texts.tryAlias);
      await page.getByLabel('Message').fill(world.texts.tryMessage);
      await page.getByRole('button', { name: 'Send' }).click();
      await page.getByRole('link', { name: /^run_/ }).waitFor({ timeout: 30_000 });
    },
    shows: (t) => [t.tryMessage, t.answer],
  },
  {
    name: 'agents',
    async open(page) {
      await openPath(page, '/panel/agents', 'Agents');
      await page.getByRole('row').filter({ hasText: 'paused' }).waitFor(WAIT);
    },
    shows: (t) => [t.agentReason],
  },
  {
    name: 'approvals',
    async open(page) {
      await openPath(page, '/panel/approvals', 'Approvals');
      await page.getByRole('row').filter({ hasText: 'email.send' }).waitFor(WAIT);
    },
    shows: () => [],
  },
  {
    name: 'drafts',
    async open(page) {
      await openPath(page, '/panel/drafts', 'Drafts');
      await page.getByRole('table', { name: 'Drafts, newest first' }).getByRole('row').filter({ hasText: 'email' }).first().waitFor(WAIT);
    },
    shows: () => [],
  },
  {
    name: 'agent-configuration',
    async open(page) {
      await openPath(page, '/panel/agents/sales', 'Sales: configuration');
      await page.getByRole('button', { name: 'Save configuration' }).waitFor(WAIT);
    },
    shows: () => [],
  },
  {
    name: 'api-keys',
    async open(page, world) {
      await openPath(page, '/panel/keys', 'API keys');
      await page.getByRole('row').filter({ hasText: world.texts.key }).waitFor(WAIT);
    },
    shows: (t) => [t.key],
  },
  {
    name: 'api-key-created',
    async open(page, world) {
      await openPath(page, '/panel/keys', 'API keys');
      await page.getByRole('button', { name: 'New key' }).click();
      await page.getByLabel('Name').fill(world.texts.newKey);
      await page.getByRole('checkbox', { name: /tenant:read/ }).check();
      await page.getByRole('checkbox', { name: 'finance', exact: true }).check();
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.getByRole('textbox', { name: `Secret of ${world.texts.newKey}` }).waitFor(WAIT);
    },
    shows: (t) => [t.newKey, t.key],
  },
  {
    name: 'webhooks',
    async open(page) {
      await openPath(page, '/panel/webhooks', 'Webhooks');
      const card = page.getByRole('listitem', { name: /^Destination .*\/events$/ }).filter({ hasText: 'consecutive failures: 0' });
      await card.getByRole('button', { name: 'Delivery log' }).click();
      await page
        .getByRole('region', { name: /^Delivery log of / })
        .getByText('delivered')
        .first()
        .waitFor(WAIT);
    },
    shows: () => [],
  },
  {
    name: 'webhooks-inbound',
    async open(page) {
      await openPath(page, '/panel/webhooks', 'Webhooks');
      await page.getByRole('tab', { name: 'Inbound' }).click();
      await page.getByRole('row').filter({ hasText: 'crm-leads' }).waitFor(WAIT);
    },
    shows: () => [],
  },
  {
    name: 'integrations',
    async open(page) {
      await openPath(page, '/panel/integrations', 'Integrations');
      await page.getByRole('button', { name: 'Connect an MCP server' }).waitFor(WAIT);
    },
    shows: () => [],
  },
  {
    name: 'members',
    async open(page) {
      await openPath(page, '/panel/members', 'Members');
      await page.getByRole('region', { name: 'Pending invitations' }).getByRole('row').filter({ hasText: 'lee@' }).waitFor(WAIT);
      await page.getByRole('table', { name: 'Members of the workspace' }).getByRole('row').filter({ hasText: 'dana@' }).waitFor(WAIT);
    },
    shows: () => [],
  },
  {
    name: 'spending',
    async open(page, world) {
      // Engaged here, through the screen: no agent answers after it, so it comes after every screen that invokes one.
      await openPath(page, '/panel/spending', 'Spending settings');
      await page.getByLabel('Reason (optional)').fill(world.texts.killSwitchReason);
      await page.getByRole('button', { name: 'Engage the manual switch' }).click();
      await page.getByRole('button', { name: 'Stop all spending now' }).click();
      await page.getByRole('row').filter({ hasText: 'Manual switch' }).getByText('engaged: spending stopped').waitFor(WAIT);
    },
    shows: (t) => [t.killSwitchReason],
  },
  {
    name: 'audit',
    async open(page) {
      // After Spending: the manual switch engaged there is the newest event.
      await openPath(page, '/panel/audit', 'Audit');
      await page.getByRole('table', { name: 'Audit events, newest first' }).getByRole('row').filter({ hasText: 'kill_switch.engaged' }).waitFor(WAIT);
    },
    // The workspace's name (its creation's target), the keys' names, a pause's and the switch's reasons.
    shows: (t) => [t.workspace, t.key, t.newKey, t.agentReason, t.killSwitchReason],
  },
  {
    name: 'settings',
    async open(page) {
      // Owners only: single sign-on, off in the seeded workspace.
      await openPath(page, '/panel/settings', 'Settings');
      await page.getByText('Single sign-on is off.').waitFor(WAIT);
    },
    shows: () => [],
  },
  {
    name: 'invitation',
    signedOut: true,
    open: (page, world) => openPath(page, world.invitationLink, /^Join /),
    shows: (t) => [t.workspace],
  },
  {
    name: 'account-reset',
    signedOut: true,
    open: (page, world) => openPath(page, world.resetLink, 'Set up two-step verification again'),
    shows: () => [],
  },
];
