import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadDocument } from '../contract/document.ts';
import { schemaArbitrary } from './arbitrary.ts';
import { createValidator } from './validator.ts';

const doc = loadDocument(new URL('../../test/fixtures/mini.openapi.json', import.meta.url).pathname);
const validator = createValidator(doc);

// Every value generated for these schemas must satisfy them according to Ajv.
const CASES: [string, unknown][] = [
  ['integer range', { type: 'integer', minimum: 1, maximum: 32000 }],
  ['exclusive bounds', { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 }],
  ['multipleOf', { type: 'integer', multipleOf: 7, minimum: -50, maximum: 50 }],
  ['number multipleOf', { type: 'number', multipleOf: 0.5, maximum: 10 }],
  ['enum', { enum: ['low', 'medium', 'high'] }],
  ['const', { const: { done: true } }],
  ['lengths', { type: 'string', minLength: 3, maxLength: 5 }],
  ['pattern', { type: 'string', pattern: '^[a-z][a-z0-9-]{0,63}$' }],
  ['run id pattern', { $ref: '#/components/schemas/RunId' }],
  ['date-time', { type: 'string', format: 'date-time' }],
  ['date', { type: 'string', format: 'date' }],
  ['email', { type: 'string', format: 'email' }],
  ['uri', { type: 'string', format: 'uri' }],
  ['uuid', { type: 'string', format: 'uuid' }],
  ['ipv4', { type: 'string', format: 'ipv4' }],
  ['nullable', { type: ['string', 'null'], maxLength: 2 }],
  ['unique array', { type: 'array', uniqueItems: true, minItems: 1, items: { type: 'string', enum: ['a', 'b', 'c'] } }],
  ['prefixItems', { type: 'array', prefixItems: [{ type: 'integer' }, { type: 'string' }], items: false }],
  ['closed object', { $ref: '#/components/schemas/InferenceRequest' }],
  ['open object', { type: 'object', required: ['a'], properties: { a: { type: 'boolean' } } }],
  ['allOf with refs', { $ref: '#/components/schemas/ApiKeyWithSecret' }],
  [
    'oneOf',
    {
      oneOf: [
        { type: 'integer', minimum: 10 },
        { type: 'string', maxLength: 2 },
      ],
    },
  ],
  ['anyOf', { anyOf: [{ type: 'null' }, { $ref: '#/components/schemas/Usage' }] }],
  ['nested refs', { $ref: '#/components/schemas/RunList' }],
  ['typeless bounds', { minimum: 3, maximum: 4 }],
];

describe('schemaArbitrary', () => {
  it.each(CASES)('%s: every generated value validates', (_name, schema) => {
    const values = fc.sample(schemaArbitrary(schema, { root: doc }), { numRuns: 200, seed: 42 });
    const invalid = values.map((v) => [v, validator.errors(schema, v)]).filter(([, e]) => e !== undefined);
    expect(invalid.slice(0, 3)).toEqual([]);
  });

  it('covers every branch of an enum and of a oneOf', () => {
    const values = fc.sample(schemaArbitrary({ oneOf: [{ type: 'integer' }, { type: 'string' }] }, { root: doc }), { numRuns: 100, seed: 1 });
    expect(new Set(values.map((v) => typeof v))).toEqual(new Set(['number', 'string']));
  });

  it('generates optional properties sometimes, required ones always', () => {
    const values = fc.sample(schemaArbitrary({ $ref: '#/components/schemas/InferenceRequest' }, { root: doc }), { numRuns: 200, seed: 3 }) as Record<
      string,
      unknown
    >[];
    expect(values.every((v) => 'alias' in v && 'messages' in v)).toBe(true);
    expect(values.some((v) => 'maxTokens' in v)).toBe(true);
    expect(values.some((v) => !('maxTokens' in v))).toBe(true);
  });

  it('adds undocumented properties only where additionalProperties allows them', () => {
    const open = fc.sample(schemaArbitrary({ type: 'object', properties: { a: { type: 'integer' } } }, { root: doc }), { numRuns: 300, seed: 5 }) as object[];
    expect(open.some((v) => Object.keys(v).some((k) => k !== 'a'))).toBe(true);
    const closed = fc.sample(schemaArbitrary({ type: 'object', additionalProperties: false, properties: { a: { type: 'integer' } } }, { root: doc }), {
      numRuns: 300,
      seed: 5,
    }) as object[];
    expect(closed.every((v) => Object.keys(v).every((k) => k === 'a'))).toBe(true);
  });

  it('keeps header values to visible ASCII and path values non-empty', () => {
    const headers = fc.sample(schemaArbitrary({ type: 'string' }, { root: doc, location: 'header' }), { numRuns: 300, seed: 9 }) as string[];
    expect(headers.every((h) => /^[\x20-\x7e]*$/.test(h) && h.trim() === h)).toBe(true);
    const paths = fc.sample(schemaArbitrary({ type: 'string' }, { root: doc, location: 'path' }), { numRuns: 300, seed: 9 }) as string[];
    expect(paths.every((p) => p !== '' && p !== '.' && p !== '..')).toBe(true);
  });

  it('is deterministic for a seed', () => {
    const arb = schemaArbitrary({ $ref: '#/components/schemas/InferenceRequest' }, { root: doc });
    expect(fc.sample(arb, { numRuns: 20, seed: 77 })).toEqual(fc.sample(arb, { numRuns: 20, seed: 77 }));
  });
});
