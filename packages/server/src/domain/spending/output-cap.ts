/**
 * @module The output cap of a run, enforced on what the engine sends: text passes until the run's
 * cap (`maxTokens`, or less when a budget shrank it) is used, then it is cut on a token boundary
 * and nothing more passes. An engine that ignores `max_tokens` (a provider that sends 30,000
 * characters for `maxTokens: 16`) therefore never delivers, nor costs, more than was reserved.
 *
 * Fragments are counted in pieces of at most `PIECE_CHARS` characters, so the work per fragment is
 * linear in its length whatever its size (a synchronous answer is one fragment). A sum of pieces
 * counts at least as many tokens as the whole text (a merge across a boundary only saves tokens),
 * so it is recounted exactly, once the sum reaches the cap, before anything is cut: an answer
 * within the cap passes whole.
 */
import { countTextTokens, truncateShortText } from '../../engine/index.ts';

const PIECE_CHARS = 512;

interface OutputCap {
  /** The part of `delta` within the cap ('' once it is used); may cut the fragment short. */
  push(delta: string): string;
  /** Whether text was dropped at the cap: the engine produced more than the run may cost. */
  readonly cut: boolean;
  /** Output tokens counted in what passed. */
  readonly passedTokens: number;
  /** Output tokens counted in what the engine sent, including the part dropped at the cut. */
  readonly receivedTokens: number;
}

export function createOutputCap(capTokens: number): OutputCap {
  let passedText = '';
  /** Tokens of passedText: exact after a recount, else a sum of pieces (at least the exact count). */
  let passed = 0;
  let received = 0;
  let cut = false;
  return {
    push(delta) {
      if (cut) return '';
      let out = '';
      for (const piece of pieces(delta)) {
        const tokens = countTextTokens(piece);
        received += tokens;
        if (passed + tokens > capTokens) {
          // The sum of pieces may overcount: recount exactly before cutting anything. The gap to the
          // cap shrinks with every recount, so they stay few (logarithmic in the cap).
          const exact = countTextTokens(passedText + piece);
          if (exact > capTokens) {
            const kept = truncateShortText(piece, Math.max(0, capTokens - countTextTokens(passedText)));
            passedText += kept;
            passed = countTextTokens(passedText);
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
    get passedTokens() {
      return passed;
    },
    get receivedTokens() {
      return received;
    },
  };
}

/** `text` in pieces of at most PIECE_CHARS characters, never splitting a surrogate pair. */
function* pieces(text: string): Generator<string> {
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + PIECE_CHARS);
    const code = text.charCodeAt(end - 1);
    if (end < text.length && code >= 0xd800 && code <= 0xdbff) end -= 1;
    yield text.slice(start, end);
    start = end;
  }
}
