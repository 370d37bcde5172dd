/**
 * The period's consumption by day (GET /usage/daily): any member reads it; each UTC day of the period
 * so far is listed (days without runs as 0), split by alias and by the agent that answered; the days
 * add up to `consumedStu` of GET /usage/current and to the runs' own STU.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zDailyUsage } from '../../../../generated/zod.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { caller, memberSession, type Session } from '@service/testing/panel-sessions';

describe.each(testBackends())('getDailyUsage on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  let member: Session;
  let call: ReturnType<typeof caller>;

  beforeAll(async () => {
    store = await open();
    t = await createTestApp({ db: store.db });
    call = caller(t);
    member = await memberSession(t, await t.login());
  });
  afterAll(async () => {
    await t?.close();
    await store?.cleanup();
  });

  async function invoke(agentSlug: string, alias: string): Promise<{ runId: string; stu: number }> {
    const res = await t.app.request('/v1/inference', {
      method: 'POST',
      headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ alias, agentSlug, messages: [{ role: 'user', content: 'A short status update, please' }] }),
    });
    expect(res.status).toBe(200);
    const { runId } = (await res.json()) as { runId: string };
    const detail = (await (await t.app.request(`/runs/${runId}`, { headers: { authorization: `Bearer ${t.apiKey}` } })).json()) as {
      run: { usage: { stu: number } };
    };
    return { runId, stu: detail.run.usage.stu };
  }

  it('lists each day of the period so far, split by alias and agent, adding up to the period consumption', async () => {
    // The test clock starts on 2026-06-01 at 09:00 UTC.
    const first = [await invoke('sales', 'Sonata'), await invoke('finance', 'Symphony'), await invoke('sales', 'Prelude')];
    t.clock.advance(2 * 86_400_000); // 2026-06-03
    const third = [await invoke('sales', 'Sonata')];
    member = await memberSession(t, await t.login()); // sessions last 12 h

    const res = await call(member, 'GET', '/usage/daily');
    expect(res.status).toBe(200);
    const usage = zDailyUsage.parse(res.body);
    expect(usage).toMatchObject({ period: '2026-06', periodStart: '2026-06-01T00:00:00.000Z', periodEnd: '2026-07-01T00:00:00.000Z' });
    expect(usage.days.map((d) => d.date)).toEqual(['2026-06-01', '2026-06-02', '2026-06-03']);

    const [sonata, symphony, prelude] = first.map((r) => r.stu) as [number, number, number];
    const day1 = usage.days[0]!;
    expect(day1.stu).toBe(sonata + symphony + prelude);
    expect(day1.byAlias).toEqual(
      expect.arrayContaining([
        { alias: 'Sonata', stu: sonata },
        { alias: 'Symphony', stu: symphony },
        { alias: 'Prelude', stu: prelude },
      ]),
    );
    expect(day1.byAlias).toHaveLength(3);
    expect(day1.byAlias.map((a) => a.stu)).toEqual([...day1.byAlias.map((a) => a.stu)].sort((a, b) => b - a));
    expect(day1.byAgent).toEqual(
      expect.arrayContaining([
        { agentSlug: 'sales', stu: sonata + prelude },
        { agentSlug: 'finance', stu: symphony },
      ]),
    );
    expect(usage.days[1]).toEqual({ date: '2026-06-02', stu: 0, byAlias: [], byAgent: [] });
    expect(usage.days[2]).toMatchObject({ stu: third[0]!.stu, byAgent: [{ agentSlug: 'sales', stu: third[0]!.stu }] });

    const current = await call(member, 'GET', '/usage/current');
    expect(usage.days.reduce((sum, d) => sum + d.stu, 0)).toBe(current.body.consumedStu);
  });

  it('counts a run the orchestrator routed for the department that answered', async () => {
    const res = await t.app.request('/v1/inference', {
      method: 'POST',
      headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ alias: 'Sonata', messages: [{ role: 'user', content: 'Which invoices are more than 60 days overdue?' }] }),
    });
    const answered = (await res.json()) as { agentSlug: string };
    expect(answered.agentSlug).toBe('finance');
    const today = zDailyUsage.parse((await call(member, 'GET', '/usage/daily')).body).days.at(-1)!;
    expect(today.byAgent.map((a) => a.agentSlug)).toContain('finance');
    expect(today.byAgent.map((a) => a.agentSlug)).not.toContain('orchestrator');
  });

  it('needs a session', async () => {
    expect((await call(undefined, 'GET', '/usage/daily')).status).toBe(401);
  });
});
