import { describe, expect, it } from 'vitest';
import type { Parameter } from '../contract/operations.ts';
import { deserializeParameter, serializeParameter } from './serialize.ts';

const param = (p: Partial<Parameter> & Pick<Parameter, 'name' | 'in'>): Parameter => ({
  required: false,
  style: p.in === 'query' || p.in === 'cookie' ? 'form' : 'simple',
  explode: p.in === 'query' || p.in === 'cookie',
  schema: {},
  examples: [],
  ...p,
});

describe('serializeParameter', () => {
  it.each([
    ['path simple scalar', param({ name: 'id', in: 'path' }), 'a b/c', { in: 'path', text: 'a%20b%2Fc' }],
    ['path simple array', param({ name: 'id', in: 'path' }), [3, 4, 5], { in: 'path', text: '3,4,5' }],
    ['path simple object', param({ name: 'id', in: 'path' }), { r: 1, g: 2 }, { in: 'path', text: 'r,1,g,2' }],
    ['path simple object exploded', param({ name: 'id', in: 'path', explode: true }), { r: 1, g: 2 }, { in: 'path', text: 'r=1,g=2' }],
    ['path label', param({ name: 'id', in: 'path', style: 'label' }), [3, 4], { in: 'path', text: '.3,4' }],
    ['path matrix', param({ name: 'id', in: 'path', style: 'matrix' }), 5, { in: 'path', text: ';id=5' }],
    ['path matrix exploded array', param({ name: 'id', in: 'path', style: 'matrix', explode: true }), [3, 4], { in: 'path', text: ';id=3;id=4' }],
    [
      'query form exploded array',
      param({ name: 'tag', in: 'query' }),
      ['a', 'b'],
      {
        in: 'query',
        pairs: [
          ['tag', 'a'],
          ['tag', 'b'],
        ],
      },
    ],
    ['query form array', param({ name: 'tag', in: 'query', explode: false }), ['a', 'b'], { in: 'query', pairs: [['tag', 'a,b']] }],
    [
      'query form exploded object',
      param({ name: 'f', in: 'query' }),
      { x: 1, y: 'z' },
      {
        in: 'query',
        pairs: [
          ['x', '1'],
          ['y', 'z'],
        ],
      },
    ],
    ['query deepObject', param({ name: 'f', in: 'query', style: 'deepObject', explode: true }), { x: 1 }, { in: 'query', pairs: [['f[x]', '1']] }],
    ['query pipeDelimited', param({ name: 'f', in: 'query', style: 'pipeDelimited', explode: false }), [1, 2], { in: 'query', pairs: [['f', '1|2']] }],
    ['query spaceDelimited', param({ name: 'f', in: 'query', style: 'spaceDelimited', explode: false }), [1, 2], { in: 'query', pairs: [['f', '1%202']] }],
    ['query reserved characters', param({ name: 'q', in: 'query' }), 'a&b=c', { in: 'query', pairs: [['q', 'a%26b%3Dc']] }],
    ['header simple array', param({ name: 'X-Ids', in: 'header' }), ['a', 'b'], { in: 'header', value: 'a,b' }],
    ['header scalar', param({ name: 'X-N', in: 'header' }), 7, { in: 'header', value: '7' }],
    ['cookie', param({ name: 's', in: 'cookie' }), 'abc', { in: 'cookie', value: 'abc' }],
    [
      'content (JSON) parameter',
      param({ name: 'f', in: 'query', contentType: 'application/json' }),
      { a: 1 },
      { in: 'query', pairs: [['f', '%7B%22a%22%3A1%7D']] },
    ],
  ])('%s', (_name, p, value, want) => {
    expect(serializeParameter(p, value)).toEqual(want);
  });
});

describe('deserializeParameter', () => {
  it('coerces numbers, booleans and arrays as a validating server would', () => {
    const limit = param({ name: 'limit', in: 'query', schema: { type: 'integer' } });
    expect(deserializeParameter(limit, serializeParameter(limit, 5), {})).toBe(5);
    expect(deserializeParameter(limit, serializeParameter(limit, '5'), {})).toBe(5);
    expect(deserializeParameter(limit, serializeParameter(limit, 'five'), {})).toBe('five');
    const flag = param({ name: 'b', in: 'header', schema: { type: 'boolean' } });
    expect(deserializeParameter(flag, serializeParameter(flag, true), {})).toBe(true);
    const tags = param({ name: 't', in: 'query', schema: { type: 'array', items: { type: 'integer' } } });
    expect(deserializeParameter(tags, serializeParameter(tags, [1, 2]), {})).toEqual([1, 2]);
    const id = param({ name: 'id', in: 'path', schema: { type: 'string' } });
    expect(deserializeParameter(id, serializeParameter(id, 'a b/c'), {})).toBe('a b/c');
  });
});
