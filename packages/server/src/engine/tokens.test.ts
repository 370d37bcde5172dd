import { describe, expect, it } from 'vitest';
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
    const messages = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hello' }] as const;
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
