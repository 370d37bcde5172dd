/**
 * @module Tests of the random identifiers: unbiased base62, and never altered by the redactor.
 */
import { describe, expect, it } from 'vitest';
import { redactText } from './redact/index.ts';
import { newId, randomBase62 } from './random.ts';

describe('random identifiers', () => {
  it('draws base62 of the asked length', () => {
    expect(randomBase62(32)).toMatch(/^[0-9A-Za-z]{32}$/);
    expect(newId('run')).toMatch(/^run_[0-9A-Za-z]{20}$/);
  });

  // Found by the contract fuzzer: an `int_…` id that happened to contain a provider-like run of letters
  // ("gpt", "qwq", "o3") came back with "[redacted]" inside it. About one id in a few hundred did; 20,000
  // draws make a regression all but certain to show.
  it('never draws an identifier the redactor would change', () => {
    for (let i = 0; i < 20_000; i++) {
      const id = newId('int');
      expect(redactText(id)).toBe(id);
    }
  });
});
