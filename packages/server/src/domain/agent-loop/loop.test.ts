import { describe, expect, it } from 'vitest';
import { createEngines } from '../../engine/index.ts';
import { createRedactor } from '../../redact/index.ts';
import type { ExecutionEventBody } from '../run-events/log.ts';
import { type AgentDefinitions, noConnectedTools } from './agents.ts';
import { AWAITING_APPROVAL } from './approval.ts';
import { continueAgentLoop, type LoopContext, type LoopIO, type LoopRun, runAgentLoop } from './loop.ts';
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
  it('drives the local engine: draft.create and email.send asked for, recorded, answered, with the events clients saw before', async () => {
    const out = io();
    const { state, failure } = await runAgentLoop(ctx, run, out);
    expect(failure).toBeUndefined();
    expect(state.modelCalls).toBe(2);
    expect(state.steps.map((s) => s.kind)).toEqual(['model_call', 'draft', 'approval', 'model_call']);
    expect(state.steps[1]).toMatchObject({
      draft: { kind: 'email', subject: 'Following up from the Sales team' },
      toolCall: { name: 'draft.create', status: 'completed' },
    });
    expect(state.steps[2]).toMatchObject({
      approval: { action: 'email.send', summary: 'Send the drafted email to its recipients.' },
      toolCall: { name: 'email.send', result: null, status: 'pending_approval' },
    });
    expect(out.events.filter((e) => e.type !== 'text.delta').map((e) => e.type)).toEqual(['tool.called', 'draft.created', 'approval.requested']);
    expect(out.text).toBe(state.text);
    expect(state.text).toContain(`email.send: ${AWAITING_APPROVAL}`);
    expect(state.billed).toEqual(state.reported);
  });

  it('keeps its state a plain object, and goes on from one saved between two steps as it would have', async () => {
    const whole = await runAgentLoop(ctx, run, io());
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
      } satisfies LoopState),
    );
    const out = io();
    const resumed = await continueAgentLoop(ctx, run, out, saved);
    expect(resumed.failure).toBeUndefined();
    expect(resumed.state.turns).toEqual(whole.state.turns);
    expect(resumed.state.steps).toEqual(whole.state.steps);
    expect(resumed.state.text).toBe(whole.state.text);
    expect(resumed.state.modelCalls).toBe(2);
    // The second call's usage is added to what the saved state had spent.
    expect(resumed.state.billed.inputTokens).toBeGreaterThan(17);
    expect(resumed.state.billed.outputTokens).toBeGreaterThan(100);
    expect(out.events.map((e) => e.type).filter((t) => t !== 'text.delta')).toEqual(['tool.called', 'draft.created', 'approval.requested']);
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
