/**
 * @module Ajv (JSON Schema 2020-12 build, with ajv-formats) over the bundled document: the single judge of
 * "valid" for generated cases, mutated cases and responses.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { isObject, type OpenApiDocument } from '../contract/document.ts';

// ajv-formats is CommonJS; under NodeNext its default import is the module object in some toolchains.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => Ajv2020;

const DOC_ID = 'https://contract.invalid/openapi.json';

export interface Validator {
  /** `undefined` when `value` satisfies `schema`, else a short description of the first errors. */
  errors(schema: unknown, value: unknown): string | undefined;
  isValid(schema: unknown, value: unknown): boolean;
}

/** A validator whose schemas may `$ref` anything in `doc` (`#/components/schemas/...`). */
export function createValidator(doc: OpenApiDocument): Validator {
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateSchema: false, discriminator: false });
  addFormats(ajv);
  // OpenAPI's own annotation keywords inside schemas; declaring them keeps Ajv quiet and unsurprised.
  for (const keyword of ['example', 'discriminator', 'xml', 'externalDocs', 'x-sse-events']) {
    try {
      ajv.addKeyword(keyword);
    } catch {
      // already known to this Ajv build
    }
  }
  ajv.addSchema(doc as object, DOC_ID);
  const cache = new WeakMap<object, ValidateFunction>();
  const booleans = new Map<boolean, ValidateFunction>();
  const byText = new Map<string, ValidateFunction>();

  function compiled(schema: unknown): ValidateFunction {
    if (typeof schema === 'boolean') {
      let fn = booleans.get(schema);
      if (!fn) booleans.set(schema, (fn = ajv.compile(schema)));
      return fn;
    }
    const key = schema as object;
    let fn = cache.get(key);
    if (!fn) {
      // Equal schemas built afresh by callers (`{ $ref: ... }` literals) share one compiled function.
      const text = JSON.stringify(schema);
      fn = byText.get(text);
      if (!fn) byText.set(text, (fn = ajv.compile(absolutize(schema) as object)));
      cache.set(key, fn);
    }
    return fn;
  }

  return {
    errors(schema, value) {
      const fn = compiled(schema ?? {});
      return fn(value) ? undefined : describe(fn.errors);
    },
    isValid(schema, value) {
      return compiled(schema ?? {})(value) === true;
    },
  };
}

/** Rewrites local `#/...` refs to `openapi.json#/...` so a schema compiled on its own still reaches the bundle. */
function absolutize(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(absolutize);
  if (!isObject(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if ((k === '$ref' || k === '$dynamicRef') && typeof v === 'string' && v.startsWith('#')) out[k] = DOC_ID + v;
    else if (k === '$id') continue;
    else out[k] = absolutize(v);
  }
  return out;
}

function describe(errors: ErrorObject[] | null | undefined): string {
  if (!errors || errors.length === 0) return 'invalid';
  return errors
    .slice(0, 3)
    .map(
      (e) =>
        `${e.instancePath || '/'} ${e.message ?? 'is invalid'}${e.params && 'allowedValues' in e.params ? `: ${JSON.stringify(e.params.allowedValues)}` : ''}`,
    )
    .join('; ');
}
