/**
 * The agent loop over real HTTP, against a loopback Chat Completions server scripted to ask for
 * tool calls (streamed and not): what reaches the model (instructions, tool definitions, results),
 * what is recorded (steps, tool calls, run events), what is billed over many steps (the reservation,
 * the per-run kill switch, the shared output cap), what is redacted, and the step limit. On PGlite
 * and (with DATABASE_URL) on PostgreSQL.
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { zInferenceResponse, zRunDetail, zRunEvent, zUsage } from '../../../../../generated/zod.ts';
import { KILL_SWITCH_LIMITS, type KillSwitchLimits } from '../usage/index.ts';
import { countMessageTokens, countRequestTokens, createEngines, type ModelInput } from '../../engine/index.ts';
import { scripted, startFakeChatServer, type FakeChatServer, type ScriptedAnswer } from '@service/testing/fake-chat-server';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { parseSseWithIds } from '@service/testing/sse';
import type { AgentDefinitions } from './agents.ts';
import type { AgentDefinition, AgentTool, ToolOutcome } from './tool.ts';

const MODEL = 'loopback-model';
/** A Stripe live key: the redactor's fixed rules remove it. */
const SECRET = `sk_live_${'a1B2c3D4e5F6g7H8i9J0k1L2'}`;
const MESSAGES = [{ role: 'user' as const, content: 'How much do we owe Northwind?' }];
const INSTRUCTIONS = 'You are the Finance agent. Look things up before answering.';
/** Symphony's STU per token. */
const RATE = 10;

/** A connected tool (as an integration provides it) that records its calls and answers `answer`. */
function connectedTool(name: string, answer: (args: Readonly<Record<string, unknown>>) => ToolOutcome, readOnly = true): AgentTool & { calls: unknown[] } {
  const calls: unknown[] = [];
  return {
    calls,
    definition: { name, description: `The ${name} tool.`, inputSchema: { type: 'object', properties: { query: { type: 'string' } } } },
    readOnly,
    integrationId: 'int_test',
    async call(args) {
      calls.push(args);
      return answer(args);
    },
  };
}

const toolCall = (id: string, name: string, args: Record<string, unknown>) => ({ id, name, arguments: args });

/** A point a scripted answer waits at: `reached` once the request arrived, answered once `release` is called. */
function gate() {
  let reach = () => {};
  let release = () => {};
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  return { reach, reached, release, released };
}

