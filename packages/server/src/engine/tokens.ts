/**
 * @module Token counting with a real BPE tokenizer (gpt-tokenizer, o200k_base). Used by the local
 * engine and as the fallback when a remote server reports no usage.
 */
import { decode, encode } from 'gpt-tokenizer';
import type { EngineMessage } from './engine.ts';

/** Special-token text in user input (`<|endoftext|>`) is counted as ordinary text, never rejected. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/** Per-message framing of chat formats (role and separators), and the reply's priming. */
const TOKENS_PER_MESSAGE = 3;
const TOKENS_PER_REPLY = 3;

/**
 * BPE merges inside one pre-token (a run without whitespace) cost quadratic time in its length: a
 * 500,000-character run held the event loop for minutes. Runs longer than this are counted in slices
 * of this many characters, an estimate within about one token per slice; ordinary text is exact.
 */
const RUN_SLICE = 256;
const LONG_RUN = new RegExp(`\\S{${RUN_SLICE + 1},}`, 'g');

export function countTextTokens(text: string): number {
  if (text === '') return 0;
  let total = 0;
  let last = 0;
  for (const match of text.matchAll(LONG_RUN)) {
    total += encodeLength(text.slice(last, match.index));
    for (let i = 0; i < match[0].length; i += RUN_SLICE) total += encodeLength(match[0].slice(i, i + RUN_SLICE));
    last = match.index + match[0].length;
  }
  return total + encodeLength(text.slice(last));
}

function encodeLength(text: string): number {
  return text === '' ? 0 : encode(text, AS_TEXT).length;
}

/** Input tokens of a conversation: each message's role and content plus chat framing. */
export function countMessageTokens(messages: readonly EngineMessage[]): number {
  return messages.reduce((sum, message) => sum + TOKENS_PER_MESSAGE + countTextTokens(message.role) + countTextTokens(message.content), TOKENS_PER_REPLY);
}

/**
 * The longest prefix of `text` that counts at most `maxTokens`. Cuts on a token boundary and drops
 * a trailing partial character, re-checking the count because re-encoding a prefix can differ.
 */
export function truncateToTokens(text: string, maxTokens: number): string {
  const tokens = encode(text, AS_TEXT);
  if (tokens.length <= maxTokens) return text;
  for (let keep = Math.max(0, maxTokens); keep > 0; keep--) {
    const prefix = decode(tokens.slice(0, keep)).replace(/\uFFFD+$/, '');
    if (countTextTokens(prefix) <= maxTokens) return prefix;
  }
  return '';
}
