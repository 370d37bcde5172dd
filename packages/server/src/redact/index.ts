/**
 * @module The redactor every response body and every streamed fragment passes through. It
 * replaces provider and model names, secrets, internal hosts and paths, and stack traces with
 * a neutral word. The model aliases (Prelude, Sonata, Symphony, Concerto) are never touched.
 *
 * - `redactText(s)`: one string.
 * - `redactValue(v)`: a JSON value, deeply; object keys are kept.
 * - `createRedactor({ terms })`: the same three over the fixed rules plus a deployment's own terms
 *   (its model names, provider host and key); the app builds one and uses it for every response.
 * - `createStreamRedactor()`: fragments of one text. A name split over fragments ("Open" +
 *   "AI") is still removed; only a tail that could still become a match is held back, and the
 *   concatenated output equals `redactText` of the concatenated input, whatever the split.
 */
import { type Alphabet, alphabetOf, tailStart } from './alphabet.ts';
import { createNormalizer } from './normalize.ts';
import { caseless, guardedPre, type Pattern } from './pattern.ts';
import { caseInsensitive, caseSensitive, termRules } from './rules.ts';

export const REDACTED = '[redacted]';

/** Characters of decided text kept for the rules' lookbehinds (they look one back). */
const LOOKBEHIND_CONTEXT = 8;
/** An undecided tail longer than this is rescanned only once as much new text arrived. */
const LONG_TAIL = 512;
/**
 * Undecided text longer than this is held until the end of the text, where it is redacted in one
 * linear pass. Finding where the undecided text starts tries the open-tail expressions at every
 * position, and on some texts (a 500,000-character fragment of "a-a-a-…", many near-matches) each
 * try runs far: quadratic, seconds of event loop for one fragment. Below this size it stays cheap.
 */
const HOLD_ALL = 4096;
/**
 * Rules are packed into several expressions of at most this many source characters: V8 stops
 * optimising (quick checks, Boyer-Moore skips) a pattern larger than 20 KB.
 */
const CHUNK_BUDGET = 16000;
/** Short strings memoised per redactor and generation (see {@link memoised}): names, roles, fixed messages. */
const SHORT_MEMO = { maxLength: 256, entries: 1024 };
/**
 * A few recent long strings (per redactor and generation): an answer is redacted where the run closes
 * and again, unchanged, in the response body that carries it. Kept few: they are customer text.
 */
const LONG_MEMO = { maxLength: 16384, entries: 4 };

/** Expressions over all rules, in rule order: at one position the earlier expression wins. */
interface Compiled {
  /** Expressions over all rules, in rule order: at one position the earlier expression wins. */
  matchers: RegExp[];
  /** The rules' open tails, anchored at the end of the text, by the alphabet that holds them. */
  openTails: OpenTail[];
  /** The alphabets of the open tails (null: any character, search from the start). */
  alphabets: (Alphabet | null)[];
}

/** Open tails of some rules: the expression, and the index of its alphabet in {@link Compiled.alphabets}. */
interface OpenTail {
  open: RegExp;
  alphabet: number;
}

function compile(rules: { re: string; pre: string; flags: string }[]): Compiled {
  // Consecutive rules with the same flags share expressions; order is kept.
  const runs: { flags: string; rules: typeof rules }[] = [];
  for (const rule of rules) {
    const last = runs[runs.length - 1];
    if (last && last.flags === rule.flags) last.rules.push(rule);
    else runs.push({ flags: rule.flags, rules: [rule] });
  }
  return {
    matchers: runs.flatMap((run) =>
      chunk(
        run.rules.map((r) => r.re),
        (sources) => new RegExp(sources.join('|'), `g${run.flags}`),
      ),
    ),
    // By alphabet: each expression starts its search where its alphabet lets an open tail start.
    ...openTailsOf(rules),
  };
}

/**
 * A few alphabets, narrowest first: each rule's open tails go with the first that holds their own
 * alphabet, all rules of one alphabet (and flags) in a few expressions; a rule in none searches from
 * the start. Fewer expressions than one per rule keep a small fragment cheap.
 */
const TIERS: Alphabet[] = [
  alphabetOf('[A-Za-z0-9_.:-]', false)!, // names, versions, hosts, keys
  alphabetOf('[^\\s]', false)!, // no white space: paths, URLs, tokens
  alphabetOf('[^\\n]', false)!, // one line: traces, errors, names with a version after a space
];

function holds(outer: Alphabet, inner: Alphabet): boolean {
  if (inner.other && !outer.other) return false;
  for (let code = 0; code < 128; code += 1) if (inner.ascii[code] === 1 && outer.ascii[code] !== 1) return false;
  return true;
}

