/**
 * @module Collects an engine stream into one result, for synchronous invocations.
 */
import type { EngineEvent, TokenUsage } from './engine.ts';
import { EngineError } from './engine-error.ts';

type Of<T extends EngineEvent['type']> = Omit<Extract<EngineEvent, { type: T }>, 'type'>;

interface EngineResult {
  readonly content: string;
  readonly toolCalls: readonly Of<'tool_call'>[];
  readonly drafts: readonly Of<'draft'>[];
  readonly approvals: readonly Of<'approval_request'>[];
  readonly usage: TokenUsage;
}

/** Drains the stream. Throws what the stream throws (an EngineError), and if it ends without usage. */
export async function collect(events: AsyncIterable<EngineEvent>): Promise<EngineResult> {
  let content = '';
  const toolCalls: Of<'tool_call'>[] = [];
  const drafts: Of<'draft'>[] = [];
  const approvals: Of<'approval_request'>[] = [];
  let usage: TokenUsage | undefined;
  for await (const event of events) {
    switch (event.type) {
      case 'text':
        content += event.delta;
        break;
      case 'tool_call':
        toolCalls.push({ name: event.name, arguments: event.arguments, result: event.result });
        break;
      case 'draft':
        drafts.push({ kind: event.kind, subject: event.subject, body: event.body });
        break;
      case 'approval_request':
        approvals.push({ action: event.action, summary: event.summary });
        break;
      case 'usage':
        usage = { inputTokens: event.inputTokens, outputTokens: event.outputTokens };
        break;
    }
  }
  // A stream that stops without its usage event broke upstream; never treat it as a complete answer.
  if (!usage) throw new EngineError('engine_error');
  return { content, toolCalls, drafts, approvals, usage };
}
