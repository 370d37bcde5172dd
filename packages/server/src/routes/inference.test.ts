/**
 * Invocation through the app (app.request): synchronous and streamed answers, the routing step,
 * drafts and approvals with their outbox events, engine failures, every refusal of an invocation,
 * idempotency, conversations, kill switches, quota, private beta and usage moving with each run.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  zAgentList,
  zInferenceResponse,
  zKillSwitchError,
  zQuotaExceededError,
  zRunDetail,
  zStreamEnd,
  zStreamError,
  zStreamFragment,
  zUsage,
} from '../../../../generated/zod.ts';
import { pauseAgent, setPlan } from '../domain/agents/settings.ts';
import { setManualKillSwitch } from '../domain/spending/index.ts';
import { createTestApp, type TestApp } from '@service/testing/app';
import { parseSse, parseSseWithIds } from '@service/testing/sse';
import { subscribeToEveryEvent } from '@service/testing/event-subscriber';

let t: TestApp;
let key: string;

beforeEach(async () => {
  t = await createTestApp();
  await subscribeToEveryEvent(t.db, t.workspaceId);
  key = await t.keyWith('orchestrator:invoke', 'usage:read', 'departments:read');
});
afterEach(async () => {
  await t.close();
});

function post(path: string, body: unknown, options: { key?: string; headers?: Record<string, string> } = {}) {
  return t.app.request(path, {
    method: 'POST',
    headers: { authorization: `Bearer ${options.key ?? key}`, 'content-type': 'application/json', ...options.headers },
    body: JSON.stringify(body),
  });
}

function get(path: string, withKey = key) {
  return t.app.request(path, { headers: { authorization: `Bearer ${withKey}` } });
}

const ask = (content: string, extra: Record<string, unknown> = {}) => ({ alias: 'Sonata', messages: [{ role: 'user', content }], ...extra });

async function outbox(): Promise<{ type: string; data: Record<string, unknown> }[]> {
  return t.db.query(`SELECT type, data FROM outbox_events ORDER BY created_at, id`);
}

describe('synchronous invocation', () => {
  it('routes through the orchestrator, answers the contract shape and records the routing step', async () => {
    const res = await post('/v1/inference', ask('Which invoices are more than 60 days overdue?'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    expect(res.headers.get('x-ratelimit-limit')).toBe('60');
    const body = zInferenceResponse.parse(await res.json());
    expect(body.agentSlug).toBe('finance');
    expect(body.alias).toBe('Sonata');
    expect(body.content).toMatch(/Finance/);
    expect(body.usage.inputTokens).toBeGreaterThan(0);
    expect(body.usage.outputTokens).toBeGreaterThan(0);

    const detail = zRunDetail.parse(await (await get(`/runs/${body.runId}`)).json());
    expect(detail.run).toMatchObject({ id: body.runId, status: 'completed', agentSlug: 'orchestrator', source: 'api', content: body.content });
    expect(detail.run.usage).toMatchObject(body.usage);
    expect(detail.run.usage.stu).toBe((body.usage.inputTokens + body.usage.outputTokens) * 3);
    expect(detail.steps[0]).toMatchObject({ index: 0, kind: 'routing', agentSlug: 'orchestrator' });
    expect(detail.steps[0]!.summary).toMatch(/Routed to Finance/);
    expect(detail.steps[1]).toMatchObject({ index: 1, kind: 'model_call', agentSlug: 'finance' });
    // No connected integration offers a lookup, and the question asks for no draft nor action: one model call.
    expect(detail.steps).toHaveLength(2);
    expect(detail.toolCalls).toEqual([]);
    expect(detail.run.completedAt).not.toBeNull();

    const events = await outbox();
    expect(events.map((e) => e.type)).toEqual(['run.completed']);
    expect(events[0]!.data).toMatchObject({ run_id: body.runId, status: 'completed', alias: 'Sonata' });
  });

  it('writes the draft and pauses for the approval of the send, with their events; the run waits', async () => {
    const res = await post('/v1/inference', ask('Draft a follow-up email to Dana about the Q4 renewal and send it', { agentSlug: 'sales' }));
    expect(res.status).toBe(200);
    const answer = zInferenceResponse.parse(await res.json());
    const { runId } = answer;
    expect(answer.waitingFor).toMatchObject({
      action: 'email.send',
      summary: 'Send the drafted email to its recipients.',
      expiresAt: '2026-06-04T09:00:00.000Z',
    });
    const detail = zRunDetail.parse(await (await get(`/v1/runs/${runId}`)).json());
    expect(detail.run).toMatchObject({ status: 'in_progress', waitingFor: { id: answer.waitingFor!.id, action: 'email.send' } });

    const events = await outbox();
    // The draft is for a person to review now; the run completes only once the send is decided.
    expect(events.map((e) => e.type).sort()).toEqual(['approval.created', 'draft.created']);
    const draft = events.find((e) => e.type === 'draft.created')!.data;
    expect(draft).toMatchObject({ run_id: runId, agent: 'sales', kind: 'email' });
    expect(String(draft.draft_id)).toMatch(/^drf_/);
    const approval = events.find((e) => e.type === 'approval.created')!.data;
    expect(approval).toMatchObject({
      approval_id: answer.waitingFor!.id,
      run_id: runId,
      agent: 'sales',
      action: 'email.send',
      expires_at: '2026-06-04T09:00:00.000Z',
    });
    const [stored] = await t.db.query<{ status: string }>(`SELECT status FROM approvals WHERE id = $1`, [approval.approval_id]);
    expect(stored?.status).toBe('pending');
  });

  it('answers on the Set B message routes', async () => {
    const agent = await post('/v1/agents/legal/messages', ask('Review the NDA terms'));
    expect(agent.status).toBe(200);
    expect(zInferenceResponse.parse(await agent.json()).agentSlug).toBe('legal');
    const orchestrator = await post('/v1/orchestrator/messages', ask('Our wifi is down and the laptop will not connect'));
    expect(orchestrator.status).toBe(200);
    expect(zInferenceResponse.parse(await orchestrator.json()).agentSlug).toBe('it');
  });

  it('fails the run with a redacted reason when the engine fails: 503 with requestId and run.failed', async () => {
    const res = await post('/v1/inference', ask('Plan the launch [[fail]]', { agentSlug: 'marketing' }));
    expect(res.status).toBe(503);
    // The same Idempotency-Key would answer this failed run again: the SDKs must not loop on it.
    expect([res.headers.get('retry-after'), res.headers.get('retry-after-ms'), res.headers.get('x-should-retry')]).toEqual(['30', '30000', 'false']);
    const body = (await res.json()) as { error: string; message: string; requestId: string };
    expect(body.error).toBe('service_unavailable');
    expect(body.requestId).toBe(res.headers.get('x-request-id'));
    const runId = /run_[0-9A-Za-z]+/.exec(body.message)![0];
    const detail = zRunDetail.parse(await (await get(`/runs/${runId}`)).json());
    expect(detail.run).toMatchObject({ status: 'failed', failureReason: 'engine_error', content: null });
    expect((await outbox()).map((e) => e.type)).toEqual(['run.failed']);

    const timeout = await post('/v1/inference', ask('Plan the launch [[timeout]]', { agentSlug: 'marketing' }));
    expect(timeout.status).toBe(503);
    const list = (await (await get('/runs?status=failed')).json()) as { data: { failureReason: string }[] };
    expect(list.data.map((r) => r.failureReason)).toEqual(['timeout', 'engine_error']);
  });
});

describe('streamed invocation', () => {
  it('sends data fragments then event: end, and stores the same content', async () => {
    const res = await post('/v1/inference', ask('Which invoices are overdue?', { stream: true }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    const events = parseSse(await res.text());
    const fragments = events.filter((e) => e.event === 'message').map((e) => zStreamFragment.parse(e.data).delta);
    expect(fragments.length).toBeGreaterThan(3);
    expect(events.at(-1)!.event).toBe('end');
    const end = zStreamEnd.parse(events.at(-1)!.data);
    const detail = zRunDetail.parse(await (await get(`/runs/${end.runId}`)).json());
    expect(detail.run.status).toBe('completed');
    expect(detail.run.content).toBe(fragments.join(''));
    expect(end.usage).toEqual({ inputTokens: detail.run.usage.inputTokens, outputTokens: detail.run.usage.outputTokens });
  });

  it('ends with event: error when the engine fails mid-stream, and bills what was produced', async () => {
    const res = await post('/v1/inference', ask('Summarise the pipeline [[fail-mid-stream]]', { agentSlug: 'sales', stream: true }));
    expect(res.status).toBe(200);
    const events = parseSse(await res.text());
    expect(events.filter((e) => e.event === 'message').length).toBeGreaterThan(0);
    expect(events.some((e) => e.event === 'end')).toBe(false);
    const last = events.at(-1)!;
    expect(last.event).toBe('error');
    const error = zStreamError.parse(last.data);
    expect(error.error).toBe('engine_error');
    const detail = zRunDetail.parse(await (await get(`/runs/${error.runId}`)).json());
    expect(detail.run).toMatchObject({ status: 'failed', failureReason: 'engine_error' });
    expect(detail.run.usage.outputTokens).toBeGreaterThan(0);
    expect(detail.run.usage.stu).toBeGreaterThan(0);
    const usage = zUsage.parse(await (await get('/usage/current')).json());
    expect(usage.consumedStu).toBe(detail.run.usage.stu);
    expect((await outbox()).map((e) => e.type)).toEqual(['run.failed']);
  });

  it('answers refusals as JSON before any stream begins', async () => {
    await pauseAgent(t.db, t.clock, t.workspaceId, 'finance', 'Month-end close.');
    const res = await post('/v1/inference', ask('Budget', { agentSlug: 'finance', stream: true }));
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ error: 'agent_disabled', message: 'This agent is paused.', agentSlug: 'finance', reason: 'Month-end close.' });
  });
});

describe('refused invocations', () => {
  it('agent_unknown (on both route sets), agent_not_in_plan, agent_disabled', async () => {
    const unknown = await post('/v1/inference', ask('Hello', { agentSlug: 'procurement' }));
    expect(unknown.status).toBe(403);
    expect(await unknown.json()).toMatchObject({ error: 'agent_unknown', agentSlug: 'procurement' });

    await setPlan(t.db, t.clock, t.workspaceId, 'starter');
    const notInPlan = await post('/v1/inference', ask('Hello', { agentSlug: 'legal' }));
    expect(notInPlan.status).toBe(403);
    expect(await notInPlan.json()).toMatchObject({ error: 'agent_not_in_plan', agentSlug: 'legal' });

    await pauseAgent(t.db, t.clock, t.workspaceId, 'sales', 'Quota review');
    const disabled = await post('/v1/agents/sales/messages', ask('Hello'));
    expect(disabled.status).toBe(403);
    expect(await disabled.json()).toMatchObject({ error: 'agent_disabled', agentSlug: 'sales', reason: 'Quota review' });

    // One answer for one situation: Set B answers an unknown agent as POST /v1/inference does.
    const unknownB = await post('/v1/agents/procurement/messages', ask('Hello'));
    expect(unknownB.status).toBe(403);
    expect(await unknownB.json()).toEqual({ error: 'agent_unknown', message: expect.any(String), agentSlug: 'procurement' });
    expect(unknownB.headers.get('x-request-id')).toMatch(/^req_/);
    expect(await t.db.query(`SELECT 1 FROM runs`)).toEqual([]);
  });

  it('agent_not_allowed for a department key naming another department; scope_required for the orchestrator', async () => {
    const salesKey = await t.keyWith('orchestrator:invoke:agent:sales');
    const own = await post('/v1/inference', ask('Follow up on the quote', { agentSlug: 'sales' }), { key: salesKey });
    expect(own.status).toBe(200);

    const other = await post('/v1/inference', ask('Hiring plan', { agentSlug: 'hr' }), { key: salesKey });
    expect(other.status).toBe(403);
    expect(await other.json()).toMatchObject({ error: 'agent_not_allowed', agentSlug: 'hr' });

    const orchestrator = await post('/v1/inference', ask('Anything'), { key: salesKey });
    expect(orchestrator.status).toBe(403);
    const body = (await orchestrator.json()) as { error: string; message: string };
    expect(body.error).toBe('scope_required');
    expect(body.message).toContain('orchestrator:invoke:agent:orchestrator');

    const readOnly = await t.keyWith('usage:read');
    const noScope = await post('/v1/inference', ask('Anything'), { key: readOnly });
    expect(noScope.status).toBe(403);
    expect(((await noScope.json()) as { message: string }).message).toContain('orchestrator:invoke');
  });

  it('forbidden for an alias outside the plan (Concerto is enterprise only)', async () => {
    const res = await post('/v1/inference', ask('Hello', { alias: 'Concerto' }));
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: 'forbidden', message: 'The plan of this workspace does not include the alias Concerto.' });
    await setPlan(t.db, t.clock, t.workspaceId, 'enterprise');
    expect((await post('/v1/inference', ask('Hello', { alias: 'Concerto' }))).status).toBe(200);
  });

  it('quota_exceeded at hardstop (120 % of quota + rollover)', async () => {
    await t.db.query(`INSERT INTO usage_periods (workspace_id, period, rollover_stu, consumed_stu, created_at) VALUES ($1, '2026-06', 0, 12000000, $2)`, [
      t.workspaceId,
      t.clock.now(),
    ]);
    const res = await post('/v1/inference', ask('Hello'));
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBe(30 * 24 * 3600 - 9 * 3600);
    expect(Number(res.headers.get('retry-after-ms'))).toBe((30 * 24 * 3600 - 9 * 3600) * 1000);
    expect(res.headers.get('x-should-retry')).toBe('false');
    const body = zQuotaExceededError.parse(await res.json());
    expect(body).toMatchObject({ error: 'quota_exceeded', policy: 'hardstop', pctConsumed: 120, resetAt: '2026-07-01T00:00:00.000Z' });
    const usage = zUsage.parse(await (await get('/v1/usage')).json());
    expect(usage.level).toBe('hardstop');
  });

  it('kill_switch while the manual switch is on, with kind and activeSince', async () => {
    await setManualKillSwitch(t.db, t.workspaceId, true, t.clock.now());
    const res = await post('/v1/inference', ask('Hello'));
    expect(res.status).toBe(429);
    expect([res.headers.get('retry-after'), res.headers.get('retry-after-ms'), res.headers.get('x-should-retry')]).toEqual(['3600', '3600000', 'false']);
    expect(zKillSwitchError.parse(await res.json())).toMatchObject({ error: 'kill_switch', kind: 'manual', activeSince: '2026-06-01T09:00:00.000Z' });
    await setManualKillSwitch(t.db, t.workspaceId, false, t.clock.now());
    expect((await post('/v1/inference', ask('Hello'))).status).toBe(200);
  });
});

describe('spending kill switches', () => {
  async function appWithLimits(limits: { run: number; hour: number; day: number }) {
    await t.close();
    t = await createTestApp({ deps: { killSwitchLimits: limits } });
    await subscribeToEveryEvent(t.db, t.workspaceId);
    key = await t.keyWith('orchestrator:invoke', 'usage:read');
  }

  it('a run that crosses the hour limit fails with kill_switch:hour; new invocations get 429 until the hour ends', async () => {
    // The first run fits; the second's output cap shrinks to the hour's headroom and it uses all of it.
    await appWithLimits({ run: 1_000_000, hour: 120, day: 1_000_000 });
    const first = await post('/v1/inference', ask('Which invoices are overdue?', { alias: 'Prelude', maxTokens: 60 }));
    expect(first.status).toBe(200);
    const crossing = await post('/v1/inference', ask('Which invoices are overdue?', { alias: 'Prelude' }));
    expect(crossing.status).toBe(429);
    expect(await crossing.json()).toMatchObject({ error: 'kill_switch', kind: 'hour' });
    const failed = (await (await get('/runs?status=failed')).json()) as { data: { id: string; failureReason: string }[] };
    expect(failed.data.map((r) => r.failureReason)).toEqual(['kill_switch:hour']);
    const events = await outbox();
    expect(events.find((e) => e.type === 'run.failed')!.data).toMatchObject({ run_id: failed.data[0]!.id, reason: 'kill_switch:hour' });

    t.clock.advance(60_000);
    const refused = await post('/v1/inference', ask('Hello', { alias: 'Prelude', maxTokens: 5 }));
    expect(refused.status).toBe(429);
    expect([refused.headers.get('retry-after'), refused.headers.get('retry-after-ms'), refused.headers.get('x-should-retry')]).toEqual([
      String(59 * 60),
      String(59 * 60_000),
      'false',
    ]);
    expect(zKillSwitchError.parse(await refused.json())).toMatchObject({ kind: 'hour', activeSince: '2026-06-01T09:00:00.000Z' });
    const [window] = await t.db.query<{ spent: number }>(`SELECT spent_stu::float8 AS spent FROM usage_windows WHERE scope = 'hour'`);
    expect(Number(window!.spent)).toBeLessThanOrEqual(120);

    t.clock.set('2026-06-01T10:00:00Z');
    expect((await post('/v1/inference', ask('Hello', { alias: 'Prelude', maxTokens: 5 }))).status).toBe(200);
  });

  it('a run that crosses the per-run limit fails with kill_switch:run; the next smaller run goes through', async () => {
    // The answer is longer than the run's 50 STU allow at Prelude (1 STU per token).
    await appWithLimits({ run: 50, hour: 1_000_000, day: 1_000_000 });
    const res = await post('/v1/inference', ask('Which invoices are overdue?', { alias: 'Prelude', stream: true }));
    expect(res.status).toBe(200);
    const events = parseSse(await res.text());
    expect(events.at(-1)).toMatchObject({ event: 'error', data: { error: 'kill_switch' } });
    const runId = (events.at(-1)!.data as { runId: string }).runId;
    const detail = zRunDetail.parse(await (await get(`/runs/${runId}`)).json());
    expect(detail.run).toMatchObject({ status: 'failed', failureReason: 'kill_switch:run' });
    expect(detail.run.usage.stu).toBeLessThanOrEqual(50);
    expect((await post('/v1/inference', ask('Hi', { alias: 'Prelude', maxTokens: 10 }))).status).toBe(200);
  });
});

describe('idempotency', () => {
  it('a retry with the same key and body answers the first result and creates no second run', async () => {
    const headers = { 'idempotency-key': 'retry-1' };
    const first = await post('/v1/inference', ask('Which invoices are overdue?'), { headers });
    const second = await post('/v1/inference', ask('Which invoices are overdue?'), { headers });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual(await first.json());
    expect((await (await get('/runs')).json()) as { total: number }).toMatchObject({ total: 1 });

    const different = await post('/v1/inference', ask('Something else'), { headers });
    expect(different.status).toBe(400);
    expect(await different.json()).toMatchObject({ error: 'invalid_request' });

    const otherKey = await t.keyWith('orchestrator:invoke');
    expect((await post('/v1/inference', ask('Which invoices are overdue?'), { key: otherKey, headers })).status).toBe(200);
    expect((await (await get('/runs')).json()) as { total: number }).toMatchObject({ total: 2 });
  });

  it('a retried stream replays the first stream from the run event log: the same fragments with the same ids, then the same end event', async () => {
    const headers = { 'idempotency-key': 'stream-1' };
    const answer = await post('/v1/inference', ask('Campaign ideas', { stream: true }), { headers });
    const runId = answer.headers.get('x-run-id');
    const first = parseSseWithIds(await answer.text());
    const again = await post('/v1/inference', ask('Campaign ideas', { stream: true }), { headers });
    expect(again.headers.get('x-run-id')).toBe(runId);
    const replay = parseSseWithIds(await again.text());
    expect(first.filter((e) => e.event === 'message').length).toBeGreaterThan(1);
    expect(first.at(-1)).toMatchObject({ event: 'end', data: { done: true, runId } });
    // Ids: increasing from 3 (after run.created and run.routed; a tool call may take one), the end's past run.usage.
    const ids = first.map((e) => Number(e.id));
    expect(ids[0]).toBeGreaterThanOrEqual(3);
    expect(ids.every((id, i) => i === 0 || id > ids[i - 1]!)).toBe(true);
    expect(ids.at(-1)).toBeGreaterThanOrEqual(ids.at(-2)! + 2);
    expect(replay).toEqual(first);
  });

  it('a retry answers the first result even after the agent was paused since (the key replays, it does not re-check)', async () => {
    const headers = { 'idempotency-key': 'retry-paused' };
    const body = { ...ask('Which invoices are overdue?'), agentSlug: 'finance' };
    const first = await post('/v1/inference', body, { headers });
    expect(first.status).toBe(200);
    await pauseAgent(t.db, t.clock, t.workspaceId, 'finance', 'Audit.');
    const retry = await post('/v1/inference', body, { headers });
    expect(retry.status).toBe(200);
    expect(await retry.json()).toEqual(await first.json());
    // A new request to the paused agent is refused as before.
    const fresh = await post('/v1/inference', body, { headers: { 'idempotency-key': 'retry-paused-2' } });
    expect(fresh.status).toBe(403);
  });

  it('concurrent retries create exactly one run', async () => {
    const headers = { 'idempotency-key': 'race-1' };
    const answers = await Promise.all([1, 2, 3, 4].map(() => post('/v1/inference', ask('Hiring plan for Q3'), { headers })));
    const bodies = await Promise.all(answers.map((r) => r.json() as Promise<{ runId: string }>));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(new Set(bodies.map((b) => b.runId)).size).toBe(1);
    expect(await t.db.query(`SELECT id FROM runs`)).toHaveLength(1);
  });
});

describe('conversations', () => {
  it('gives the engine the earlier turns of the conversation', async () => {
    const first = await post('/v1/inference', ask('Which invoices are overdue?', { conversationId: 'c-1' }));
    expect(zInferenceResponse.parse(await first.json()).agentSlug).toBe('finance');
    // No router term of its own: only the earlier turns can route it to Finance.
    const second = zInferenceResponse.parse(await (await post('/v1/inference', ask('And what should we do next?', { conversationId: 'c-1' }))).json());
    expect(second.agentSlug).toBe('finance');
    const detail = zRunDetail.parse(await (await get(`/runs/${second.runId}`)).json());
    expect(detail.steps[0]!.summary).toMatch(/earlier turns/);
    expect(detail.run.conversationId).toBe('c-1');
    const alone = zInferenceResponse.parse(await (await post('/v1/inference', ask('And what should we do next?', { agentSlug: 'finance' }))).json());
    expect(alone.agentSlug).toBe('finance');
    expect(second.usage.inputTokens).toBeGreaterThan(alone.usage.inputTokens);
  });
});

describe('usage and agents', () => {
  it('usage moves with each run', async () => {
    const before = zUsage.parse(await (await get('/usage/current')).json());
    expect(before).toMatchObject({ period: '2026-06', quotaStu: 10_000_000, rolloverStu: 0, consumedStu: 0, level: 'green' });
    const run = zInferenceResponse.parse(await (await post('/v1/inference', ask('Hello there', { alias: 'Symphony' }))).json());
    const after = zUsage.parse(await (await get('/v1/usage')).json());
    expect(after.consumedStu).toBe((run.usage.inputTokens + run.usage.outputTokens) * 10);
    const second = zInferenceResponse.parse(await (await post('/v1/inference', ask('Hello again', { alias: 'Prelude' }))).json());
    const later = zUsage.parse(await (await get('/usage/current')).json());
    expect(later.consumedStu).toBe(after.consumedStu + second.usage.inputTokens + second.usage.outputTokens);
  });

  it('lists the active agents of the plan with their alias', async () => {
    const all = zAgentList.parse(await (await get('/v1/agents')).json());
    expect(all.data).toHaveLength(11);
    expect(all.data[0]).toMatchObject({ slug: 'orchestrator', kind: 'orchestrator', alias: 'Prelude' });
    await pauseAgent(t.db, t.clock, t.workspaceId, 'finance', 'Audit');
    await setPlan(t.db, t.clock, t.workspaceId, 'starter');
    const starter = zAgentList.parse(await (await get('/v1/agents')).json());
    expect(starter.data.map((a) => a.slug)).toEqual(['orchestrator', 'sales', 'marketing', 'customer-care']);
    const noScope = await get('/v1/agents', await t.keyWith('usage:read'));
    expect(noScope.status).toBe(403);
  });
});

describe('private beta', () => {
  it('the public agent API answers 404 not_found, before authentication; key management is unaffected', async () => {
    await t.close();
    t = await createTestApp({ deps: { config: { privateBeta: true } } });
    key = await t.keyWith('orchestrator:invoke', 'usage:read', 'departments:read');
    for (const [method, path] of [
      ['POST', '/v1/inference'],
      ['POST', '/v1/agents/sales/messages'],
      ['POST', '/v1/orchestrator/messages'],
      ['GET', '/v1/agents'],
      ['GET', '/runs'],
      ['GET', '/v1/runs/run_aaaaaaaaaaaaaaaaaaaa'],
      ['POST', '/runs/run_aaaaaaaaaaaaaaaaaaaa/cancel'],
      ['GET', '/usage/current'],
      ['GET', '/v1/usage'],
    ] as const) {
      for (const auth of [{}, { authorization: `Bearer ${key}` }] as Record<string, string>[]) {
        const res = await t.app.request(path, {
          method,
          headers: { 'content-type': 'application/json', ...auth },
          ...(method === 'POST' ? { body: JSON.stringify(ask('Hello')) } : {}),
        });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(await res.json()).toEqual({ error: 'not_found', message: 'No such route.' });
        expect(res.headers.get('x-request-id')).toMatch(/^req_/);
      }
    }
    expect((await t.app.request('/api-keys')).status).toBe(401);
    expect(await t.db.query(`SELECT 1 FROM runs`)).toEqual([]);
  });
});