function openTailsOf(rules: { pre: string; flags: string }[]): { openTails: OpenTail[]; alphabets: (Alphabet | null)[] } {
  const alphabets: (Alphabet | null)[] = [...TIERS, null];
  const groups = new Map<string, { alphabet: number; flags: string; sources: string[] }>();
  for (const rule of rules) {
    const own = alphabetOf(rule.pre, rule.flags.includes('i'));
    const tier = own ? TIERS.findIndex((alphabet) => holds(alphabet, own)) : -1;
    const alphabet = tier < 0 ? TIERS.length : tier;
    const key = `${alphabet}/${rule.flags}`;
    const group = groups.get(key) ?? { alphabet, flags: rule.flags, sources: [] };
    group.sources.push(rule.pre);
    groups.set(key, group);
  }
  const openTails = [...groups.values()].flatMap(({ alphabet, flags, sources }) =>
    chunk(sources, (group) => new RegExp(`(?:${group.join('|')})$`, `g${flags}`)).map((open) => ({ open, alphabet })),
  );
  return { openTails, alphabets };
}

/** The compiled rules of one redactor: one set for ASCII text, one for the rest. */
interface RuleSet {
  ascii: Compiled;
  unicode: Compiled;
}

// The same rules twice. With the `i` flag V8 is fastest on ASCII text but two orders of
// magnitude slower on other text, where both cases spelled out is fast. Without the `u` flag
// `i` never folds a non-ASCII character onto an ASCII letter, so both match the same.
function compileRules(insensitive: readonly Pattern[], sensitive: readonly Pattern[]): RuleSet {
  return {
    ascii: compile([
      ...insensitive.map((p) => ({ re: p.re, pre: guardedPre(p), flags: 'i' })),
      ...sensitive.map((p) => ({ re: p.re, pre: guardedPre(p), flags: '' })),
    ]),
    unicode: compile([
      ...insensitive.map((p) => ({ re: caseless(p.re), pre: caseless(guardedPre(p)), flags: '' })),
      ...sensitive.map((p) => ({ re: p.re, pre: guardedPre(p), flags: '' })),
    ]),
  };
}

/** The service's fixed rules, shared by every redactor without deployment terms. */
const FIXED = compileRules(caseInsensitive, caseSensitive);
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * `redact` with its results kept for strings of at most `maxLength` characters (longer ones go to `next`).
 * Bounded: two generations of at most `entries` strings; when the current one is full, the older one is
 * dropped and a string found there moves to the new one.
 */
function memoised(
  redact: (text: string) => string,
  { maxLength, entries }: { maxLength: number; entries: number },
  next: (text: string) => string = redact,
): (text: string) => string {
  let current = new Map<string, string>();
  let older = new Map<string, string>();
  return (text) => {
    if (text.length > maxLength) return next(text);
    let output = current.get(text);
    if (output !== undefined) return output;
    output = older.get(text) ?? redact(text);
    if (current.size >= entries) {
      older = current;
      current = new Map();
    }
    current.set(text, output);
    return output;
  };
}

/** The one-shot redaction of `rules`, memoised for short strings and a few recent long ones. */
function textRedactor(rules: RuleSet): (text: string) => string {
  const redact = (text: string) => scan(rules, createNormalizer()(text), 0, true).output;
  return memoised(redact, SHORT_MEMO, memoised(redact, LONG_MEMO));
}

const fixedText = textRedactor(FIXED);

function chunk(sources: string[], build: (group: string[]) => RegExp): RegExp[] {
  const out: RegExp[] = [];
  let group: string[] = [];
  let size = 0;
  for (const source of sources.map((s) => `(?:${s})`)) {
    if (group.length > 0 && size + source.length > CHUNK_BUDGET) {
      out.push(build(group));
      group = [];
      size = 0;
    }
    group.push(source);
    size += source.length + 1;
  }
  if (group.length > 0) out.push(build(group));
  return out;
}

/**
 * The fixed rules only. Requests, runs and responses use the app's {@link Redactor}, which adds
 * the deployment's own names; these module-level functions serve what has no app (logs, ids).
 */
export function redactText(text: string): string {
  return fixedText(text);
}

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export interface RedactValueOptions {
  /** Exact string values to leave as they are (a key's secret in the one response that shows it). */
  keep?: ReadonlySet<string>;
}

/**
 * Nesting past this is replaced by {@link REDACTED} whole: the walk recurses, and a value this deep
 * is nothing the service answers (request bodies nest at most 64 levels, see validate/text.ts).
 */
const MAX_DEPTH = 256;

/** Redacts every string of a JSON value; keys, numbers, booleans and null are kept. */
export function redactValue<T>(value: T, options: RedactValueOptions = {}): T {
  return redactJson(redactText, value, options.keep, 0) as T;
}

