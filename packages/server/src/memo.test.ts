/**
 * @module Tests of the text memo: values kept and reused, bounded in entries and characters, least
 * recently used out first, a text too long never kept.
 */
import { describe, expect, it } from 'vitest';
import { createTextMemo } from './memo.ts';

describe('text memo', () => {
  it('computes a text once and answers it again from memory', () => {
    const memo = createTextMemo<number>({ maxEntries: 10, maxChars: 1_000 });
    const computed: string[] = [];
    const length = (text: string) => {
      computed.push(text);
      return text.length;
    };
    expect(memo.get('invoices', length)).toBe(8);
    expect(memo.get('invoices', length)).toBe(8);
    expect(memo.peek('invoices')).toBe(8);
    expect(memo.peek('unknown')).toBeUndefined();
    expect(computed).toEqual(['invoices']);
  });

  it('keeps at most maxEntries, the least recently used out first', () => {
    const memo = createTextMemo<string>({ maxEntries: 3, maxChars: 1_000 });
    for (const text of ['a', 'b', 'c']) memo.set(text, text.toUpperCase());
    expect(memo.peek('a')).toBe('A'); // a is now the most recent
    memo.set('d', 'D');
    expect(memo.size).toBe(3);
    expect(memo.peek('b')).toBeUndefined();
    expect([memo.peek('a'), memo.peek('c'), memo.peek('d')]).toEqual(['A', 'C', 'D']);
  });

  it('keeps at most maxChars of text, and never a text over a quarter of it', () => {
    const memo = createTextMemo<number>({ maxEntries: 1_000, maxChars: 100 });
    memo.set('x'.repeat(26), 1);
    expect(memo.size).toBe(0);
    for (let i = 0; i < 10; i += 1) memo.set(`${i}`.repeat(25), i);
    expect(memo.size).toBe(4);
    expect(memo.chars).toBe(100);
    expect(memo.peek('9'.repeat(25))).toBe(9);
    expect(memo.peek('5'.repeat(25))).toBeUndefined();
    memo.set('9'.repeat(25), 9); // again: counted once
    expect(memo.chars).toBe(100);
  });
});
