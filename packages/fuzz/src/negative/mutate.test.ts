import { describe, expect, it } from 'vitest';
import { loadDocument } from '../contract/document.ts';
import { Rng } from '../random.ts';
import { createValidator } from '../schema/validator.ts';
import { listMutations, mutate } from './mutate.ts';

const doc = loadDocument(new URL('../../test/fixtures/mini.openapi.json', import.meta.url).pathname);
const validator = createValidator(doc);
const REQ = { $ref: '#/components/schemas/InferenceRequest' };
const VALID = { alias: 'Sonata', messages: [{ role: 'user', content: 'Hello' }], maxTokens: 10, agentSlug: 'sales' };
const judge = (schema: unknown) => (v: unknown) => v !== undefined && validator.isValid(schema, JSON.parse(JSON.stringify(v)));

describe('mutate', () => {
  it('produces only values that fail the schema after JSON serialization, over many seeds', () => {
    const descriptions = new Set<string>();
    for (let seed = 0; seed < 300; seed++) {
      const m = mutate(REQ, VALID, { root: doc, rng: new Rng(seed), stillValid: judge(REQ) });
      expect(m).toBeDefined();
      expect(validator.isValid(REQ, JSON.parse(JSON.stringify(m!.value)))).toBe(false);
      descriptions.add(m!.description.replace(/\/\S*: /, ''));
    }
    // Every kind of mutation shows up.
    const all = [...descriptions].join('\n');
    for (const kind of [
      'required property',
      'where',
      'outside enum',
      'longer than maxLength',
      'below the minimum',
      'above the maximum',
      'pattern',
      'additionalProperties',
      'maxItems',
      'fraction',
    ]) {
      expect(all).toContain(kind);
    }
  });

  it('does not mutate the original value', () => {
    const copy = structuredClone(VALID);
    mutate(REQ, VALID, { root: doc, rng: new Rng(1), stillValid: judge(REQ) });
    expect(VALID).toEqual(copy);
  });

  it('drops a mutation that serialization would undo (integer 5 → "5" in a query string)', () => {
    const schema = { type: 'integer', minimum: 1, maximum: 200 };
    // A judge that reads the value back from a query string, like the server: "5" and 5 are the same.
    const afterQuery = (v: unknown) => validator.isValid(schema, /^-?\d+$/.test(String(v)) ? Number(v) : String(v));
    for (let seed = 0; seed < 50; seed++) {
      const m = mutate(schema, 5, { root: doc, rng: new Rng(seed), stillValid: afterQuery });
      expect(m).toBeDefined();
      expect(afterQuery(m!.value)).toBe(false);
    }
  });

  it('keeps header values sendable', () => {
    const schema = { type: 'string', pattern: '^[a-z]+$' };
    for (let seed = 0; seed < 50; seed++) {
      const m = mutate(schema, 'abc', { root: doc, rng: new Rng(seed), location: 'header', stillValid: (v) => validator.isValid(schema, v) });
      if (m) expect(String(typeof m.value === 'string' ? m.value : JSON.stringify(m.value))).toMatch(/^[\x20-\x7e]*$/);
    }
  });

  it('is deterministic for a seed', () => {
    const a = mutate(REQ, VALID, { root: doc, rng: new Rng(9), stillValid: judge(REQ) });
    const b = mutate(REQ, VALID, { root: doc, rng: new Rng(9), stillValid: judge(REQ) });
    expect(a).toEqual(b);
  });

  it('writes a number parameter in forms Number() reads but the contract does not (limit=0x10, limit= 5)', () => {
    const schema = { type: 'integer', minimum: 1, maximum: 200 };
    const readBack = (v: unknown) => (typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v);
    const texts = listMutations(schema, 5, { root: doc, location: 'query', stillValid: (v) => validator.isValid(schema, readBack(v)) }).map((m) => m.value);
    for (const text of ['0x5', ' 5', '5 ', '5e0', '+5']) expect(texts).toContain(text);
    // A header's surrounding whitespace is stripped by HTTP: not negative data there.
    const headers = listMutations(schema, 5, { root: doc, location: 'header', stillValid: (v) => validator.isValid(schema, readBack(v)) }).map((m) => m.value);
    expect(headers).not.toContain(' 5');
  });

  it('empties an object below minProperties (PATCH /operator/workspaces/{id} with {})', () => {
    const schema = { type: 'object', minProperties: 1, additionalProperties: false, properties: { name: { type: 'string' } } };
    const values = listMutations(schema, { name: 'Acme' }, { root: doc, stillValid: judge(schema) }).map((m) => m.value);
    expect(values).toContainEqual({});
  });
});
