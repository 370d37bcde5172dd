/**
 * @module A tiny regex builder for the redaction rules. Each pattern carries two regex sources:
 * `re`, what a match is, and `pre`, the tails whose outcome is still open: the text from a
 * position to the end of what has been received, when more text could still make (or change) a
 * match there. A stream redactor holds back exactly from the first such position, so its output
 * over any split equals the one-shot redaction.
 *
 * `pre` may accept more than it must (that only holds text back longer) but never less. It is
 * derived structurally: prefix(a b) = a prefix(b) | prefix(a), prefix(x{m,n}) = x{0,n-1} prefix(x).
 * Lookbehinds are always decided (the redactor keeps some text before a position); a lookahead
 * states which tails leave it undecided.
 */

export interface Pattern {
  readonly re: string;
  readonly pre: string;
}

/** A regex that matches nothing: the `pre` of an element that is always decided. */
const NEVER = '(?!)';

const group = (source: string) => `(?:${source})`;

/** One regex atom that consumes exactly one character: `[a-z]`, `\\s`, `x`. */
export function atom(source: string): Pattern {
  return { re: source, pre: `${group(source)}?` };
}

/** Literal text (regex specials escaped). Case follows the flags of the rule set. */
export function lit(text: string): Pattern {
  return seq(...Array.from(text, (ch) => atom(ch.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&'))));
}

export function seq(...parts: Pattern[]): Pattern {
  const re = parts.map((part) => part.re).join('');
  let pre = '';
  for (let i = parts.length - 1; i >= 0; i -= 1) {
    const part = parts[i]!;
    pre = part.pre === NEVER ? `${part.re}${pre}` : group(`${part.re}${pre}|${part.pre}`);
  }
  return { re, pre };
}

export function alt(...parts: Pattern[]): Pattern {
  const open = parts.map((part) => part.pre).filter((pre) => pre !== NEVER);
  return {
    re: group(parts.map((part) => part.re).join('|')),
    pre: open.length === 0 ? NEVER : group(open.join('|')),
  };
}

/** `min` to `max` repetitions (greedy, or lazy when asked). */
export function rep(part: Pattern, min: number, max = Infinity, lazy = false): Pattern {
  const bounds = max === Infinity ? (min === 0 ? '*' : min === 1 ? '+' : `{${min},}`) : `{${min},${max}}`;
  const before = max === Infinity ? `${group(part.re)}*` : max > 1 ? `${group(part.re)}{0,${max - 1}}` : '';
  return { re: `${group(part.re)}${bounds}${lazy ? '?' : ''}`, pre: `${before}${group(part.pre)}` };
}

export function opt(part: Pattern): Pattern {
  return rep(part, 0, 1);
}

/** A lookbehind (or `^`-like) assertion: decided by the text already seen. */
export function behind(source: string): Pattern {
  return { re: source, pre: NEVER };
}

/**
 * A lookahead assertion. `undecided` is the regex of the tails after this point for which the
 * assertion cannot be decided yet; for a one-character lookahead that is only the empty tail.
 */
export function ahead(source: string, undecided = ''): Pattern {
  return { re: source, pre: undecided };
}

/**
 * The same pattern with a simpler `pre` that must accept at least every tail the derived one
 * accepts (a superset only holds text back a little longer). For rules whose derived `pre`
 * grows too large to run on every streamed fragment.
 */
export function widen(pattern: Pattern, pre: string): Pattern {
  return { re: pattern.re, pre };
}
