/**
 * @module JSON Schema 2020-12 → fast-check 4 arbitraries. Generation is best effort; Ajv has the last word
 * (the runner drops a "positive" value that does not validate), which keeps this compiler small and honest.
 */
import fc from 'fast-check';
import { isObject, resolvePointer, type JsonObject } from '../contract/document.ts';
import { formatArbitrary } from './formats.ts';

export type Location = 'body' | 'path' | 'query' | 'header' | 'cookie';

export interface ArbitraryOptions {
  /** The document that `#/...` references point into. */
  root: unknown;
  /** Where the value goes: headers and cookies need visible ASCII, path segments must be non-empty. */
  location?: Location;
  /** Beyond this nesting depth only required properties and minimum items are generated (recursive schemas). */
  maxDepth?: number;
}

interface Ctx {
  root: unknown;
  location: Location;
  maxDepth: number;
}

/** Compiles `schema` to an arbitrary of values meant to satisfy it. */
export function schemaArbitrary(schema: unknown, options: ArbitraryOptions): fc.Arbitrary<unknown> {
  const ctx: Ctx = { root: options.root, location: options.location ?? 'body', maxDepth: options.maxDepth ?? 4 };
  if (!isObject(schema)) return build(schema, ctx, 0);
  // Building is costly (fast-check precomputes bias tables per string arbitrary); values are immutable, so share.
  let byOptions = ARBITRARIES.get(schema);
  if (!byOptions) ARBITRARIES.set(schema, (byOptions = new Map()));
  const key = `${ctx.location}:${ctx.maxDepth}`;
  let arb = byOptions.get(key);
  if (!arb) byOptions.set(key, (arb = build(schema, ctx, 0)));
  return arb;
}

const ARBITRARIES = new WeakMap<object, Map<string, fc.Arbitrary<unknown>>>();

const NUMBER_KEYWORDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'];
const STRING_KEYWORDS = ['minLength', 'maxLength', 'pattern', 'format'];
const ARRAY_KEYWORDS = ['items', 'prefixItems', 'minItems', 'maxItems', 'uniqueItems', 'contains'];
const OBJECT_KEYWORDS = ['properties', 'required', 'additionalProperties', 'patternProperties', 'minProperties', 'maxProperties'];

function build(raw: unknown, ctx: Ctx, depth: number): fc.Arbitrary<unknown> {
  if (raw === true || raw === undefined) return anything(ctx);
  if (raw === false) throw new Error('schema `false` admits no value');
  if (!isObject(raw)) return anything(ctx);
  const schema = expandRef(raw, ctx);

  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
    const { allOf, ...rest } = schema;
    return build(mergeSchemas([rest, ...(allOf as unknown[])], ctx), ctx, depth);
  }
  for (const key of ['oneOf', 'anyOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches) && branches.length > 0) {
      const { [key]: _omit, ...rest } = schema;
      const hasBase = Object.keys(rest).some((k) => !isAnnotation(k));
      return fc.oneof(...branches.map((b) => build(hasBase ? mergeSchemas([rest, b], ctx) : b, ctx, depth)));
    }
  }

  const types = typesOf(schema);
  if (types.length === 0) return anything(ctx);
  const arbs = types.map((t) => byType(t, schema, ctx, depth));
  return arbs.length === 1 ? arbs[0]! : fc.oneof(...arbs);
}

function byType(type: string, s: JsonObject, ctx: Ctx, depth: number): fc.Arbitrary<unknown> {
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return integerArb(s);
    case 'number':
      return numberArb(s);
    case 'string':
      return stringArb(s, ctx);
    case 'array':
      return arrayArb(s, ctx, depth);
    case 'object':
      return objectArb(s, ctx, depth);
    default:
      return anything(ctx);
  }
}

/** The declared type(s), or the one implied by the constraint keywords present. */
export function typesOf(schema: JsonObject): string[] {
  if (typeof schema.type === 'string') return [schema.type];
  if (Array.isArray(schema.type)) return schema.type as string[];
  if (OBJECT_KEYWORDS.some((k) => k in schema)) return ['object'];
  if (ARRAY_KEYWORDS.some((k) => k in schema)) return ['array'];
  if (STRING_KEYWORDS.some((k) => k in schema)) return ['string'];
  if (NUMBER_KEYWORDS.some((k) => k in schema)) return ['number'];
  return [];
}

/** Lower and upper bounds of a numeric schema, exclusive bounds folded in (`step` is the smallest move). */
export function numericBounds(s: JsonObject, step: number): { min?: number; max?: number } {
  let min = typeof s.minimum === 'number' ? s.minimum : undefined;
  let max = typeof s.maximum === 'number' ? s.maximum : undefined;
  if (typeof s.exclusiveMinimum === 'number') min = Math.max(min ?? -Infinity, s.exclusiveMinimum + step);
  if (typeof s.exclusiveMaximum === 'number') max = Math.min(max ?? Infinity, s.exclusiveMaximum - step);
  return { min, max };
}

