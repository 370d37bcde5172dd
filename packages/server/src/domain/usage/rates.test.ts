import { describe, expect, it } from 'vitest';
import { DEFAULT_STU_RATES, readStuRates, stuForRun } from './rates.ts';

describe('stuForRun', () => {
  it.each([
    ['Prelude', 100, 50, 150],
    ['Sonata', 100, 50, 450],
    ['Symphony', 100, 50, 1_500],
    ['Concerto', 100, 50, 1_800],
    ['Sonata', 0, 0, 0],
  ] as const)('%s with %i in / %i out = %i STU', (alias, inputTokens, outputTokens, want) => {
    expect(stuForRun({ alias, inputTokens, outputTokens })).toBe(want);
  });

  it('rounds fractional rates up', () => {
    expect(stuForRun({ alias: 'Prelude', inputTokens: 1, outputTokens: 2 }, { ...DEFAULT_STU_RATES, Prelude: 0.5 })).toBe(2);
  });

  it('grows in cost from Prelude to Concerto, as the spec says', () => {
    const { Prelude, Sonata, Symphony, Concerto } = DEFAULT_STU_RATES;
    expect(Prelude < Sonata && Sonata < Symphony && Symphony < Concerto).toBe(true);
  });
});

describe('readStuRates', () => {
  it('keeps defaults and overrides what is set', () => {
    expect(readStuRates({})).toEqual(DEFAULT_STU_RATES);
    expect(readStuRates({ STU_RATE_SONATA: '2.5', STU_RATE_PRELUDE: '' })).toEqual({ ...DEFAULT_STU_RATES, Sonata: 2.5 });
  });

  it.each(['0', '-1', 'abc', 'Infinity'])('rejects %j', (value) => {
    expect(() => readStuRates({ STU_RATE_SYMPHONY: value })).toThrow('STU_RATE_SYMPHONY must be a positive number');
  });
});
