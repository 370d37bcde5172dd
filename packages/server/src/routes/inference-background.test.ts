/**
 * `background: true` on an invocation, on PGlite and (with DATABASE_URL) on PostgreSQL: `202` with the run's id and a
 * `Location` at once, the run executing detached from the request to its end; a refusal is still JSON; with
 * `stream` it is `400 invalid_body`; a retry with the same Idempotency-Key names the first run.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { zRunAccepted, zRunDetail } from '../../../../generated/zod.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { setManualKillSwitch } from '../domain/spending/budget.ts';

describe.each(testBackends())('background invocations on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;

  beforeEach(async () => {
    store = await open();
    t = await createTestApp({ db: store.db });
  });
  afterEach(async () => {
    await t.close();
    await store.cleanup();
  });

  const invoke = (path: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t.app.request(path, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ alias: 'Sonata', messages: [{ role: 'user', content: 'Draft a follow-up email to Dana' }], ...body }),
    });

  it('answers 202 with the run and its Location; the run executes to its end without the request', async () => {
    const res = await invoke('/v1/inference', { agentSlug: 'sales', background: true });
    expect(res.status).toBe(202);
    const body = zRunAccepted.parse(await res.json());
    expect(body.status).toBe('in_progress');
    expect(res.headers.get('location')).toBe(`/runs/${body.runId}`);
    expect(res.headers.get('x-run-id')).toBe(body.runId);

    const run = await t.services.runs.waitForTerminal(t.workspaceId, body.runId, 60_000);
    expect(run.status).toBe('completed');
    const read = await t.app.request(res.headers.get('location')!, { headers: { authorization: `Bearer ${t.apiKey}` } });
    expect(read.status).toBe(200);
    const detail = zRunDetail.parse(await read.json());
    expect(detail.run).toMatchObject({ id: body.runId, status: 'completed', agentSlug: 'sales' });
    expect(detail.run.content?.length).toBeGreaterThan(0);
  });

  it('the agent and orchestrator message routes take it too; a retry names the first run', async () => {
    const first = await invoke('/v1/agents/sales/messages', { background: true }, { 'idempotency-key': 'bg-1' });
    expect(first.status).toBe(202);
    const { runId } = zRunAccepted.parse(await first.json());
    await t.services.runs.waitForTerminal(t.workspaceId, runId, 60_000);
    const again = await invoke('/v1/agents/sales/messages', { background: true }, { 'idempotency-key': 'bg-1' });
    expect(again.status).toBe(202);
    expect(zRunAccepted.parse(await again.json())).toEqual({ runId, status: 'completed' });
    const routed = await invoke('/v1/orchestrator/messages', { background: true });
    expect(routed.status).toBe(202);
  });

  it('a refusal is still JSON, and background with stream is 400 invalid_body', async () => {
    await setManualKillSwitch(store.db, t.workspaceId, true, t.clock.now());
    const refused = await invoke('/v1/inference', { agentSlug: 'sales', background: true });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: 'kill_switch' });
    const both = await invoke('/v1/inference', { agentSlug: 'sales', background: true, stream: true });
    expect(both.status).toBe(400);
    expect(await both.json()).toMatchObject({ error: 'invalid_body' });
  });
});
