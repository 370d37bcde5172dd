/**
 * @module What one model call reads, and its tokens: the agent's instructions, the definitions of the tools it is
 * offered, and the conversation. The agent loop builds every request from a `ModelInput` (domain/agent-loop/loop.ts),
 * and the same input is what the reservation counts before the first call (domain/runs/start.ts) and what each later
 * call is checked against: the count and the request are made from one value, so they cannot drift.
 *
 * An engine reads either the whole input (a real model: `Engine.reads` absent or `request`) or only the conversation
 * (the local engine, which is told the instructions and tools but reports the conversation alone): an input is
 * counted as its engine bills it ({@link countModelInputTokens}).
 *
 * The instructions and the tool definitions change only when an admin edits the agent or an integration's tools
 * refresh, so their counts are kept: a definition's by the object (the tool sources hand out the same definition
 * until it changes), the instructions' in a memo of their own that the conversations' texts never push out. A request
 * counts them once; the conversation is counted as tokens.ts counts it.
 */
import type { ToolDefinition } from '../domain/agent-loop/tool.ts';
import { createTextMemo } from '../memo.ts';
import type { Engine, EngineRequest } from './engine.ts';
import { countMessageTokensAsync, countTextTokens, countTextTokensAsync, createPace, type Pace, TOKENS_PER_MESSAGE } from './tokens.ts';

/** What a model call reads: the instructions (a system message first), the tools offered, the conversation. */
export type ModelInput = Pick<EngineRequest, 'instructions' | 'tools' | 'messages'>;

/** Tokens of a tool definition: its name, description and JSON Schema, by the definition object. */
const TOOL_COUNTS = new WeakMap<ToolDefinition, number>();
/** Tokens of instructions as a system message (at most 20,000 characters each): agents × workspaces, kept apart. */
const INSTRUCTION_COUNTS = createTextMemo<number>({ maxEntries: 2_000, maxChars: 8_000_000 });

/**
 * Input tokens of a model call as `engine` reads it: the instructions, the tool definitions and the conversation,
 * or the conversation alone for an engine that reads only that (the local engine).
 */
export function countModelInputTokens(engine: Pick<Engine, 'reads'>, input: ModelInput, pace: Pace = createPace()): Promise<number> {
  return engine.reads === 'conversation' ? countMessageTokensAsync(input.messages, pace) : countRequestTokens(input, pace);
}

/** Input tokens of the whole input (what a real model reads): the preamble, kept, plus the conversation. */
export async function countRequestTokens(input: ModelInput, pace: Pace = createPace()): Promise<number> {
  return (await countPreambleTokensAsync(input, pace)) + (await countMessageTokensAsync(input.messages, pace));
}

/** Input tokens of what a model call carries besides the conversation: the instructions and the tool definitions. */
export function countPreambleTokens(instructions: string | undefined, tools: readonly ToolDefinition[] | undefined): number {
  let total = 0;
  if (instructions) total += INSTRUCTION_COUNTS.get(instructions, (text) => systemMessage(countTextTokens(text)));
  for (const tool of tools ?? []) total += toolTokens(tool);
  return total;
}

/** {@link countPreambleTokens}, pausing for the event loop while instructions not counted before are counted. */
async function countPreambleTokensAsync(input: Pick<ModelInput, 'instructions' | 'tools'>, pace: Pace): Promise<number> {
  const { instructions } = input;
  if (instructions && INSTRUCTION_COUNTS.peek(instructions) === undefined)
    INSTRUCTION_COUNTS.set(instructions, systemMessage(await countTextTokensAsync(instructions, pace)));
  return countPreambleTokens(instructions, input.tools);
}

/** The instructions' tokens as the system message they are sent as (its framing and role). */
function systemMessage(tokens: number): number {
  return TOKENS_PER_MESSAGE + countTextTokens('system') + tokens;
}

function toolTokens(tool: ToolDefinition): number {
  let tokens = TOOL_COUNTS.get(tool);
  if (tokens === undefined) {
    tokens = countTextTokens(tool.name) + countTextTokens(tool.description) + countTextTokens(JSON.stringify(tool.inputSchema));
    TOOL_COUNTS.set(tool, tokens);
  }
  return tokens;
}
