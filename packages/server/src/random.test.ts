/**
 * @module Tests of the random identifiers: unbiased base62, and never altered by the redactor; the short
 * denylist they are checked against says exactly what the full redactor would alter in a draw.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { redactText } from './redact/index.ts';
import { PROVIDER_NAMES } from './redact/rules.ts';
import { BASE62_ALPHABET, deniedIdentifier, newId, randomBase62 } from './random.ts';

/** Base62 from the CSPRNG, not checked against anything (a small bias is harmless here). */
function rawBase62(length: number): string {
  return Array.from(randomBytes(length), (byte) => BASE62_ALPHABET[byte % 62]).join('');
}

/** Whether the full redactor alters the draw behind an identifier's prefix. */
function redactorAlters(random: string): boolean {
  return redactText(`_${random}`) !== `_${random}`;
}

/** `word` in a random case. */
function anyCase(word: string): string {
  return Array.from(word, (ch) => (randomBytes(1)[0]! % 2 ? ch.toUpperCase() : ch.toLowerCase())).join('');
}

describe('random identifiers', () => {
  it('draws base62 of the asked length', () => {
    expect(randomBase62(32)).toMatch(/^[0-9A-Za-z]{32}$/);
    expect(randomBase62(43)).toMatch(/^[0-9A-Za-z]{43}$/);
    expect(randomBase62(1000)).toMatch(/^[0-9A-Za-z]{1000}$/);
    expect(newId('run')).toMatch(/^run_[0-9A-Za-z]{20}$/);
  });

  it('draws every character equally often (no modulo bias)', () => {
    const counts = new Map<string, number>();
    for (const ch of randomBase62(620_000)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // 10,000 expected each; a biased draw (byte % 62 over all 256 bytes) puts the first 8 at ~12,100.
    for (const count of counts.values()) expect(Math.abs(count - 10_000)).toBeLessThan(600);
  });

  // Found by the contract fuzzer: an `int_…` id that happened to contain a provider-like run of letters
  // ("gpt", "qwq", "o3") came back with "[redacted]" inside it. About one id in a few hundred did; 20,000
  // draws make a regression all but certain to show.
  it('never draws an identifier the redactor would change', () => {
    for (let i = 0; i < 20_000; i++) {
      const id = newId('int');
      expect(redactText(id)).toBe(id);
    }
    for (const length of [8, 16, 24, 32]) {
      for (let i = 0; i < 2_000; i++) expect(redactorAlters(randomBase62(length))).toBe(false);
    }
  });

  it('denies exactly what the redactor would alter in unchecked draws', () => {
    // "gpt", "qwq", … turn up in about one draw in 700: drawn until the comparison saw the redactor at work 20 times
    // (a fixed 15,000 draws saw it 15-35 times in 30 runs, and 9 times once: too few for a fixed threshold).
    let altered = 0;
    for (let draws = 0; altered < 20 && draws < 300_000; draws++) {
      const draw = rawBase62(20);
      const alters = redactorAlters(draw);
      if (alters) altered += 1;
      expect({ draw, denied: deniedIdentifier(draw) }).toEqual({ draw, denied: alters });
    }
    expect(altered).toBe(20);
  });

  it('denies exactly what the redactor would alter, for every name and special word planted in a draw', () => {
    const words = [
      ...PROVIDER_NAMES.map((n) => n.name.replaceAll('|', '')),
      'commandr',
      'commandrplus',
      'togethercomputer',
      'TogetherAI',
      'FireworksAI',
      '01ai',
      'localhost',
      'o3',
      'eyJhbGciOiJIUzI1',
      'AKIAABCDEFGHIJ012345',
      'ASIA0123456789ABCDEF',
    ];
    const cases: string[] = [];
    for (const word of words) {
      for (const cased of [word, word.toUpperCase(), anyCase(word)]) {
        cases.push(cased, `${cased}7`, `${cased}7x`, `${cased}x`, `${cased}X`, `x${cased}`, `7${cased}`, `X${cased}`, `Ab${cased}9z`);
        cases.push(`${cased}${rawBase62(6)}`, `${rawBase62(6)}${cased}`, `${rawBase62(5)}${cased}${rawBase62(5)}`);
      }
    }
    for (const draw of cases) {
      expect({ draw, denied: deniedIdentifier(draw) }).toEqual({ draw, denied: redactorAlters(draw) });
    }
  });

  it('keeps the names out of long secrets, which the redactor takes whole for a generated secret', () => {
    // Redrawn until the redactor left them alone, they used to come out without a digit (5,000 draws each).
    const secrets = Array.from({ length: 20 }, () => randomBase62(48));
    expect(secrets.some((secret) => /[0-9]/.test(secret))).toBe(true);
    const secret = secrets[0]!;
    expect(deniedIdentifier(secret)).toBe(false);
    expect(deniedIdentifier(`${secret.slice(0, 20)}gpt${secret.slice(23)}`)).toBe(true);
  });
});
