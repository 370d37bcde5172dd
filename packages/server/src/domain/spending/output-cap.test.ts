import { describe, expect, it } from 'vitest';
import { countTextTokens } from '../../engine/index.ts';
import { createOutputCap } from './output-cap.ts';

const FLOOD = 'The quarterly numbers look strong across every region we track. '.repeat(100);

describe('the output cap', () => {
  it('cuts one large fragment to a prefix of at most the cap, as text', () => {
    const cap = createOutputCap(16);
    const out = cap.push(FLOOD);
    expect(typeof out).toBe('string');
    expect(FLOOD.startsWith(out)).toBe(true);
    expect(out.length).toBeGreaterThan(0);
    expect(countTextTokens(out)).toBeLessThanOrEqual(16);
    expect(cap.cut).toBe(true);
    expect(cap.push('more')).toBe('');
  });

  it('cuts a stream of fragments at the cap, and passes an answer within it whole', () => {
    const cap = createOutputCap(16);
    let out = '';
    for (let i = 0; i < FLOOD.length; i += 7) out += cap.push(FLOOD.slice(i, i + 7));
    expect(FLOOD.startsWith(out)).toBe(true);
    expect(countTextTokens(out)).toBeLessThanOrEqual(16);
    expect(cap.cut).toBe(true);
    const roomy = createOutputCap(1_000);
    expect(roomy.push('A short answer.')).toBe('A short answer.');
    expect(roomy.cut).toBe(false);
  });
});

describe('the output cap near its limit', () => {
  // Texts whose tokens outnumber their characters (rare scripts, emoji sequences) as well as plain prose.
  const TEXTS = ['A short answer.', '𓀀𓀁𓀂𓀃𓀄𓀅𓀆𓀇𓀈𓀉', '👩🏽‍💻🧑🏿‍🚀👨‍👩‍👧‍👦🏳️‍🌈', 'Résumé naïve façade — “quoted” ✓', '数据分析报告显示第三季度的销售额有所增长'];

  it('passes a text whole exactly when its tokens fit, whatever its script, in one fragment or many', () => {
    for (const text of TEXTS) {
      const tokens = countTextTokens(text);
      for (const capTokens of [tokens - 1, tokens, tokens + 1, text.length, text.length + 3]) {
        if (capTokens < 1) continue;
        for (const step of [text.length, 3, 1]) {
          const cap = createOutputCap(capTokens);
          let out = '';
          for (let i = 0; i < text.length; i += step) out += cap.push(text.slice(i, i + step));
          expect(text.startsWith(out), `${text} at ${capTokens}`).toBe(true);
          expect(countTextTokens(out)).toBeLessThanOrEqual(capTokens);
          expect(out === text, `${text} (${tokens} tokens) at a cap of ${capTokens}`).toBe(tokens <= capTokens);
          expect(cap.cut).toBe(tokens > capTokens);
        }
      }
    }
  });

  it('counts what it received, once cut, as at least what passed', () => {
    const cap = createOutputCap(16);
    let out = '';
    for (let i = 0; i < FLOOD.length; i += 40) out += cap.push(FLOOD.slice(i, i + 40));
    expect(cap.cut).toBe(true);
    expect(cap.receivedTokens).toBeGreaterThanOrEqual(countTextTokens(out));
  });

  it('tokenizes each character of a long stream of small fragments once, not what passed again at each recount', () => {
    // 400 fragments of 8 bytes and 3 tokens each (what a model streams), under a cap of 1,600 tokens: past 1,600
    // bytes, counting what passed uncounted gives back the room its bytes took beyond its tokens.
    const fragments = Array.from({ length: 400 }, (_, i) => ` tok${100 + i}.`);
    const text = fragments.join('');
    const tokens = countTextTokens(text);
    expect(Buffer.byteLength(text)).toBeGreaterThan(1_600);
    expect(tokens).toBeLessThanOrEqual(1_600);
    // What the cap gives the tokenizer, in characters.
    let tokenized = 0;
    const cap = createOutputCap(1_600, (counted) => {
      tokenized += counted.length;
      return countTextTokens(counted);
    });
    let out = '';
    for (const fragment of fragments) out += cap.push(fragment);
    expect(out).toBe(text);
    expect(cap.cut).toBe(false);
    expect(cap.receivedTokens).toBeGreaterThanOrEqual(tokens);
    expect(tokenized).toBe(text.length);
  });
});
