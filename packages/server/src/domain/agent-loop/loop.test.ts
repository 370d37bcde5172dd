import { describe, expect, it } from 'vitest';
import { createEngines } from '../../engine/index.ts';
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
});
