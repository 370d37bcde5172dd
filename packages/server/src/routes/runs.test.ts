/**
 * Runs through the app: every state transition (in_progress → completed / failed / canceled),
 * terminal states that never change, cancel, the list with filters and pagination, and another
 * workspace's run answering 404 not_found.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zRun, zRunDetail, zRunList } from '../../../../generated/zod.ts';
import { createWorkspace } from '../domain/workspaces/index.ts';
import { createTestApp, type TestApp } from '@service/testing/app';
import { parseSse } from '@service/testing/sse';

let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await createTestApp();
  key = await t.keyWith('orchestrator:invoke', 'usage:read');
});
afterAll(async () => {
  await t.close();
});

function request(method: string, path: string, body?: unknown, withKey = key) {
  return t.app.request(path, {
    method,
    headers: { authorization: `Bearer ${withKey}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

const ask = (content: string, extra: Record<string, unknown> = {}) => ({ alias: 'Prelude', messages: [{ role: 'user', content }], ...extra });

async function inProgress(): Promise<string> {
  for (;;) {
    const list = zRunList.parse(await (await request('GET', '/runs?status=in_progress')).json());
    if (list.data[0]) return list.data[0].id;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('cancel', () => {
  it('moves an in_progress run to canceled, stops the stream, bills what was produced, and never changes again', async () => {
    // [[hang]]: one fragment, then the engine waits until it is aborted.
    const res = await request('POST', '/v1/inference', ask('Update the roadmap [[hang]]', { agentSlug: 'strategy', stream: true }));
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toMatch(/^data: \{"delta"/);
    const runId = await inProgress();
    expect(zRunDetail.parse(await (await request('GET', `/runs/${runId}`)).json()).run.status).toBe('in_progress');

    const canceled = await request('POST', `/runs/${runId}/cancel`);
    expect(canceled.status).toBe(200);
    const run = zRun.parse(await canceled.json());
    expect(run).toMatchObject({ id: runId, status: 'canceled', failureReason: null, content: null });
    expect(run.completedAt).not.toBeNull();

    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += new TextDecoder().decode(chunk.value);
    expect(parseSse(rest).at(-1)).toMatchObject({ event: 'end', data: { done: true, runId } });

    const detail = zRunDetail.parse(await (await request('GET', `/v1/runs/${runId}`)).json());
    expect(detail.run.status).toBe('canceled');
    expect(detail.run.usage.outputTokens).toBeGreaterThan(0);
    expect(detail.run.usage.stu).toBe(detail.run.usage.inputTokens + detail.run.usage.outputTokens);
    const [charged] = await t.db.query<{ stu: number }>(`SELECT stu FROM usage_ledger WHERE run_id = $1`, [runId]);
    expect(charged?.stu).toBe(detail.run.usage.stu);

    t.clock.advance(1000);
    const again = await request('POST', `/v1/runs/${runId}/cancel`);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(detail.run);
  });

  it('answers a completed or failed run unchanged', async () => {
    const done = (await (await request('POST', '/v1/inference', ask('Hello'))).json()) as { runId: string };
    const before = zRunDetail.parse(await (await request('GET', `/runs/${done.runId}`)).json()).run;
    t.clock.advance(1000);
    const res = await request('POST', `/runs/${done.runId}/cancel`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(before);
    expect(before.status).toBe('completed');

    await request('POST', '/v1/inference', ask('Hello [[fail]]'));
    const failed = zRunList.parse(await (await request('GET', '/runs?status=failed')).json()).data[0]!;
    const after = await request('POST', `/runs/${failed.id}/cancel`);
    expect(await after.json()).toEqual(failed);
  });

  it('needs orchestrator:invoke: a tenant:read key reads runs but cannot cancel', async () => {
    const reader = await t.keyWith('tenant:read');
    const list = await request('GET', '/runs', undefined, reader);
    expect(list.status).toBe(200);
    const runId = zRunList.parse(await list.json()).data[0]!.id;
    const res = await request('POST', `/runs/${runId}/cancel`, undefined, reader);
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: 'scope_required' });
  });
});

describe('reads', () => {
  it('lists with status, agent_slug, limit, offset and total, newest first', async () => {
    await request('POST', '/v1/inference', ask('Prepare a quote for the renewal', { agentSlug: 'sales' }));
    t.clock.advance(1000);
    await request('POST', '/v1/inference', ask('Which invoices are overdue?'));
    t.clock.advance(1000);
    const all = zRunList.parse(await (await request('GET', '/runs?limit=2&offset=0')).json());
    expect(all.limit).toBe(2);
    expect(all.data).toHaveLength(2);
    expect(all.total).toBeGreaterThanOrEqual(5);
    expect(all.data[0]!.createdAt >= all.data[1]!.createdAt).toBe(true);
    const page2 = zRunList.parse(await (await request('GET', '/v1/runs?limit=2&offset=2')).json());
    expect(page2.data.map((r) => r.id)).not.toContain(all.data[0]!.id);

    const sales = zRunList.parse(await (await request('GET', '/runs?agent_slug=sales')).json());
    expect(sales.total).toBe(1);
    expect(sales.data[0]!.agentSlug).toBe('sales');
    // A run the orchestrator routed to finance is found under finance too.
    const finance = zRunList.parse(await (await request('GET', '/runs?agent_slug=finance')).json());
    expect(finance.data.map((r) => r.agentSlug)).toEqual(['orchestrator']);

    const completed = zRunList.parse(await (await request('GET', '/runs?status=completed')).json());
    expect(completed.data.every((r) => r.status === 'completed')).toBe(true);
    expect(completed.limit).toBe(50);

    const bad = await request('GET', '/runs?limit=0');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('shows the start of each request, as the customer wrote it, in the list and the detail', async () => {
    const text = `  <b>Renewal</b> for Dana:\n\n ${'please '.repeat(40)}`;
    const { runId } = (await (await request('POST', '/v1/inference', ask(text, { agentSlug: 'sales' }))).json()) as { runId: string };
    const listed = zRunList.parse(await (await request('GET', '/runs?agent_slug=sales&limit=1')).json()).data[0]!;
    expect(listed.id).toBe(runId);
    expect(listed.requestPreview).toMatch(/^<b>Renewal<\/b> for Dana: please please .*…$/);
    expect(Array.from(listed.requestPreview!)).toHaveLength(160);
    expect(zRunDetail.parse(await (await request('GET', `/runs/${runId}`)).json()).run.requestPreview).toBe(listed.requestPreview);
  });

  it("another workspace's run is 404 not_found, for read and cancel alike", async () => {
    const other = await createWorkspace(t.db, t.clock, 'Other');
    const otherKey = (await t.services.keys.create(other.id, { name: 'other', scopes: ['orchestrator:invoke'] })).secret;
    const mine = zRunList.parse(await (await request('GET', '/runs')).json()).data[0]!;
    for (const [method, path] of [
      ['GET', `/runs/${mine.id}`],
      ['GET', `/v1/runs/${mine.id}`],
      ['POST', `/runs/${mine.id}/cancel`],
    ] as const) {
      const res = await request(method, path, undefined, otherKey);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: 'not_found', message: 'Run not found.' });
    }
    // Any id a client could hold is looked up: unknown is 404; only what cannot be a run id is 400.
    for (const id of ['run_AAAAAAAAAAAAAAAAAAAA', 'run_abc', `run_${'x'.repeat(64)}`]) {
      for (const path of [`/runs/${id}`, `/v1/runs/${id}`]) {
        const unknown = await request('GET', path);
        expect(unknown.status, path).toBe(404);
        expect(await unknown.json()).toEqual({ error: 'not_found', message: 'Run not found.' });
      }
      expect((await request('POST', `/runs/${id}/cancel`)).status).toBe(404);
    }
    for (const id of ['abc', 'run_', 'run_a!b', 'run_a%20b', `run_${'x'.repeat(65)}`]) {
      const bad = await request('GET', `/runs/${id}`);
      expect(bad.status, id).toBe(400);
      expect(await bad.json()).toMatchObject({ error: 'invalid_request' });
    }
    expect(zRunList.parse(await (await request('GET', '/runs', undefined, otherKey)).json()).total).toBe(0);
  });
});
