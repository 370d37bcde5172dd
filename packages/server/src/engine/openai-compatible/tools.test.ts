import { describe, expect, it } from 'vitest';
import { useFakeChatServer } from '@service/testing/fake-chat-fixture';
import { scripted } from '@service/testing/fake-chat-server';
import type { ToolDefinition } from '../../domain/agent-loop/tool.ts';
import { collect } from '../collect.ts';
import type { EngineRequest } from '../engine.ts';
import { countPreambleTokens } from '../model-input.ts';
import { countMessageTokens, countTextTokens, countToolCallTokens } from '../tokens.ts';
import { createOpenAICompatibleEngine } from './index.ts';
import { toolNames } from './tool-names.ts';

const fake = useFakeChatServer();

const engine = () => createOpenAICompatibleEngine({ baseURL: fake().baseURL, apiKey: 'test-key', models: { Sonata: 'fake-model-medium' } });

const TOOLS: ToolDefinition[] = [
  { name: 'crm.search', description: 'Searches the CRM.', inputSchema: { type: 'object', properties: { query: { type: 'string' } } } },
  { name: 'email.send', description: 'Sends an email.', inputSchema: { type: 'object', properties: { summary: { type: 'string' } } } },
];

const request = (extra: Partial<EngineRequest> = {}): EngineRequest => ({
  alias: 'Sonata',
  agentSlug: 'sales',
  instructions: 'You are the Sales agent.',
  tools: TOOLS,
  messages: [{ role: 'user', content: 'Find Dana and mail her.' }],
  ...extra,
});

describe('openai-compatible engine with tools', () => {
  it('sends the instructions first, the tools as function tools, and an earlier turn’s tool calls and results', async () => {
    fake().handle = scripted([{ content: 'Done.', usage: { prompt_tokens: 50, completion_tokens: 2 } }]);
    await collect(
      engine().stream(
        request({
          stream: false,
          messages: [
            { role: 'user', content: 'Find Dana and mail her.' },
            { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'crm.search', arguments: { query: 'Dana' } }] },
            { role: 'tool', toolCallId: 'call_1', name: 'crm.search', content: 'Dana Whitfield, Northwind.' },
          ],
        }),
      ),
    );
    const body = fake().requests[0]!.body;
    expect(body.messages).toEqual([
      { role: 'system', content: 'You are the Sales agent.' },
      { role: 'user', content: 'Find Dana and mail her.' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'crm__search', arguments: '{"query":"Dana"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'Dana Whitfield, Northwind.' },
    ]);
    expect(body.tools).toEqual([
      { type: 'function', function: { name: 'crm__search', description: 'Searches the CRM.', parameters: TOOLS[0]!.inputSchema } },
      { type: 'function', function: { name: 'email__send', description: 'Sends an email.', parameters: TOOLS[1]!.inputSchema } },
    ]);
  });

  it('sends neither a system message nor tools when the request has none', async () => {
    fake().handle = scripted([{ content: 'Hi.' }]);
    await collect(engine().stream(request({ instructions: undefined, tools: [], stream: false })));
    expect(fake().requests[0]!.body.messages).toEqual([{ role: 'user', content: 'Find Dana and mail her.' }]);
    expect(fake().requests[0]!.body).not.toHaveProperty('tools');
  });

  it.each([false, true])('reads the tool calls of an answer (streamed: %s), names mapped back, after its text', async (stream) => {
    fake().handle = scripted([
      {
        content: 'Let me look. ',
        toolCalls: [
          { id: 'call_a', name: 'crm__search', arguments: { query: 'Dana' } },
          { id: 'call_b', name: 'email__send', arguments: { summary: 'Mail Dana the renewal terms.' } },
        ],
        usage: { prompt_tokens: 70, completion_tokens: 30 },
      },
    ]);
    const events = [];
    for await (const event of engine().stream(request({ stream }))) events.push(event);
    expect(events.filter((e) => e.type !== 'text')).toEqual([
      { type: 'tool_call', id: 'call_a', name: 'crm.search', arguments: { query: 'Dana' } },
      { type: 'tool_call', id: 'call_b', name: 'email.send', arguments: { summary: 'Mail Dana the renewal terms.' } },
      { type: 'usage', inputTokens: 70, outputTokens: 30 },
    ]);
    expect(events.map((e) => (e.type === 'text' ? e.delta : '')).join('')).toBe('Let me look. ');
    expect(fake().requests[0]!.body.stream ?? false).toBe(stream);
  });

  it('counts tool calls and the preamble when the server reports no usage, and reads broken arguments as {}', async () => {
    fake().handle = scripted([{ toolCalls: [{ id: 'call_x', name: 'crm__search', arguments: '{"query": "Da' }] }]);
    const result = await collect(engine().stream(request({ stream: false })));
    expect(result.toolCalls).toEqual([{ id: 'call_x', name: 'crm.search', arguments: {} }]);
    expect(result.usage).toEqual({
      inputTokens: countMessageTokens(request().messages) + countPreambleTokens('You are the Sales agent.', TOOLS),
      outputTokens: countTextTokens('') + countToolCallTokens({ name: 'crm.search', arguments: {} }),
    });
  });
});

describe('tool names on the wire', () => {
  it('maps every name into ^[a-zA-Z0-9_-]{1,64}$ and back, distinct names staying distinct', () => {
    const names = ['crm.search', 'crm__search', 'a.b.c', `long.${'x'.repeat(80)}`, `long.${'x'.repeat(81)}`, 'weird.na me!'];
    const map = toolNames(names.map((name) => ({ name })));
    const wire = names.map((name) => map.toWire(name));
    for (const w of wire) expect(w).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(new Set(wire).size).toBe(names.length);
    expect(wire.map((w) => map.fromWire(w))).toEqual(names);
    expect(map.fromWire('unknown_tool')).toBe('unknown_tool');
  });
});
