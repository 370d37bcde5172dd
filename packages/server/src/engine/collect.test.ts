import { describe, expect, it } from 'vitest';
import { collect } from './collect.ts';
import type { EngineEvent } from './engine.ts';
import { EngineError } from './engine-error.ts';

async function* events(list: EngineEvent[], thenThrow?: Error): AsyncGenerator<EngineEvent> {
  for (const event of list) yield event;
  if (thenThrow) throw thenThrow;
}

describe('collect', () => {
  it('joins text and gathers structured events and usage', async () => {
    const result = await collect(
      events([
        { type: 'tool_call', name: 'crm.search', arguments: { query: 'x' }, result: 'found' },
        { type: 'text', delta: 'Hel' },
        { type: 'text', delta: 'lo' },
        { type: 'draft', kind: 'email', subject: 's', body: 'b' },
        { type: 'approval_request', action: 'email.send', summary: 'Send it.' },
        { type: 'usage', inputTokens: 3, outputTokens: 4 },
      ]),
    );
    expect(result).toEqual({
      content: 'Hello',
      toolCalls: [{ name: 'crm.search', arguments: { query: 'x' }, result: 'found' }],
      drafts: [{ kind: 'email', subject: 's', body: 'b' }],
      approvals: [{ action: 'email.send', summary: 'Send it.' }],
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