describe.each(testBackends())('the agent loop on $name', { timeout: 120_000 }, ({ open }) => {
  let store: TestStore;
  let fake: FakeChatServer;
  let t: TestApp;
  let server: ServerType;
  let base: string;
  let key: string;

  beforeEach(async () => {
    store = await open();
    fake = await startFakeChatServer();
  });
  afterEach(async () => {
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    await fake.stop();
    await t?.close();
    await store.cleanup();
  });

  async function start(
    options: { tools?: AgentTool[]; agent?: Partial<AgentDefinition>; limits?: KillSwitchLimits; toolTimeoutMs?: number; agents?: AgentDefinitions } = {},
  ): Promise<void> {
    const engines = createEngines({
      aliases: { Prelude: 'local', Sonata: 'local', Symphony: 'openai-compatible', Concerto: 'local' },
      openaiCompatible: { baseURL: fake.baseURL, apiKey: 'sk-test', models: { Symphony: MODEL } },
    });
    const agents: AgentDefinitions = options.agents ?? {
      async get(_workspaceId, slug) {
        return { slug, instructions: INSTRUCTIONS, stepLimit: 8, tools: null, approvals: {}, ...options.agent };
      },
    };
    const tools = options.tools ?? [];
    t = await createTestApp({
      db: store.db,
      deps: {
        engines,
        agents,
        tools: { toolsOf: async () => tools },
        killSwitchLimits: options.limits ?? KILL_SWITCH_LIMITS,
        ...(options.toolTimeoutMs ? { toolTimeoutMs: options.toolTimeoutMs } : {}),
      },
    });
    key = await t.keyWith('orchestrator:invoke', 'usage:read', 'tenant:read');
    server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  const invoke = (body: Record<string, unknown> = {}) =>
    fetch(`${base}/v1/inference`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ alias: 'Symphony', agentSlug: 'finance', messages: MESSAGES, ...body }),
    });
  const get = async (path: string) => (await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } })).json();
  const detailOf = async (runId: string) => zRunDetail.parse(await get(`/v1/runs/${runId}`));
  const eventsOf = async (runId: string) => {
    const res = await fetch(`${base}/v1/runs/${runId}/events`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    return parseSseWithIds(await res.text()).map((e) => zRunEvent.parse(e.data));
  };
  /**
   * What the model was sent in request `index`, read back from the wire as the loop's input (the system message as the
   * instructions, the tools under their names): its plain messages only (no tool turns).
   */
  const sentInput = (index: number): ModelInput => {
    const body = fake.requests[index]!.body as {
      messages: { role: 'system' | 'user' | 'assistant'; content: string }[];
      tools?: { function: { name: string; description: string; parameters: Record<string, unknown> } }[];
    };
    const [system, ...messages] = body.messages;
    return {
      instructions: system!.content,
      tools: (body.tools ?? []).map(({ function: f }) => ({ name: f.name.replace('__', '.'), description: f.description, inputSchema: f.parameters })),
      messages: messages.map((m) => ({ role: m.role as 'user' | 'assistant', content: m.content })),
    };
  };
  const toolMessages = (index: number) =>
    (fake.requests[index]!.body.messages as { role: string; content: string; tool_call_id?: string }[]).filter((m) => m.role === 'tool');

  it.each([false, true])('gives the model the instructions and the tools, feeds a result back, and records the steps (streamed: %s)', async (stream) => {
    const ledger = connectedTool('ledger.search', () => ({ ok: true, content: 'Northwind: 2 invoices open, 4,200 EUR.' }));
    await start({ tools: [ledger] });
    fake.handle = scripted([
      { toolCalls: [{ id: 'call_1', name: 'ledger__search', arguments: { query: 'Northwind' } }], usage: { prompt_tokens: 400, completion_tokens: 12 } },
      { content: 'We owe Northwind 4,200 EUR on 2 invoices.', usage: { prompt_tokens: 430, completion_tokens: 11 } },
    ]);
    const res = await invoke({ stream });
    expect(res.status).toBe(200);
    let runId: string;
    let content: string;
    if (stream) {
      const sse = parseSseWithIds(await res.text());
      expect(sse.at(-1)?.event).toBe('end');
      content = sse
        .filter((e) => e.event !== 'end')
        .map((e) => (e.data as { delta: string }).delta)
        .join('');
      runId = (sse.at(-1)!.data as { runId: string }).runId;
    } else {
      const body = zInferenceResponse.parse(await res.json());
      expect(body.usage).toEqual({ inputTokens: 830, outputTokens: 23 });
      ({ runId, content } = body);
    }
    expect(content).toBe('We owe Northwind 4,200 EUR on 2 invoices.');

    // The first call: the instructions first, the built-in tools and the connected one, names mapped.
    expect(fake.requests).toHaveLength(2);
    const first = fake.requests[0]!.body as { messages: { role: string; content: string }[]; tools: { function: { name: string } }[]; stream?: boolean };
    expect(first.stream ?? false).toBe(stream);
    expect(first.messages).toEqual([{ role: 'system', content: INSTRUCTIONS }, ...MESSAGES]);
    expect(first.tools.map((tool) => tool.function.name)).toEqual([
      'draft__create',
      'email__send',
      'crm__update',
      'calendar__create',
      'payment__initiate',
      'content__publish',
      'contract__sign',
      'access__grant',
      'record__delete',
      'ledger__search',
    ]);
    // The tool was called once with the model's arguments; its result went back with the call's id.
    expect(ledger.calls).toEqual([{ query: 'Northwind' }]);
    expect(toolMessages(1)).toEqual([{ role: 'tool', tool_call_id: 'call_1', content: 'Northwind: 2 invoices open, 4,200 EUR.' }]);

    const detail = await detailOf(runId);
    expect(detail.run).toMatchObject({ status: 'completed', content, usage: { inputTokens: 830, outputTokens: 23, stu: 853 * RATE } });
    expect(detail.steps.map((s) => [s.index, s.kind, s.summary])).toEqual([
      [0, 'model_call', 'Symphony asked for ledger.search as Finance.'],
      [1, 'tool_call', 'Called ledger.search.'],
      [2, 'model_call', 'Symphony answered as Finance.'],
    ]);
    expect(detail.toolCalls).toEqual([
      expect.objectContaining({
        stepIndex: 1,
        name: 'ledger.search',
        arguments: { query: 'Northwind' },
        result: 'Northwind: 2 invoices open, 4,200 EUR.',
        status: 'completed',
      }),
    ]);
    const log = await eventsOf(runId);
    expect(log.filter((e) => e.type === 'tool.called')).toEqual([expect.objectContaining({ name: 'ledger.search', summary: 'Called ledger.search.' })]);
    expect(
      log
        .filter((e) => e.type === 'text.delta')
        .map((e) => (e.type === 'text.delta' ? e.delta : ''))
        .join(''),
    ).toBe(content);
  });

  it('redacts a tool’s result and a tool’s error before the model, the records and the log see them', async () => {
    const leaky = connectedTool('crm.search', () => ({ ok: true, content: `Found it. Key ${SECRET}, served by ${MODEL}.` }));
    const broken = connectedTool('ledger.search', () => ({ ok: false, error: `upstream ${MODEL} refused key ${SECRET}` }));
    await start({ tools: [leaky, broken] });
    fake.handle = scripted([
      {
        toolCalls: [toolCall('c1', 'crm__search', { query: 'a' }), toolCall('c2', 'ledger__search', { query: 'b' })],
        usage: { prompt_tokens: 50, completion_tokens: 10 },
      },
      { content: 'Done.', usage: { prompt_tokens: 60, completion_tokens: 2 } },
    ]);
    const { runId } = zInferenceResponse.parse(await (await invoke()).json());
    const fedBack = toolMessages(1);
    expect(fedBack.map((m) => m.tool_call_id)).toEqual(['c1', 'c2']);
    expect(fedBack[0]!.content).toMatch(/^Found it\. Key \[redacted\], served by \[redacted\]\.$/);
    expect(fedBack[1]!.content).toMatch(/^The tool failed: upstream \[redacted\] refused key \[redacted\]$/);
    const detail = await detailOf(runId);
    expect(detail.toolCalls.map((c) => [c.name, c.status])).toEqual([
      ['crm.search', 'completed'],
      ['ledger.search', 'failed'],
    ]);
    const stored = JSON.stringify([detail, await eventsOf(runId)]);
    expect(stored).not.toContain(SECRET);
    expect(stored).not.toContain(MODEL);
    expect(detail.toolCalls[1]!.result).toBe('upstream [redacted] refused key [redacted]');
  });

  it('tells the model of an unknown tool and of a tool that does not answer in time', async () => {
    const slow = connectedTool('crm.search', () => ({ ok: true, content: 'never' }));
    slow.call = (_args, { signal }) =>
      new Promise((resolve) => signal.addEventListener('abort', () => setTimeout(() => resolve({ ok: true, content: 'late' }), 50)));
    await start({ tools: [slow], toolTimeoutMs: 20 });
    fake.handle = scripted([
      { toolCalls: [toolCall('c1', 'nothing__here', {}), toolCall('c2', 'crm__search', { query: 'x' })], usage: { prompt_tokens: 50, completion_tokens: 10 } },
      { content: 'Sorry.', usage: { prompt_tokens: 60, completion_tokens: 2 } },
    ]);
    const { runId } = zInferenceResponse.parse(await (await invoke()).json());
    expect(toolMessages(1).map((m) => m.content)).toEqual([
      'The tool failed: No tool named nothing__here is available.',
      'The tool failed: The tool did not answer in time.',
    ]);
    const detail = await detailOf(runId);
    expect(detail.run.status).toBe('completed');
    expect(detail.toolCalls.map((c) => [c.name, c.status, c.result])).toEqual([['crm.search', 'failed', 'The tool did not answer in time.']]);
  });

  it('stops at the step limit: the last call it allows is offered no tools, and the run completes', async () => {
    const ledger = connectedTool('ledger.search', () => ({ ok: true, content: 'more data' }));
    await start({ tools: [ledger], agent: { stepLimit: 3 } });
    // A model that always wants one more lookup.
    fake.handle = scripted([
      { content: 'Looking.', toolCalls: [toolCall('c', 'ledger__search', { query: 'q' })], usage: { prompt_tokens: 40, completion_tokens: 8 } },
    ]);
    const body = zInferenceResponse.parse(await (await invoke()).json());
    expect(fake.requests).toHaveLength(3);
    expect(fake.requests.map((r) => (r.body.tools as unknown[] | undefined)?.length ?? 0)).toEqual([10, 10, 0]);
    expect(ledger.calls).toHaveLength(2);
    // Each step's text follows the one before, a blank line apart.
    expect(body.content).toBe('Looking.\n\nLooking.\n\nLooking.');
    const detail = await detailOf(body.runId);
    expect(detail.run.status).toBe('completed');
    expect(detail.steps.map((s) => s.kind)).toEqual(['model_call', 'tool_call', 'model_call', 'tool_call', 'model_call']);
    expect(detail.run.usage).toEqual({ inputTokens: 120, outputTokens: 24, stu: 144 * RATE });
  });

  it('bills a 10-step loop exactly, up to the per-run kill switch and not one token more', async () => {
    const ledger = connectedTool('ledger.search', () => ({ ok: true, content: 'ok' }));
    // The per-run limit holds 2,000 tokens at Symphony's rate: the reservation is shrunk to it.
    const limits = { ...KILL_SWITCH_LIMITS, run: 2_000 * RATE };
    await start({ tools: [ledger], agent: { stepLimit: 10 }, limits });
    const steps: ScriptedAnswer[] = Array.from({ length: 9 }, (_, i) => ({
      toolCalls: [toolCall(`c${i}`, 'ledger__search', { query: String(i) })],
      usage: { prompt_tokens: 60 + i, completion_tokens: 20 },
    }));
    const spentBefore = steps.reduce((n, s) => n + s.usage!.prompt_tokens + s.usage!.completion_tokens, 0);
    // The tenth answer takes exactly what is left of the reservation.
    steps.push({ content: 'Here it is.', usage: { prompt_tokens: 2_000 - spentBefore - 5, completion_tokens: 5 } });
    fake.handle = scripted(steps);
    const body = zInferenceResponse.parse(await (await invoke()).json());
    expect(fake.requests).toHaveLength(10);
    // Each call may produce at most what the earlier ones left of the output cap (and of the reservation). The
    // reservation counted the first call's whole input: its instructions and tool definitions too.
    const outputCap = 2_000 - (await countRequestTokens(sentInput(0)));
    expect(fake.requests[0]!.body.max_tokens).toBe(outputCap);
    expect(fake.requests.map((req, i) => (req.body.max_tokens as number) <= outputCap - 20 * i)).toEqual(Array(10).fill(true));
    const inputs = steps.reduce((n, s) => n + s.usage!.prompt_tokens, 0);
    expect(body.usage).toEqual({ inputTokens: inputs, outputTokens: 185 });
    const detail = await detailOf(body.runId);
    expect(detail.run).toMatchObject({ status: 'completed', usage: { inputTokens: inputs, outputTokens: 185, stu: 2_000 * RATE } });
    expect(detail.steps.filter((s) => s.kind === 'model_call')).toHaveLength(10);
    expect(detail.toolCalls).toHaveLength(9);
    // The period was charged exactly that, and nothing stays reserved.
    const usage = zUsage.parse(await get('/v1/usage'));
    expect(usage.consumedStu).toBe(2_000 * RATE);
  });

  it('stops a loop about to cross the per-run kill switch: kill_switch:run, billed within the reservation', async () => {
    const ledger = connectedTool('ledger.search', () => ({ ok: true, content: 'ok' }));
    const limits = { ...KILL_SWITCH_LIMITS, run: 2_000 * RATE };
    await start({ tools: [ledger], agent: { stepLimit: 10 }, limits });
    fake.handle = scripted([{ toolCalls: [toolCall('c', 'ledger__search', { query: 'q' })], usage: { prompt_tokens: 300, completion_tokens: 50 } }]);
    const res = await invoke();
    expect(res.status).toBe(429);
    expect(await res.json()).toMatchObject({ error: 'kill_switch', kind: 'run' });
    // 350 tokens a step: the sixth call would not fit in what the first five left.
    expect(fake.requests.length).toBeLessThan(10);
    const runs = (await get('/v1/runs')) as { data: { id: string }[] };
    const detail = await detailOf(runs.data[0]!.id);
    expect(detail.run.status).toBe('failed');
    expect(detail.run.failureReason).toBe('kill_switch:run');
    expect(detail.run.usage.stu).toBeLessThanOrEqual(2_000 * RATE);
    expect(zUsage.parse(await get('/v1/usage')).consumedStu).toBe(detail.run.usage.stu);
  });

  it('reserves the instructions and the tool definitions: a request whose messages fit the per-run limit but not with them fails kill_switch:run before any model call', async () => {
    const ledger = connectedTool('ledger.search', () => ({ ok: true, content: 'ok' }));
    // The messages and 50 output tokens fit the per-run limit; the agent's instructions and its ten tools do not.
    const limits = { ...KILL_SWITCH_LIMITS, run: (countMessageTokens(MESSAGES) + 50) * RATE };
    await start({ tools: [ledger], limits });
    fake.handle = scripted([{ content: 'Never asked.', usage: { prompt_tokens: 700, completion_tokens: 3 } }]);
    const res = await invoke();
    expect(res.status).toBe(429);
    expect(await res.json()).toMatchObject({ error: 'kill_switch', kind: 'run' });
    // Refused as any run whose input does not fit its limit: failed at once, no model call, nothing billed or held.
    expect(fake.requests).toHaveLength(0);
    const runs = (await get('/v1/runs')) as { data: { id: string }[] };
    const detail = await detailOf(runs.data[0]!.id);
    expect(detail.run).toMatchObject({ status: 'failed', failureReason: 'kill_switch:run', usage: { inputTokens: 0, outputTokens: 0, stu: 0 } });
    expect(zUsage.parse(await get('/v1/usage')).consumedStu).toBe(0);
  });

  it('caps the first call at what the per-run limit leaves after its whole input: the messages, the instructions and the tools', async () => {
    const ledger = connectedTool('ledger.search', () => ({ ok: true, content: 'ok' }));
    await start({ tools: [ledger], limits: { ...KILL_SWITCH_LIMITS, run: 1_500 * RATE } });
    fake.handle = scripted([{ content: 'Short.', usage: { prompt_tokens: 600, completion_tokens: 2 } }]);
    const res = await invoke();
    expect(res.status).toBe(200);
    // What the model was sent, counted as the reservation counted it: exactly what the limit left for the output.
    const input = await countRequestTokens(sentInput(0));
    expect(input).toBeGreaterThan(countMessageTokens(MESSAGES) + 600);
    expect(fake.requests[0]!.body.max_tokens).toBe(1_500 - input);
  });

  it('shares the output cap across steps: a later answer is cut at what the earlier ones left', async () => {
    const ledger = connectedTool('ledger.search', () => ({ ok: true, content: 'ok' }));
    await start({ tools: [ledger] });
    const flood = 'The quarterly numbers look strong across every region we track. '.repeat(50);
    fake.handle = scripted([
      { toolCalls: [toolCall('c', 'ledger__search', { query: 'q' })], usage: { prompt_tokens: 10, completion_tokens: 25 } },
      { content: flood, usage: { prompt_tokens: 60, completion_tokens: 600 } },
    ]);
    const body = zInferenceResponse.parse(await (await invoke({ maxTokens: 200 })).json());
    // The second call's conversation, as the loop counts it before the call.
    const second = countMessageTokens([
      ...MESSAGES,
      { role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'ledger.search', arguments: { query: 'q' } }] },
      { role: 'tool', toolCallId: 'c', name: 'ledger.search', content: 'ok' },
    ]);
    const left = Math.min(200 - 25, countMessageTokens(MESSAGES) + 200 - 10 - 25 - second);
    expect(fake.requests.map((r) => r.body.max_tokens)).toEqual([200, left]);
    expect(body.usage.outputTokens).toBe(25 + left);
    expect(body.usage.outputTokens).toBeLessThanOrEqual(200);
    expect(flood.startsWith(body.content)).toBe(true);
    expect(body.content.length).toBeLessThan(flood.length);
    expect((await detailOf(body.runId)).run.status).toBe('completed');
  });

  describe('the orchestrator delegates', () => {
    /** Each agent's own instructions, so each model call shows whose it is. */
    const ownInstructions: AgentDefinitions = {
      async get(_workspaceId, slug) {
        return { slug, instructions: `You are the ${slug} agent.`, stepLimit: 8, tools: null, approvals: {} };
      },
    };
    const systemOf = (index: number) => (fake.requests[index]!.body.messages as { role: string; content: string }[])[0]!.content;
    const handoffsOf = (index: number) =>
      (fake.requests[index]!.body.tools as { function: { name: string } }[]).map((tool) => tool.function.name).filter((name) => name.startsWith('handoff__'));
    const invokeWith = (apiKey: string, body: Record<string, unknown>) =>
      fetch(`${base}/v1/inference`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ alias: 'Symphony', messages: MESSAGES, ...body }),
      });

    it.each([false, true])(
      'on a real model: handoff tools for the departments, each part as the department in the same run, routedTo the last that answered, one bill (streamed: %s)',
      async (stream) => {
        await start({ agents: ownInstructions });
        fake.handle = scripted([
          { toolCalls: [toolCall('h1', 'handoff__finance', { request: 'What do we owe Northwind?' })], usage: { prompt_tokens: 100, completion_tokens: 10 } },
          { content: 'We owe 4,200 EUR.', usage: { prompt_tokens: 80, completion_tokens: 6 } },
          { toolCalls: [toolCall('h2', 'handoff__legal', { request: 'May we pay late?' })], usage: { prompt_tokens: 120, completion_tokens: 10 } },
          { content: 'Not without breaking clause 7.', usage: { prompt_tokens: 70, completion_tokens: 7 } },
          { content: 'We owe Northwind 4,200 EUR, due on time (clause 7).', usage: { prompt_tokens: 150, completion_tokens: 14 } },
        ]);
        const res = await invokeWith(key, { stream });
        expect(res.status).toBe(200);
        const answer = 'We owe Northwind 4,200 EUR, due on time (clause 7).';
        let runId: string;
        if (stream) {
          // The caller's stream carries the orchestrator's answer only: the departments' text went to it.
          const sse = parseSseWithIds(await res.text());
          expect(sse.at(-1)?.event).toBe('end');
          const deltas = sse.filter((e) => e.event !== 'end').map((e) => (e.data as { delta: string }).delta);
          expect(deltas.join('')).toBe(answer);
          runId = (sse.at(-1)!.data as { runId: string }).runId;
        } else {
          const body = zInferenceResponse.parse(await res.json());
          expect(body).toMatchObject({ agentSlug: 'legal', content: answer });
          expect(body.usage).toEqual({ inputTokens: 520, outputTokens: 47 });
          runId = body.runId;
        }
        expect(fake.requests.map((_, i) => systemOf(i))).toEqual([
          'You are the orchestrator agent.',
          'You are the finance agent.',
          'You are the orchestrator agent.',
          'You are the legal agent.',
          'You are the orchestrator agent.',
        ]);
        expect(handoffsOf(0)).toContain('handoff__finance');
        expect(handoffsOf(1)).toEqual([]);
        expect(toolMessages(2)).toEqual([{ role: 'tool', tool_call_id: 'h1', content: 'We owe 4,200 EUR.' }]);
        const detail = await detailOf(runId);
        expect(detail.run).toMatchObject({
          status: 'completed',
          agentSlug: 'orchestrator',
          routedTo: 'legal',
          content: answer,
          usage: { inputTokens: 520, outputTokens: 47, stu: 567 * RATE },
        });
        expect(detail.steps.map((s) => [s.kind, s.agentSlug, s.summary])).toEqual([
          ['model_call', 'orchestrator', 'Symphony asked for handoff.finance as Orchestrator.'],
          ['routing', 'orchestrator', 'Handed a part of the request to Finance.'],
          ['model_call', 'finance', 'Symphony answered as Finance.'],
          ['model_call', 'orchestrator', 'Symphony asked for handoff.legal as Orchestrator.'],
          ['routing', 'orchestrator', 'Handed a part of the request to Legal.'],
          ['model_call', 'legal', 'Symphony answered as Legal.'],
          ['model_call', 'orchestrator', 'Symphony answered as Orchestrator.'],
        ]);
        // The runs list finds it under the department that answered, and its log (read once it ended) names it.
        const listed = (await get(`/v1/runs?agent_slug=legal`)) as { data: { id: string }[] };
        expect(listed.data.map((run) => run.id)).toEqual([runId]);
        const log = await eventsOf(runId);
        expect(log.find((e) => e.type === 'run.routed')).toMatchObject({ agentSlug: 'legal' });
        expect(log.filter((e) => e.type === 'tool.called').map((e) => (e.type === 'tool.called' ? e.name : ''))).toEqual(['handoff.finance', 'handoff.legal']);
      },
    );

    it('says which department it handed a part to while that part runs: GET /v1/runs/{id} and the list, before the run ends', async () => {
      await start({ agents: ownInstructions });
      const answers = scripted([
        { toolCalls: [toolCall('h1', 'handoff__finance', { request: 'What do we owe Northwind?' })], usage: { prompt_tokens: 100, completion_tokens: 10 } },
        { content: 'We owe 4,200 EUR.', usage: { prompt_tokens: 80, completion_tokens: 6 } },
        { content: 'We owe Northwind 4,200 EUR.', usage: { prompt_tokens: 150, completion_tokens: 9 } },
      ]);
      // The model holds its first two answers (the orchestrator's choice, then Finance's step) until the test reads the run.
      const held = [gate(), gate()];
      // (A failed assertion must not leave the model holding an answer: the server would wait for it to close.)
      onTestFinished(() => {
        for (const hold of held) hold.release();
      });
      fake.handle = (request, res) => {
        const hold = held[fake.requests.length - 1];
        if (!hold) return answers(request, res);
        hold.reach();
        void hold.released.then(() => answers(request, res));
      };
      const running = invokeWith(key, {});
      const inProgress = async () => {
        const page = (await get('/v1/runs?status=in_progress')) as { data: { id: string; routedTo: string | null }[] };
        expect(page.data).toHaveLength(1);
        return { listed: page.data[0]!, detail: await detailOf(page.data[0]!.id) };
      };

      await held[0]!.reached;
      const choosing = await inProgress();
      expect(choosing.listed.routedTo).toBeNull();
      expect(choosing.detail.run).toMatchObject({ status: 'in_progress', agentSlug: 'orchestrator', routedTo: null });
      // Someone follows the run's events from before the handoff (as its page does).
      const following = await fetch(`${base}/v1/runs/${choosing.listed.id}/events`, { headers: { authorization: `Bearer ${key}` } });
      expect(following.status).toBe(200);
      expect(following.headers.get('content-type')).toMatch(/^text\/event-stream/);
      held[0]!.release();

      await held[1]!.reached;
      const delegated = await inProgress();
      expect(systemOf(1)).toBe('You are the finance agent.');
      expect(delegated.listed.routedTo).toBe('finance');
      expect(delegated.detail.run).toMatchObject({ status: 'in_progress', agentSlug: 'orchestrator', routedTo: 'finance' });
      expect(((await get('/v1/runs?agent_slug=finance')) as { data: { id: string }[] }).data.map((run) => run.id)).toEqual([delegated.listed.id]);
      held[1]!.release();

      const res = await running;
      expect(res.status).toBe(200);
      const body = zInferenceResponse.parse(await res.json());
      expect(body).toMatchObject({ runId: delegated.listed.id, agentSlug: 'finance', content: 'We owe Northwind 4,200 EUR.' });
      expect((await detailOf(body.runId)).run).toMatchObject({ status: 'completed', routedTo: 'finance' });
      // The follower heard the handoff as it happened; the stored log says the same after the head read from the record.
      const routing = (events: ReturnType<typeof zRunEvent.parse>[]) =>
        events.flatMap((e) => (e.type === 'run.routed' ? [[e.type, e.agentSlug]] : e.type === 'tool.called' ? [[e.type, e.name]] : []));
      const live = parseSseWithIds(await following.text()).map((e) => zRunEvent.parse(e.data));
      expect(routing(live)).toEqual([
        ['run.routed', 'orchestrator'],
        ['tool.called', 'handoff.finance'],
        ['run.routed', 'finance'],
      ]);
      expect(live.at(-1)?.type).toBe('run.completed');
      expect(routing(await eventsOf(body.runId))).toEqual([
        ['run.routed', 'finance'],
        ['tool.called', 'handoff.finance'],
        ['run.routed', 'finance'],
      ]);
    });

    it('counts a department’s instructions and tools before its part’s call: it may cost only what is left after them', async () => {
      const limits = { ...KILL_SWITCH_LIMITS, run: 4_000 * RATE };
      await start({ agents: ownInstructions, limits });
      // The orchestrator's call reports its whole input (as a model does): the part's call has what it left.
      const first = { prompt: 0, completion: 10 };
      fake.handle = async (request, res) => {
        if (fake.requests.length === 1) first.prompt = await countRequestTokens(sentInput(0));
        const answers = [
          {
            toolCalls: [toolCall('h1', 'handoff__finance', { request: 'What do we owe Northwind?' })],
            usage: { prompt_tokens: first.prompt, completion_tokens: first.completion },
          },
          { content: 'We owe 4,200 EUR.', usage: { prompt_tokens: 50, completion_tokens: 6 } },
          { content: 'We owe Northwind 4,200 EUR.', usage: { prompt_tokens: 60, completion_tokens: 8 } },
        ];
        scripted([answers[Math.min(fake.requests.length - 1, 2)]!])(request, res);
      };
      const res = await invokeWith(key, {});
      expect(res.status).toBe(200);
      expect(fake.requests.map((_, i) => systemOf(i))).toEqual([
        'You are the orchestrator agent.',
        'You are the finance agent.',
        'You are the orchestrator agent.',
      ]);
      // Reserved: the orchestrator's first call (its instructions, its tools and handoffs, the messages) and the rest
      // of the per-run limit as the output cap. The part's call: what is left after its own instructions and tools.
      const outputCap = 4_000 - first.prompt;
      const part = await countRequestTokens(sentInput(1));
      expect(sentInput(1).tools!.length).toBeGreaterThan(0);
      const left = 4_000 - first.prompt - first.completion - part;
      expect(left).toBeLessThan(outputCap - first.completion);
      expect(fake.requests[1]!.body.max_tokens).toBe(left);
    });

    it('does not make a department’s call whose instructions and tools do not fit in what is left: the run stops at its limit', async () => {
      // A department whose instructions are long (an admin may write 20,000 characters).
      const long = `You are the finance agent. ${'Check every ledger line twice before answering. '.repeat(400)}`;
      const agents: AgentDefinitions = {
        async get(workspaceId, slug) {
          const own = await ownInstructions.get(workspaceId, slug);
          return slug === 'finance' ? { ...own, instructions: long } : own;
        },
      };
      const limits = { ...KILL_SWITCH_LIMITS, run: 3_000 * RATE };
      await start({ agents, limits });
      fake.handle = scripted([
        { toolCalls: [toolCall('h1', 'handoff__finance', { request: 'What do we owe Northwind?' })], usage: { prompt_tokens: 100, completion_tokens: 10 } },
        { content: 'We owe 4,200 EUR.', usage: { prompt_tokens: 50, completion_tokens: 6 } },
      ]);
      const res = await invokeWith(key, {});
      // The part's call would cross the per-run limit: not made; the run stops as an answer cut at its cap does.
      expect(res.status).toBe(429);
      expect(await res.json()).toMatchObject({ error: 'kill_switch', kind: 'run' });
      expect(fake.requests).toHaveLength(1);
      const runs = (await get('/v1/runs')) as { data: { id: string }[] };
      const detail = await detailOf(runs.data[0]!.id);
      expect(detail.run).toMatchObject({ status: 'failed', failureReason: 'kill_switch:run', usage: { inputTokens: 100, outputTokens: 10, stu: 110 * RATE } });
      expect(zUsage.parse(await get('/v1/usage')).consumedStu).toBe(110 * RATE);
    });

    it('a key bound to one agent cannot reach another through the orchestrator', async () => {
      await start({ agents: ownInstructions });
      const bound = await t.keyWith('orchestrator:invoke:agent:orchestrator', 'orchestrator:invoke:agent:finance');
      fake.handle = scripted([
        // The model asks for a department the key does not reach: it is not offered, and not reached.
        { toolCalls: [toolCall('h1', 'handoff__legal', { request: 'Review the NDA.' })], usage: { prompt_tokens: 100, completion_tokens: 10 } },
        { content: 'I can only reach Finance.', usage: { prompt_tokens: 110, completion_tokens: 6 } },
        { content: 'Finance has no NDA to review.', usage: { prompt_tokens: 90, completion_tokens: 6 } },
      ]);
      const res = await invokeWith(bound, { messages: [{ role: 'user', content: 'Review the NDA clause' }] });
      expect(res.status).toBe(200);
      const body = zInferenceResponse.parse(await res.json());
      expect(handoffsOf(0)).toEqual(['handoff__finance']);
      expect(toolMessages(1)).toEqual([{ role: 'tool', tool_call_id: 'h1', content: 'The tool failed: No tool named handoff__legal is available.' }]);
      // It then answered without choosing: the keyword router's choice among what the key reaches answers instead.
      expect(fake.requests.map((_, i) => systemOf(i))).toEqual([
        'You are the orchestrator agent.',
        'You are the orchestrator agent.',
        'You are the finance agent.',
      ]);
      expect(body).toMatchObject({ agentSlug: 'finance', content: 'Finance has no NDA to review.' });
      const detail = await detailOf(body.runId);
      expect(detail.steps.some((s) => s.agentSlug === 'legal')).toBe(false);
      expect(detail.steps.map((s) => [s.kind, s.agentSlug, s.summary])).toEqual([
        // (A name the model made up is recorded as it came.)
        ['model_call', 'orchestrator', 'Symphony asked for handoff__legal as Orchestrator.'],
        ['model_call', 'orchestrator', 'Symphony answered as Orchestrator.'],
        ['routing', 'orchestrator', 'The model chose no department. No department matched the request; routed to Finance, the default.'],
        ['model_call', 'finance', 'Symphony answered as Finance.'],
      ]);
      expect(detail.run).toMatchObject({ routedTo: 'finance', content: 'Finance has no NDA to review.' });

      // The local engine's keyword router keeps to the same departments: a legal request goes to Finance, the one it may reach.
      const local = await invokeWith(bound, { alias: 'Sonata', messages: [{ role: 'user', content: 'Review the NDA clause' }] });
      expect(local.status).toBe(200);
      const answered = zInferenceResponse.parse(await local.json());
      expect(answered.agentSlug).toBe('finance');
      expect((await detailOf(answered.runId)).run).toMatchObject({ agentSlug: 'orchestrator', routedTo: 'finance' });
      // A key bound to the orchestrator alone reaches no department: the orchestrator answers itself.
      const alone = await t.keyWith('orchestrator:invoke:agent:orchestrator');
      const itself = zInferenceResponse.parse(
        await (await invokeWith(alone, { alias: 'Sonata', messages: [{ role: 'user', content: 'Review the NDA clause' }] })).json(),
      );
      expect(itself.agentSlug).toBe('orchestrator');
      expect((await detailOf(itself.runId)).steps[0]).toMatchObject({
        kind: 'routing',
        summary: 'No department is available; the orchestrator answered itself.',
      });
    });

    it('a department’s call that needs approval pauses the run as the department; the decision resumes inside its part', async () => {
      await start({ agents: ownInstructions });
      fake.handle = scripted([
        { toolCalls: [toolCall('h1', 'handoff__finance', { request: 'Pay Northwind.' })], usage: { prompt_tokens: 100, completion_tokens: 10 } },
        { toolCalls: [toolCall('p1', 'payment__initiate', { summary: 'Pay Northwind 4,200 EUR.' })], usage: { prompt_tokens: 80, completion_tokens: 6 } },
        { content: 'The payment was rejected.', usage: { prompt_tokens: 90, completion_tokens: 5 } },
        { content: 'Finance did not pay Northwind: a person rejected it.', usage: { prompt_tokens: 130, completion_tokens: 11 } },
      ]);
      const res = await invokeWith(key, {});
      expect(res.status).toBe(200);
      const body = (await res.json()) as { runId: string; agentSlug: string; waitingFor?: { id: string; action: string } };
      expect(body.waitingFor).toMatchObject({ action: 'payment.initiate' });
      const approvals = await t.db.query<{ agent_slug: string; action: string }>(`SELECT agent_slug, action FROM approvals WHERE run_id = $1`, [body.runId]);
      expect(approvals).toEqual([{ agent_slug: 'finance', action: 'payment.initiate' }]);
      // It waits inside Finance's part: the run says so, and the runs list finds it under Finance.
      const waiting = await detailOf(body.runId);
      expect(waiting.run).toMatchObject({ status: 'in_progress', routedTo: 'finance' });
      expect(waiting.steps.at(-1)).toMatchObject({ kind: 'approval', agentSlug: 'finance' });
      const listed = (await get(`/v1/runs?agent_slug=finance`)) as { data: { id: string; routedTo: string | null }[] };
      expect(listed.data).toMatchObject([{ id: body.runId, routedTo: 'finance' }]);

      // Rejected: the resumed run goes on inside Finance's part, then back to the orchestrator.
      const admin = await t.login();
      const decided = await t.app.request(`/approvals/${body.waitingFor!.id}/decision`, {
        method: 'POST',
        headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrfToken, 'content-type': 'application/json' },
        body: JSON.stringify({ decision: 'rejected' }),
      });
      expect(decided.status).toBe(200);
      const claimed = await t.services.runs.claimResumption('inst_test');
      if (claimed?.kind !== 'resumed') throw new Error('the run is not resumable');
      await t.services.runs.resume(claimed.resumption);
      expect(fake.requests.map((_, i) => systemOf(i))).toEqual([
        'You are the orchestrator agent.',
        'You are the finance agent.',
        'You are the finance agent.',
        'You are the orchestrator agent.',
      ]);
      expect(toolMessages(2)).toEqual([{ role: 'tool', tool_call_id: 'p1', content: 'The tool failed: A person rejected this action; it was not performed.' }]);
      expect(toolMessages(3)).toEqual([{ role: 'tool', tool_call_id: 'h1', content: 'The payment was rejected.' }]);
      const done = await detailOf(body.runId);
      expect(done.run).toMatchObject({
        status: 'completed',
        routedTo: 'finance',
        content: 'Finance did not pay Northwind: a person rejected it.',
        usage: { inputTokens: 400, outputTokens: 32, stu: 432 * RATE },
      });
      expect(done.steps.map((s) => [s.kind, s.agentSlug])).toEqual([
        ['model_call', 'orchestrator'],
        ['routing', 'orchestrator'],
        ['model_call', 'finance'],
        ['approval', 'finance'],
        ['model_call', 'finance'],
        ['model_call', 'orchestrator'],
      ]);
    });
  });
});
