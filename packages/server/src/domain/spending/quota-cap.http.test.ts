/**
 * The quota's hard stop caps a run's output as the hour and day limits do, over real HTTP, on PGlite and (with
 * DATABASE_URL) PostgreSQL. A workspace at 59 % of its quota (usage reads `green`) sends a request without
 * `maxTokens`: its worst case (input plus 4,096 output tokens) does not fit under the hard stop beside what was
 * charged, so it runs with its output capped to what fits and answers `200`; the charge stays under the hard stop
 * and usage stays the sum of what was charged, with nothing held. Before, it was refused with `429
 * quota_exceeded`, `policy: hardstop`, while usage read green. A request whose input alone does not fit answers
 * `429 quota_exceeded` with usage's own level and a message that says why.
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { countMessageTokens, countRequestTokens, countTextTokens, createEngines } from '../../engine/index.ts';
import { BUILT_IN_TOOLS } from '../agent-loop/index.ts';
import { defaultInstructions } from '../agents/instructions.ts';
import { sendCompletion, startFakeChatServer, type FakeChatServer } from '@service/testing/fake-chat-server';
import { PLANS } from '../../vocabulary/plans.ts';
import { setPlan, setQuotaOverride } from '../agents/settings.ts';
import { DEFAULT_STU_RATES, hardstopStu } from '../usage/index.ts';
import { DEFAULT_OUTPUT_TOKENS } from '../runs/start.ts';

/** STU per token of the alias used: a worst case of 4,096 output tokens is about 8 M STU, over the room left. */
const RATE = 2000;
const QUOTA = PLANS.starter.quotaStu;
const CONSUMED = Math.round(QUOTA * 0.59);
/** No kill switch binds: only the quota's hard stop. */
const NO_LIMITS = { run: 1e12, hour: 1e12, day: 1e12 };
const MODEL = 'loopback-model';
/** About 1,500 tokens: more than fits in the room left (about 600 tokens at this rate). */
const LONG_ANSWER = Array.from({ length: 300 }, (_, i) => `Step ${i}: call the customer back.`).join(' ');

interface Usage {
  consumedStu: number;
  pctConsumed: number;
  level: string;
}

