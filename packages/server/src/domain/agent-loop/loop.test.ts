import { describe, expect, it, vi } from 'vitest';
import { createEngines, type Engine, type EngineRequest, type Engines } from '../../engine/index.ts';
import { createRedactor } from '../../redact/index.ts';
import type { ExecutionEventBody } from '../run-events/log.ts';
import { type AgentDefinitions, noConnectedTools } from './agents.ts';
import { settleWaitingCall } from './approval.ts';
import { callWaitingTool, continueAgentLoop, type LoopContext, type LoopIO, type LoopRun, runAgentLoop } from './loop.ts';
import type { LoopState } from './state.ts';

/** Every agent with plain instructions, every tool, no approval rules and the default step limit. */
const agents: AgentDefinitions = {
  async get(_workspaceId, slug) {
    return { slug, instructions: `You are the ${slug} agent.`, stepLimit: 8, tools: null, approvals: {} };
  },
};
const ctx: LoopContext = { engines: createEngines(), redactor: createRedactor(), tools: noConnectedTools, agents };
const run: LoopRun = {
  workspaceId: 'ws_1',
  answeredBy: 'sales',
  request: { alias: 'Sonata', agentSlug: 'sales', messages: [{ role: 'user', content: 'Send an email to the new lead about our quote' }] },
  reservedTokens: 20_000,
  outputCap: 4_096,
};

/** A request that asks for a draft and nothing that waits for a decision. */
const draftOnly: LoopRun = { ...run, request: { ...run.request, messages: [{ role: 'user', content: 'Draft an email to the new lead about our quote' }] } };

function io(): LoopIO & { events: ExecutionEventBody[]; text: string } {
  const sink = {
    events: [] as ExecutionEventBody[],
    text: '',
    signal: new AbortController().signal,
    stream: true,
    record(body: ExecutionEventBody) {
      sink.events.push(body);
    },
    async fragment(text: string) {
      sink.text += text;
      sink.events.push({ type: 'text.delta', delta: text });
    },
    async routed() {},
  };
  return sink;
}

