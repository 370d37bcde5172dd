/**
 * The spending kill switches in the panel: any member reads the four (limits, the windows' spend,
 * engaged or not); an admin turns the manual one on (invocations answer `429 kill_switch`, kind
 * manual, activeSince = since) and off, with the CLI's switch; an hour window spent up to its limit
 * reads as engaged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zKillSwitches } from '../../../../generated/zod.ts';
import { killSwitchStatus } from '../domain/spending/index.ts';
import { KILL_SWITCH_LIMITS } from '../domain/usage/index.ts';
import { countMessageTokens } from '../engine/index.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { caller, memberSession, type Session } from '@service/testing/panel-sessions';

describe.each(testBackends())('the kill switches on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  let admin: Session;
  let member: Session;
  let call: ReturnType<typeof caller>;

  beforeAll(async () => {
    store = await open();
    t = await createTestApp({ db: store.db });
    call = caller(t);
    admin = await t.login();
    member = await memberSession(t, admin);
  });
  afterAll(async () => {
    await t?.close();
    await store?.cleanup();
  });

  const invoke = () =>
    t.app.request('/v1/inference', {
      method: 'POST',
      headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ alias: 'Sonata', agentSlug: 'sales', messages: [{ role: 'user', content: 'Hello' }] }),
    });

  it("any member reads the four switches with their limits and the windows' spend", async () => {
    const { runId } = (await (await invoke()).json()) as { runId: string };
    const run = (await (await t.app.request(`/runs/${runId}`, { headers: { authorization: `Bearer ${t.apiKey}` } })).json()) as {
      run: { usage: { stu: number } };
    };
    const res = await call(member, 'GET', '/kill-switches');
    expect(res.status).toBe(200);
    const switches = zKillSwitches.parse(res.body);
    expect(switches.run).toEqual({
      kind: 'run',
      engaged: false,
      since: null,
      reason: null,
      limitStu: KILL_SWITCH_LIMITS.run,
      spentStu: null,
      reservedStu: null,
      windowStart: null,
      windowEnd: null,
    });
    // The test clock: 2026-06-01 09:00 UTC.
    expect(switches.hour).toMatchObject({
      engaged: false,
      limitStu: KILL_SWITCH_LIMITS.hour,
      spentStu: run.run.usage.stu,
      reservedStu: 0,
      windowStart: '2026-06-01T09:00:00.000Z',
      windowEnd: '2026-06-01T10:00:00.000Z',
    });
    expect(switches.day).toMatchObject({
      engaged: false,
      limitStu: KILL_SWITCH_LIMITS.day,
      spentStu: run.run.usage.stu,
      windowEnd: '2026-06-02T00:00:00.000Z',
    });
    expect(switches.manual).toMatchObject({ engaged: false, since: null, reason: null, limitStu: null });
  });

  it('an admin turns the manual switch on (invocations refused, kind manual) and off', async () => {
    const on = await call(admin, 'PUT', '/kill-switches/manual', { engaged: true, reason: 'Unexpected spend' });
    expect(on.status).toBe(200);
    const since = t.clock.now().toISOString();
    expect(zKillSwitches.parse(on.body).manual).toMatchObject({ engaged: true, since, reason: 'Unexpected spend' });
    // The CLI's switch: the same row.
    expect((await killSwitchStatus(store.db, t.workspaceId, t.clock.now(), KILL_SWITCH_LIMITS)).manualSince?.toISOString()).toBe(since);

    const refused = await invoke();
    expect(refused.status).toBe(429);
    // A manual switch has no end of its own: look again in an hour, and do not loop.
    expect([refused.headers.get('retry-after'), refused.headers.get('retry-after-ms'), refused.headers.get('x-should-retry')]).toEqual([
      '3600',
      '3600000',
      'false',
    ]);
    expect(await refused.json()).toMatchObject({ error: 'kill_switch', kind: 'manual', activeSince: since });
    // The panel's own try is refused the same way.
    const fromPanel = await call(member, 'POST', '/v1/agents/sales/messages', { alias: 'Sonata', messages: [{ role: 'user', content: 'Hello' }] });
    expect(fromPanel.status).toBe(429);
    expect(fromPanel.body).toMatchObject({ error: 'kill_switch', kind: 'manual' });

    // On again: since stays, the reason changes.
    t.clock.advance(60_000);
    const again = await call(admin, 'PUT', '/kill-switches/manual', { engaged: true, reason: 'Still investigating' });
    expect(again.body.manual).toMatchObject({ since, reason: 'Still investigating' });

    const off = await call(admin, 'PUT', '/kill-switches/manual', { engaged: false });
    expect(off.status).toBe(200);
    expect(off.body.manual).toMatchObject({ engaged: false, since: null, reason: null });
    expect((await invoke()).status).toBe(200);
  });

  it('an hour window spent up to its limit reads as engaged', async () => {
    await store.db.query(
      `INSERT INTO usage_windows (workspace_id, scope, window_start, spent_stu) VALUES ($1, 'hour', $2, $3)
       ON CONFLICT (workspace_id, scope, window_start) DO UPDATE SET spent_stu = EXCLUDED.spent_stu`,
      [t.workspaceId, new Date('2026-06-01T09:00:00Z'), KILL_SWITCH_LIMITS.hour],
    );
    const switches = zKillSwitches.parse((await call(member, 'GET', '/kill-switches')).body);
    expect(switches.hour).toMatchObject({ engaged: true, spentStu: KILL_SWITCH_LIMITS.hour });
    expect(switches.day.engaged).toBe(false);
    const refused = await invoke();
    expect(refused.status).toBe(429);
    expect(Math.ceil(Number(refused.headers.get('retry-after-ms')) / 1000)).toBe(Number(refused.headers.get('retry-after')));
    expect(refused.headers.get('x-should-retry')).toBe('false');
    expect(await refused.json()).toMatchObject({ error: 'kill_switch', kind: 'hour' });
  });

  it('refuses members and a missing CSRF token on the write, and anyone without a session', async () => {
    const asMember = await call(member, 'PUT', '/kill-switches/manual', { engaged: true });
    expect(asMember.status).toBe(403);
    expect(asMember.body.error).toBe('role_forbidden');
    const noCsrf = await call({ cookie: admin.cookie, csrfToken: '' }, 'PUT', '/kill-switches/manual', { engaged: true });
    expect(noCsrf.status).toBe(403);
    const bad = await call(admin, 'PUT', '/kill-switches/manual', { engaged: 'yes' });
    expect(bad.status).toBe(400);
    expect((await call(undefined, 'GET', '/kill-switches')).status).toBe(401);
    expect((await killSwitchStatus(store.db, t.workspaceId, t.clock.now(), KILL_SWITCH_LIMITS)).manualSince).toBeNull();
  });
});

describe.each(testBackends())('an engaged window on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;

  afterAll(async () => {
    await t?.close();
    await store?.cleanup();
  });

  it('a window spent exactly up to its limit by a run that ended is engaged with a since, the 429 activeSince', async () => {
    store = await open();
    const messages = [{ role: 'user' as const, content: 'Hello' }];
    // Room for exactly this run's worst case: it is admitted without a shrunk cap and spends the window to its limit.
    const hour = countMessageTokens(messages) + 5;
    t = await createTestApp({ db: store.db, deps: { killSwitchLimits: { ...KILL_SWITCH_LIMITS, hour } } });
    const member = await t.login();
    const invoke = () =>
      t.app.request('/v1/inference', {
        method: 'POST',
        headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ alias: 'Prelude', agentSlug: 'sales', maxTokens: 5, messages }),
      });
    const first = await invoke();
    expect(first.status).toBe(200);
    expect(((await first.json()) as { usage: { outputTokens: number } }).usage.outputTokens).toBe(5);
    const switches = zKillSwitches.parse((await caller(t)(member, 'GET', '/kill-switches')).body);
    expect(switches.hour).toMatchObject({ engaged: true, spentStu: hour, reservedStu: 0 });
    expect(switches.hour.since).toBe(t.clock.now().toISOString());
    const refused = await invoke();
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: 'kill_switch', kind: 'hour', activeSince: switches.hour.since });
  }, 120_000);
});
