/**
 * An agent's call that needs a person's approval, end to end on both stores: a model (a loopback Chat Completions
 * server scripted to ask for a tool) calls a tool of a real MCP server the workspace connected; the run pauses
 * (the synchronous answer names the approval, the run stays `in_progress`, the tool is not called); the decision
 * over the API makes it resumable, the continuation makes the call once (never again, whoever claims later) or, when
 * rejected, tells the model; the run completes with every step and is billed once for all of it. A run canceled
 * while it waits takes its approval with it: `expired` at once, never decided, never resumed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { zApprovalList, zInferenceResponse, zRunDetail, zRunList } from '../../../../../generated/zod.ts';
import { scripted, startFakeChatServer, type FakeChatServer } from '@service/testing/fake-chat-server';
import { startMailServer, type McpTestServer } from '@service/testing/mcp-servers';
import { testBackends, type TestStore } from '@service/testing/store';
import type { TestApp } from '@service/testing/app';
import { type AgentTestApp, createAgentTestApp } from '@service/testing/agent-app';
import { NOT_PERFORMED } from './steps.ts';

/** Symphony's STU per token. */
const RATE = 10;
const ASK = {
  toolCalls: [{ id: 'call_1', name: 'mail__send_email', arguments: { to: 'dana@example.com', subject: 'Renewal' } }],
  usage: { prompt_tokens: 300, completion_tokens: 20 },
};
const ANSWER = { content: 'Done: the renewal email went to Dana.', usage: { prompt_tokens: 350, completion_tokens: 9 } };

