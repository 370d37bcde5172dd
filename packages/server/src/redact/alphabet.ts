/**
 * @module The alphabet of a regex: the characters any of its matches can consume. The stream redactor
 * reads the alphabet of each rule's open tails (pattern.ts): an open tail runs to the end of the text
 * received so far, so it cannot start before the longest end of the text made of those characters, and
 * the search for it starts there instead of at every position of the text (alphabet.test.ts checks
 * this against every rule).
 */

function foldCase(table: Uint8Array): void {
  for (let code = 65; code <= 90; code += 1) {
    if (table[code] === 1 || table[code + 32] === 1) {
      table[code] = 1;
      table[code + 32] = 1;
    }
  }
}

/** The characters a regex consumes: by ASCII code, and whether any non-ASCII character. */
export interface Alphabet {
  readonly ascii: Uint8Array;
  readonly other: boolean;
}

const ALL_ASCII = () => new Uint8Array(128).fill(1);
const SPACES = [9, 10, 11, 12, 13, 32];
const codes = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const WORD = [...codes(48, 57), ...codes(65, 90), ...codes(97, 122), 95];
const DIGITS = codes(48, 57);

/**
 * The alphabet of a regex source: every character a match of it can consume (lookarounds consume
 * nothing and are skipped). A superset is fine; null when the source uses syntax this does not read.
 * With `caseInsensitive` (the `i` flag), letters count in both cases.
 */
export function alphabetOf(source: string, caseInsensitive: boolean): Alphabet | null {
  const ascii = new Uint8Array(128);
  let other = false;
  const add = (set: { ascii: Uint8Array; other: boolean }) => {
    for (let c = 0; c < 128; c += 1) if (set.ascii[c] === 1) ascii[c] = 1;
    other ||= set.other;
  };
  for (let i = 0; i < source.length; ) {
    const ch = source[i]!;
    if (ch === '\\') {
      const escaped = readEscape(source, i, false);
      if (!escaped) return null;
      add(escaped.set);
      i = escaped.end;
    } else if (ch === '[') {
      const set = readClass(source, i);
      if (!set) return null;
      add(set.set);
      i = set.end;
    } else if (ch === '(') {
      if (source.startsWith('(?:', i)) i += 3;
      else if (source.startsWith('(?=', i) || source.startsWith('(?!', i) || source.startsWith('(?<=', i) || source.startsWith('(?<!', i)) {
        const end = closingParen(source, i);
        if (end < 0) return null;
        i = end + 1;
      } else if (source[i + 1] === '?') return null;
      else i += 1;
    } else if (ch === '{') {
      const quantifier = /^\{\d+(?:,\d*)?\}/.exec(source.slice(i));
      if (!quantifier) return null;
      i += quantifier[0].length;
    } else if (')|*+?^$'.includes(ch)) i += 1;
    else if (ch === '.') {
      const set = ALL_ASCII();
      set[10] = 0;
      set[13] = 0;
      add({ ascii: set, other: true });
      i += 1;
    } else {
      add(single(ch.charCodeAt(0)));
      i += 1;
    }
  }
  if (caseInsensitive) foldCase(ascii);
  return { ascii, other };
}

function single(code: number): { ascii: Uint8Array; other: boolean } {
  const ascii = new Uint8Array(128);
  if (code < 128) ascii[code] = 1;
  return { ascii, other: code >= 128 };
}

function fromCodes(list: number[], negate: boolean): { ascii: Uint8Array; other: boolean } {
  const ascii = new Uint8Array(128);
  for (const code of list) ascii[code] = 1;
  if (negate) for (let c = 0; c < 128; c += 1) ascii[c] = ascii[c] === 1 ? 0 : 1;
  // \s and the negated sets take non-ASCII characters too.
  return { ascii, other: negate || list === SPACES };
}

