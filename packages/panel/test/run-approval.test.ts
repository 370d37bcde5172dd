/**
 * @module An approval decided on the run's own page, in the browser (Debian's Chromium through playwright-core, a real
 * `service serve`): a run of the local engine asked to send an email pauses for a person's approval (`email.send`, one
 * of its fixed rules); its page, followed live, says it waits and offers the admin Approve and Reject; the admin
 * approves there, and the same live view shows the decision, then the run completing, without a reload. The Runs
 * list marks the waiting run and links to that page. axe-core on the waiting page.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, chromiumAvailable, type Harness, shot, signIn, startHarness } from './harness.ts';
import { countRunRequests, invokeAgent } from './paced-run.ts';

if (!chromiumAvailable && process.env.CI) throw new Error('/usr/bin/chromium is missing: the panel suite cannot run (apt-get install chromium).');

const SLOW = { timeout: 15_000, interval: 100 };

describe.skipIf(!chromiumAvailable)('an approval decided on the run page', { timeout: 90_000 }, () => {
  let h: Harness;
  let page: Page;

  beforeAll(async () => {
    h = await startHarness();
    page = (await h.newPage()).page;
    await signIn(page, h.admin);
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
  }, 240_000);

  afterAll(async () => {
    await h?.close();
  });

  it('a run waiting for an approval says so live; the admin approves it there and sees the run go on to completion', async () => {
    const runId = await invokeAgent(h, 'sales', 'Please send the follow-up email to Dana about the renewal.');
    const read = await fetch(`${h.url}/runs/${runId}`, { headers: { authorization: `Bearer ${h.apiKey}` } });
    expect(read.status).toBe(200);
    const waitingRun = (await read.json()) as { run: { status: string; waitingFor?: { action: string } } };
    expect(waitingRun.run).toMatchObject({ status: 'in_progress', waitingFor: { action: 'email.send' } });

    // The Runs list marks it waiting (not a plain "in progress") and links to its page, where it is decided.
    await page.goto('/panel/runs');
    const row = page.getByRole('row').filter({ hasText: runId });
    await row.waitFor();
    expect(await row.locator('.badge').textContent()).toBe('waiting for approval');
    const requests = countRunRequests(page, runId);
    await row.getByRole('link', { name: 'Review email.send' }).click();
    await page.waitForURL(`**/panel/runs/${runId}`);
    await page.getByRole('heading', { name: /Run run_/, level: 1 }).waitFor();
    const status = page.getByRole('status');
    const facts = page.locator('dl.facts');
    const waiting = page.getByRole('region', { name: 'Waiting for an approval' });
    await waiting.waitFor();
    expect(await waiting.textContent()).toContain('email.send');
    await expect.poll(() => status.textContent(), SLOW).toBe('Waiting for an approval: email.send.');
    expect(await facts.locator('.badge').textContent()).toBe('in progress');
    const requested = page.getByRole('list', { name: 'Approvals requested' }).getByRole('listitem').filter({ hasText: 'email.send' });
    await expect.poll(() => requested.textContent(), SLOW).toContain('waiting');
    await shot(page, 'run-waiting-for-approval');
    expect(await axeViolations(page), 'axe on a run waiting for an approval').toEqual([]);

    await waiting.getByRole('button', { name: 'Reject email.send' }).waitFor();
    await waiting.getByRole('button', { name: 'Approve email.send' }).click();
    await page.getByRole('button', { name: 'Approve now' }).click();

    // The decision and the rest of the run arrive on the same live view: the page is neither reloaded nor re-followed.
    await expect.poll(() => status.textContent(), SLOW).toBe('The run completed.');
    await expect.poll(() => facts.locator('.badge').textContent(), SLOW).toBe('completed');
    expect(await waiting.count()).toBe(0);
    expect(await requested.textContent()).toContain('approved');
    expect(await page.locator('pre.content').textContent()).not.toBe('');
    expect(requests.streams).toEqual(['']);
    requests.stop();

    const decided = (await page.evaluate(() => fetch('/approvals?status=approved').then((r) => r.json()))) as {
      data: { runId: string; action: string; status: string }[];
    };
    expect(decided.data.filter((a) => a.runId === runId)).toMatchObject([{ action: 'email.send', status: 'approved' }]);
  });
});
