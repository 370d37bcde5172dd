/**
 * @module Tests of the open tails' alphabets: what `alphabetOf` reads from a regex source, and, for every
 * rule (fixed and deployment terms, in both compiled forms), that no open tail starts before the point
 * `tailStart` lets the stream redactor start its search: the skip never hides an open tail.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Alphabet, alphabetOf, tailStart } from './alphabet.ts';
import { caseless, guardedPre } from './pattern.ts';
import { caseInsensitive, caseSensitive, termRules } from './rules.ts';

function members(alphabet: Alphabet | null): string {
  if (!alphabet) return 'unknown';
  let out = '';
  for (let code = 32; code < 127; code += 1) if (alphabet.ascii[code] === 1) out += String.fromCharCode(code);
  return `${out}${alphabet.other ? ' +other' : ''}`;
}

describe('alphabetOf', () => {
  it.each([
    ['literals', 'gpt', false, 'gpt'],
    ['both cases with the i flag', 'gpt', true, 'GPTgpt'],
    ['a class and a range', '[a-c_]x', false, '_abcx'],
    ['escapes', '\\.\\/\\-', false, '-./'],
    ['lookarounds consume nothing', '(?<![a-z])(?=q)x(?!y)', false, 'x'],
    ['nested lookarounds', '(?=(?:a|[b-d])+)e', false, 'e'],
    ['quantifiers and groups', '(?:ab){0,3}c*d+e?', false, 'abcde'],
    ['a negated class takes the rest and non-ASCII', '[^a-z ]', false, null],
    ['\\W takes non-ASCII', '[\\W_]', false, null],
    ['the never-matching tail', '(?!)', false, ''],
  ])('%s', (_name, source, insensitive, want) => {
    const alphabet = alphabetOf(source, insensitive);
    if (want !== null) expect(members(alphabet)).toBe(want);
    else {
      expect(alphabet?.other).toBe(true);
      expect(alphabet?.ascii['a'.charCodeAt(0)]).toBe(0);
    }
  });

  it('reads negated classes and \\s', () => {
    const alphabet = alphabetOf('[^\\s"]', false)!;
    expect(alphabet.ascii[' '.charCodeAt(0)]).toBe(0);
    expect(alphabet.ascii['"'.charCodeAt(0)]).toBe(0);
    expect(alphabet.ascii['x'.charCodeAt(0)]).toBe(1);
    expect(alphabet.other).toBe(true);
  });

  it('gives up (null) on syntax it does not read', () => {
    expect(alphabetOf('(?<name>a)', false)).toBeNull();
    expect(alphabetOf('\\1', false)).toBeNull();
    expect(alphabetOf('[]', false)).toBeNull();
  });

  it('reads every rule', () => {
    for (const pattern of [...caseInsensitive, ...caseSensitive]) expect(alphabetOf(guardedPre(pattern), false)).not.toBeNull();
  });
});

// The open tails as the redactor compiles them: the ASCII set (the `i` flag for the case-insensitive
// rules) and the set for other text (both cases spelled out).
const terms = termRules(['acme-sonata-v2', 'inference.acme-prod.net', 'prov-Xk29fLq0Zt7Wm3Np8Rv5']);
const openTails = [
  ...[...caseInsensitive, ...terms].flatMap((p) => [
    { source: guardedPre(p), flags: 'i' },
    { source: caseless(guardedPre(p)), flags: '' },
  ]),
  ...caseSensitive.map((p) => ({ source: guardedPre(p), flags: '' })),
].map(({ source, flags }) => ({ open: new RegExp(`(?:${source})$`, `y${flags}`), alphabet: alphabetOf(source, flags === 'i') }));

const PIECES = [
  'OpenAI',
  'Open',
  'o p e n',
  'g.p.t',
  'GPT-4o',
  ' 3.5',
  'Claude',
  'Cl',
  'Meta',
  'phi',
  'o3-mini',
  'Command R',
  'service_sk_live_',
  'AbCdEfGhIjKlMnOpQrStUvWx',
  'sk-proj-abc',
  'Bearer ',
  'abc.def-123',
  'eyJhbGciOiJIUzI1NiJ9.',
  'AKIA',
  'IOSFODNN7EXAMPLE',
  '9f86d081884c7d659a2feaa0c55ad015',
  'dGhpcyBpcyBhIHZlcnkgc2VjcmV0IHRva2VuIDEyMzQ1Ng',
  'password=',
  'apiKey": "',
  '10.0.',
  '3.7',
  ':5432',
  '172.20.0',
  'fe80::1',
  'fd12:',
  'localhost',
  'db.internal',
  '.svc.cluster.local',
  'postgres://u:p@db/x',
  'https://user:pw@host',
  '/home/',
  '/Users/bob',
  'C:\\',
  '\\\\srv\\',
  '~/',
  'file:///',
  'node:internal/x',
  'at ',
  'async ',
  '(/app/x.ts:1:2)',
  'com.example.Foo.bar(Foo.java:42)',
  'java.lang.NullPointerException: ',
  'Exception in thread "main" ',
  'Error: ',
  'TypeError: ',
  'Error [E_X]: ',
  'File "/srv/a.py", line 3, in ',
  'Traceback (most recent call last):',
  'panic: ',
  'goroutine 1 [running',
  '\tmain.go:42 +0x1d',
  'runtime error: ',
  'together.ai',
  'Fireworks AI',
  'acme_sonata',
  '-v2',
  'inference.acme',
  'Sonata',
  'run_AbCdEfGhIjKlMnOpQrSt',
  '2026-11-27T05:31:12.345Z',
  '\u00e9',
  '\u{1F600}',
  ' ',
  '\n',
  '.',
  '-',
  '_',
  ':',
  '/',
  '"',
  '=',
  '\t',
];

const text = fc
  .array(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...PIECES) }, { weight: 1, arbitrary: fc.string({ maxLength: 6 }) }), { maxLength: 10 })
  .map((parts) => parts.join(''));

/** Every position from which an open tail runs to the end of `text`, per open-tail expression. */
function firstOpenAt(open: RegExp, text: string): number {
  for (let at = 0; at <= text.length; at += 1) {
    open.lastIndex = at;
    if (open.test(text)) return at;
  }
  return -1;
}

describe('tailStart', () => {
  it('starts after the last character outside the alphabet, never before `from`', () => {
    const alphabet = alphabetOf('[a-z]*', false)!;
    expect(tailStart('ab cd', 0, alphabet)).toBe(3);
    expect(tailStart('ab cd', 4, alphabet)).toBe(4);
    expect(tailStart('abcd', 0, alphabet)).toBe(0);
    expect(tailStart('ab ', 0, alphabet)).toBe(3);
  });

  it('never skips a position where a rule has an open tail', () => {
    fc.assert(
      fc.property(text, (t) => {
        for (const { open, alphabet } of openTails) {
          const first = firstOpenAt(open, t);
          if (first >= 0 && alphabet) expect(first).toBeGreaterThanOrEqual(tailStart(t, 0, alphabet));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('never skips one on arbitrary Unicode', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 24 }), (t) => {
        for (const { open, alphabet } of openTails) {
          const first = firstOpenAt(open, t);
          if (first >= 0 && alphabet) expect(first).toBeGreaterThanOrEqual(tailStart(t, 0, alphabet));
        }
      }),
      { numRuns: 200 },
    );
  });
});
