/**
 * @module Token counting with a real BPE tokenizer (gpt-tokenizer, o200k_base). Used by the local
 * engine and as the fallback when a remote server reports no usage.
 *
 * The cost is linear in the text: the tokenizer's quadratic case (one long pre-token) is encoded
 * in slices, see {@link PIECE}. Text from a request can still be megabytes, so the `…Async`
 * functions, which the request paths use, give the event loop a turn every {@link SLICE_MS} of
 * work; the synchronous ones are for short texts (a role, a tool call, a draft).
 *
 * One invocation counts the same texts several times (its messages when the budget is reserved, in the
 * engine and when the run is closed; its output in the engine and at the close), and conversations repeat
 * their earlier turns: counts are kept in a small memo keyed by the text ({@link COUNTS}).
 */
import { createRequire } from 'node:module';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import { createTextMemo } from '../memo.ts';
import type { ConversationMessage, ToolCallRequest } from './engine.ts';

type Tokenizer = typeof import('gpt-tokenizer');
let tokenizer: Tokenizer | undefined;

/**
 * The tokenizer, loaded on first use: its BPE tables take about a second and a half of CPU to
 * load, which a CLI command that counts nothing (`keys list`, `--help`) should not pay. `serve`
 * loads it at start ({@link loadTokenizer}), so no request waits for it.
 */
export function loadTokenizer(): Tokenizer {
  tokenizer ??= createRequire(import.meta.url)('gpt-tokenizer') as Tokenizer;
  return tokenizer;
}

const encode: Tokenizer['encode'] = (text, options) => loadTokenizer().encode(text, options);

/**
 * The text of a token prefix, without a trailing partial character. The tokenizer decodes through one TextDecoder
 * shared by the whole process, in streaming mode and never flushed: the bytes of a character a prefix cuts in two
 * would stay in it and come out, as U+FFFD, at the start of the next text decoded anywhere (another run's cut
 * answer). So each prefix is followed by a character the tokenizer encodes byte by byte, which takes those bytes
 * out with it.
 */
function decodePrefix(tokens: readonly number[]): string {
  const { decode } = loadTokenizer();
  const text = decode(tokens);
  decode(flushTokens());
  return text.replace(/\uFFFD+$/, '');
}

let flush: number[] | undefined;
/** A character outside the tokenizer's merges: its four UTF-8 bytes are four tokens, decoded through the shared decoder. */
function flushTokens(): number[] {
  flush ??= encode('\u{13000}', AS_TEXT);
  return flush;
}

/** Special-token text in user input (`<|endoftext|>`) is counted as ordinary text, never rejected. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/** Per-message framing of chat formats (role and separators), and the reply's priming. */
export const TOKENS_PER_MESSAGE = 3;
const TOKENS_PER_REPLY = 3;

/**
 * BPE merges inside one pre-token (the tokenizer's own split: a word, a run of whitespace, of
 * punctuation and newlines) cost quadratic time in its length: a 500,000-character run held the
 * event loop for minutes, 80,000 no-break spaces for 79 s. A pre-token longer than this is
 * encoded in slices of this many characters, an estimate within about one token per slice; text
 * whose pre-tokens are all shorter (every ordinary text) counts exactly as the tokenizer counts.
 */
const PIECE = 256;
/**
 * Ordinary text is encoded in stretches of about this many characters, cut between two
 * pre-tokens (where the tokenizer cuts anyway, so the count is the same), so that the async
 * functions can pause between them.
 */
const STRETCH = 16_384;
/** The async functions give the event loop a turn after this much work. */
const SLICE_MS = 10;
/** The tokenizer's pre-token split (linear: one pass, each pre-token matched once). */
const PRE_TOKEN = new RegExp(O200K_TOKEN_SPLIT_REGEX.source, 'gu');

/** The text in pieces that encode, one by one and in order, to the text's tokens. */
function* pieces(text: string): Generator<string> {
  if (text.length <= PIECE) {
    if (text !== '') yield text;
    return;
  }
  // A regex of our own per walk: a generator may be suspended while another walk runs.
  const split = new RegExp(PRE_TOKEN);
  let start = 0;
  for (let match = split.exec(text); match !== null; match = split.exec(text)) {
    const token = match[0];
    const end = match.index + token.length;
    if (token.length <= PIECE) {
      if (end - start >= STRETCH) {
        yield text.slice(start, end);
        start = end;
      }
      continue;
    }
    if (match.index > start) yield text.slice(start, match.index);
    for (let i = 0; i < token.length; ) {
      let cut = Math.min(token.length, i + PIECE);
      // Never between the halves of a surrogate pair (two replacement characters).
      if (cut < token.length && isHighSurrogate(token.charCodeAt(cut - 1))) cut -= 1;
      yield token.slice(i, cut);
      i = cut;
    }
    start = end;
  }
  if (start < text.length) yield text.slice(start);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Resolves at once, or after a turn of the event loop once {@link SLICE_MS} of work has passed. */
export type Pace = () => Promise<void>;

export function createPace(sliceMs = SLICE_MS): Pace {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < sliceMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    since = performance.now();
  };
}