function integerArb(s: JsonObject): fc.Arbitrary<number> {
  const b = numericBounds(s, 1);
  const min = Math.max(Math.ceil(b.min ?? Number.MIN_SAFE_INTEGER), Number.MIN_SAFE_INTEGER);
  const max = Math.min(Math.floor(b.max ?? Number.MAX_SAFE_INTEGER), Number.MAX_SAFE_INTEGER);
  const m = typeof s.multipleOf === 'number' && s.multipleOf > 0 ? s.multipleOf : undefined;
  if (m !== undefined) {
    const lo = Math.ceil(min / m);
    const hi = Math.floor(max / m);
    return fc.integer({ min: lo, max: Math.max(lo, hi) }).map((k) => Math.round(k * m));
  }
  // Unbounded integers: mostly 32-bit values (where bugs hide), sometimes the far ends.
  if (b.min === undefined && b.max === undefined) return fc.oneof({ arbitrary: fc.integer(), weight: 4 }, { arbitrary: fc.maxSafeInteger(), weight: 1 });
  return fc.integer({ min, max: Math.max(min, max) });
}

function numberArb(s: JsonObject): fc.Arbitrary<number> {
  const m = typeof s.multipleOf === 'number' && s.multipleOf > 0 ? s.multipleOf : undefined;
  const inclusive = numericBounds(s, 0);
  if (m !== undefined) {
    const lo = Math.ceil((inclusive.min ?? -1e9) / m);
    const hi = Math.floor((inclusive.max ?? 1e9) / m);
    return fc.integer({ min: lo, max: Math.max(lo, hi) }).map((k) => Number((k * m).toPrecision(12)));
  }
  const min = typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum : undefined;
  const max = typeof s.maximum === 'number' ? s.maximum : typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum : undefined;
  const dbl = fc.double({
    min: min ?? -1e15,
    max: max ?? 1e15,
    minExcluded: typeof s.exclusiveMinimum === 'number' && typeof s.minimum !== 'number',
    maxExcluded: typeof s.exclusiveMaximum === 'number' && typeof s.maximum !== 'number',
    noNaN: true,
    noDefaultInfinity: true,
  });
  // Integral values where the range holds any (servers often mishandle 1 vs 1.0), else only fractions.
  const ib = numericBounds(s, 1);
  const hasInts = Math.ceil(ib.min ?? -Infinity) <= Math.floor(ib.max ?? Infinity);
  return (hasInts ? fc.oneof(dbl, integerArb(s)) : dbl).map((n) => (Object.is(n, -0) ? 0 : n));
}

const HEADER_CHAR = fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c));
// Any code point but lone surrogates (fast-check's own 'binary' unit takes about a second to build per use).
const ANY_CHAR = fc
  .oneof(
    { arbitrary: fc.integer({ min: 0x20, max: 0x7e }), weight: 2 },
    { arbitrary: fc.integer({ min: 0, max: 0x1f }), weight: 1 },
    { arbitrary: fc.integer({ min: 0x80, max: 0xd7ff }), weight: 2 },
    { arbitrary: fc.integer({ min: 0xe000, max: 0x10ffff }), weight: 1 },
  )
  .map((cp) => String.fromCodePoint(cp));
const HEADER_SAFE = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$|^$/;

function stringArb(s: JsonObject, ctx: Ctx): fc.Arbitrary<string> {
  const minLength = typeof s.minLength === 'number' ? s.minLength : 0;
  const maxLength = typeof s.maxLength === 'number' ? s.maxLength : undefined;
  const pattern = typeof s.pattern === 'string' ? compilePattern(s.pattern) : undefined;
  const fmt = typeof s.format === 'string' ? formatArbitrary(s.format) : undefined;
  const lengthOk = (v: string) => {
    const n = [...v].length;
    return n >= minLength && (maxLength === undefined || n <= maxLength);
  };
  const patternOk = (v: string) => pattern === undefined || pattern === null || pattern.test(v);
  const locationOk =
    ctx.location === 'header' || ctx.location === 'cookie'
      ? (v: string) => HEADER_SAFE.test(v) && !v.includes(';')
      : ctx.location === 'path'
        ? (v: string) => v !== '' && v !== '.' && v !== '..'
        : () => true;
  const all = (v: string) => lengthOk(v) && patternOk(v) && locationOk(v);
  // Candidates from the most to the least specific; the first that satisfies every constraint often
  // enough (measured on a sample) wins, filtered to the exact constraints. Ajv judges the rest.
  const candidates: fc.Arbitrary<string>[] = [];
  if (fmt) candidates.push(fmt);
  if (pattern) {
    const sized = sizedPattern(pattern.source, minLength, maxLength);
    if (sized) candidates.push(fc.stringMatching(sized, { size: 'small' }));
    candidates.push(fc.stringMatching(pattern, { size: 'small' }));
  }
  if (!fmt && !pattern) {
    if (ctx.location === 'header' || ctx.location === 'cookie') candidates.push(plainString('header', minLength, maxLength));
    else if (ctx.location === 'body')
      // Mostly ASCII (readable failures), sometimes any code point (where encoding bugs hide).
      candidates.push(
        fc.oneof({ arbitrary: plainString('ascii', minLength, maxLength), weight: 4 }, { arbitrary: plainString('binary', minLength, maxLength), weight: 1 }),
      );
    else candidates.push(plainString('ascii', minLength, maxLength));
  }
  for (const candidate of candidates) {
    if (acceptance(candidate, all) >= 0.1) return candidate.filter(all);
  }
  return candidates[0]!;
}

