/**
 * The reservation counts a run's first model call as the model reads it, on PGlite and (with DATABASE_URL)
 * PostgreSQL: the caller's messages, and the answering agent's instructions (the admin's own, set over the API) and
 * the definitions of the tools it is offered (the built-in ones and a connected MCP server's). Near the quota's hard
 * stop, a request whose messages fit but whose instructions and tools do not is refused `429 quota_exceeded` (usage's
 * level, the message says why) as any request whose input does not fit; one that fits with them runs with its output
 * capped to what is left after them. Against a loopback Chat Completions server (Symphony) and a real MCP server.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { zInferenceResponse, zKillSwitches } from '../../../../../generated/zod.ts';
import { scripted, sendCompletion, startFakeChatServer, type FakeChatServer } from '@service/testing/fake-chat-server';
import { startCrmServer, type McpTestServer } from '@service/testing/mcp-servers';
import { testBackends, type TestStore } from '@service/testing/store';
import type { TestApp } from '@service/testing/app';
import { type AgentTestApp, createAgentTestApp } from '@service/testing/agent-app';
import { type ConversationMessage, countMessageTokens, countPreambleTokens, countRequestTokens, type ModelInput } from '../../engine/index.ts';
import { PLANS } from '../../vocabulary/plans.ts';
import { hardstopStu } from '../usage/index.ts';

/** Symphony's STU per token. */
const RATE = 10;
const MAX_TOKENS = 100;
const MESSAGES = [{ role: 'user' as const, content: 'Who is our contact at Northwind?' }];
/** Instructions an admin wrote, far longer than the default (at most 20,000 characters). */
const LONG_INSTRUCTIONS = `You are the Sales agent. ${'Check every account against the CRM before you answer. '.repeat(300)}`;
/** A workspace without a plan is on growth. */
const HARDSTOP = hardstopStu(PLANS.growth.quotaStu);

