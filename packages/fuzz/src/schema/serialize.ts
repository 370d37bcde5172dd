/**
 * @module OpenAPI parameter serialization (style / explode, with the defaults of OpenAPI 3.1) and its inverse
 * as a server would read it, so a case can be judged "valid" or "invalid" after it crossed the wire.
 */
import type { Parameter } from '../contract/operations.ts';
import { isObject } from '../contract/document.ts';
import { expandRef, typesOf } from './arbitrary.ts';

/** A serialized parameter: path text, query pairs, or a header / cookie value. */
export type Serialized =
  | { in: 'path'; text: string }
  | { in: 'query'; pairs: [string, string][] }
  | { in: 'header'; value: string }
  | { in: 'cookie'; value: string };

function scalar(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return value;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

const enc = (value: unknown) => encodeURIComponent(scalar(value));

/** Serializes one parameter value per its `in`, `style` and `explode`. Path text and query pairs are percent-encoded. */
export function serializeParameter(param: Parameter, value: unknown): Serialized {
  if (param.contentType) {
    const text = JSON.stringify(value);
    return wrap(param, param.in === 'query' ? [[param.name, encodeURIComponent(text)]] : encodeURIComponent(text), text);
  }
  const { name, style, explode } = param;
  switch (param.in) {
    case 'path':
      return { in: 'path', text: pathValue(name, style, explode, value) };
    case 'query':
      return { in: 'query', pairs: queryPairs(name, style, explode, value) };
    case 'header':
      return { in: 'header', value: simple(value, explode, false) };
    case 'cookie':
      return { in: 'cookie', value: simple(value, explode, false) };
  }
}

function wrap(param: Parameter, encoded: string | [string, string][], plain: string): Serialized {
  if (param.in === 'path') return { in: 'path', text: encoded as string };
  if (param.in === 'query') return { in: 'query', pairs: encoded as [string, string][] };
  return { in: param.in, value: plain };
}

/** `simple` style: `a,b,c` for arrays, `k,v,k,v` (or `k=v,k=v` exploded) for objects. */
function simple(value: unknown, explode: boolean, encode: boolean): string {
  const e = encode ? enc : scalar;
  if (Array.isArray(value)) return value.map(e).join(',');
  if (isObject(value)) {
    return Object.entries(value)
      .map(([k, v]) => (explode ? `${e(k)}=${e(v)}` : `${e(k)},${e(v)}`))
      .join(',');
  }
  return e(value);
}

function pathValue(name: string, style: string, explode: boolean, value: unknown): string {
  switch (style) {
    case 'label': {
      const sep = explode ? '.' : ',';
      if (Array.isArray(value)) return `.${value.map(enc).join(sep)}`;
      if (isObject(value))
        return `.${Object.entries(value)
          .map(([k, v]) => (explode ? `${enc(k)}=${enc(v)}` : `${enc(k)},${enc(v)}`))
          .join(sep)}`;
      return `.${enc(value)}`;
    }
    case 'matrix': {
      if (Array.isArray(value)) return explode ? value.map((v) => `;${name}=${enc(v)}`).join('') : `;${name}=${value.map(enc).join(',')}`;
      if (isObject(value)) {
        return explode
          ? Object.entries(value)
              .map(([k, v]) => `;${enc(k)}=${enc(v)}`)
              .join('')
          : `;${name}=${Object.entries(value)
              .map(([k, v]) => `${enc(k)},${enc(v)}`)
              .join(',')}`;
      }
      return `;${name}=${enc(value)}`;
    }
    default:
      return simple(value, explode, true);
  }
}

function queryPairs(name: string, style: string, explode: boolean, value: unknown): [string, string][] {
  const n = encodeURIComponent(name);
  if (Array.isArray(value)) {
    if (style === 'form' && explode) return value.map((v) => [n, enc(v)]);
    const sep = style === 'spaceDelimited' ? '%20' : style === 'pipeDelimited' ? '|' : ',';
    return [[n, value.map(enc).join(sep)]];
  }
  if (isObject(value)) {
    if (style === 'deepObject') return Object.entries(value).map(([k, v]) => [`${n}[${encodeURIComponent(k)}]`, enc(v)]);
    if (explode) return Object.entries(value).map(([k, v]) => [encodeURIComponent(k), enc(v)]);
    return [
      [
        n,
        Object.entries(value)
          .map(([k, v]) => `${enc(k)},${enc(v)}`)
          .join(','),
      ],
    ];
  }
  return [[n, enc(value)]];
}

/**
 * Reads a serialized value back the way a validating server does: strings coerced to the schema's type
 * (`"5"` → 5 for an integer), comma lists split for arrays. A mutation that survives this round trip
 * unchanged in meaning (5 → "5") is not negative data.
 */
/** Returned when a serialized value has no single reading (treated as "not clearly invalid"). */
export const AMBIGUOUS = Symbol('ambiguous');

export function deserializeParameter(param: Parameter, serialized: Serialized, root: unknown): unknown {
  const schema = isObject(param.schema) ? expandRef(param.schema, { root }) : {};
  let raw: string | string[];
  switch (serialized.in) {
    case 'path':
      raw = decodeURIComponent(serialized.text.replace(/^[.;]([^=]*=)?/, ''));
      break;
    case 'query': {
      const types = typesOf(schema);
      const whole = param.style === 'deepObject' || (types.includes('object') && param.explode);
      // A server reads the pairs named after the parameter; other names are other (unknown) parameters.
      const mine = whole ? serialized.pairs : serialized.pairs.filter(([k]) => safeDecode(k) === param.name);
      if (mine.length === 0) return undefined;
      const values = mine.map(([, v]) => safeDecode(v));
      // A scalar sent several times is read differently by different servers (first or last): ambiguous.
      if (values.length > 1 && !types.includes('array')) return AMBIGUOUS;
      raw = values.length === 1 && !types.includes('array') ? values[0]! : values;
      break;
    }
    default:
      raw = serialized.value;
  }
  if (param.contentType) {
    try {
      return JSON.parse(Array.isArray(raw) ? raw.join(',') : raw);
    } catch {
      return raw;
    }
  }
  return coerce(raw, schema, root);
}

function safeDecode(v: string): string {
  try {
    return decodeURIComponent(v.replace(/\+/g, ' '));
  } catch {
    return v;
  }
}

function coerce(raw: string | string[], schema: Record<string, unknown>, root: unknown): unknown {
  const types = typesOf(schema);
  if (types.includes('array')) {
    const items = isObject(schema.items) ? expandRef(schema.items, { root }) : {};
    const parts = Array.isArray(raw) ? raw : raw === '' ? [] : raw.split(',');
    return parts.map((p) => coerce(p, items, root));
  }
  const text = Array.isArray(raw) ? raw[raw.length - 1]! : raw;
  // Plain decimal only, as the contract reads a number parameter: '1e1', '0x10' or ' 5' stay text (invalid).
  if (types.includes('integer') && /^-?\d+$/.test(text)) return Number(text);
  if (types.includes('number') && /^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  if (types.includes('boolean') && (text === 'true' || text === 'false')) return text === 'true';
  if (types.includes('null') && (text === 'null' || text === '')) return null;
  if (types.includes('object') && !types.includes('string')) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}
