/**
 * @module The output cap of a run, enforced on what the engine sends: text passes until the run's
 * cap (`maxTokens`, or less when a budget shrank it) is used, then it is cut on a token boundary
 * and nothing more passes. An engine that ignores `max_tokens` (a provider that sends 30,000
 * characters for `maxTokens: 16`) therefore never delivers, nor costs, more than was reserved.
 *
 * Text is only tokenized near the cap: a token is at least one UTF-8 byte, so while what passed and
 * the new fragment hold no more bytes than the cap has tokens, the fragment passes uncounted (most
 * answers end far below their cap, and counting them cost some 2 % of a proxied invocation's CPU).
 * When a fragment would pass that bound, the text that passed uncounted is counted at once, in one
 * call per piece: it then stands for its tokens instead of its bytes (fewer in most text), and the
 * room that gives back lets the next fragments pass uncounted again. So a stream of small fragments
 * that stays within the cap has each character tokenized once, not everything that passed again at
 * each recount. Where counting gives no room back, fragments are counted in pieces of at most
 * `PIECE_CHARS` characters, so the work per fragment is linear in its length whatever its size (a
 * synchronous answer is one fragment). A sum of pieces counts at least as many tokens as the whole
 * text (a merge across a boundary only saves tokens), so it is recounted exactly, once the sum
 * reaches the cap, before anything is cut: an answer within the cap passes whole.
 */
import { countTextTokens, truncateShortText } from '../../engine/index.ts';

const PIECE_CHARS = 512;

interface OutputCap {
  /**
   * The part of `fragment` within the cap ('' once it is used); may cut the fragment short. A fragment that ends
   * with the first half of a surrogate pair passes that half with the next fragment.
   */
  push(fragment: string): string;
  /** Whether text was dropped at the cap: the engine produced more than the run may cost. */
  readonly cut: boolean;
  /** Output tokens counted in what the engine sent, including the part dropped at the cut. */
  readonly receivedTokens: number;
}

/** `count` is the tokenizer's count of a text (a test passes one that tallies what it is given). */
export function createOutputCap(capTokens: number, count: (text: string) => number = countTextTokens): OutputCap {
  let passedText = '';
  /** At least the tokens of passedText: exact after a recount, else a sum of pieces' tokens or bytes. */
  let passed = 0;
  /** Tokens of the pieces counted so far; `uncounted` is the text that passed without being counted (its bytes in `passed`). */
  let received = 0;
  let uncounted = '';
  let uncountedBytes = 0;
  /** Counts the text that passed uncounted: `passed` takes its tokens instead of its bytes. */
  const countUncounted = () => {
    let tokens = 0;
    for (const piece of pieces(uncounted)) tokens += count(piece);
    received += tokens;
    passed += tokens - uncountedBytes;
    uncounted = '';
    uncountedBytes = 0;
  };
  /** The first half of a surrogate pair that ended the last fragment, waiting for its second half. */
  let held = '';
  let cut = false;
  return {
    push(fragment) {
      if (cut) return '';
      // A character split between two fragments is counted whole: each half alone counts as a replacement
      // character, so the halves would count fewer tokens than the character and let it pass a cap it does not fit.
      let delta = held + fragment;
      held = '';
      if (isHighSurrogate(delta.charCodeAt(delta.length - 1))) {
        held = delta.slice(-1);
        delta = delta.slice(0, -1);
      }
      const bytes = Buffer.byteLength(delta, 'utf8');
      if (passed + bytes > capTokens && uncounted !== '') countUncounted();
      if (passed + bytes <= capTokens) {
        passed += bytes;
        passedText += delta;
        uncounted += delta;
        uncountedBytes += bytes;
        return delta;
      }
      let out = '';
      for (const piece of pieces(delta)) {
        const tokens = count(piece);
        received += tokens;
        if (passed + tokens > capTokens) {
          // The sum of pieces may overcount: recount exactly before cutting anything. The gap to the
          // cap shrinks with every recount, so they stay few (logarithmic in the cap).
          const exact = count(passedText + piece);
          if (exact > capTokens) {
            let room = Math.max(0, capTokens - count(passedText));
            let kept = truncateShortText(piece, room);
            // Tokens may merge differently across the boundary: shrink the kept part until the whole fits.
            while (kept !== '' && count(passedText + kept) > capTokens) kept = truncateShortText(piece, --room);
            passedText += kept;
            passed = count(passedText);
            out += kept;
            cut = true;
            break;
          }
          passed = exact;
        } else {
          passed += tokens;
        }
        passedText += piece;
        out += piece;
      }
      return out;
    },
    get cut() {
      return cut;
    },
    get receivedTokens() {
      if (uncounted !== '') countUncounted();
      return received;
    },
  };
}

/** `text` in pieces of at most PIECE_CHARS characters, never splitting a surrogate pair. */
function* pieces(text: string): Generator<string> {
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + PIECE_CHARS);
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
    yield text.slice(start, end);
    start = end;
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
