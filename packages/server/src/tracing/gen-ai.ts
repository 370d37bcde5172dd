/**
 * @module The spans of a run, after the OpenTelemetry GenAI conventions: `invoke_agent {agent}` around a run's agent
 * loop, `chat {alias}` for each model call, `execute_tool {tool}` for each tool call. What they say of the model is
 * the alias the client asked for (`gen_ai.request.model`: `Sonata`) and the token counts the engine reported; the
 * provider (`gen_ai.provider.name`), the real model (`gen_ai.response.model`), the instructions, the messages, the
 * tool definitions, arguments and results are never recorded.
 */
import { SpanKind, type Span, type Tracer } from '@opentelemetry/api';
import { failSpan } from './index.ts';

/** A model call's span, a child of the active one (the run's `invoke_agent`); ended by `endChatSpan`. */
export function startChatSpan(tracer: Tracer, alias: string, maxTokens: number): Span {
  return tracer.startSpan(`chat ${alias}`, {
    kind: SpanKind.CLIENT,
    attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': alias, 'gen_ai.request.max_tokens': maxTokens },
  });
}

/** Ends a model call's span with the usage the engine reported (absent when it broke first) or its failure. */
export function endChatSpan(span: Span, usage: { inputTokens: number; outputTokens: number } | undefined, failure?: unknown): void {
  if (usage) span.setAttributes({ 'gen_ai.usage.input_tokens': usage.inputTokens, 'gen_ai.usage.output_tokens': usage.outputTokens });
  if (failure !== undefined) failSpan(span, failure);
  span.end();
}

/** The attributes of a run's `invoke_agent` span: the agent's slug (`finance`, `orchestrator`) and the alias. */
export function invokeAgentSpan(agentSlug: string, alias: string): { name: string; kind: SpanKind; attributes: Record<string, string> } {
  return {
    name: `invoke_agent ${agentSlug}`,
    kind: SpanKind.INTERNAL,
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': agentSlug, 'gen_ai.request.model': alias },
  };
}

/** The attributes of an `execute_tool` span; `toolName` is passed through the redactor by the caller. */
export function executeToolSpan(toolName: string): { name: string; kind: SpanKind; attributes: Record<string, string> } {
  return {
    name: `execute_tool ${toolName}`,
    kind: SpanKind.INTERNAL,
    attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': toolName, 'gen_ai.tool.type': 'function' },
  };
}
