/**
 * @module Reads the bundled contract and compiles JSON Schema 2020-12 validators for its responses.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS: under NodeNext its default import may be the module object.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => Ajv2020;

export interface Response {
  $ref?: string;
  content?: Record<string, { schema?: object; examples?: Record<string, { value: unknown }> }>;
}
export interface Operation {
  operationId: string;
  responses: Record<string, Response>;
}
export interface Bundle {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, object>; responses: Record<string, Response> };
}

/** The response object of `status`, following a `$ref` into `components.responses`. */
export function responseOf(bundle: Bundle, op: Operation, status: string): Response | undefined {
  const response = op.responses[status];
  const ref = response?.$ref?.replace('#/components/responses/', '');
  return ref ? bundle.components.responses[ref] : response;
}

const cache = new WeakMap<Bundle, Ajv2020>();

function ajvFor(bundle: Bundle): Ajv2020 {
  let ajv = cache.get(bundle);
  if (!ajv) {
    ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    // Register the components once so `#/components/schemas/...` references resolve.
    ajv.addSchema({ $id: 'bundle', components: bundle.components }, 'bundle');
    cache.set(bundle, ajv);
  }
  return ajv;
}

/** A validator for the JSON body of `status` of the operation. */
export function compileResponseValidator(bundle: Bundle, op: Operation, status: string): ValidateFunction {
  const schema = responseOf(bundle, op, status)?.content?.['application/json']?.schema;
  if (!schema) throw new Error(`${op.operationId} ${status} has no JSON schema`);
  return ajvFor(bundle).compile(rebase(schema) as object);
}

/** Point local references at the registered bundle. */
function rebase(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rebase);
  if (node && typeof node === 'object') {
    return Object.fromEntries(
      Object.entries(node).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `bundle${v}` : rebase(v)]),
    );
  }
  return node;
}