/**
 * Token counts of recent texts, kept by the async count (the request paths: messages, outputs), by a cut that
 * encoded the whole text ({@link truncateToTokens}) and by a tool call's count (its arguments): at most
 * 1,000 texts and 4,000,000 characters of them (a text over 1,000,000 characters is counted again each
 * time), least recently used out first. The synchronous count reads it but adds nothing: it counts
 * fragments and growing prefixes of a stream (the output cap), which would only push the rest out.
 */
const COUNTS = createTextMemo<number>({ maxEntries: 1_000, maxChars: 4_000_000 });

/** The count kept for `text` ({@link COUNTS}), if any. */
export function keptCount(text: string): number | undefined {
  return COUNTS.peek(text);
}

/** Tokens of a short text (synchronous: no pause however long it is). */
export function countTextTokens(text: string): number {
  const counted = COUNTS.peek(text);
  if (counted !== undefined) return counted;
  let total = 0;
  for (const piece of pieces(text)) total += encode(piece, AS_TEXT).length;
  return total;
}

/** Tokens of a text of any length, pausing for the event loop (same count as {@link countTextTokens}). */
export async function countTextTokensAsync(text: string, pace: Pace = createPace()): Promise<number> {
  const counted = COUNTS.peek(text);
  if (counted !== undefined) return counted;
  let total = 0;
  for (const piece of pieces(text)) {
    total += encode(piece, AS_TEXT).length;
    await pace();
  }
  COUNTS.set(text, total);
  return total;
}

/** Input tokens of a conversation: each message's role and content (and tool calls) plus chat framing. */
export function countMessageTokens(messages: readonly ConversationMessage[]): number {
  return messages.reduce(
    (sum, message) => sum + TOKENS_PER_MESSAGE + countTextTokens(message.role) + countTextTokens(message.content) + framingOf(message),
    TOKENS_PER_REPLY,
  );
}

/** {@link countMessageTokens}, pausing for the event loop. */
export async function countMessageTokensAsync(messages: readonly ConversationMessage[], pace: Pace = createPace()): Promise<number> {
  let total = TOKENS_PER_REPLY;
  for (const message of messages)
    total += TOKENS_PER_MESSAGE + countTextTokens(message.role) + (await countTextTokensAsync(message.content, pace)) + framingOf(message);
  return total;
}

/** The tool calls of an assistant turn, or the name of a tool result: short texts. */
function framingOf(message: ConversationMessage): number {
  if ('toolCalls' in message) return message.toolCalls.reduce((sum, call) => sum + countToolCallTokens(call), 0);
  if ('toolCallId' in message) return countTextTokens(message.name);
  return 0;
}

/**
 * Output tokens of a tool call a model asks for: its name and its arguments as JSON. A call is counted again as
 * input at each later model call of its run (the conversation's assistant turn), so the arguments' count is kept.
 */
export function countToolCallTokens(call: Pick<ToolCallRequest, 'name' | 'arguments'>): number {
  return countTextTokens(call.name) + COUNTS.get(JSON.stringify(call.arguments), countTextTokens);
}

/**
 * {@link truncateToTokens} without pauses, for a short text (the output cap's pieces, at most a few
 * hundred characters), where there is nothing to pause for and a caller must not wait.
 */
export function truncateShortText(text: string, maxTokens: number): string {
  const tokens = encode(text, AS_TEXT);
  if (tokens.length <= maxTokens) return text;
  for (let keep = Math.max(0, maxTokens); keep > 0; ) {
    const prefix = decodePrefix(tokens.slice(0, keep));
    const over = countTextTokens(prefix) - maxTokens;
    if (over <= 0) return prefix;
    keep -= over;
  }
  return '';
}

/**
 * The longest prefix of `text` that counts at most `maxTokens` (as {@link countTextTokens}
 * counts), with its count, pausing for the event loop. Cuts on a token boundary and drops a trailing partial
 * character, re-checking the count because re-encoding a prefix can differ; each re-check drops
 * what it was over by. A text that fits is encoded once, and its count kept for the next count of it.
 */
export async function truncateToTokens(text: string, maxTokens: number, pace: Pace = createPace()): Promise<{ text: string; tokens: number }> {
  const counted = COUNTS.peek(text);
  if (counted !== undefined && counted <= maxTokens) return { text, tokens: counted };
  const tokens: number[] = [];
  for (const piece of pieces(text)) {
    for (const token of encode(piece, AS_TEXT)) tokens.push(token);
    // Only the first maxTokens tokens matter: the rest of the text need not be encoded.
    if (tokens.length > maxTokens) break;
    await pace();
  }
  if (tokens.length <= maxTokens) {
    // The whole text was encoded: its pieces encode to its tokens.
    COUNTS.set(text, tokens.length);
    return { text, tokens: tokens.length };
  }
  for (let keep = Math.max(0, maxTokens); keep > 0; ) {
    const prefix = decodePrefix(tokens.slice(0, keep));
    const count = await countTextTokensAsync(prefix, pace);
    if (count <= maxTokens) return { text: prefix, tokens: count };
    keep -= count - maxTokens;
  }
  return { text: '', tokens: 0 };
}
