/**
 * @module Negative data by mutation, as Schemathesis makes it: start from a valid value, then remove a required
 * property, change a type, negate a constraint (bounds, lengths, items, enum, const, additionalProperties) or
 * break a format or pattern, somewhere in the value. A mutation is kept only if the caller's judge (Ajv, after
 * the value's serialization) says it is really invalid.
 */
import { isObject, type JsonObject } from '../contract/document.ts';
import type { Location } from '../schema/arbitrary.ts';
import { expandRef, mergeSchemas, numericBounds, typesOf } from '../schema/arbitrary.ts';
import { INVALID_FORMAT_VALUES } from '../schema/formats.ts';
import type { Rng } from '../random.ts';

export interface Mutation {
  value: unknown;
  /** Schemathesis-style description, e.g. `/messages/0/content: string longer than maxLength 500000`. */
  description: string;
}

export interface MutateOptions {
  root: unknown;
  rng: Rng;
  location?: Location;
  /** True when the mutated value still satisfies the schema once serialized (then it is not negative data). */
  stillValid: (value: unknown) => boolean;
  /** How many candidate mutations to try before giving up. */
  attempts?: number;
}

interface Candidate {
  path: (string | number)[];
  apply: (current: unknown) => unknown | typeof REMOVE;
  describe: string;
}

const REMOVE = Symbol('remove');

/** A mutated copy of `value` that violates `schema`, or `undefined` when none was found. */
export function mutate(schema: unknown, value: unknown, options: MutateOptions): Mutation | undefined {
  const candidates: Candidate[] = [];
  collect(schema, value, [], options, candidates, 0);
  const attempts = options.attempts ?? 12;
  for (let i = 0; i < attempts && candidates.length > 0; i++) {
    const index = options.rng.int(0, candidates.length - 1);
    const candidate = candidates[index]!;
    candidates.splice(index, 1);
    const m = tryCandidate(value, candidate, options);
    if (m) return m;
  }
  return undefined;
}

/** Every mutation of `value` that truly violates `schema` (the coverage phase sends them all), up to `limit`. */
export function listMutations(schema: unknown, value: unknown, options: Omit<MutateOptions, 'rng'>, limit = 200): Mutation[] {
  const candidates: Candidate[] = [];
  collect(schema, value, [], { ...options, rng: undefined as never }, candidates, 0);
  const out: Mutation[] = [];
  const seen = new Set<string>();
  for (const candidate of candidates) {
    if (out.length >= limit) break;
    const m = tryCandidate(value, candidate, options);
    if (!m) continue;
    const key = JSON.stringify(m.value) ?? 'undefined';
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(m);
  }
  return out;
}

function tryCandidate(value: unknown, candidate: Candidate, options: Pick<MutateOptions, 'location' | 'stillValid'>): Mutation | undefined {
  const mutated = applyAt(value, candidate.path, candidate.apply);
  if (!headerSafe(mutated, options.location)) return undefined;
  if (options.stillValid(mutated)) return undefined;
  const where = candidate.path.length > 0 ? `/${candidate.path.join('/')}` : '/';
  return { value: mutated, description: `${where}: ${candidate.describe}` };
}