/** An escape at `i`: the characters it stands for and where it ends; null when not understood. */
function readEscape(source: string, i: number, inClass: boolean): { set: { ascii: Uint8Array; other: boolean }; end: number } | null {
  const next = source[i + 1];
  if (next === undefined) return null;
  const sets: Record<string, () => { ascii: Uint8Array; other: boolean }> = {
    s: () => fromCodes(SPACES, false),
    S: () => fromCodes(SPACES, true),
    w: () => fromCodes(WORD, false),
    W: () => fromCodes(WORD, true),
    d: () => fromCodes(DIGITS, false),
    D: () => fromCodes(DIGITS, true),
  };
  if (sets[next]) return { set: sets[next](), end: i + 2 };
  const controls: Record<string, number> = { t: 9, n: 10, v: 11, f: 12, r: 13 };
  if (controls[next] !== undefined) return { set: single(controls[next]), end: i + 2 };
  if (next === 'x' || next === 'u') {
    const width = next === 'x' ? 2 : 4;
    const hex = source.slice(i + 2, i + 2 + width);
    if (!new RegExp(`^[0-9a-fA-F]{${width}}$`).test(hex)) return null;
    return { set: single(Number.parseInt(hex, 16)), end: i + 2 + width };
  }
  if ((next === 'b' || next === 'B') && !inClass) return { set: { ascii: new Uint8Array(128), other: false }, end: i + 2 };
  if (/[A-Za-z0-9]/.test(next)) return null;
  return { set: single(next.charCodeAt(0)), end: i + 2 };
}

/** A class `[...]` at `i`. */
function readClass(source: string, i: number): { set: { ascii: Uint8Array; other: boolean }; end: number } | null {
  let at = i + 1;
  const negate = source[at] === '^';
  if (negate) at += 1;
  if (source[at] === ']') return null;
  const ascii = new Uint8Array(128);
  let other = false;
  let previous = -1;
  while (at < source.length && source[at] !== ']') {
    let code: number;
    if (source[at] === '\\') {
      const escaped = readEscape(source, at, true);
      if (!escaped) return null;
      at = escaped.end;
      const members = [...escaped.set.ascii.keys()].filter((c) => escaped.set.ascii[c] === 1);
      other ||= escaped.set.other;
      for (const c of members) ascii[c] = 1;
      code = members.length === 1 && !escaped.set.other ? members[0]! : -2;
      if (escaped.set.other && members.length === 0) code = -2;
    } else {
      code = source.charCodeAt(at);
      if (code < 128) ascii[code] = 1;
      else other = true;
      at += 1;
    }
    // A range: previous member "-" this one.
    if (source[at] === '-' && source[at + 1] !== ']' && at + 1 < source.length) {
      previous = code;
      at += 1;
      let to: number;
      if (source[at] === '\\') {
        const escaped = readEscape(source, at, true);
        if (!escaped) return null;
        const members = [...escaped.set.ascii.keys()].filter((c) => escaped.set.ascii[c] === 1);
        if (members.length !== 1 || escaped.set.other) return null;
        to = members[0]!;
        at = escaped.end;
      } else {
        to = source.charCodeAt(at);
        at += 1;
      }
      if (previous < 0 || to < previous) return null;
      for (let c = previous; c <= to; c += 1) {
        if (c < 128) ascii[c] = 1;
        else other = true;
      }
    }
  }
  if (source[at] !== ']') return null;
  if (negate) {
    for (let c = 0; c < 128; c += 1) ascii[c] = ascii[c] === 1 ? 0 : 1;
    other = true;
  }
  return { set: { ascii, other }, end: at + 1 };
}

/** The index of the `)` closing the group opened at `i` (escapes and classes skipped); -1 if none. */
function closingParen(source: string, i: number): number {
  let depth = 0;
  let inClass = false;
  for (let at = i; at < source.length; at += 1) {
    const ch = source[at];
    if (ch === '\\') at += 1;
    else if (inClass) {
      if (ch === ']') inClass = false;
    } else if (ch === '[') inClass = true;
    else if (ch === '(') depth += 1;
    else if (ch === ')') {
      depth -= 1;
      if (depth === 0) return at;
    }
  }
  return -1;
}

/**
 * Where the longest end of `text` made only of the alphabet's characters starts (not before `from`):
 * an open tail, which runs to the end of the text, cannot start before it.
 */
export function tailStart(text: string, from: number, alphabet: Alphabet): number {
  let at = text.length;
  while (at > from) {
    const code = text.charCodeAt(at - 1);
    if (code < 128 ? alphabet.ascii[code] === 1 : alphabet.other) at -= 1;
    else break;
  }
  return at;
}
