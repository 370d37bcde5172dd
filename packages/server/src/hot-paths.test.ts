/**
 * @module The statements the hot paths run, counted through the store: an authenticated read of the
 * usage takes none (the key, the quota and the period come from memory) and a list one query (no
 * revocation read, no last_used_at write), and a
 * synchronous invocation two statements and no transaction: `start_runs` (with one run; it also writes the request's start), which checks and reserves
 * the budget and inserts the run (committed before the engine runs, so every instance sees the
 * reservation and the run), and `finish_run`, which closes it with its steps, usage, settlement, events and event log.
 * The agent settings come from memory. Concurrent invocations' starts and closes that wait behind one in flight
 * go to the store together, in one `start_runs` (domain/spending/start-batch.ts) and one `finish_runs`
 * statement (domain/runs/close-batch.ts).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { countingDb, testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { createApp } from './app.ts';
import type { OpenDb } from './store/db.ts';
import { countMessageTokens, type EngineMessage } from './engine/index.ts';
import { signInboundBody } from './domain/webhooks/inbound-signature.ts';
import { subscribeToEveryEvent } from '@service/testing/event-subscriber';

describe.each(testBackends())('hot paths on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  let statements: string[];
  let headers: Record<string, string>;
  let db: OpenDb;
  /** The next lone finish_run waits for this (once); `held` says it does. */
  let hold: Promise<void> | undefined;
  let held = false;
  /** Runs carried by start_runs statements since the last reset. */
  let startedRuns = 0;

  beforeAll(async () => {
    store = await open();
    const counted = countingDb(store.db);
    statements = counted.statements;
    db = {
      ...counted.db,
      async query(sql, params, options) {
        if (/^SELECT start_runs\(/.test(sql)) startedRuns += (JSON.parse(params![0] as string) as unknown[]).length;
        const waitFor = /FROM finish_run\(/.test(sql) ? hold : undefined;
        if (waitFor) {
          hold = undefined;
          held = true;
          await waitFor;
        }
        return counted.db.query(sql, params, options);
      },
    };
    t = await createTestApp({ db });
    await subscribeToEveryEvent(t.db, t.workspaceId);
    await t.services.keys.ready();
    headers = { Authorization: `Bearer ${t.apiKey}`, 'Content-Type': 'application/json' };
  });
  afterAll(async () => {
    await t?.close();
    await store?.cleanup();
  });

  async function counting(path: string, init: RequestInit = {}) {
    await t.app.request(path, { headers, ...init }); // warms the key cache (and creates the usage period)
    statements.length = 0;
    const res = await t.app.request(path, { headers, ...init });
    return { res, run: [...statements] };
  }

  it('answers GET /usage/current from memory: no statement (the usage tally and the agent settings)', async () => {
    const { res, run } = await counting('/usage/current');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ period: expect.any(String), consumedStu: expect.any(Number) });
    expect(run).toEqual([]);
  });

  it('answers GET /runs?limit=20 with one query, total included', async () => {
    const { res, run } = await counting('/runs?limit=20');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ total: expect.any(Number), limit: 20 });
    expect(run).toHaveLength(1);
  });

  it('runs a synchronous invocation in two statements: start_runs, then finish_run, and nothing else', async () => {
    const body = JSON.stringify({ alias: 'Sonata', messages: [{ role: 'user', content: 'Which invoices are overdue?' }] });
    const { res, run } = await counting('/v1/inference', { method: 'POST', body });
    expect(res.status).toBe(200);
    // The agent settings come from memory; no transaction, no lock held across a round trip.
    expect(run).toHaveLength(2);
    expect(run[0]).toMatch(/^SELECT start_runs\(/);
    expect(run[1]).toMatch(/^SELECT id, .* FROM finish_run\(/);
  });

  it('runs an invocation whose agent writes a draft in the same two statements: the draft and draft.created are written by finish_run', async () => {
    const body = JSON.stringify({
      alias: 'Prelude',
      agentSlug: 'sales',
      messages: [{ role: 'user', content: 'Summarise the open opportunities for next quarter.' }],
    });
    const { res, run } = await counting('/v1/inference', { method: 'POST', body });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { runId: string };
    // No transaction: a lock held across round trips would make every other party's statement wait for this run's.
    expect(run).toHaveLength(2);
    expect(run[0]).toMatch(/^SELECT start_runs\(/);
    expect(run[1]).toMatch(/^SELECT id, .* FROM finish_run\(/);
    const drafts = await db.query<{ agent_slug: string; kind: string }>(`SELECT agent_slug, kind FROM drafts WHERE run_id = $1`, [answer.runId]);
    expect(drafts).toEqual([{ agent_slug: 'sales', kind: expect.any(String) }]);
    const events = await db.query<{ type: string }>(`SELECT type FROM outbox_events WHERE data->>'run_id' = $1 ORDER BY created_at, id`, [answer.runId]);
    expect(events.map((e) => e.type).sort()).toEqual(['draft.created', 'run.completed']);
  });

  it('ingests a signed inbound event in two statements: the webhook by its slug, then ingest_inbound_event (and a repeat the same)', async () => {
    const { secret } = await t.services.webhooks.inbound.create(t.workspaceId, { slug: 'hot-leads', agentSlug: 'sales', template: 'Lead {{ contact.name }}' });
    const raw = JSON.stringify({ event: 'lead.created', contact: { name: 'Ada' } });
    const send = () =>
      t.app.request('/webhooks/inbound/hot-leads', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-event-id': 'evt-hot-1', 'X-SERVICE-Signature': signInboundBody(raw, secret, 'sha256') },
        body: raw,
      });
    for (const code of ['ok', 'duplicate']) {
      statements.length = 0;
      const res = await send();
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ ok: true, code, eventId: 'evt-hot-1' });
      expect(statements).toHaveLength(2);
      expect(statements[0]).toMatch(/FROM inbound_webhooks/);
      expect(statements[1]).toMatch(/FROM ingest_inbound_event\(/);
    }
  });

  it('closes concurrent invocations together: 6 start in at most 6 start_runs carrying the 6 runs, the first close alone and the 5 that waited behind it in one statement', async () => {
    const n = 6;
    let release!: () => void;
    hold = new Promise<void>((resolve) => (release = resolve));
    held = false;
    statements.length = 0;
    startedRuns = 0;
    const invoke = (i: number) =>
      t.app.request('/v1/inference', {
        method: 'POST',
        headers,
        body: JSON.stringify({ alias: 'Sonata', messages: [{ role: 'user', content: `Which invoices are overdue in region ${i}?` }] }),
      });
    // The first close is in flight alone (held here); the others, sent meanwhile, wait for it in the batcher.
    const first = invoke(0);
    await vi.waitFor(() => expect(held).toBe(true), { timeout: 10_000 });
    const others = Array.from({ length: n - 1 }, (_, i) => invoke(i + 1));
    await vi.waitFor(() => expect(t.services.runs.closesWaiting()).toBe(n - 1), { timeout: 10_000 });
    release();
    const answers = Promise.all([first, ...others]);
    expect((await answers).map((res) => res.status)).toEqual(Array(n).fill(200));
    // Starts that arrive while one is in flight go in the next statement, so 1 to 6 statements (as they arrive), 6 runs in all.
    const starts = statements.filter((s) => /^SELECT start_runs\(/.test(s));
    expect(starts.length).toBeGreaterThanOrEqual(1);
    expect(starts.length).toBeLessThanOrEqual(n);
    expect(startedRuns).toBe(n);
    expect(statements.filter((s) => !/^SELECT start_runs\(/.test(s))).toEqual([
      expect.stringMatching(/^SELECT id, .* FROM finish_run\(/),
      expect.stringMatching(/^SELECT id, .* FROM finish_runs\(\$1\)$/),
    ]);
  });

  it('an invocation after its agent was paused and resumed reads the settings again, once', async () => {
    await t.services.agents.pause(t.workspaceId, 'finance', 'Quarter close');
    await t.services.agents.resume(t.workspaceId, 'finance');
    statements.length = 0;
    const body = JSON.stringify({ alias: 'Sonata', messages: [{ role: 'user', content: 'Which invoices are overdue?' }] });
    const res = await t.app.request('/v1/inference', { method: 'POST', headers, body });
    expect(res.status).toBe(200);
    expect(statements).toHaveLength(3);
    expect(statements[0]).toMatch(/FROM paused_agents/);
  });

  it('continues a conversation from memory, and sees the turns another instance added', async () => {
    const second = createApp({ db: await store.peer(), clock: t.clock, logError: () => {} }).app;
    const ask = (app: TestApp['app'], content: string) =>
      app.request('/v1/inference', {
        method: 'POST',
        headers,
        body: JSON.stringify({ alias: 'Sonata', conversationId: 'thread-1', messages: [{ role: 'user', content }] }),
      });
    expect((await ask(t.app, 'Which invoices are overdue?')).status).toBe(200);
    statements.length = 0;
    expect((await ask(t.app, 'Which of them are over 90 days?')).status).toBe(200);
    // The earlier turns came from memory: the two statements of any invocation, nothing more.
    expect(statements).toHaveLength(2);
    // The other instance continues the thread (reading it from the store) and says so.
    expect((await ask(second, 'And the ones from last quarter?')).status).toBe(200);
    const turns = await store.db.query<EngineMessage>(`SELECT role, content FROM conversation_turns WHERE conversation_id = 'thread-1' ORDER BY seq`);
    expect(turns).toHaveLength(6);
    const last = await ask(t.app, 'Summarise them.');
    expect(last.status).toBe(200);
    // The engine was given all six earlier turns, not the four this instance wrote.
    const { usage } = (await last.json()) as { usage: { inputTokens: number } };
    expect(usage.inputTokens).toBe(countMessageTokens([...turns, { role: 'user', content: 'Summarise them.' }]));
  });

  it('a thread held in memory that is behind the store is read again before anything is reserved', async () => {
    const ask = (content: string) =>
      t.app.request('/v1/inference', {
        method: 'POST',
        headers,
        body: JSON.stringify({ alias: 'Sonata', conversationId: 'thread-2', messages: [{ role: 'user', content }] }),
      });
    expect((await ask('Which invoices are overdue?')).status).toBe(200);
    // A turn this instance was never told about (no notification): its copy is now one turn short.
    await store.db.query(
      `INSERT INTO conversation_turns (workspace_id, conversation_id, seq, role, content, run_id, created_at)
       SELECT workspace_id, conversation_id, seq + 1, 'user', 'Only the ones above 10,000 EUR.', run_id, created_at
         FROM conversation_turns WHERE conversation_id = 'thread-2' ORDER BY seq DESC LIMIT 1`,
    );
    statements.length = 0;
    const res = await ask('Summarise them.');
    expect(res.status).toBe(200);
    // start_runs refused the stale copy (reserving nothing), the thread was read, and the run started.
    expect(statements.map((s) => s.slice(0, 40))).toEqual([
      expect.stringMatching(/^SELECT start_runs\(/),
      expect.stringMatching(/^SELECT role, content, seq FROM/),
      expect.stringMatching(/^SELECT start_runs\(/),
      expect.stringMatching(/^SELECT id, /),
    ]);
    const turns = await store.db.query<EngineMessage>(`SELECT role, content FROM conversation_turns WHERE conversation_id = 'thread-2' ORDER BY seq`);
    const { usage } = (await res.json()) as { usage: { inputTokens: number } };
    expect(usage.inputTokens).toBe(countMessageTokens([...turns.slice(0, 3), { role: 'user', content: 'Summarise them.' }]));
  });
});
