/**
 * @module Failure triggers of the local engine, so tests and demos can reach every path.
 * A trigger is recognised in the latest user message only (an old turn of a conversation must not
 * keep failing its later turns), and is removed from the text the engine answers.
 *
 * | trigger               | effect                                                           |
 * |-----------------------|------------------------------------------------------------------|
 * | `[[fail]]`            | EngineError `engine_error` before any event                       |
 * | `[[fail-mid-stream]]` | some text fragments, then EngineError `engine_error` (usage so far) |
 * | `[[timeout]]`         | EngineError `timeout` before any event                            |
 * | `[[hang]]`            | one fragment, then waits for the abort signal (or the hang limit) |
 */
import { isOneOf } from '../../one-of.ts';
import type { ConversationMessage } from '../engine.ts';

export const TRIGGERS = ['fail', 'fail-mid-stream', 'timeout', 'hang'] as const;
export type Trigger = (typeof TRIGGERS)[number];

const PATTERN = /\[\[(fail-mid-stream|fail|timeout|hang)\]\]/g;

/** The trigger of the latest user message, if any (the first one written wins). */
export function triggerOf(messages: readonly ConversationMessage[]): Trigger | null {
  const latest = latestUserText(messages);
  const found = /\[\[(fail-mid-stream|fail|timeout|hang)\]\]/.exec(latest)?.[1];
  return isOneOf(TRIGGERS, found) ? found : null;
}

/** The text with every trigger removed. */
export function withoutTriggers(text: string): string {
  return text
    .replace(PATTERN, '')
    .replace(/\s{2,}/g, ' ')
    .trim();
}

export function latestUserText(messages: readonly ConversationMessage[]): string {
  return messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
}
