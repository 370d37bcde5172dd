/** @module response_headers_conformance: every required documented header is present and matches its schema. */
import { responseFor } from '../contract/operations.ts';
import { isObject } from '../contract/document.ts';
import { expandRef, typesOf } from '../schema/arbitrary.ts';
import type { CheckFn } from './types.ts';

export const responseHeadersConformance: CheckFn = ({ operation, response, validator, doc, case: c }) => {
  if (c.method) return undefined; // an undocumented method: unsupported_method judges it
  const def = responseFor(operation, response.status);
  if (!def) return undefined;
  const problems: string[] = [];
  for (const header of def.headers) {
    // OpenAPI: a `Content-Type` header definition is ignored.
    if (header.name.toLowerCase() === 'content-type') continue;
    const value = response.headers[header.name.toLowerCase()];
    if (value === undefined) {
      if (header.required) problems.push(`missing required header ${header.name}`);
      continue;
    }
    if (header.schema === undefined) continue;
    const schema = isObject(header.schema) ? expandRef(header.schema, { root: doc }) : {};
    const error = validator.errors(header.schema, coerceHeader(value, typesOf(schema)));
    if (error) problems.push(`header ${header.name}: ${JSON.stringify(value)} does not match its schema (${error})`);
  }
  return problems.length > 0 ? `Response header does not conform to the schema: ${problems.join('; ')}` : undefined;
};

function coerceHeader(value: string, types: string[]): unknown {
  if ((types.includes('integer') || types.includes('number')) && /^-?\d+(\.\d+)?$/.test(value.trim())) return Number(value);
  if (types.includes('boolean') && (value === 'true' || value === 'false')) return value === 'true';
  if (types.includes('array')) return value.split(',').map((v) => v.trim());
  return value;
}