/** Share of a small fixed sample that satisfies `accept` (decides whether filtering is affordable). */
function acceptance(arb: fc.Arbitrary<string>, accept: (v: string) => boolean): number {
  const sample = fc.sample(arb, { numRuns: 40, seed: 7 });
  return sample.filter(accept).length / sample.length;
}

/**
 * The pattern with its last unbounded quantifier (`+`, `*`, `{n,}`) bounded by the length limits, so that
 * `^[A-Za-z0-9_-]+$` with minLength 16 generates 16+ characters instead of hoping for them.
 */
function sizedPattern(source: string, minLength: number, maxLength: number | undefined): RegExp | undefined {
  if (minLength === 0 && maxLength === undefined) return undefined;
  const m = /^(.*?)(\+|\*|\{(\d+),\})(\$?)$/.exec(source);
  if (!m) return undefined;
  const hi = Math.min(maxLength ?? minLength + 16, minLength + 16);
  try {
    return new RegExp(`${m[1]}{${minLength},${Math.max(minLength, hi)}}${m[4]}`, 'u');
  } catch {
    return undefined;
  }
}

const STRINGS = new Map<string, fc.Arbitrary<string>>();

/** fc.string is costly to build (bias tables over the whole unit), so each unit and length range is built once. */
function plainString(unit: 'ascii' | 'binary' | 'header', minLength: number, maxLength: number | undefined): fc.Arbitrary<string> {
  const key = `${unit}:${minLength}:${maxLength}`;
  let arb = STRINGS.get(key);
  if (!arb) {
    const c = { minLength, maxLength, size: 'small' as const };
    arb = unit === 'header' ? fc.string({ ...c, unit: HEADER_CHAR }) : unit === 'binary' ? fc.string({ ...c, unit: ANY_CHAR }) : fc.string(c);
    STRINGS.set(key, arb);
  }
  return arb;
}

const patternCache = new Map<string, RegExp | null>();

/** The schema pattern as a RegExp fast-check can generate from, or null when it cannot (Ajv still judges). */
function compilePattern(pattern: string): RegExp | null {
  let re = patternCache.get(pattern);
  if (re === undefined) {
    try {
      re = new RegExp(pattern, 'u');
      fc.sample(fc.stringMatching(re), { numRuns: 1, seed: 1 });
    } catch {
      re = null;
    }
    patternCache.set(pattern, re);
  }
  return re;
}

function arrayArb(s: JsonObject, ctx: Ctx, depth: number): fc.Arbitrary<unknown[]> {
  const minItems = typeof s.minItems === 'number' ? s.minItems : 0;
  const deep = depth >= ctx.maxDepth;
  const maxItems = deep ? minItems : typeof s.maxItems === 'number' ? s.maxItems : undefined;
  const prefix = Array.isArray(s.prefixItems) ? s.prefixItems.map((p) => build(p, ctx, depth + 1)) : [];
  const itemSchema = s.items === undefined ? (prefix.length > 0 ? true : {}) : s.items;
  if (itemSchema === false) return fc.tuple(...prefix);
  const item = build(itemSchema, ctx, depth + 1);
  const restMin = Math.max(0, minItems - prefix.length);
  const restMax = maxItems === undefined ? undefined : Math.max(restMin, maxItems - prefix.length);
  const rest =
    s.uniqueItems === true
      ? fc.uniqueArray(item, { minLength: restMin, maxLength: restMax, selector: (v) => JSON.stringify(v), size: 'small' })
      : fc.array(item, { minLength: restMin, maxLength: restMax, size: 'small' });
  return prefix.length === 0 ? rest : fc.tuple(fc.tuple(...prefix), rest).map(([a, b]) => [...a, ...b]);
}

