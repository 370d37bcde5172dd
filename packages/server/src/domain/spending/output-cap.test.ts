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
