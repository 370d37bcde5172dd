/**
 * @module Valid boundary values of a schema node (the coverage phase): lengths at their limits, numbers at
 * their bounds, every enum member, arrays at minItems and maxItems.
 */
import { isObject } from '../contract/document.ts';
import { expandRef, numericBounds, typesOf } from './arbitrary.ts';

/** Up to a handful of values on the edge of `schema` (each still meant to be valid; Ajv confirms). */
export function boundaryValues(rawSchema: unknown, root: unknown, sample: unknown): unknown[] {
  if (!isObject(rawSchema)) return [];
  const schema = expandRef(rawSchema, { root });
  const out: unknown[] = [];
  if (Array.isArray(schema.enum)) out.push(...schema.enum);
  const types = typesOf(schema);
  if (types.includes('string') && schema.pattern === undefined && schema.format === undefined) {
    // In code points, as JSON Schema counts a string's length: a cut by UTF-16 units could split a surrogate pair.
    const unit = typeof sample === 'string' && sample.length > 0 ? Array.from(sample) : ['a'];
    const fill = (n: number) => Array.from({ length: n }, (_, i) => unit[i % unit.length]).join('');
    if (typeof schema.minLength === 'number') out.push(fill(schema.minLength));
    if (typeof schema.maxLength === 'number') out.push(fill(schema.maxLength));
    if (schema.minLength === undefined) out.push('');
  }
  if (types.includes('integer') || types.includes('number')) {
    const integer = !types.includes('number');
    const { min, max } = numericBounds(schema, integer ? 1 : 0);
    if (min !== undefined) out.push(integer ? Math.ceil(min) : typeof schema.exclusiveMinimum === 'number' ? min + 1e-9 : min);
    if (max !== undefined) out.push(integer ? Math.floor(max) : typeof schema.exclusiveMaximum === 'number' ? max - 1e-9 : max);
    if (min === undefined && max === undefined) out.push(0, -1, 2147483647, -2147483648);
  }
  if (types.includes('array') && Array.isArray(sample) && sample.length > 0) {
    if (typeof schema.minItems === 'number') out.push(sample.slice(0, Math.max(schema.minItems, 0)));
    if (typeof schema.maxItems === 'number' && schema.uniqueItems !== true) {
      const filled: unknown[] = [];
      while (filled.length < schema.maxItems) filled.push(sample[filled.length % sample.length]);
      out.push(filled);
    }
  }
  if (types.includes('null')) out.push(null);
  if (types.includes('boolean')) out.push(true, false);
  return out;
}

/** Paths to every node of `value` with a schema (objects' properties and arrays' first item), up to `maxDepth`. */
export function schemaNodes(rawSchema: unknown, value: unknown, root: unknown, maxDepth = 4): { path: (string | number)[]; schema: unknown; value: unknown }[] {
  const out: { path: (string | number)[]; schema: unknown; value: unknown }[] = [];
  const walk = (raw: unknown, v: unknown, path: (string | number)[]) => {
    if (!isObject(raw) || path.length > maxDepth) return;
    out.push({ path, schema: raw, value: v });
    const s = expandRef(raw, { root });
    if (isObject(v) && isObject(s.properties)) {
      for (const [name, sub] of Object.entries(s.properties)) if (name in v) walk(sub, v[name], [...path, name]);
    }
    if (Array.isArray(v) && v.length > 0 && s.items !== undefined) walk(s.items, v[0], [...path, 0]);
  };
  walk(rawSchema, value, []);
  return out;
}

/** `value` with the node at `path` replaced (structural copy of the spine only). */
export function replaceAt(value: unknown, path: (string | number)[], replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path;
  if (Array.isArray(value)) {
    const copy = [...value];
    copy[head as number] = replaceAt(copy[head as number], rest, replacement);
    return copy;
  }
  const copy = { ...(value as Record<string, unknown>) };
  copy[head as string] = replaceAt(copy[head as string], rest, replacement);
  return copy;
}