describe.each(testBackends())('the quota caps the output on $name', { timeout: 120_000 }, ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  let server: ServerType;
  let base: string;
  let key: string;
  let fake: FakeChatServer;

  beforeEach(async () => {
    store = await open();
    // Prelude answers from the local engine; Symphony from a loopback provider that answers at length, past any cap.
    fake = await startFakeChatServer();
    fake.handle = (_req, res) => sendCompletion(res, MODEL, LONG_ANSWER, { prompt_tokens: 10, completion_tokens: countTextTokens(LONG_ANSWER) });
    const engines = createEngines({
      aliases: { Prelude: 'local', Sonata: 'local', Symphony: 'openai-compatible', Concerto: 'local' },
      openaiCompatible: { baseURL: fake.baseURL, apiKey: 'sk-test', models: { Symphony: MODEL } },
    });
    t = await createTestApp({
      db: store.db,
      deps: { engines, stuRates: { ...DEFAULT_STU_RATES, Prelude: RATE, Symphony: RATE }, killSwitchLimits: NO_LIMITS },
    });
    await setPlan(t.db, t.clock, t.workspaceId, 'starter');
    key = await t.keyWith('orchestrator:invoke', 'usage:read');
    server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // What earlier invocations charged this period: 59 % of the quota.
    expect((await usage()).consumedStu).toBe(0);
    await store.db.query(`UPDATE usage_periods SET consumed_stu = $2 WHERE workspace_id = $1`, [t.workspaceId, CONSUMED]);
    // The usage tally follows the period row's notification (on PostgreSQL, a moment after the commit).
    await vi.waitFor(async () => expect((await usage()).consumedStu).toBe(CONSUMED), { timeout: 10_000 });
  });
  afterEach(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await fake.stop();
    await t?.close();
    await store.cleanup();
  });

  async function usage(): Promise<Usage> {
    const res = await fetch(`${base}/usage/current`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    return (await res.json()) as Usage;
  }
  const invoke = (content: string, alias = 'Prelude') =>
    fetch(`${base}/v1/inference`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ alias, agentSlug: 'sales', messages: [{ role: 'user', content }] }),
    });
  async function period(): Promise<{ consumed: number; reserved: number }> {
    const [row] = await store.db.query<{ consumed: number; reserved: number }>(
      `SELECT consumed_stu::float8 AS consumed, reserved_stu::float8 AS reserved FROM usage_periods WHERE workspace_id = $1`,
      [t.workspaceId],
    );
    return { consumed: Number(row!.consumed), reserved: Number(row!.reserved) };
  }

  it('runs a request without maxTokens whose worst case does not fit, its output capped to what fits: 200, no overshoot', async () => {
    const before = await usage();
    expect(before).toMatchObject({ consumedStu: CONSUMED, pctConsumed: 59, level: 'green' });
    const content = 'Follow up with the lead from Tuesday';
    const input = countMessageTokens([{ role: 'user', content }]);
    const room = hardstopStu(QUOTA) - CONSUMED;
    // The worst case of a request without maxTokens does not fit in the room left before the hard stop.
    expect((input + DEFAULT_OUTPUT_TOKENS) * RATE).toBeGreaterThan(room);

    const res = await invoke(content);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { runId: string; content: string; usage: { inputTokens: number; outputTokens: number } };
    expect(body.content.length).toBeGreaterThan(0);
    // Completed, its charge within the room left.
    const [run] = await store.db.query<{ status: string; stu: number }>(`SELECT status, stu::float8 AS stu FROM runs WHERE id = $1`, [body.runId]);
    expect(run!.status).toBe('completed');
    const stu = Number(run!.stu);
    expect(stu).toBe((body.usage.inputTokens + body.usage.outputTokens) * RATE);
    expect(stu).toBeLessThanOrEqual(room);

    // Usage: what was charged before plus the run's charge, nothing held, under the hard stop.
    expect(await period()).toEqual({ consumed: CONSUMED + stu, reserved: 0 });
    await vi.waitFor(async () => expect((await usage()).consumedStu).toBe(CONSUMED + stu), { timeout: 10_000 });
    expect(CONSUMED + stu).toBeLessThanOrEqual(hardstopStu(QUOTA));
    const [ledger] = await store.db.query<{ stu: number }>(`SELECT coalesce(sum(stu), 0)::float8 AS stu FROM usage_ledger WHERE workspace_id = $1`, [
      t.workspaceId,
    ]);
    expect(Number(ledger!.stu)).toBe(stu);
  });

  it('cuts an answer longer than what fits at the cap: 200, charged up to the hard stop and not past it', async () => {
    // A real model reads the agent's instructions and tools too: room for them, the message and about 600 output tokens.
    const content = 'Plan the follow-ups for this week';
    const tools = BUILT_IN_TOOLS.map((tool) => tool.definition);
    const input = await countRequestTokens({ instructions: defaultInstructions('sales'), tools, messages: [{ role: 'user', content }] });
    const consumed = hardstopStu(QUOTA) - (input + 600) * RATE;
    await store.db.query(`UPDATE usage_periods SET consumed_stu = $2 WHERE workspace_id = $1`, [t.workspaceId, consumed]);
    const room = hardstopStu(QUOTA) - consumed;
    expect(countTextTokens(LONG_ANSWER) * RATE).toBeGreaterThan(room);
    const res = await invoke(content, 'Symphony');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { runId: string; content: string; usage: { inputTokens: number; outputTokens: number } };
    // Cut on a token boundary: shorter than what the provider sent.
    expect(body.content.length).toBeGreaterThan(0);
    expect(body.content.length).toBeLessThan(LONG_ANSWER.length);
    const [run] = await store.db.query<{ status: string; stu: number }>(`SELECT status, stu::float8 AS stu FROM runs WHERE id = $1`, [body.runId]);
    expect(run!.status).toBe('completed');
    const stu = Number(run!.stu);
    expect(stu).toBeLessThanOrEqual(room);
    // Cut at what the hard stop left after the whole input.
    expect(body.usage.outputTokens).toBeLessThanOrEqual(600);
    // The period at most at its hard stop, nothing held.
    expect(await period()).toEqual({ consumed: consumed + stu, reserved: 0 });
    expect(consumed + stu).toBeLessThanOrEqual(hardstopStu(QUOTA));
  });

  it('answers 429 quota_exceeded with usage level and a message that says why when not even the input fits', async () => {
    const room = hardstopStu(QUOTA) - CONSUMED;
    // An input larger than the room left (about 610 tokens at this rate).
    const content = Array.from({ length: 400 }, (_, i) => `invoice ${i} overdue`).join(', ');
    expect(countMessageTokens([{ role: 'user', content }]) * RATE).toBeGreaterThan(room);
    const res = await invoke(content);
    expect(res.status).toBe(429);
    expect(res.headers.get('x-should-retry')).toBe('false');
    const body = (await res.json()) as Record<string, unknown>;
    const now = await usage();
    expect(body).toEqual({
      error: 'quota_exceeded',
      message:
        "What is left of this period's quota before its hard stop does not cover this request's input (its messages, and the agent's instructions and tool definitions the model is given) and one output token; a shorter request may fit.",
      policy: now.level,
      pctConsumed: now.pctConsumed,
      resetAt: expect.any(String),
    });
    expect(now).toMatchObject({ consumedStu: CONSUMED, level: 'green' });
    expect(await period()).toEqual({ consumed: CONSUMED, reserved: 0 });
  });

  it('runs an invocation under a quota of ten trillion STU: the room left before the hard stop, in tokens, is no 32-bit number', async () => {
    // An operator's raised quota (`workspaces update --quota-stu`): the room left, in tokens at this rate, is far
    // past 2^31. The cap the hard stop allows must not overflow in the store (it answered 500 internal_error).
    await setQuotaOverride(t.db, t.clock, t.workspaceId, 10_000_000_000_000);
    const res = await invoke('Follow up with the lead from Tuesday');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { runId: string; usage: { outputTokens: number } };
    const [run] = await store.db.query<{ status: string }>(`SELECT status FROM runs WHERE id = $1`, [body.runId]);
    expect(run!.status).toBe('completed');
  });
});