describe('agent loop', () => {
  it('drives the local engine: draft.create is made, email.send stops the loop to wait for a decision, and the loop goes on once it is settled', async () => {
    const out = io();
    const { state, failure } = await runAgentLoop(ctx, run, out);
    expect(failure).toBeUndefined();
    expect(state.modelCalls).toBe(1);
    expect(state.steps.map((s) => s.kind)).toEqual(['model_call', 'draft', 'approval']);
    expect(state.steps[1]).toMatchObject({
      draft: { kind: 'email', subject: 'Following up from the Sales team' },
      toolCall: { name: 'draft.create', status: 'completed' },
    });
    expect(state.steps[2]).toMatchObject({ toolCall: { name: 'email.send', result: null, status: 'pending_approval' } });
    expect(state.waiting).toMatchObject({ action: 'email.send', summary: 'Send the drafted email to its recipients.', call: { name: 'email.send' } });
    // The pause (domain/runs/pause.ts) writes approval.requested with the approval's id; the loop only stopped.
    expect(out.events.filter((e) => e.type !== 'text.delta').map((e) => e.type)).toEqual(['tool.called', 'draft.created']);
    expect(state.done).toBe(false);

    // Saved and read back (the checkpoint is JSON), rejected: the model is told, and answers.
    const saved: LoopState = JSON.parse(JSON.stringify(state));
    const outcome = settleWaitingCall(saved, { status: 'rejected' }, (text) => text);
    expect(outcome).toEqual({ ok: false, error: 'A person rejected this action; it was not performed.' });
    expect(saved.steps[2]).toMatchObject({
      toolCall: { name: 'email.send', status: 'failed', result: 'A person rejected this action; it was not performed.' },
    });
    expect(saved.turns.at(-1)).toMatchObject({
      role: 'tool',
      name: 'email.send',
      content: 'The tool failed: A person rejected this action; it was not performed.',
    });
    const after = io();
    const resumed = await continueAgentLoop(ctx, run, after, saved);
    expect(resumed.failure).toBeUndefined();
    expect(resumed.state.done).toBe(true);
    expect(resumed.state.waiting).toBeNull();
    expect(resumed.state.modelCalls).toBe(2);
    expect(resumed.state.steps.map((s) => s.kind)).toEqual(['model_call', 'draft', 'approval', 'model_call']);
    expect(resumed.state.text).toContain('email.send');
  });

  it('an approved call is made by callWaitingTool: the tool of that name, once', async () => {
    const calls: unknown[] = [];
    const mail = {
      definition: { name: 'email.send', description: 'Send an email.', inputSchema: { type: 'object' } },
      readOnly: false,
      integrationId: 'int_1',
      async call(args: Readonly<Record<string, unknown>>) {
        calls.push(args);
        return { ok: true as const, content: 'Sent to 1 recipient.' };
      },
    };
    const withMail = { ...ctx, tools: { toolsOf: async () => [mail] } };
    const out = io();
    const { state } = await runAgentLoop(withMail, run, out);
    expect(state.waiting?.call.name).toBe('email.send');
    expect(calls).toEqual([]);
    const outcome = await callWaitingTool(withMail, run, out, state);
    expect(outcome).toEqual({ ok: true, content: 'Sent to 1 recipient.' });
    expect(calls).toHaveLength(1);
    settleWaitingCall(state, { status: 'approved', outcome }, (text) => text);
    expect(state.steps[2]).toMatchObject({ toolCall: { name: 'email.send', status: 'completed', result: 'Sent to 1 recipient.' } });
    const resumed = await continueAgentLoop(withMail, run, out, state);
    expect(resumed.state.done).toBe(true);
    expect(calls).toHaveLength(1);
  });

  it('keeps its state a plain object, and goes on from one saved between two steps as it would have', async () => {
    const whole = await runAgentLoop(ctx, draftOnly, io());
    expect(JSON.parse(JSON.stringify(whole.state))).toEqual(whole.state);
    // The state right after the first model call (its tool calls pending), saved and read back.
    const asked = whole.state.turns[0]!;
    if (!('toolCalls' in asked)) throw new Error('the first turn asks for tools');
    const saved: LoopState = JSON.parse(
      JSON.stringify({
        turns: [asked],
        steps: [whole.state.steps[0]!],
        modelCalls: 1,
        text: '',
        billed: { inputTokens: 17, outputTokens: 100 },
        reported: { inputTokens: 17, outputTokens: 100 },
        pending: [...asked.toolCalls],
        cut: false,
        done: false,
        waiting: null,
      } satisfies LoopState),
    );
    const out = io();
    const resumed = await continueAgentLoop(ctx, draftOnly, out, saved);
    expect(resumed.failure).toBeUndefined();
    expect(resumed.state.turns).toEqual(whole.state.turns);
    expect(resumed.state.steps).toEqual(whole.state.steps);
    expect(resumed.state.text).toBe(whole.state.text);
    expect(resumed.state.modelCalls).toBe(2);
    // The second call's usage is added to what the saved state had spent.
    expect(resumed.state.billed.inputTokens).toBeGreaterThan(17);
    expect(resumed.state.billed.outputTokens).toBeGreaterThan(100);
    expect(out.events.map((e) => e.type).filter((t) => t !== 'text.delta')).toEqual(['tool.called', 'draft.created']);
  });

  it('stops at once when the run is aborted while a tool runs, with the abort as its failure', async () => {
    const controller = new AbortController();
    const tool = {
      definition: { name: 'crm.search', description: 'd', inputSchema: { type: 'object' } },
      readOnly: true,
      integrationId: 'int_1',
      call: () => {
        controller.abort();
        return new Promise<never>(() => {});
      },
    };
    const out = { ...io(), signal: controller.signal };
    const { state, failure } = await runAgentLoop({ ...ctx, tools: { toolsOf: async () => [tool] } }, run, out);
    expect(failure).toMatchObject({ name: 'EngineError', reason: 'aborted' });
    expect(state.done).toBe(true);
    expect(state.modelCalls).toBe(1);
  });

  it('tells how long each model call and each tool call took (what X-Service-Overhead-Ms leaves out), and nothing else', async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      // The model takes 100 ms a call, the tool 250 ms; the loop's own work between them takes no time here.
      const { engines } = scriptedEngines({
        sales: [
          { calls: [{ id: 'call_1', name: 'crm.search', arguments: { q: 'Dana' } }], usage: { inputTokens: 10, outputTokens: 5 } },
          { text: 'Dana is a lead.', usage: { inputTokens: 20, outputTokens: 5 } },
        ],
      });
      const scripted = engines.Sonata;
      const slow: Engine = {
        ...scripted,
        async *stream(request) {
          vi.advanceTimersByTime(100);
          yield* scripted.stream(request);
        },
      };
      const timed: Engines = { Prelude: slow, Sonata: slow, Symphony: slow, Concerto: slow };
      const tool = {
        definition: { name: 'crm.search', description: 'd', inputSchema: { type: 'object' } },
        readOnly: true,
        integrationId: 'int_1',
        async call() {
          vi.advanceTimersByTime(250);
          return { ok: true as const, content: 'Dana Whitfield, lead.' };
        },
      };
      const waits: number[] = [];
      const out = Object.assign(io(), { waited: (ms: number) => void waits.push(ms) });
      const { failure } = await runAgentLoop({ ...ctx, engines: timed, tools: { toolsOf: async () => [tool] } }, run, out);
      expect(failure).toBeUndefined();
      expect(out.text).toBe('Dana is a lead.');
      expect(waits).toEqual([100, 250, 100]);
    } finally {
      vi.useRealTimers();
    }
  });
});

