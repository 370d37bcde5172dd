/**
 * @module Collects one model call's stream into one result: its text, the tool calls it asks for, its usage.
 */
import type { EngineEvent, TokenUsage, ToolCallRequest } from './engine.ts';
import { EngineError } from './engine-error.ts';

interface EngineResult {
  readonly content: string;
  readonly toolCalls: readonly ToolCallRequest[];
  readonly usage: TokenUsage;
}

/** Drains the stream. Throws what the stream throws (an EngineError), and if it ends without usage. */
export async function collect(events: AsyncIterable<EngineEvent>): Promise<EngineResult> {
  let content = '';
  const toolCalls: ToolCallRequest[] = [];
  let usage: TokenUsage | undefined;
  for await (const event of events) {
    switch (event.type) {
      case 'text':
        content += event.delta;
        break;
      case 'tool_call':
        toolCalls.push({ id: event.id, name: event.name, arguments: event.arguments });
        break;
      case 'usage':
        usage = { inputTokens: event.inputTokens, outputTokens: event.outputTokens };
        break;
    }
  }
  // A stream that stops without its usage event broke upstream; never treat it as a complete answer.
  if (!usage) throw new EngineError('engine_error');
  return { content, toolCalls, usage };
}