/** All mutations of every node of `value` reachable through `schema`, as candidates. */
function collect(rawSchema: unknown, value: unknown, path: (string | number)[], o: MutateOptions, out: Candidate[], depth: number): void {
  if (!isObject(rawSchema) || depth > 6) return;
  let schema = expandRef(rawSchema, o);
  if (Array.isArray(schema.allOf)) schema = mergeSchemas([schema], o);
  const at = (apply: Candidate['apply'], describe: string) => out.push({ path, apply, describe });

  // Change the type.
  const types = typesOf(schema);
  for (const [type, wrong] of WRONG_TYPES) {
    if (types.length > 0 && !types.includes(type) && !(type === 'integer' && types.includes('number'))) {
      at(() => wrong, `${JSON.stringify(wrong)} (${type}) where ${types.join(' or ')} is expected`);
    }
  }
  if ('const' in schema) at(() => differentFrom(schema.const), `value other than const ${JSON.stringify(schema.const)}`);
  if (Array.isArray(schema.enum)) {
    const sample = schema.enum.find((e) => typeof e === 'string') as string | undefined;
    at(() => (sample !== undefined ? `${sample}_not_in_enum` : 'not_in_enum'), `value outside enum ${JSON.stringify(schema.enum)}`);
  }

  if (typeof value === 'string' || types.includes('string')) stringMutations(schema, typeof value === 'string' ? value : '', at);
  if (typeof value === 'number' || types.includes('integer') || types.includes('number'))
    numberMutations(schema, typeof value === 'number' ? value : 0, types, at);
  if ((o.location === 'query' || o.location === 'path') && (types.includes('integer') || types.includes('number'))) {
    numberTextMutations(typeof value === 'number' ? value : 1, at);
  }

  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && schema.minItems > 0)
      at((v) => (v as unknown[]).slice(0, (schema.minItems as number) - 1), `fewer than minItems ${schema.minItems} items`);
    if (typeof schema.maxItems === 'number') {
      at((v) => padArray(v as unknown[], (schema.maxItems as number) + 1), `more than maxItems ${schema.maxItems} items`);
    }
    if (schema.uniqueItems === true && value.length > 0) at((v) => [...(v as unknown[]), (v as unknown[])[0]], 'duplicate items where uniqueItems is required');
    value.forEach((item, i) => {
      const itemSchema = Array.isArray(schema.prefixItems) && i < schema.prefixItems.length ? schema.prefixItems[i] : schema.items;
      collect(itemSchema, item, [...path, i], o, out, depth + 1);
    });
  }

  if (isObject(value)) {
    const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
    for (const name of required) if (name in value) out.push({ path: [...path, name], apply: () => REMOVE, describe: `required property "${name}" removed` });
    if (schema.additionalProperties === false)
      at((v) => ({ ...(v as JsonObject), unexpected_property: 'x' }), 'undocumented property where additionalProperties is false');
    if (typeof schema.minProperties === 'number' && schema.minProperties > 0) at(() => ({}), `fewer than minProperties ${schema.minProperties}`);
    const props = isObject(schema.properties) ? schema.properties : {};
    for (const [name, sub] of Object.entries(props)) if (name in value) collect(sub, value[name], [...path, name], o, out, depth + 1);
  }
}

const WRONG_TYPES: [string, unknown][] = [
  ['string', 'not-a-number'],
  ['integer', 1234],
  ['number', 12.5],
  ['boolean', true],
  ['null', null],
  ['array', [1, 'two']],
  ['object', { unexpected: 'object' }],
];

function stringMutations(schema: JsonObject, current: string, at: (apply: Candidate['apply'], d: string) => void): void {
  if (typeof schema.minLength === 'number' && schema.minLength > 0) {
    const n = schema.minLength - 1;
    at(() => 'a'.repeat(n), `string shorter than minLength ${schema.minLength}`);
  }
  if (typeof schema.maxLength === 'number') {
    const n = schema.maxLength + 1;
    at(
      () => (current.length > 0 ? current.repeat(Math.ceil(n / current.length)).slice(0, n) : 'a'.repeat(n)),
      `string longer than maxLength ${schema.maxLength}`,
    );
  }
  if (typeof schema.pattern === 'string') {
    for (const bad of ['', '!!', ' ', `${current}!`, `!${current}`, '0', 'ABC xyz']) at(() => bad, `string not matching pattern ${schema.pattern}`);
  }
  if (typeof schema.format === 'string') {
    for (const bad of INVALID_FORMAT_VALUES[schema.format] ?? []) at(() => bad, `string that is not a valid ${schema.format}`);
  }
}

