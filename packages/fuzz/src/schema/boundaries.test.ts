import { describe, expect, it } from 'vitest';
import { boundaryValues } from './boundaries.ts';

describe('boundaryValues', () => {
  it('fills a string to its length limits in code points, as JSON Schema counts them, never splitting a surrogate pair', () => {
    const values = boundaryValues({ type: 'string', minLength: 2, maxLength: 5 }, {}, 'a😀');
    expect(values).toEqual(['a😀', 'a😀a😀a']);
    for (const value of values as string[]) expect(value.isWellFormed()).toBe(true);
  });

  it('fills from `a` when the sample is empty, and offers the empty string when there is no minLength', () => {
    expect(boundaryValues({ type: 'string', maxLength: 3 }, {}, '')).toEqual(['aaa', '']);
  });
});