describe.each(testBackends())('the reservation counts the instructions and the tools, on $name', { timeout: 120_000 }, ({ open }) => {
  let store: TestStore;
  let fake: FakeChatServer;
  let crm: McpTestServer;
  let t: TestApp;
  let key: string;
  let session: AgentTestApp['session'];

  beforeEach(async () => {
    store = await open();
    fake = await startFakeChatServer();
    fake.handle = (_request, res) => sendCompletion(res, 'loopback-model', 'Dana Whitfield.', { prompt_tokens: 20, completion_tokens: 4 });
    crm = await startCrmServer();
    ({ t, session } = await createAgentTestApp({ db: store.db, model: fake, mcp: crm, integration: 'crm' }));
    key = await t.keyWith('orchestrator:invoke', 'usage:read');
  });
  afterEach(async () => {
    await fake.stop();
    await crm.close();
    await t?.close();
    await store.cleanup();
  });

  const invoke = (body: Record<string, unknown> = {}) =>
    t.app.request('/v1/inference', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ alias: 'Symphony', agentSlug: 'sales', messages: MESSAGES, ...body }),
    });
  /** What the model was sent in request `index`, read back from the wire: the system message, the tools, the messages. */
  const sentInput = (index: number): ModelInput => {
    const body = fake.requests[index]!.body as {
      messages: { role: string; content: string }[];
      tools?: { function: { name: string; description: string; parameters: Record<string, unknown> } }[];
    };
    const [system, ...messages] = body.messages;
    expect(system!.role).toBe('system');
    return {
      instructions: system!.content,
      tools: (body.tools ?? []).map(({ function: f }) => ({ name: f.name.replace('__', '.'), description: f.description, inputSchema: f.parameters })),
      messages: messages.map((m) => ({ role: m.role as 'user', content: m.content })),
    };
  };
  /** What runs in progress hold in the current hour (the kill switches as a member reads them). */
  const reservedNow = async (): Promise<number> => {
    const { reservedStu } = zKillSwitches.parse((await session('GET', '/kill-switches')).body).hour;
    if (reservedStu === null) throw new Error('the hour window shows no reservations');
    return reservedStu;
  };
  const usageNow = async () =>
    (await (await t.app.request('/usage/current', { headers: { authorization: `Bearer ${key}` } })).json()) as {
      level: string;
      pctConsumed: number;
      consumedStu: number;
    };
  /** What earlier invocations charged this period (the period's row exists once usage was read). */
  async function setConsumed(stu: number): Promise<void> {
    await usageNow();
    const updated = await store.db.query(`UPDATE usage_periods SET consumed_stu = $2 WHERE workspace_id = $1 RETURNING workspace_id`, [t.workspaceId, stu]);
    expect(updated).toHaveLength(1);
    // The usage tally follows the period row's notification (on PostgreSQL, a moment after the commit).
    await vi.waitFor(async () => expect((await usageNow()).consumedStu).toBe(stu), { timeout: 10_000 });
  }

  /** Invokes while the model holds its answer, and reads what the run reserved meanwhile. */
  async function reservedWhileRunning(): Promise<number> {
    let arrived!: () => void;
    const held = new Promise<void>((resolve) => (arrived = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    fake.handle = (_request, res) => {
      arrived();
      void released.then(() => sendCompletion(res, 'loopback-model', 'Dana Whitfield.', { prompt_tokens: 20, completion_tokens: 4 }));
    };
    const answered = invoke({ maxTokens: MAX_TOKENS });
    await held;
    const reserved = await reservedNow();
    release();
    expect((await answered).status).toBe(200);
    expect(await reservedNow()).toBe(0);
    return reserved;
  }

  it('reserves the first call as the model reads it, and more for an agent whose admin wrote long instructions', async () => {
    const before = await reservedWhileRunning();
    const first = sentInput(0);
    // The built-in tools and the connected server's, offered and counted.
    expect(first.tools!.map((tool) => tool.name)).toContain('crm.lookup_contact');
    expect(before).toBe(((await countRequestTokens(first)) + MAX_TOKENS) * RATE);
    expect(before).toBeGreaterThan((countMessageTokens(MESSAGES) + MAX_TOKENS) * RATE);

    const configured = await session('PUT', '/agents/sales/configuration', { instructions: LONG_INSTRUCTIONS, stepLimit: 8, tools: null, approvals: {} });
    expect(configured.status).toBe(200);
    const after = await reservedWhileRunning();
    const second = sentInput(1);
    expect(second.instructions).toBe(LONG_INSTRUCTIONS);
    expect(after).toBe(((await countRequestTokens(second)) + MAX_TOKENS) * RATE);
    // The same messages and tools: the difference is the instructions'.
    const instructionsOf = (input: ModelInput) => countRequestTokens({ ...input, tools: [], messages: [] });
    expect(after - before).toBe(((await instructionsOf(second)) - (await instructionsOf(first))) * RATE);
    expect(after - before).toBeGreaterThan(2_500 * RATE);
  });

  it('a run resumed after an approval reserves its next call as the model reads it: the instructions and tools too', async () => {
    const ask = { id: 'call_1', name: 'email__send', arguments: { summary: 'Mail Dana the renewal terms.' } };
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let arrived!: () => void;
    const resumedCall = new Promise<void>((resolve) => (arrived = resolve));
    const first = scripted([{ toolCalls: [ask], usage: { prompt_tokens: 900, completion_tokens: 12 } }]);
    fake.handle = (request, res) => {
      if (fake.requests.length === 1) return first(request, res);
      arrived();
      void released.then(() => sendCompletion(res, 'loopback-model', 'Drafted and waiting.', { prompt_tokens: 950, completion_tokens: 5 }));
    };
    const paused = zInferenceResponse.parse(await (await invoke({ maxTokens: MAX_TOKENS })).json());
    expect(paused.waitingFor).toMatchObject({ action: 'email.send' });
    expect(await reservedNow()).toBe(0);
    expect((await session('POST', `/approvals/${paused.waitingFor!.id}/decision`, { decision: 'rejected' })).status).toBe(200);
    const claimed = await t.services.runs.claimResumption('inst_test');
    if (claimed?.kind !== 'resumed') throw new Error('the run is not resumable');
    const resumed = t.services.runs.resume(claimed.resumption);
    // (A resume that reserved too little for the call ends without making it: nothing is held then.)
    await Promise.race([resumedCall, resumed]);
    const reserved = await reservedNow();
    release();
    await resumed;
    // The next call's conversation as the pause saw it (the call that waited, not yet its result), and what the
    // resumed call was sent besides: the agent's instructions and tools.
    const conversation: ConversationMessage[] = [
      ...MESSAGES,
      { role: 'assistant', content: '', toolCalls: [{ id: ask.id, name: 'email.send', arguments: ask.arguments }] },
    ];
    const { instructions, tools } = sentInput(1);
    expect(tools!.length).toBeGreaterThan(0);
    expect(reserved).toBe((countMessageTokens(conversation) + countPreambleTokens(instructions, tools) + MAX_TOKENS) * RATE);
    expect(await reservedNow()).toBe(0);
  });

  it('refuses 429 quota_exceeded near the hard stop when the messages fit but the instructions and tools do not', async () => {
    // Room for the messages and a hundred output tokens; the instructions and the eleven tools hold far more.
    await setConsumed(HARDSTOP - (countMessageTokens(MESSAGES) + 100) * RATE);
    const res = await invoke();
    expect(res.status).toBe(429);
    expect(res.headers.get('x-should-retry')).toBe('false');
    const usage = await usageNow();
    expect(await res.json()).toEqual({
      error: 'quota_exceeded',
      message:
        "What is left of this period's quota before its hard stop does not cover this request's input (its messages, and the agent's instructions and tool definitions the model is given) and one output token; a shorter request may fit.",
      policy: usage.level,
      pctConsumed: usage.pctConsumed,
      resetAt: expect.any(String),
    });
    // No model call, no run, nothing held.
    expect(fake.requests).toHaveLength(0);
    expect(await store.db.query(`SELECT id FROM runs WHERE workspace_id = $1`, [t.workspaceId])).toEqual([]);
    expect(await reservedNow()).toBe(0);
  });

  it('caps the output near the hard stop at what is left after the instructions and tools, and charges within it', async () => {
    // A first run measures the input (nothing binds it); the second finds room for it and 40 output tokens.
    expect((await invoke()).status).toBe(200);
    const input = await countRequestTokens(sentInput(0));
    await setConsumed(HARDSTOP - (input + 40) * RATE);
    const res = await invoke();
    expect(res.status).toBe(200);
    const body = zInferenceResponse.parse(await res.json());
    expect(await countRequestTokens(sentInput(1))).toBe(input);
    expect(fake.requests[1]!.body.max_tokens).toBe(40);
    const [period] = await store.db.query<{ consumed: number; reserved: number }>(
      `SELECT consumed_stu::float8 AS consumed, reserved_stu::float8 AS reserved FROM usage_periods WHERE workspace_id = $1`,
      [t.workspaceId],
    );
    expect({ consumed: Number(period!.consumed), reserved: Number(period!.reserved) }).toEqual({
      consumed: HARDSTOP - (input + 40) * RATE + (body.usage.inputTokens + body.usage.outputTokens) * RATE,
      reserved: 0,
    });
    expect(Number(period!.consumed)).toBeLessThanOrEqual(HARDSTOP);
  });
});
