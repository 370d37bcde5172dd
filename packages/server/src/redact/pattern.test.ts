/**
 * @module Tests of the rule builder: derived open tails (every prefix of a match is open, text
 * that cannot become a match is not) and the case-insensitive spelling of sources.
 */
import { describe, expect, it } from 'vitest';
import { ahead, alt, atom, behind, caseless, guardedPre, lit, opt, rep, seq, type Pattern } from './pattern.ts';

function isOpen(pattern: Pattern, tail: string, context = ''): boolean {
  const open = new RegExp(`(?:${guardedPre(pattern)})$`, 'y');
  open.lastIndex = context.length;
  return open.test(context + tail);
}

function matches(pattern: Pattern, text: string): boolean {
  return new RegExp(`^(?:${pattern.re})$`).test(text);
}

const version = seq(behind('(?<![a-z])'), lit('gpt'), opt(seq(lit('-'), rep(atom('[0-9]'), 1, 2))), ahead('(?![a-z0-9])'));
const host = seq(rep(seq(rep(atom('[a-z]'), 1), lit('.')), 0), lit('internal'), ahead('(?![a-z]|\\.[a-z])', '\\.?'));

describe('open tails', () => {
  it.each([
    ['a prefix of the name', version, 'gp', '', true],
    ['the whole name (a version may follow)', version, 'gpt', '', true],
    ['the name and the separator', version, 'gpt-', '', true],
    ['a full match with the longest version', version, 'gpt-42', '', true],
    ['a match followed by a deciding character', version, 'gpt-4 ', '', false],
    ['a mismatch', version, 'gpx', '', false],
    ['a lookbehind that already fails', version, 'gp', 'a', false],
    ['a host label', host, 'db.', '', true],
    ['a host with a dot after it (two-character lookahead)', host, 'db.internal.', '', true],
    ['a host then more labels (could still end in .internal)', host, 'db.internal.c', '', true],
    ['a host then a hyphen', host, 'db.internal-', '', false],
    ['a host then a space', host, 'db.internal ', '', false],
  ])('%s', (_name, pattern, tail, context, want) => {
    expect(isOpen(pattern, tail, context)).toBe(want);
  });

  it('keeps every prefix of every match open', () => {
    const pattern = alt(version, host, seq(lit('sk-'), rep(atom('[a-z0-9]'), 4)));
    for (const text of ['gpt', 'gpt-4', 'gpt-42', 'a.b.internal', 'internal', 'sk-abcd', 'sk-abcdef']) {
      expect(matches(pattern, text)).toBe(true);
      for (let k = 1; k <= text.length; k += 1) expect(isOpen(pattern, text.slice(0, k))).toBe(true);
    }
  });
});

describe('caseless', () => {
  it.each([
    ['letters', 'gpt', '[gG][pP][tT]'],
    ['a class range', '[a-f0-9]', '[a-fA-F0-9]'],
    ['an upper-case range', '[A-Z]', '[A-Za-z]'],
    ['a negated class', '[^a-z]', '[^a-zA-Z]'],
    ['escapes stay', '\\s\\W\\u200b\\.', '\\s\\W\\u200b\\.'],
    ['group syntax stays', '(?<![a-z])(?:x)(?=y)', '(?<![a-zA-Z])(?:[xX])(?=[yY])'],
    ['single letters in a class', '[xy_]', '[xXyY_]'],
  ])('%s', (_name, source, want) => {
    expect(caseless(source)).toBe(want);
    expect(new RegExp(`^${caseless(source)}$`).source).toBe(`^${want}$`);
  });

  it('matches like the i flag on ASCII and non-ASCII text', () => {
    const source = '(?<![a-z0-9])open(?:[\\W_]){0,3}ai(?![a-z])';
    const folded = new RegExp(caseless(source));
    const flagged = new RegExp(source, 'i');
    for (const text of ['OpenAI', 'open ai', 'OPEN-AI', 'xopenai', 'openaix', 'ÖpenAI', 'open\u212aai', 'open_ai', '日本OpenAI語']) {
      expect(folded.test(text)).toBe(flagged.test(text));
    }
  });
});
