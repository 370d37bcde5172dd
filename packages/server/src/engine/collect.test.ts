import { describe, expect, it } from 'vitest';
import { collect } from './collect.ts';
import type { EngineEvent } from './engine.ts';
import { EngineError } from './engine-error.ts';

async function* events(list: EngineEvent[], thenThrow?: Error): AsyncGenerator<EngineEvent> {
  for (const event of list) yield event;
  if (thenThrow) throw thenThrow;
}

describe('collect', () => {
  it('joins text and gathers the tool calls asked for and usage', async () => {
    const result = await collect(
      events([
        { type: 'text', delta: 'Hel' },
        { type: 'text', delta: 'lo' },
        { type: 'tool_call', id: 'c1', name: 'crm.search', arguments: { query: 'x' } },
        { type: 'tool_call', id: 'c2', name: 'email.send', arguments: {} },
        { type: 'usage', inputTokens: 3, outputTokens: 4 },
      ]),
    );
    expect(result).toEqual({
      content: 'Hello',
      toolCalls: [
        { id: 'c1', name: 'crm.search', arguments: { query: 'x' } },
        { id: 'c2', name: 'email.send', arguments: {} },
      ],
      usage: { inputTokens: 3, outputTokens: 4 },
    });
  });

  it('rethrows the engine error', async () => {
    await expect(collect(events([{ type: 'text', delta: 'a' }], new EngineError('timeout')))).rejects.toMatchObject({ reason: 'timeout' });
  });

  it('refuses a stream that ends without usage', async () => {
    await expect(collect(events([{ type: 'text', delta: 'a' }]))).rejects.toBeInstanceOf(EngineError);
  });
});
