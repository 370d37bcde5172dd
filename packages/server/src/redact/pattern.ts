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
  /** Atoms one of which a non-empty match starts with; null when unknown. */
  readonly first: readonly string[] | null;
  /** Whether the pattern can match the empty string. */
  readonly nullable: boolean;
}

/** A regex that matches nothing: the `pre` of an element that is always decided. */
const NEVER = '(?!)';

const group = (source: string) => `(?:${source})`;

/** One regex atom that consumes exactly one character: `[a-z]`, `\\s`, `x`. */
export function atom(source: string): Pattern {
  return { re: source, pre: `${group(source)}?`, first: [source], nullable: false };
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
  let first: string[] | null = [];
  let nullable = true;
  for (const part of parts) {
    if (!nullable) break;
    first = first && part.first ? [...first, ...part.first] : null;
    nullable = part.nullable;
  }
  return { re, pre, first, nullable };
}

export function alt(...parts: Pattern[]): Pattern {
  const open = parts.map((part) => part.pre).filter((pre) => pre !== NEVER);
  return {
    re: group(parts.map((part) => part.re).join('|')),
    pre: open.length === 0 ? NEVER : group(open.join('|')),
    first: parts.every((part) => part.first) ? parts.flatMap((part) => part.first!) : null,
    nullable: parts.some((part) => part.nullable),
  };
}

/** `min` to `max` repetitions (greedy, or lazy when asked). */
export function rep(part: Pattern, min: number, max = Infinity, lazy = false): Pattern {
  const bounds = max === Infinity ? (min === 0 ? '*' : min === 1 ? '+' : `{${min},}`) : `{${min},${max}}`;
  const before = max === Infinity ? `${group(part.re)}*` : max > 1 ? `${group(part.re)}{0,${max - 1}}` : '';
  return {
    re: `${group(part.re)}${bounds}${lazy ? '?' : ''}`,
    pre: `${before}${group(part.pre)}`,
    first: part.first,
    nullable: min === 0 || part.nullable,
  };
}

export function opt(part: Pattern): Pattern {
  return rep(part, 0, 1);
}

/** A lookbehind (or `^`-like) assertion: decided by the text already seen. */
export function behind(source: string): Pattern {
  return { re: source, pre: NEVER, first: [], nullable: true };
}

/**
 * A lookahead assertion. `undecided` is the regex of the tails after this point for which the
 * assertion cannot be decided yet; for a one-character lookahead that is only the empty tail.
 */
export function ahead(source: string, undecided = ''): Pattern {
  return { re: source, pre: undecided, first: [], nullable: true };
}

/**
 * The same pattern with a simpler `pre` that must accept at least every tail the derived one
 * accepts (a superset only holds text back a little longer). For rules whose derived `pre`
 * grows too large to run on every streamed fragment.
 */
export function widen(pattern: Pattern, pre: string): Pattern {
  return { ...pattern, pre };
}

/**
 * The regex source made case-insensitive by spelling both cases out (`a` -> `[aA]`, `[a-f]` ->
 * `[a-fA-F]`) instead of the `i` flag: with `i`, V8 matches non-ASCII text (CJK, emoji) two
 * orders of magnitude slower. Handles the syntax the rules use: escapes, classes, groups.
 */
export function caseless(source: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i += 1) {
    const ch = source[i]!;
    if (ch === '\\') {
      const width = source[i + 1] === 'u' ? 6 : source[i + 1] === 'x' ? 4 : 2;
      out += source.slice(i, i + width);
      i += width - 1;
    } else if (inClass) {
      if (ch === ']') {
        inClass = false;
        out += ch;
      } else if (source[i + 1] === '-' && source[i + 2] !== undefined && source[i + 2] !== ']' && source[i + 2] !== '\\') {
        const to = source[i + 2]!;
        out += `${ch}-${to}${swapRange(ch, to)}`;
        i += 2;
      } else {
        out += ch + swapCase(ch);
      }
    } else if (ch === '[') {
      inClass = true;
      out += ch;
      if (source[i + 1] === '^') {
        out += '^';
        i += 1;
      }
    } else if (ch === '(' && source[i + 1] === '?') {
      // Group syntax: (?: (?= (?! (?<= (?<!
      const width = source[i + 2] === '<' ? 4 : 3;
      out += source.slice(i, i + width);
      i += width - 1;
    } else {
      const other = swapCase(ch);
      out += other ? `[${ch}${other}]` : ch;
    }
  }
  return out;
}

function swapCase(ch: string): string {
  if (ch >= 'a' && ch <= 'z') return ch.toUpperCase();
  if (ch >= 'A' && ch <= 'Z') return ch.toLowerCase();
  return '';
}

function swapRange(from: string, to: string): string {
  const lower = (c: string) => c >= 'a' && c <= 'z';
  const upper = (c: string) => c >= 'A' && c <= 'Z';
  if (lower(from) && lower(to)) return `${from.toUpperCase()}-${to.toUpperCase()}`;
  if (upper(from) && upper(to)) return `${from.toLowerCase()}-${to.toLowerCase()}`;
  return '';
}

/**
 * `pre` behind a one-character guard: a non-empty open tail starts like a match, so a position
 * whose character cannot start one fails at once instead of walking every optional branch
 * (costly where the lookbehinds pass everywhere, as in text without spaces).
 */
export function guardedPre(pattern: Pattern): string {
  if (pattern.first === null || pattern.nullable || pattern.first.length === 0) return pattern.pre;
  return `(?=${[...new Set(pattern.first)].join('|')})${pattern.pre}`;
}