describe.each(testBackends())('an approval pauses a run and the decision resumes it, on $name', { timeout: 120_000 }, ({ open }) => {
  let store: TestStore;
  let fake: FakeChatServer;
  let mail: McpTestServer;
  let t: TestApp;
  let key: string;
  let admin: AgentTestApp['admin'];
  let session: AgentTestApp['session'];

  beforeEach(async () => {
    store = await open();
    fake = await startFakeChatServer();
    mail = await startMailServer();
    ({ t, admin, session } = await createAgentTestApp({ db: store.db, model: fake, mcp: mail, integration: 'mail' }));
    key = await t.keyWith('orchestrator:invoke', 'usage:read', 'tenant:read');
  });
  afterEach(async () => {
    await fake.stop();
    await mail.close();
    await t?.close();
    await store.cleanup();
  });

  const invoke = () =>
    t.app.request('/v1/inference', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ alias: 'Symphony', agentSlug: 'sales', messages: [{ role: 'user', content: 'Send Dana the renewal email.' }] }),
    });
  const detailOf = async (runId: string) =>
    zRunDetail.parse(await (await t.app.request(`/v1/runs/${runId}`, { headers: { authorization: `Bearer ${key}` } })).json());
  /** Claims what is resumable and goes on with it, as an instance's resumer does. */
  async function resumeAll(instance = 'inst_test'): Promise<number> {
    let resumed = 0;
    for (;;) {
      const outcome = await t.services.runs.claimResumption(instance);
      if (outcome === undefined) return resumed;
      expect(outcome.kind).toBe('resumed');
      if (outcome.kind === 'resumed') await t.services.runs.resume(outcome.resumption);
      resumed += 1;
    }
  }
  async function money() {
    const [row] = await store.db.query<{ ledger: number; runs: number; reserved: number }>(
      `SELECT (SELECT COALESCE(sum(stu), 0)::float8 FROM usage_ledger) AS ledger, (SELECT COALESCE(sum(stu), 0)::float8 FROM runs) AS runs,
              (SELECT COALESCE(sum(reserved_stu), 0)::float8 FROM runs) + (SELECT COALESCE(sum(reserved_stu), 0)::float8 FROM usage_periods) AS reserved`,
    );
    return { ledger: Number(row!.ledger), runs: Number(row!.runs), reserved: Number(row!.reserved) };
  }

  async function pausedRun() {
    const res = await invoke();
    expect(res.status).toBe(200);
    const body = zInferenceResponse.parse(await res.json());
    expect(body.waitingFor).toMatchObject({ action: 'mail.send_email' });
    // Waiting: nothing was sent, the run holds no reservation, and nothing resumes before a decision.
    expect(mail.calls).toEqual([]);
    const waiting = await detailOf(body.runId);
    expect(waiting.run).toMatchObject({ status: 'in_progress', waitingFor: { id: body.waitingFor!.id, action: 'mail.send_email' } });
    expect(await money()).toEqual({ ledger: 320 * RATE, runs: 320 * RATE, reserved: 0 });
    expect(await resumeAll()).toBe(0);
    return { runId: body.runId, approvalId: body.waitingFor!.id };
  }

  it('approved: the tool is called once, after the decision; the run completes with every step, billed once', async () => {
    fake.handle = scripted([ASK, ANSWER]);
    const { runId, approvalId } = await pausedRun();
    const decided = await session('POST', `/approvals/${approvalId}/decision`, { decision: 'approved' });
    expect(decided.status).toBe(200);
    expect(await resumeAll()).toBe(1);
    expect(mail.calls.map((c) => [c.tool, c.args])).toEqual([['send_email', { to: 'dana@example.com', subject: 'Renewal' }]]);
    // The model read the tool's result after the call it asked for.
    const results = (fake.requests[1]!.body.messages as { role: string; content: string; tool_call_id?: string }[]).filter((m) => m.role === 'tool');
    expect(results).toEqual([{ role: 'tool', tool_call_id: 'call_1', content: 'Sent to dana@example.com' }]);

    const detail = await detailOf(runId);
    expect(detail.run).toMatchObject({ status: 'completed', usage: { inputTokens: 650, outputTokens: 29, stu: 679 * RATE } });
    expect(detail.run.waitingFor).toBeUndefined();
    expect(detail.steps.map((s) => s.kind)).toEqual(['model_call', 'approval', 'model_call']);
    expect(detail.toolCalls).toEqual([expect.objectContaining({ name: 'mail.send_email', status: 'completed', result: 'Sent to dana@example.com' })]);
    expect(await money()).toEqual({ ledger: 679 * RATE, runs: 679 * RATE, reserved: 0 });
    // Nothing left to resume, and the tool is never called again.
    expect(await resumeAll('inst_other')).toBe(0);
    expect(mail.calls).toHaveLength(1);
  });

  it('the runs list gives a waiting run its approval (waitingFor), by key and by session, paged by class or by date, until it resumes', async () => {
    fake.handle = scripted([ASK, ANSWER, ANSWER]);
    const { runId, approvalId } = await pausedRun();
    // A run that does not wait: listed without waitingFor.
    const plain = zInferenceResponse.parse(await (await invoke()).json());
    expect(plain.waitingFor).toBeUndefined();
    // (The app's clock is the test's: the range starts at the waiting run.)
    const since = (await detailOf(runId)).run.createdAt;
    const lists = {
      key: (query: string) => t.app.request(`/v1/runs${query}`, { headers: { authorization: `Bearer ${key}` } }),
      session: (query: string) => t.app.request(`/runs${query}`, { headers: { cookie: admin.cookie } }),
    };
    const listed = async (by: keyof typeof lists, query: string) => {
      const res = await lists[by](query);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      return zRunList.parse(await res.json());
    };
    const waitingFor = { id: approvalId, action: 'mail.send_email', summary: expect.any(String), expiresAt: expect.any(String) };
    for (const by of ['key', 'session'] as const) {
      for (const query of ['', '?status=in_progress', `?createdAfter=${encodeURIComponent(since)}`]) {
        const page = await listed(by, query);
        const waiting = page.data.find((run) => run.id === runId);
        expect(waiting, `${by} ${query}`).toMatchObject({ status: 'in_progress', waitingFor });
        const done = page.data.find((run) => run.id === plain.runId);
        if (query.includes('status')) expect(done).toBeUndefined();
        else {
          expect(done, `${by} ${query}`).toMatchObject({ status: 'completed' });
          expect(done!.waitingFor, `${by} ${query}`).toBeUndefined();
        }
      }
    }
    // The same approval the run's own page shows.
    expect((await detailOf(runId)).run.waitingFor).toEqual((await listed('key', '')).data.find((run) => run.id === runId)!.waitingFor);

    expect((await session('POST', `/approvals/${approvalId}/decision`, { decision: 'approved' })).status).toBe(200);
    expect(await resumeAll()).toBe(1);
    const after = await listed('key', '');
    expect(after.data.find((run) => run.id === runId)).toMatchObject({ status: 'completed' });
    expect(after.data.every((run) => run.waitingFor === undefined)).toBe(true);
  });

  it('canceled while it waits: the approval expires at once, a decision is refused, nothing resumes it', async () => {
    fake.handle = scripted([ASK, ANSWER]);
    const { runId, approvalId } = await pausedRun();
    const spent = await money();
    const canceled = await t.app.request(`/runs/${runId}/cancel`, {
      method: 'POST',
      headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrfToken },
    });
    expect(canceled.status).toBe(200);
    expect(canceled.headers.get('x-request-id')).toBeTruthy();
    const canceledAt = t.clock.now().toISOString();
    expect(await canceled.json()).toMatchObject({ id: runId, status: 'canceled', usage: { inputTokens: 300, outputTokens: 20, stu: 320 * RATE } });

    // The request reads `expired` (expiring at the cancel), no longer among the pending ones.
    const expired = zApprovalList.parse((await session('GET', '/approvals?status=expired')).body);
    expect(expired.data).toEqual([
      expect.objectContaining({ id: approvalId, runId, status: 'expired', decidedBy: null, decidedAt: null, expiresAt: canceledAt }),
    ]);
    expect(zApprovalList.parse((await session('GET', '/approvals')).body).data).toEqual([]);

    // Deciding it answers as on any expired approval, and nothing is emitted.
    const late = await t.app.request(`/approvals/${approvalId}/decision`, {
      method: 'POST',
      headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrfToken, 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approved' }),
    });
    expect(late.status).toBe(400);
    expect(late.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await late.json()).toMatchObject({ error: 'invalid_body', message: 'This approval is no longer pending.' });
    const decided = await store.db.query(`SELECT 1 FROM outbox_events WHERE type = 'approval.decided'`);
    expect(decided).toEqual([]);

    // No claim continues it, not even once the approval's original expiry has passed: its checkpoint is gone.
    expect(await store.db.query(`SELECT id FROM run_checkpoints WHERE run_id = $1`, [runId])).toEqual([]);
    expect(await resumeAll()).toBe(0);
    t.clock.advance(73 * 3_600_000);
    expect(await resumeAll('inst_other')).toBe(0);
    expect(mail.calls).toEqual([]);
    expect(fake.requests).toHaveLength(1);

    const detail = await detailOf(runId);
    expect(detail.run).toMatchObject({ status: 'canceled', usage: { inputTokens: 300, outputTokens: 20, stu: 320 * RATE } });
    expect(detail.run.waitingFor).toBeUndefined();
    // Its call was never made, and says so: nothing waits for a decision any more.
    expect(detail.toolCalls).toEqual([expect.objectContaining({ name: 'mail.send_email', status: 'failed', result: NOT_PERFORMED })]);
    expect(await money()).toEqual(spent);
  });

  it('rejected: the tool is never called, the model is told, and the run completes', async () => {
    fake.handle = scripted([ASK, { content: 'Understood: the email was not sent.', usage: { prompt_tokens: 340, completion_tokens: 8 } }]);
    const { runId, approvalId } = await pausedRun();
    expect((await session('POST', `/approvals/${approvalId}/decision`, { decision: 'rejected' })).status).toBe(200);
    expect(await resumeAll()).toBe(1);
    expect(mail.calls).toEqual([]);
    const results = (fake.requests[1]!.body.messages as { role: string; content: string }[]).filter((m) => m.role === 'tool');
    expect(results).toEqual([expect.objectContaining({ content: 'The tool failed: A person rejected this action; it was not performed.' })]);
    const detail = await detailOf(runId);
    expect(detail.run).toMatchObject({ status: 'completed', content: expect.stringContaining('Understood: the email was not sent.') });
    expect(detail.toolCalls).toEqual([expect.objectContaining({ name: 'mail.send_email', status: 'failed' })]);
    expect(await money()).toEqual({ ledger: 668 * RATE, runs: 668 * RATE, reserved: 0 });
  });
});