function numberMutations(schema: JsonObject, current: number, types: string[], at: (apply: Candidate['apply'], d: string) => void): void {
  const integer = types.includes('integer') && !types.includes('number');
  const step = integer ? 1 : 0;
  const { min, max } = numericBounds(schema, step);
  if (min !== undefined)
    at(
      () => (integer ? Math.ceil(min) - 1 : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum : min - 1),
      `number below the minimum ${min}`,
    );
  if (max !== undefined)
    at(
      () => (integer ? Math.floor(max) + 1 : typeof schema.exclusiveMaximum === 'number' ? schema.exclusiveMaximum : max + 1),
      `number above the maximum ${max}`,
    );
  const m = schema.multipleOf;
  if (typeof m === 'number') at(() => current + m / 2 + (integer ? 1 : 0), `number that is not a multiple of ${m}`);
  if (integer) at(() => current + 0.5, 'fraction where an integer is expected');
}

/**
 * A number parameter arrives as text, and only plain decimal digits are a number: JavaScript's Number() also
 * reads hexadecimal, octal, binary, surrounding whitespace, an exponent and a plus sign (`limit=0x10`
 * and `limit= 5` were accepted). Not for headers: HTTP strips a header value's surrounding whitespace.
 */
function numberTextMutations(current: number, at: (apply: Candidate['apply'], d: string) => void): void {
  const n = Math.abs(Math.trunc(current)) || 1;
  for (const [text, what] of [
    [`0x${n.toString(16)}`, 'hexadecimal'],
    [`0o${n.toString(8)}`, 'octal'],
    [`0b${n.toString(2)}`, 'binary'],
    [` ${n}`, 'a leading space'],
    [`${n} `, 'a trailing space'],
    [`${n}e0`, 'an exponent'],
    [`+${n}`, 'a plus sign'],
  ] as const) {
    at(() => text, `number written in ${what} where plain decimal text is expected`);
  }
}

function differentFrom(value: unknown): unknown {
  if (typeof value === 'string') return `${value}_changed`;
  if (typeof value === 'number') return value + 1;
  if (typeof value === 'boolean') return !value;
  return 'changed';
}

function padArray(items: unknown[], length: number): unknown[] {
  const out = [...items];
  while (out.length < length) out.push(items.length > 0 ? items[out.length % items.length] : null);
  return out;
}

/** Applies a mutation at `path` inside a structural copy of `value` (only the spine is copied). */
function applyAt(value: unknown, path: (string | number)[], apply: Candidate['apply']): unknown {
  if (path.length === 0) {
    const r = apply(value);
    return r === REMOVE ? undefined : r;
  }
  const [head, ...rest] = path;
  if (Array.isArray(value)) {
    const copy = [...value];
    const r = rest.length === 0 ? apply(copy[head as number]) : applyAt(copy[head as number], rest, apply);
    if (r === REMOVE) copy.splice(head as number, 1);
    else copy[head as number] = r;
    return copy;
  }
  const copy = { ...(value as JsonObject) };
  const r = rest.length === 0 ? apply(copy[head as string]) : applyAt(copy[head as string], rest, apply);
  if (r === REMOVE) delete copy[head as string];
  else copy[head as string] = r;
  return copy;
}

/** Header and cookie values must stay sendable (visible ASCII), or the HTTP stack throws before the server sees them. */
function headerSafe(value: unknown, location: Location | undefined): boolean {
  if (location !== 'header' && location !== 'cookie') return true;
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  return /^[\x20-\x7e]*$/.test(text) && !text.includes(';');
}

/** Bytes that are not JSON at all, for a JSON body (Schemathesis's "raw non-JSON" negative case). */
export const NON_JSON_BODIES = ['{', '{"unterminated": ', "{'single': 'quotes'}", 'not json at all', '<xml/>', '\u0000\u0001\u0002', '{"a":1}}'];