function objectArb(s: JsonObject, ctx: Ctx, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties = isObject(s.properties) ? s.properties : {};
  const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  const deep = depth >= ctx.maxDepth;
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, sub] of Object.entries(properties)) {
    if (deep && !required.has(name)) continue;
    model[name] = build(sub, ctx, depth + 1);
  }
  // Required names without a property schema still need a value.
  for (const name of required) if (!(name in model)) model[name] = anything(ctx);
  const known = fc.record(model, { requiredKeys: [...required].filter((k) => k in model) });
  const additional = s.additionalProperties;
  if (additional === false || deep || ctx.location !== 'body') return known;
  const valueArb = additional === undefined || additional === true ? fc.jsonValue({ maxDepth: 1 }) : build(additional, ctx, depth + 1);
  const keyArb = fc.stringMatching(/^[a-z][a-zA-Z0-9_]{0,11}$/).filter((k) => !(k in properties));
  // Undocumented extra properties are allowed by the schema, so the server must accept them; send them sometimes.
  const extras = fc.oneof(
    { arbitrary: fc.constant({} as Record<string, unknown>), weight: 4 },
    { arbitrary: fc.dictionary(keyArb, valueArb, { maxKeys: 2, noNullPrototype: true }) as fc.Arbitrary<Record<string, unknown>>, weight: 1 },
  );
  return fc.tuple(known, extras).map(([k, e]) => ({ ...e, ...k }) as Record<string, unknown>);
}

function anything(ctx: Ctx): fc.Arbitrary<unknown> {
  if (ctx.location === 'body') return fc.jsonValue({ maxDepth: 2 });
  return stringArb({}, ctx);
}

/** Inlines a `$ref` (siblings of `$ref` are applied too, as 2020-12 allows). */
export function expandRef(schema: JsonObject, ctx: { root: unknown }): JsonObject {
  let current = schema;
  let guard = 0;
  while (typeof current.$ref === 'string' && guard++ < 32) {
    const { $ref, ...siblings } = current;
    const target = resolvePointer(ctx.root, $ref as string);
    const resolved = isObject(target) ? target : {};
    current = Object.keys(siblings).some((k) => !isAnnotation(k)) ? { allOf: [resolved, siblings] } : resolved;
  }
  return current;
}

function isAnnotation(key: string): boolean {
  return (
    [
      'description',
      'title',
      'example',
      'examples',
      'deprecated',
      'readOnly',
      'writeOnly',
      '$comment',
      'default',
      'discriminator',
      'externalDocs',
      'xml',
    ].includes(key) || key.startsWith('x-')
  );
}

/** Conjunction of schemas folded into one (for `allOf`): properties merged, required united, bounds tightened. */
export function mergeSchemas(schemas: unknown[], ctx: { root: unknown }): JsonObject {
  const out: JsonObject = {};
  for (const raw of schemas) {
    if (!isObject(raw)) continue;
    let s = expandRef(raw, ctx);
    if (Array.isArray(s.allOf)) {
      const { allOf, ...rest } = s;
      s = mergeSchemas([rest, ...(allOf as unknown[])], ctx);
    }
    for (const [k, v] of Object.entries(s)) {
      const cur = out[k];
      if (cur === undefined) {
        out[k] = v;
        continue;
      }
      switch (k) {
        case 'properties': {
          const merged: JsonObject = { ...(cur as JsonObject) };
          for (const [name, sub] of Object.entries(v as JsonObject)) {
            merged[name] = name in merged ? { allOf: [merged[name], sub] } : sub;
          }
          out[k] = merged;
          break;
        }
        case 'required':
          out[k] = [...new Set([...(cur as string[]), ...(v as string[])])];
          break;
        case 'type': {
          const a = Array.isArray(cur) ? cur : [cur];
          const b = Array.isArray(v) ? v : [v];
          const both = a.filter((t) => b.includes(t) || (t === 'integer' && b.includes('number')));
          const extra = b.filter((t) => t === 'integer' && a.includes('number'));
          const result = [...new Set([...both, ...extra])];
          out[k] = result.length === 1 ? result[0] : result;
          break;
        }
        case 'minimum':
        case 'minLength':
        case 'minItems':
        case 'exclusiveMinimum':
        case 'minProperties':
          out[k] = Math.max(cur as number, v as number);
          break;
        case 'maximum':
        case 'maxLength':
        case 'maxItems':
        case 'exclusiveMaximum':
        case 'maxProperties':
          out[k] = Math.min(cur as number, v as number);
          break;
        case 'enum':
          out[k] = (cur as unknown[]).filter((x) => (v as unknown[]).some((y) => JSON.stringify(x) === JSON.stringify(y)));
          break;
        case 'additionalProperties':
          out[k] = cur === false || v === false ? false : { allOf: [cur, v] };
          break;
        case 'items':
          out[k] = { allOf: [cur, v] };
          break;
        default:
          break; // first one wins; Ajv rejects what this fold could not express
      }
    }
  }
  return out;
}
