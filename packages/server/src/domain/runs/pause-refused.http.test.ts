/**
 * A pause the store refuses, end to end on both stores: a model (a loopback Chat Completions server scripted to ask
 * for a tool) asks for a call of a real MCP server that needs a person's approval; the store refuses the pause's
 * transaction (a trigger of the test's schema raises on the checkpoint's insert, so the whole pause rolls back:
 * nothing of it is written). The execution logs the error once and closes the run `failed` (`internal_error`) with
 * what it has: the invocation answers the spec's 500 `internal_error` (no trace of the store's error), the run is
 * billed once for the model call with nothing left reserved; no approval, no checkpoint, and the tool is never called.
 */
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { zRunDetail, zRunEvent } from '../../../../../generated/zod.ts';
import { createLogger } from '../../log/index.ts';
import { scripted, startFakeChatServer, type FakeChatServer } from '@service/testing/fake-chat-server';
import { startMailServer, type McpTestServer } from '@service/testing/mcp-servers';
import { parseSseWithIds } from '@service/testing/sse';
import { moneySums, testBackends, type TestStore } from '@service/testing/store';
import type { TestApp } from '@service/testing/app';
import { createAgentTestApp } from '@service/testing/agent-app';
import { NOT_PERFORMED } from './steps.ts';
import { subscribeToEveryEvent } from '@service/testing/event-subscriber';

/** Symphony's STU per token. */
const RATE = 10;
const ASK = {
  toolCalls: [{ id: 'call_1', name: 'mail__send_email', arguments: { to: 'dana@example.com', subject: 'Renewal' } }],
  usage: { prompt_tokens: 300, completion_tokens: 20 },
};
/** What the store says when it refuses the checkpoint: it must reach the log, never the client. */
const REFUSAL = 'test refuses the checkpoint';

describe.each(testBackends())('a pause the store refuses closes the run, on $name', { timeout: 120_000 }, ({ open }) => {
  let store: TestStore;
  let fake: FakeChatServer;
  let mail: McpTestServer;
  let t: TestApp;
  let key: string;
  /** The error lines the app logs (a background run's errors go to its logger). */
  let errors: Record<string, unknown>[];

  beforeEach(async () => {
    store = await open();
    fake = await startFakeChatServer();
    mail = await startMailServer();
    errors = [];
    ({ t } = await createAgentTestApp({
      db: store.db,
      model: fake,
      mcp: mail,
      integration: 'mail',
      logger: createLogger({
        level: 'error',
        destination: new Writable({
          write(chunk: Buffer, _encoding, done) {
            for (const line of chunk.toString().split('\n').filter(Boolean)) errors.push(JSON.parse(line) as Record<string, unknown>);
            done();
          },
        }),
      }),
    }));
    key = await t.keyWith('orchestrator:invoke', 'usage:read', 'tenant:read');
    await subscribeToEveryEvent(t.db, t.workspaceId);
    // The store refuses every checkpoint: the pause's transaction fails at its last write and rolls back whole.
    await store.db.exec(`
      CREATE FUNCTION test_refuse_checkpoint() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION '${REFUSAL}';
      END $$;
      CREATE TRIGGER test_refuse_checkpoint BEFORE INSERT ON run_checkpoints FOR EACH ROW EXECUTE FUNCTION test_refuse_checkpoint();
    `);
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
  const money = () => moneySums(store.db);
  const count = async (table: string, runId: string) =>
    Number((await store.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE run_id = $1`, [runId]))[0]!.n);

  it('the invocation answers internal_error, the run failed and billed once, nothing held, no approval, the tool never called; the error logged once', async () => {
    fake.handle = scripted([ASK]);
    const res = await invoke();
    const text = await res.text();
    // The run did not do what it was asked (its call waits for nobody): it failed, as the spec's error table says.
    expect(res.status, text).toBe(500);
    expect(text).not.toContain(REFUSAL);
    const error = JSON.parse(text) as { error: string; message: string; requestId: string };
    expect(error).toEqual({ error: 'internal_error', message: expect.stringMatching(/^Run run_\w+ failed\.$/), requestId: res.headers.get('x-request-id') });
    const runId = /^Run (run_\w+) failed\.$/.exec(error.message)![1]!;
    // The model was asked once; the tool waited for an approval that was never recorded, so it was never called.
    expect(fake.requests).toHaveLength(1);
    expect(mail.calls).toEqual([]);

    const shown = await t.app.request(`/v1/runs/${runId}`, { headers: { authorization: `Bearer ${key}` } });
    expect(shown.status).toBe(200);
    const detail = zRunDetail.parse(await shown.json());
    // Closed with what it has: the model's one call, billed.
    expect(detail.run).toMatchObject({
      id: runId,
      status: 'failed',
      failureReason: 'internal_error',
      content: null,
      usage: { inputTokens: 300, outputTokens: 20, stu: 320 * RATE },
    });
    expect(detail.run.waitingFor).toBeUndefined();
    expect(detail.toolCalls).toEqual([expect.objectContaining({ name: 'mail.send_email', status: 'failed', result: NOT_PERFORMED })]);
    // Its log ends as a failed run's does, without `approval.requested`.
    const log = await t.app.request(`/v1/runs/${runId}/events`, { headers: { authorization: `Bearer ${key}` } });
    expect(log.status).toBe(200);
    const events = parseSseWithIds(await log.text()).map((e) => zRunEvent.parse(e.data));
    expect(events.map((e) => e.type)).not.toContain('approval.requested');
    expect(events.at(-1)).toMatchObject({ type: 'run.failed', reason: 'internal_error' });

    // Closed once, billed once: one ledger line, the period and the run agree, nothing reserved anywhere.
    expect(await money()).toEqual({ ledger: 320 * RATE, period: 320 * RATE, runs: 320 * RATE, reserved: 0 });
    expect(await store.db.query(`SELECT run_id FROM usage_ledger`)).toEqual([{ run_id: runId }]);
    const ends = await store.db.query<{ type: string }>(
      `SELECT type FROM outbox_events WHERE type IN ('run.completed', 'run.failed', 'run.canceled') AND data->>'run_id' = $1`,
      [runId],
    );
    expect(ends).toEqual([{ type: 'run.failed' }]);
    // The refused pause wrote nothing.
    expect(await count('approvals', runId)).toBe(0);
    expect(await count('run_checkpoints', runId)).toBe(0);
    expect(await store.db.query(`SELECT id FROM outbox_events WHERE type = 'approval.created'`)).toEqual([]);

    // The store's refusal was logged, once (pino writes its lines a tick later).
    await new Promise((resolve) => setImmediate(resolve));
    // (Beside the request's own line, logged at error level for its 500.)
    expect(errors.filter((line) => line.msg !== 'request')).toEqual([
      expect.objectContaining({ level: 'error', msg: 'background run failed', err: expect.objectContaining({ message: REFUSAL }) }),
    ]);
  });
});
