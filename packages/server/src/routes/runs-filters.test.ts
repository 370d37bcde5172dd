/**
 * The runs list's filters for the panel (GET /runs and GET /v1/runs): `alias`, `source`, and the
 * creation range `createdAfter` (inclusive) to `createdBefore` (exclusive), combined with the
 * existing `status` and `agent_slug`; `total` counts what matches; malformed values are `400`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zRunList } from '../../../../generated/zod.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { caller, memberSession, type Session } from '@service/testing/panel-sessions';

describe.each(testBackends())('listRuns filters on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  let member: Session;
  let call: ReturnType<typeof caller>;
  const runs: { id: string; at: string }[] = [];

  beforeAll(async () => {
    store = await open();
    t = await createTestApp({ db: store.db });
    call = caller(t);
    member = await memberSession(t, await t.login());
    const body = (agentSlug: string, alias: string) => ({ alias, agentSlug, messages: [{ role: 'user', content: 'A status update' }] });
    const withKey = async (agentSlug: string, alias: string) =>
      call(undefined, 'POST', '/v1/inference', body(agentSlug, alias), { authorization: `Bearer ${t.apiKey}` });
    for (const invoke of [
      () => withKey('sales', 'Sonata'),
      () => withKey('finance', 'Symphony'),
      () => call(member, 'POST', '/v1/agents/sales/messages', { alias: 'Prelude', messages: [{ role: 'user', content: 'A status update' }] }),
    ]) {
      const res = await invoke();
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      runs.push({ id: res.body.runId, at: t.clock.now().toISOString() });
      t.clock.advance(3_600_000);
    }
    member = await memberSession(t, await t.login());
  });
  afterAll(async () => {
    await t?.close();
    await store?.cleanup();
  });

  const ids = (body: unknown) => zRunList.parse(body).data.map((r) => r.id);

  it.each([
    ['alias', 'alias=Sonata', [0]],
    ['source panel', 'source=panel', [2]],
    ['source api', 'source=api', [1, 0]],
    ['created after (inclusive)', (at: string[]) => `createdAfter=${encodeURIComponent(at[1]!)}`, [2, 1]],
    ['created before (exclusive)', (at: string[]) => `createdBefore=${encodeURIComponent(at[1]!)}`, [0]],
    ['a range', (at: string[]) => `createdAfter=${encodeURIComponent(at[0]!)}&createdBefore=${encodeURIComponent(at[2]!)}`, [1, 0]],
    ['agent and source together', 'agent_slug=sales&source=api', [0]],
    ['status and alias together', 'status=completed&alias=Prelude', [2]],
    ['nothing matches', 'alias=Concerto', []],
  ] as const)('%s', async (_name, query, want) => {
    const q = typeof query === 'function' ? query(runs.map((r) => r.at)) : query;
    const res = await call(member, 'GET', `/runs?${q}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ids(res.body)).toEqual(want.map((i) => runs[i]!.id));
    expect(res.body.total).toBe(want.length);
    // The same filters on Set B, with the workspace's key.
    const v1 = await call(undefined, 'GET', `/v1/runs?${q}`, undefined, { authorization: `Bearer ${t.apiKey}` });
    expect(ids(v1.body)).toEqual(want.map((i) => runs[i]!.id));
  });

  it('pages what matches: total counts every match', async () => {
    const res = await call(member, 'GET', '/runs?source=api&limit=1&offset=1');
    expect(res.body).toMatchObject({ total: 2, limit: 1, offset: 1 });
    expect(ids(res.body)).toEqual([runs[0]!.id]);
  });

  it.each([['createdAfter=yesterday'], ['createdBefore=2026-06-01'], ['source=cron'], ['alias=sonata']])('refuses %s with 400 invalid_request', async (q) => {
    const res = await call(member, 'GET', `/runs?${q}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });
});
