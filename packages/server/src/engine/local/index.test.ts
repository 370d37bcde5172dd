import { describe, expect, it } from 'vitest';
import { BUILT_IN_TOOLS } from '../../domain/agent-loop/built-in-tools.ts';
import type { ToolDefinition } from '../../domain/agent-loop/tool.ts';
import { DEPARTMENT_SLUGS } from '../../vocabulary/catalog.ts';
import { collect } from '../collect.ts';
import type { EngineEvent, EngineRequest } from '../engine.ts';
import { EngineError } from '../engine-error.ts';
import { countMessageTokens, countTextTokens, countToolCallTokens } from '../tokens.ts';
import { DEPARTMENT_VOICES } from './departments.ts';
import { createLocalEngine } from './index.ts';

const engine = createLocalEngine();
const BUILT_IN: readonly ToolDefinition[] = BUILT_IN_TOOLS.map((tool) => tool.definition);
const lookup = (name: string): ToolDefinition => ({ name, description: 'Looks things up.', inputSchema: { type: 'object' } });
const ask = (content: string, extra: Partial<EngineRequest> = {}): EngineRequest => ({
  alias: 'Sonata',
  agentSlug: 'orchestrator',
  messages: [{ role: 'user', content }],
  ...extra,
});

async function events(request: EngineRequest): Promise<EngineEvent[]> {
  const list: EngineEvent[] = [];
  for await (const event of engine.stream(request)) list.push(event);
  return list;
}

async function failure(request: EngineRequest, seen: EngineEvent[] = []): Promise<EngineError> {
  try {
    for await (const event of engine.stream(request)) seen.push(event);
  } catch (error) {
    if (error instanceof EngineError) return error;
    throw error;
  }
  throw new Error('the stream did not fail');
}

