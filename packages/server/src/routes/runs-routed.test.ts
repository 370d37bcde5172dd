/**
 * A run addressed to the orchestrator and routed to a department is found under that department: the
 * run carries `routedTo` (the agent that answered) beside `agentSlug` (the agent addressed), in the list,
 * the detail and the cancel answer's shape, and the `agent_slug` filter of `GET /runs` and `GET /v1/runs`
 * matches either. A run addressed to a department directly has `routedTo: null`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zInferenceResponse, zRunDetail, zRunList } from '../../../../generated/zod.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';

describe.each(testBackends())('a routed run on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  let routed: string;
  let direct: string;

  const request = (method: string, path: string, body?: unknown) =>
    t.app.request(path, {
      method,
      headers: { authorization: `Bearer ${t.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  beforeAll(async () => {
    store = await open();
    t = await createTestApp({ db: store.db });
    const invoke = async (body: Record<string, unknown>) => {
      const res = await request('POST', '/v1/inference', { alias: 'Sonata', ...body });
      expect(res.status).toBe(200);
      return zInferenceResponse.parse(await res.json());
    };
    // Addressed to the orchestrator (the default): routed to finance, which answers.
    const answer = await invoke({ messages: [{ role: 'user', content: 'Which invoices are more than 60 days overdue?' }] });
    expect(answer.agentSlug).toBe('finance');
    routed = answer.runId;
    t.clock.advance(1_000);
    direct = (await invoke({ agentSlug: 'sales', messages: [{ role: 'user', content: 'Draft a follow-up to Dana' }] })).runId;
  });
  afterAll(async () => {
    await t?.close();
    await store?.cleanup();
  });

  it('carries routedTo beside agentSlug in the detail', async () => {
    const detail = zRunDetail.parse(await (await request('GET', `/runs/${routed}`)).json());
    expect(detail.run).toMatchObject({ id: routed, agentSlug: 'orchestrator', routedTo: 'finance' });
    const plain = zRunDetail.parse(await (await request('GET', `/v1/runs/${direct}`)).json());
    expect(plain.run).toMatchObject({ id: direct, agentSlug: 'sales', routedTo: null });
  });

  it.each(['/runs', '/v1/runs'])('%s?agent_slug=finance finds the routed run; agent_slug=orchestrator too', async (path) => {
    const finance = zRunList.parse(await (await request('GET', `${path}?agent_slug=finance`)).json());
    expect(finance.data.map((r) => [r.id, r.agentSlug, r.routedTo])).toEqual([[routed, 'orchestrator', 'finance']]);
    expect(finance.total).toBe(1);
    const orchestrator = zRunList.parse(await (await request('GET', `${path}?agent_slug=orchestrator`)).json());
    expect(orchestrator.data.map((r) => r.id)).toEqual([routed]);
    const sales = zRunList.parse(await (await request('GET', `${path}?agent_slug=sales`)).json());
    expect(sales.data.map((r) => [r.id, r.routedTo])).toEqual([[direct, null]]);
    const all = zRunList.parse(await (await request('GET', path)).json());
    expect(all.data.map((r) => [r.id, r.routedTo])).toEqual([
      [direct, null],
      [routed, 'finance'],
    ]);
  });
});