function redactJson(text: (s: string) => string, value: unknown, keep: ReadonlySet<string> | undefined, depth: number): unknown {
  if (typeof value === 'string') return keep?.has(value) ? value : text(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return REDACTED;
  if (Array.isArray(value)) return value.map((item) => redactJson(text, item, keep, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = redactJson(text, item, keep, depth + 1);
  return out;
}

/** One deployment's redactor: the fixed rules plus its own terms. Built once per app. */
export interface Redactor {
  text(text: string): string;
  value<T>(value: T, options?: RedactValueOptions): T;
  stream(): StreamRedactor;
}

export interface RedactorOptions {
  /**
   * The deployment's own names that must never leave: the model names behind the aliases, the
   * provider's host, its key. Matched in any case, with any separator between their parts.
   */
  terms?: readonly string[];
}

export function createRedactor(options: RedactorOptions = {}): Redactor {
  const extra = termRules(options.terms ?? []);
  const rules = extra.length === 0 ? FIXED : compileRules([...caseInsensitive, ...extra], caseSensitive);
  const text = extra.length === 0 ? fixedText : textRedactor(rules);
  return {
    text,
    value: (value, valueOptions = {}) => redactJson(text, value, valueOptions.keep, 0) as typeof value,
    stream: () => streamRedactor(rules),
  };
}

export interface StreamRedactor {
  /** Adds a fragment; returns the redacted text that is now decided (possibly ''). */
  push(fragment: string): string;
  /** Ends the text; returns the redacted rest. */
  end(): string;
}

/** A stream redactor over the fixed rules (see {@link Redactor.stream} for the deployment's). */
export function createStreamRedactor(): StreamRedactor {
  return streamRedactor(FIXED);
}

function streamRedactor(rules: RuleSet): StreamRedactor {
  const normalize = createNormalizer();
  let context = '';
  let pending = '';
  let fresh = 0;

  function run(final: boolean): string {
    const text = context + pending;
    const { output, end } = scan(rules, text, context.length, final);
    context = text.slice(Math.max(0, end - LOOKBEHIND_CONTEXT), end);
    pending = text.slice(end);
    fresh = 0;
    return output;
  }

  return {
    push(fragment) {
      const text = normalize(fragment);
      pending += text;
      fresh += text.length;
      // Rescanning a long undecided tail for every small fragment would be quadratic; holding
      // back a little longer never changes the output, only when it is sent.
      const held = pending.length - fresh;
      if (held > LONG_TAIL && fresh < held) return '';
      if (pending.length > HOLD_ALL) return '';
      return run(false);
    },
    end() {
      const output = run(true);
      context = '';
      return output;
    },
  };
}

/**
 * Redacts `text` from `from` on (what lies before is context for lookbehinds only). Unless
 * `final`, stops before the first position whose outcome could still change with more text.
 */
function scan(rules: RuleSet, text: string, from: number, final: boolean): { output: string; end: number } {
  const compiled = NON_ASCII.test(text) ? rules.unicode : rules.ascii;
  const { matchers } = compiled;
  let output = '';
  let at = from;
  // The next match of each expression at or after `at`, kept until `at` passes it.
  const found: (RegExpExecArray | null | undefined)[] = matchers.map(() => undefined);
  for (;;) {
    const stop = final ? text.length : firstOpen(compiled, text, at);
    while (at < stop) {
      let next: RegExpExecArray | null = null;
      for (let i = 0; i < matchers.length; i += 1) {
        let match = found[i];
        if (match === undefined || (match !== null && match.index < at)) {
          const matcher = matchers[i]!;
          matcher.lastIndex = at;
          match = matcher.exec(text);
          found[i] = match;
        }
        if (match && (next === null || match.index < next.index)) next = match;
      }
      if (next === null || next.index >= stop || next[0].length === 0) {
        output += text.slice(at, stop);
        at = stop;
        break;
      }
      // A match that starts before `stop` is decided even if it runs past it.
      output += text.slice(at, next.index) + REDACTED;
      at = next.index + next[0].length;
    }
    // Past `stop` only through a match: what follows it may be decided too.
    if (at <= stop) return { output, end: at };
  }
}

/**
 * The first position from `from` on whose outcome more text could change (or the end). An open tail
 * runs to the end of the text, so it starts no earlier than the end made only of its alphabet's
 * characters: each expression's search starts there, not at every position from `from` on.
 */
function firstOpen({ openTails, alphabets }: Compiled, text: string, from: number): number {
  const starts = alphabets.map((alphabet) => (alphabet ? tailStart(text, from, alphabet) : from));
  let stop = text.length;
  for (const { open, alphabet } of openTails) {
    const start = starts[alphabet]!;
    if (start >= stop) continue;
    open.lastIndex = start;
    const found = open.exec(text);
    if (found && found.index < stop) stop = found.index;
  }
  // Never send half of a surrogate pair.
  if (stop > from && isHighSurrogate(text.charCodeAt(stop - 1))) stop -= 1;
  return stop;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
