import { describe, expect, it } from 'vitest';
import { encode } from 'gpt-tokenizer';
import {
  countMessageTokens,
  countMessageTokensAsync,
  countTextTokens,
  countTextTokensAsync,
  countToolCallTokens,
  keptCount,
  truncateShortText,
  truncateToTokens,
} from './tokens.ts';

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

  it.each([1, 2, 5, 9, 20])('truncateToTokens keeps at most %i tokens, as a prefix', async (max) => {
    const text = 'Reconcile the open invoices against the ledger before deciding anything.';
    const { text: cut, tokens } = await truncateToTokens(text, max);
    expect(tokens).toBe(countTextTokens(cut));
    expect(countTextTokens(cut)).toBeLessThanOrEqual(max);
    expect(text.startsWith(cut)).toBe(true);
    if (max >= countTextTokens(text)) expect(cut).toBe(text);
    else expect(cut.length).toBeLessThan(text.length);
  });

  it('never leaves half a character', async () => {
    const { text: cut } = await truncateToTokens('🎻🎻🎻🎻', 1);
    expect(cut).not.toContain('\uFFFD');
    expect(countTextTokens(cut)).toBeLessThanOrEqual(1);
  });
});

describe('long pre-tokens', () => {
  // BPE merges inside one pre-token (the tokenizer's own split) cost quadratic time: a
  // 500,000-character run without spaces held the event loop for minutes, 80,000 no-break spaces
  // for 79 s. Pre-tokens past 256 characters are counted in 256-character slices.
  const slices = (token: string) => Array.from({ length: Math.ceil(token.length / 256) }, (_, i) => encode(token.slice(i * 256, i * 256 + 256)).length);
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

  it('counts a pre-token past 256 characters as the sum of its 256-character slices', () => {
    const run = 'w'.repeat(256);
    expect(countTextTokens(run.repeat(3))).toBe(3 * countTextTokens(run));
    // The space before a word belongs to its pre-token.
    expect(countTextTokens(`hello ${run}${run} world`)).toBe(encode('hello').length + sum(slices(` ${run}${run}`)) + encode(' world').length);
  });

  it.each([
    ['no spaces', 'x'.repeat(500_000)],
    ['no-break spaces', '\u00a0'.repeat(500_000)],
    ['newlines', '\n'.repeat(500_000)],
    ['punctuation then newlines and slashes', `!${'\n/'.repeat(250_000)}`],
  ])('counts and cuts 500,000 characters of %s in slices (seconds before, minutes for some)', async (_, text) => {
    expect(countTextTokens(text)).toBe(sum(slices(text)));
    const { text: cut, tokens } = await truncateToTokens(`About "${text}"`, 4000);
    expect(tokens).toBe(countTextTokens(cut));
    expect(countTextTokens(cut)).toBeLessThanOrEqual(4000);
    expect(cut.length).toBeGreaterThan(0);
  });

  it('leaves pre-tokens up to 256 characters and ordinary text counted exactly as the tokenizer does', () => {
    const run = 'w'.repeat(256);
    expect(countTextTokens(run)).toBe(encode(run).length);
    // Long ordinary text is encoded in stretches cut between pre-tokens: the count is the same.
    for (const text of ['the quick brown fox '.repeat(5000), 'Reconcile: the ledger,\n\n  before (deciding) 12345 anything!\t'.repeat(2000)]) {
      expect(countTextTokens(text)).toBe(encode(text).length);
    }
  });

  it('counts the same asynchronously, pausing for the event loop', async () => {
    const text = `${'the quick brown fox '.repeat(5000)}${'x'.repeat(3000)}`;
    expect(await countTextTokensAsync(text)).toBe(countTextTokens(text));
    const messages = [{ role: 'user', content: text }] as const;
    expect(await countMessageTokensAsync(messages)).toBe(countMessageTokens(messages));
  });

  it('keeps the count of a text that fits when it is cut, and of a tool call’s arguments, for their next counts', async () => {
    const text = `Open opportunities next quarter ${Date.now()}`;
    expect(keptCount(text)).toBeUndefined();
    const { text: kept, tokens } = await truncateToTokens(text, 1_000);
    expect(kept).toBe(text);
    expect(tokens).toBe(encode(text).length);
    expect(keptCount(text)).toBe(tokens);

    const call = { name: 'crm.search', arguments: { query: `pipeline ${Date.now()}` } };
    const json = JSON.stringify(call.arguments);
    expect(keptCount(json)).toBeUndefined();
    const once = countToolCallTokens(call);
    expect(once).toBe(encode(call.name).length + encode(json).length);
    expect(keptCount(json)).toBe(encode(json).length);
    expect(countToolCallTokens({ ...call, arguments: { ...call.arguments } })).toBe(once);
  });

  it('answers a text counted before with the same count (kept by the async count, read by both)', async () => {
    const text = `Which invoices are overdue? ${'a'.repeat(300)} and more ${Date.now()}`;
    const fresh = countTextTokens(text);
    expect(fresh).toBeGreaterThan(10);
    expect(await countTextTokensAsync(text)).toBe(fresh);
    expect(await countTextTokensAsync(text)).toBe(fresh);
    expect(countTextTokens(text)).toBe(fresh);
    expect(await countMessageTokensAsync([{ role: 'user', content: text }])).toBe(countMessageTokens([{ role: 'user', content: text }]));
  });
});

describe('cutting a text inside a character', () => {
  it('leaves nothing of the cut character behind for the next text cut anywhere in the process', async () => {
    // Each of these characters is four tokens: 23 tokens end inside the sixth.
    const hieroglyphs = '𓀀𓀁𓀂𓀃𓀄𓀅𓀆𓀇𓀈𓀉';
    expect(truncateShortText(hieroglyphs, 23)).toBe('𓀀𓀁𓀂𓀃𓀄');
    expect(await truncateToTokens(hieroglyphs, 23)).toEqual({ text: '𓀀𓀁𓀂𓀃𓀄', tokens: 20 });
    // The next cut, of another text: nothing of the sixth character's bytes comes out at its start.
    const prose = 'The quarterly numbers look strong across every region we track. '.repeat(20);
    const cut = truncateShortText(prose, 10);
    expect(prose.startsWith(cut)).toBe(true);
    expect(cut).not.toContain('\uFFFD');
    expect((await truncateToTokens(prose, 10)).text).toBe(cut);
  });
});