describe('local engine', () => {
  it('is deterministic for the same input and differs for another', async () => {
    const a = await events(ask('Plan a campaign for the spring launch'));
    expect(await events(ask('Plan a campaign for the spring launch'))).toEqual(a);
    expect(await events(ask('Plan a campaign for the autumn launch'))).not.toEqual(a);
  });

  it('streams several fragments, then usage counted by the tokenizer', async () => {
    const request = ask('What does the new VAT rule mean for our invoices?', { agentSlug: 'finance' });
    const list = await events(request);
    const texts = list.filter((e) => e.type === 'text');
    expect(texts.length).toBeGreaterThanOrEqual(5);
    expect(list.at(-1)?.type).toBe('usage');
    expect(list.filter((e) => e.type === 'usage')).toHaveLength(1);
    const result = await collect(engine.stream(request));
    expect(result.content).toBe(texts.map((e) => e.delta).join(''));
    expect(result.usage.inputTokens).toBe(countMessageTokens(request.messages));
    expect(result.toolCalls).toEqual([]);
    expect(result.usage.outputTokens).toBe(countTextTokens(result.content));
  });

  it('answers a call that is not streamed in one text piece, with the same text, events and usage', async () => {
    const request = ask('Draft an email to the client about the overdue invoices', { agentSlug: 'sales' });
    const streamed = await events(request);
    const whole = await events({ ...request, stream: false });
    expect(whole.filter((e) => e.type === 'text')).toHaveLength(1);
    expect(streamed.filter((e) => e.type === 'text').length).toBeGreaterThan(1);
    const text = (list: EngineEvent[]) => list.map((e) => (e.type === 'text' ? e.delta : '')).join('');
    expect(text(whole)).toBe(text(streamed));
    expect(whole.filter((e) => e.type !== 'text')).toEqual(streamed.filter((e) => e.type !== 'text'));
  });

  it.each(DEPARTMENT_SLUGS.map((slug) => [slug] as const))('%s answers in its own voice, or first asks for its lookup when offered', async (slug) => {
    const voice = DEPARTMENT_VOICES[slug];
    // the contract's ToolCall.name pattern
    expect(voice.tool).toMatch(/^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$/);
    const plain = await collect(engine.stream(ask('Can you help me with this?', { agentSlug: slug })));
    expect(voice.openers.some((opener) => plain.content.startsWith(opener))).toBe(true);
    expect(plain.content).toMatch(/\n1\. .+\n2\. .+\n3\. .+/);
    expect(plain.toolCalls).toEqual([]);

    const request = ask('Can you help me with this?', { agentSlug: slug, tools: [lookup(voice.tool), lookup('other.tool')] });
    const first = await collect(engine.stream(request));
    expect(first.content).toBe('');
    expect(first.toolCalls).toEqual([{ id: 'call_1_1', name: voice.tool, arguments: { query: 'Can you help me with this' } }]);
    const answer = await collect(
      engine.stream({
        ...request,
        messages: [
          ...request.messages,
          { role: 'assistant', content: '', toolCalls: first.toolCalls },
          { role: 'tool', toolCallId: 'call_1_1', name: voice.tool, content: 'Found 7 matching records.' },
        ],
      }),
    );
    expect(answer.toolCalls).toEqual([]);
    expect(voice.openers.some((opener) => answer.content.startsWith(opener))).toBe(true);
    expect(answer.content).toContain(`${voice.tool}: Found 7 matching records.`);
  });

  it('routes an orchestrator request to the department itself', async () => {
    const result = await collect(
      engine.stream(ask('Three invoices are overdue, what about our cash flow?', { tools: [lookup('ledger.search'), lookup('crm.search')] })),
    );
    expect(result.toolCalls.map((call) => call.name)).toEqual(['ledger.search']);
    const answer = await collect(engine.stream(ask('Three invoices are overdue, what about our cash flow?')));
    expect(DEPARTMENT_VOICES.finance.openers.some((o) => answer.content.startsWith(o))).toBe(true);
  });

  it('asks for draft.create and email.send, without text, then answers mentioning their results', async () => {
    const request = ask('Send an email to the new lead about our quote', { agentSlug: 'sales', tools: BUILT_IN });
    const list = await events(request);
    expect(list.map((e) => e.type)).toEqual(['tool_call', 'tool_call', 'usage']);
    expect(list[0]).toMatchObject({ type: 'tool_call', name: 'draft.create', arguments: { kind: 'email', subject: 'Following up from the Sales team' } });
    expect(list[1]).toEqual({ type: 'tool_call', id: 'call_1_2', name: 'email.send', arguments: { summary: 'Send the drafted email to its recipients.' } });
    const calls = list.flatMap((e) => (e.type === 'tool_call' ? [{ id: e.id, name: e.name, arguments: e.arguments }] : []));
    const usage = list.at(-1);
    expect(usage).toEqual({
      type: 'usage',
      inputTokens: countMessageTokens(request.messages),
      outputTokens: calls.reduce((n, c) => n + countToolCallTokens(c), 0),
    });
    const answer = await collect(
      engine.stream({
        ...request,
        messages: [
          ...request.messages,
          { role: 'assistant', content: '', toolCalls: calls },
          { role: 'tool', toolCallId: calls[0]!.id, name: 'draft.create', content: 'Draft saved.' },
          { role: 'tool', toolCallId: calls[1]!.id, name: 'email.send', content: "Waiting for a person's approval; not performed yet." },
        ],
      }),
    );
    expect(answer.toolCalls).toEqual([]);
    expect(answer.content).toContain('draft.create: Draft saved.');
    expect(answer.content).toContain("email.send: Waiting for a person's approval; not performed yet.");
  });

  it('asks for no tool on a plain question, and for none that is not offered', async () => {
    expect((await collect(engine.stream(ask('What is our churn by cohort?', { tools: BUILT_IN })))).toolCalls).toEqual([]);
    const unoffered = await collect(engine.stream(ask('Send an email to the new lead', { agentSlug: 'sales', tools: [lookup('draft.create')] })));
    expect(unoffered.toolCalls.map((call) => call.name)).toEqual(['draft.create']);
  });

  it('keeps the tool calls that fit maxTokens, and answers at once when none fits', async () => {
    const request = ask('Send an email to the new lead about our quote', { agentSlug: 'sales', tools: BUILT_IN });
    const all = await collect(engine.stream(request));
    const first = countToolCallTokens(all.toolCalls[0]!);
    const one = await collect(engine.stream({ ...request, maxTokens: first }));
    expect(one.toolCalls.map((call) => call.name)).toEqual(['draft.create']);
    expect(one.usage.outputTokens).toBe(first);
    const none = await collect(engine.stream({ ...request, maxTokens: first - 1 }));
    expect(none.toolCalls).toEqual([]);
    expect(none.content).not.toBe('');
    expect(none.usage.outputTokens).toBeLessThanOrEqual(first - 1);
  });

  it('asks for its tools first; [[fail-mid-stream]] acts on the call that answers with text', async () => {
    const request = ask('Send an email to the lead [[fail-mid-stream]]', { agentSlug: 'sales', tools: BUILT_IN });
    const first = await collect(engine.stream(request));
    expect(first.toolCalls.map((call) => call.name)).toEqual(['draft.create', 'email.send']);
    const seen: EngineEvent[] = [];
    const error = await failure(
      {
        ...request,
        messages: [
          ...request.messages,
          { role: 'assistant', content: '', toolCalls: first.toolCalls },
          ...first.toolCalls.map((call) => ({ role: 'tool' as const, toolCallId: call.id, name: call.name, content: 'ok' })),
        ],
      },
      seen,
    );
    expect(error.reason).toBe('engine_error');
    expect(seen.some((e) => e.type === 'text')).toBe(true);
  });

  it.each([1, 5, 20, 60])('honours maxTokens %i as a budget on all output', async (maxTokens) => {
    const request = ask('Send an email to the new lead about our quote', { agentSlug: 'sales' });
    const full = await collect(engine.stream(request));
    const cut = await collect(engine.stream({ ...request, maxTokens }));
    expect(cut.usage.outputTokens).toBeLessThanOrEqual(maxTokens);
    expect(cut.usage.outputTokens).toBeGreaterThan(0);
    expect(full.content.startsWith(cut.content)).toBe(true);
    expect(full.usage.outputTokens).toBeGreaterThan(maxTokens);
  });

  it('keeps everything when maxTokens is generous', async () => {
    const request = ask('Send an email to the new lead', { agentSlug: 'sales' });
    expect(await collect(engine.stream({ ...request, maxTokens: 32_000 }))).toEqual(await collect(engine.stream(request)));
  });

  it('says more with more effort', async () => {
    const tokens: number[] = [];
    for (const effort of ['low', 'medium', 'high', 'x-high', 'max'] as const) {
      tokens.push((await collect(engine.stream(ask('Review the NDA clause', { agentSlug: 'legal', effort })))).usage.outputTokens);
    }
    expect(tokens).toEqual([...tokens].sort((a, b) => a - b));
    expect(new Set(tokens).size).toBe(5);
  });

  it('answers shorter and skips the lookup in low power mode', async () => {
    const normal = await collect(engine.stream(ask('Review the NDA clause', { agentSlug: 'legal', effort: 'max' })));
    const low = await collect(engine.stream(ask('Review the NDA clause', { agentSlug: 'legal', effort: 'max', powerMode: 'low' })));
    expect(low.usage.outputTokens).toBeLessThan(normal.usage.outputTokens);
    expect(low.content.match(/^\d\. /gm)).toHaveLength(3);
    const tools = [lookup('documents.search')];
    expect((await collect(engine.stream(ask('Review the NDA clause', { agentSlug: 'legal', powerMode: 'low', tools })))).toolCalls).toEqual([]);
    expect((await collect(engine.stream(ask('Review the NDA clause', { agentSlug: 'legal', tools })))).toolCalls).toHaveLength(1);
  });

  it.each([
    ['[[fail]]', 'engine_error'],
    ['[[timeout]]', 'timeout'],
  ] as const)('%s fails with %s before any event', async (trigger, reason) => {
    const seen: EngineEvent[] = [];
    const error = await failure(ask(`Check the budget ${trigger}`), seen);
    expect(error.reason).toBe(reason);
    expect(seen).toEqual([]);
    expect(error.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
  });

  it('[[fail-mid-stream]] fails after some fragments and reports the usage so far', async () => {
    const seen: EngineEvent[] = [];
    const error = await failure(ask('Check the budget [[fail-mid-stream]]', { agentSlug: 'finance' }), seen);
    expect(error.reason).toBe('engine_error');
    const text = seen
      .filter((e) => e.type === 'text')
      .map((e) => e.delta)
      .join('');
    expect(text.length).toBeGreaterThan(0);
    expect(seen.some((e) => e.type === 'usage')).toBe(false);
    expect(text).not.toContain('[[');
    expect(error.usage.inputTokens).toBeGreaterThan(0);
    expect(error.usage.outputTokens).toBeGreaterThanOrEqual(countTextTokens(text));
  });

  it('a trigger in an earlier turn does not fail the next one', async () => {
    const result = await collect(
      engine.stream({
        ...ask(''),
        messages: [
          { role: 'user', content: '[[fail]]' },
          { role: 'assistant', content: 'Sorry.' },
          { role: 'user', content: 'Try again' },
        ],
      }),
    );
    expect(result.content.length).toBeGreaterThan(0);
  });

  it('ignores triggers when told to', async () => {
    const result = await collect(createLocalEngine({ triggers: false }).stream(ask('Check the budget [[fail]]')));
    expect(result.content).not.toContain('[[fail]]');
  });

  it('stops with aborted when the signal fires mid-stream, with the usage so far', async () => {
    const controller = new AbortController();
    const seen: EngineEvent[] = [];
    let caught: unknown;
    try {
      for await (const event of engine.stream(ask('Check the budget', { agentSlug: 'finance', signal: controller.signal }))) {
        seen.push(event);
        if (event.type === 'text') controller.abort();
      }
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(EngineError);
    expect((caught as EngineError).reason).toBe('aborted');
    expect(seen.filter((e) => e.type === 'text')).toHaveLength(1);
    expect((caught as EngineError).usage.outputTokens).toBeGreaterThan(0);
  });

  it('refuses an already aborted signal', async () => {
    const error = await failure(ask('Check the budget', { signal: AbortSignal.abort() }));
    expect(error.reason).toBe('aborted');
  });

  it('[[hang]] waits for the abort signal', async () => {
    const controller = new AbortController();
    const seen: EngineEvent[] = [];
    const pending = failure(ask('Check the budget [[hang]]', { agentSlug: 'finance', signal: controller.signal }), seen);
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => seen.some((e) => e.type === 'text') && (clearInterval(poll), resolve()), 5);
    });
    // hanging: after the first fragment nothing more comes until the abort
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen.filter((e) => e.type === 'text')).toHaveLength(1);
    controller.abort();
    expect((await pending).reason).toBe('aborted');
  });

  it('[[hang]] gives up with timeout after its limit', async () => {
    const error = await (async () => {
      try {
        for await (const _ of createLocalEngine({ hangLimitMs: 5 }).stream(ask('x [[hang]]'))) void _;
      } catch (e) {
        return e as EngineError;
      }
      throw new Error('did not fail');
    })();
    expect(error.reason).toBe('timeout');
  });

  it('stops cleanly when the caller breaks out of the loop', async () => {
    let count = 0;
    for await (const event of engine.stream(ask('Check the budget'))) {
      if (event.type === 'text' && ++count === 2) break;
    }
    expect(count).toBe(2);
  });
});
