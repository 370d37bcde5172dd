import { describe, expect, it } from 'vitest';
import { REQUEST_PREVIEW_CHARS, requestPreview } from './request-preview.ts';

const user = (content: string) => ({ role: 'user' as const, content });

describe('requestPreview', () => {
  it('is the last user message, whitespace folded', () => {
    expect(requestPreview([user('first'), { role: 'assistant', content: 'ok' }, user('  Which\n\tinvoices   are overdue?  ')])).toBe(
      'Which invoices are overdue?',
    );
  });

  it('is null without a user message, or when it is blank', () => {
    expect(requestPreview([{ role: 'system', content: 'Be brief.' }])).toBeNull();
    expect(requestPreview([user(' \n ')])).toBeNull();
    expect(requestPreview([])).toBeNull();
  });

  it(`cuts a long message at ${REQUEST_PREVIEW_CHARS} characters, the last one an ellipsis`, () => {
    const preview = requestPreview([user('word '.repeat(200_000))])!;
    expect(Array.from(preview)).toHaveLength(REQUEST_PREVIEW_CHARS);
    expect(preview.endsWith('word…')).toBe(true);
    expect(requestPreview([user('x'.repeat(REQUEST_PREVIEW_CHARS))])).toBe('x'.repeat(REQUEST_PREVIEW_CHARS));
    expect(Array.from(requestPreview([user('x'.repeat(REQUEST_PREVIEW_CHARS + 1))])!)).toHaveLength(REQUEST_PREVIEW_CHARS);
  });

  it('counts characters, not UTF-16 units, and never splits a surrogate pair', () => {
    const emoji = '😀'.repeat(REQUEST_PREVIEW_CHARS + 5);
    const preview = requestPreview([user(emoji)])!;
    expect(Array.from(preview)).toEqual([...Array(REQUEST_PREVIEW_CHARS - 1).fill('😀'), '…']);
    // A message whose scanned head (4,096 UTF-16 units) ends between the halves of a pair, after a run of whitespace.
    expect(requestPreview([user(`a${' '.repeat(4094)}😀y`)])).toBe('a…');
    // Leading whitespace is skipped before the scan.
    expect(requestPreview([user(`${' '.repeat(10_000)}😀y`)])).toBe('😀y');
  });
});
