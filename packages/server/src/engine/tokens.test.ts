import { describe, expect, it } from 'vitest';
import { encode } from 'gpt-tokenizer';
import { countMessageTokens, countTextTokens, truncateToTokens } from './tokens.ts';

describe('tokens', () => {
  it.each([
    ['', 0],
    ['hello', 1],
    ['Hello world, this is the sales agent.', 9],
    // special-token text in user input is ordinary text, not a control token and not an error
    ['<|endoftext|>', 7],
  ])('countTextTokens(%j) = %i', (text, want) => {
    expect(countTextTokens(text)).toBe(want);
  });

  it('counts a conversation with chat framing', () => {
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hello' },
    ] as const;
    // 3 (reply) + 2 × 3 (framing) + role tokens + content tokens
    const want = 3 + 6 + countTextTokens('system') + countTextTokens('Be brief.') + countTextTokens('user') + 1;
    expect(countMessageTokens(messages)).toBe(want);
  });

  it.each([1, 2, 5, 9, 20])('truncateToTokens keeps at most %i tokens, as a prefix', (max) => {
    const text = 'Reconcile the open invoices against the ledger before deciding anything.';
    const cut = truncateToTokens(text, max);
    expect(countTextTokens(cut)).toBeLessThanOrEqual(max);
    expect(text.startsWith(cut)).toBe(true);
    if (max >= countTextTokens(text)) expect(cut).toBe(text);
    else expect(cut.length).toBeLessThan(text.length);
  });

  it('never leaves half a character', () => {
    const cut = truncateToTokens('🎻🎻🎻🎻', 1);
    expect(cut).not.toContain('\uFFFD');
    expect(countTextTokens(cut)).toBeLessThanOrEqual(1);
  });
});

describe('long runs without whitespace', () => {
  // BPE merges inside one pre-token cost quadratic time: a 500,000-character run would hold the
  // event loop for minutes. Runs past 256 characters are counted in 256-character slices.
  it('counts a run past 256 characters as the sum of its 256-character slices', () => {
    const run = 'w'.repeat(256);
    expect(countTextTokens(run.repeat(3))).toBe(3 * countTextTokens(run));
    expect(countTextTokens(`hello ${run}${run} world`)).toBe(countTextTokens('hello ') + 2 * countTextTokens(run) + countTextTokens(' world'));
  });

  it('leaves runs up to 256 characters and ordinary text counted exactly as the tokenizer does', () => {
    const run = 'w'.repeat(256);
    expect(countTextTokens(run)).toBe(encode(run).length);
    expect(countTextTokens('the quick brown fox '.repeat(1000))).toBe(encode('the quick brown fox '.repeat(1000)).length);
  });
});