/** A request the scripted model answers: its text, the calls it asks for, its usage. */
interface Scripted {
  text?: string;
  calls?: { id: string; name: string; arguments: Record<string, unknown> }[];
  usage: { inputTokens: number; outputTokens: number };
}

/** An engine that delegates (a real model's kind), answering each request with the next answer scripted for its agent. */
function scriptedEngines(script: Record<string, Scripted[]>): { engines: Engines; requests: EngineRequest[] } {
  const requests: EngineRequest[] = [];
  const engine: Engine = {
    delegates: true,
    async *stream(request) {
      requests.push(request);
      const next = script[request.agentSlug]?.shift();
      if (!next) throw new Error(`nothing scripted for ${request.agentSlug}`);
      if (next.text) yield { type: 'text', delta: next.text };
      for (const call of next.calls ?? []) yield { type: 'tool_call', ...call };
      yield { type: 'usage', ...next.usage };
    },
  };
  return { engines: { Prelude: engine, Sonata: engine, Symphony: engine, Concerto: engine }, requests };
}

describe('agent loop: the orchestrator delegates', () => {
  const orchestrated: LoopRun = {
    ...run,
    answeredBy: 'orchestrator',
    request: { alias: 'Symphony', agentSlug: 'orchestrator', messages: [{ role: 'user', content: 'How much do we owe Northwind, and may we pay late?' }] },
    departments: ['finance', 'legal', 'customer-care'],
  };
  const ledger = {
    definition: { name: 'ledger.search', description: 'Search the ledger.', inputSchema: { type: 'object' } },
    readOnly: true,
    integrationId: 'int_1',
    async call() {
      return { ok: true as const, content: 'Northwind: 2 invoices open, 4,200 EUR.' };
    },
  };
  const names = (request: EngineRequest) => (request.tools ?? []).map((tool) => tool.name);

  it('offers the departments as handoff tools; a handoff runs as the department (its instructions, its tools) in the same run, its answer fed back; usage summed', async () => {
    const { engines, requests } = scriptedEngines({
      orchestrator: [
        { calls: [{ id: 'h1', name: 'handoff.finance', arguments: { request: 'What do we owe Northwind?' } }], usage: { inputTokens: 100, outputTokens: 10 } },
        { calls: [{ id: 'h2', name: 'handoff.legal', arguments: { request: 'May we pay Northwind late?' } }], usage: { inputTokens: 150, outputTokens: 12 } },
        { text: 'We owe Northwind 4,200 EUR; paying late breaks clause 7.', usage: { inputTokens: 200, outputTokens: 20 } },
      ],
      finance: [
        { calls: [{ id: 'c1', name: 'ledger.search', arguments: { query: 'Northwind' } }], usage: { inputTokens: 80, outputTokens: 8 } },
        { text: 'We owe 4,200 EUR on 2 invoices.', usage: { inputTokens: 90, outputTokens: 9 } },
      ],
      legal: [{ text: 'Late payment breaks clause 7.', usage: { inputTokens: 70, outputTokens: 7 } }],
    });
    const out = io();
    const { state, failure } = await runAgentLoop({ ...ctx, engines, tools: { toolsOf: async () => [ledger] } }, orchestrated, out);
    expect(failure).toBeUndefined();
    expect(requests.map((r) => r.agentSlug)).toEqual(['orchestrator', 'finance', 'finance', 'orchestrator', 'legal', 'orchestrator']);
    // The orchestrator: its instructions, its tools and one handoff tool per department it may reach.
    expect(requests[0]!.instructions).toBe('You are the orchestrator agent.');
    expect(names(requests[0]!)).toEqual(expect.arrayContaining(['handoff.finance', 'handoff.legal', 'handoff.customer_care', 'ledger.search']));
    expect(names(requests[0]!).filter((name) => name.startsWith('handoff.'))).toHaveLength(3);
    // The department: its own instructions and tools (no handoff), the conversation then what it is asked.
    expect(requests[1]!.instructions).toBe('You are the finance agent.');
    expect(names(requests[1]!)).toContain('ledger.search');
    expect(names(requests[1]!).some((name) => name.startsWith('handoff.'))).toBe(false);
    expect(requests[1]!.messages.at(-1)).toEqual({ role: 'user', content: 'What do we owe Northwind?' });
    // Its answer is the handoff's result the orchestrator reads.
    expect(requests[3]!.messages.at(-1)).toEqual({ role: 'tool', toolCallId: 'h1', name: 'handoff.finance', content: 'We owe 4,200 EUR on 2 invoices.' });
    expect(requests[5]!.messages.at(-1)).toEqual({ role: 'tool', toolCallId: 'h2', name: 'handoff.legal', content: 'Late payment breaks clause 7.' });
    // The answer is the orchestrator's; the departments' text went to it, not to the caller.
    expect(state.text).toBe('We owe Northwind 4,200 EUR; paying late breaks clause 7.');
    expect(out.text).toBe(state.text);
    expect(state.consulted).toEqual(['finance', 'legal']);
    expect(state.steps.map((s) => [s.kind, s.agentSlug])).toEqual([
      ['model_call', 'orchestrator'],
      ['routing', 'orchestrator'],
      ['model_call', 'finance'],
      ['tool_call', 'finance'],
      ['model_call', 'finance'],
      ['model_call', 'orchestrator'],
      ['routing', 'orchestrator'],
      ['model_call', 'legal'],
      ['model_call', 'orchestrator'],
    ]);
    expect(state.steps[1]!.summary).toBe('Handed a part of the request to Finance.');
    // One run: every call's usage summed, one step count.
    expect(state.modelCalls).toBe(6);
    expect(state.billed).toEqual({ inputTokens: 690, outputTokens: 66 });
    expect(state.reported).toEqual(state.billed);
  });

  it('shares the reservation with the departments: each call of a part gets what the earlier ones left', async () => {
    const { engines, requests } = scriptedEngines({
      orchestrator: [
        { calls: [{ id: 'h1', name: 'handoff.finance', arguments: { request: 'Check.' } }], usage: { inputTokens: 50, outputTokens: 1_000 } },
        { text: 'Done.', usage: { inputTokens: 60, outputTokens: 5 } },
      ],
      finance: [{ text: 'Checked.', usage: { inputTokens: 40, outputTokens: 3 } }],
    });
    const { state } = await runAgentLoop({ ...ctx, engines }, { ...orchestrated, outputCap: 2_000 }, io());
    expect(requests.map((r) => r.maxTokens)).toEqual([2_000, 1_000, 997]);
    expect(state.billed).toEqual({ inputTokens: 150, outputTokens: 1_008 });
  });

  it('a call needing approval inside a part pauses the run as the department, and the part goes on from the saved state', async () => {
    const { engines, requests } = scriptedEngines({
      orchestrator: [
        { calls: [{ id: 'h1', name: 'handoff.finance', arguments: { request: 'Pay Northwind.' } }], usage: { inputTokens: 10, outputTokens: 1 } },
        { text: 'Finance did not pay: a person rejected it.', usage: { inputTokens: 10, outputTokens: 1 } },
      ],
      finance: [
        { calls: [{ id: 'p1', name: 'payment.initiate', arguments: { summary: 'Pay Northwind 4,200 EUR.' } }], usage: { inputTokens: 10, outputTokens: 1 } },
        { text: 'The payment was rejected.', usage: { inputTokens: 10, outputTokens: 1 } },
      ],
    });
    const loop = { ...ctx, engines };
    const { state } = await runAgentLoop(loop, orchestrated, io());
    expect(state.waiting).toMatchObject({ action: 'payment.initiate', agentSlug: 'finance', call: { id: 'p1' } });
    expect(state.steps.at(-1)).toMatchObject({ kind: 'approval', agentSlug: 'finance' });
    const saved: LoopState = JSON.parse(JSON.stringify(state));
    settleWaitingCall(saved, { status: 'rejected' }, (text) => text);
    // The result goes to the department's turns, not the orchestrator's.
    expect(saved.part?.turns.at(-1)).toMatchObject({ role: 'tool', toolCallId: 'p1' });
    expect(saved.turns.at(-1)).toMatchObject({ role: 'assistant' });
    const out = io();
    const resumed = await continueAgentLoop(loop, orchestrated, out, saved);
    expect(resumed.failure).toBeUndefined();
    expect(requests.map((r) => r.agentSlug)).toEqual(['orchestrator', 'finance', 'finance', 'orchestrator']);
    expect(requests[2]!.instructions).toBe('You are the finance agent.');
    expect(resumed.state.text).toBe('Finance did not pay: a person rejected it.');
    expect(resumed.state.consulted).toEqual(['finance']);
  });

  it('falls back to the keyword router when the model chooses no department: its answer is set aside and that department answers', async () => {
    const { engines, requests } = scriptedEngines({
      orchestrator: [{ text: 'I can answer that myself.', usage: { inputTokens: 30, outputTokens: 6 } }],
      legal: [{ text: 'Clause 7 sets a 30-day term.', usage: { inputTokens: 40, outputTokens: 8 } }],
    });
    const run = { ...orchestrated, request: { ...orchestrated.request, messages: [{ role: 'user' as const, content: 'Review the NDA clause' }] } };
    const out = io();
    const { state, failure } = await runAgentLoop({ ...ctx, engines }, run, out);
    expect(failure).toBeUndefined();
    expect(requests.map((r) => r.agentSlug)).toEqual(['orchestrator', 'legal']);
    expect(requests[1]!.messages).toEqual(run.request.messages);
    expect(state.text).toBe('Clause 7 sets a 30-day term.');
    expect(out.text).toBe(state.text);
    expect(state.consulted).toEqual(['legal']);
    expect(state.steps.map((s) => s.kind)).toEqual(['model_call', 'routing', 'model_call']);
    expect(state.steps[1]!.summary).toMatch(/^The model chose no department\. Routed to Legal: the request mentions /);
    expect(state.billed).toEqual({ inputTokens: 70, outputTokens: 14 });
  });

  it('counts the departments’ calls in the step limit: a part keeps one call for the orchestrator, a handoff with no room is refused', async () => {
    const limited = (orchestratorLimit: number): AgentDefinitions => ({
      async get(_workspaceId, slug) {
        return { slug, instructions: `You are the ${slug} agent.`, stepLimit: slug === 'orchestrator' ? orchestratorLimit : 8, tools: null, approvals: {} };
      },
    });
    const handOff = { calls: [{ id: 'h1', name: 'handoff.finance', arguments: { request: 'Check.' } }], usage: { inputTokens: 10, outputTokens: 1 } };
    // Three calls: the part gets one, offered no tools; the orchestrator answers with the last.
    const three = scriptedEngines({
      orchestrator: [handOff, { text: 'Checked by Finance.', usage: { inputTokens: 10, outputTokens: 1 } }],
      finance: [{ text: 'Checked.', usage: { inputTokens: 10, outputTokens: 1 } }],
    });
    const a = await runAgentLoop({ ...ctx, engines: three.engines, agents: limited(3) }, orchestrated, io());
    expect(three.requests.map((r) => [r.agentSlug, r.tools?.length ?? 0])).toEqual([
      ['orchestrator', 12],
      ['finance', 0],
      ['orchestrator', 0],
    ]);
    expect(a.state).toMatchObject({ modelCalls: 3, text: 'Checked by Finance.', consulted: ['finance'] });
    // Two calls: no room for a part and the answer after it; the model is told, and its answer stands (no fallback).
    const two = scriptedEngines({ orchestrator: [handOff, { text: 'Finance could not be asked.', usage: { inputTokens: 10, outputTokens: 1 } }] });
    const b = await runAgentLoop({ ...ctx, engines: two.engines, agents: limited(2) }, orchestrated, io());
    expect(two.requests.map((r) => r.agentSlug)).toEqual(['orchestrator', 'orchestrator']);
    expect(two.requests[1]!.messages.at(-1)).toMatchObject({ role: 'tool', content: 'The tool failed: The run has no model calls left to consult Finance.' });
    expect(b.state.text).toBe('Finance could not be asked.');
    expect(b.state.consulted).toBeUndefined();
  });

  it('offers no handoff to a run without departments (an agent addressed directly answers alone)', async () => {
    const { engines, requests } = scriptedEngines({ finance: [{ text: 'Hello.', usage: { inputTokens: 5, outputTokens: 1 } }] });
    const { state } = await runAgentLoop({ ...ctx, engines }, { ...orchestrated, answeredBy: 'finance', departments: undefined }, io());
    expect(names(requests[0]!).some((name) => name.startsWith('handoff.'))).toBe(false);
    expect(state.text).toBe('Hello.');
    expect(state.consulted).toBeUndefined();
  });
});
