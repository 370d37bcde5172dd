/** @module content_type_conformance: the response's Content-Type is one its status documents. */
import { responseFor } from '../contract/operations.ts';
import type { CheckFn } from './types.ts';

export const contentTypeConformance: CheckFn = ({ operation, response, request, case: c }) => {
  if (c.method) return undefined; // an undocumented method: unsupported_method judges it
  const def = responseFor(operation, response.status);
  if (!def) return undefined; // status_code_conformance reports it
  const documented = Object.keys(def.content);
  if (documented.length === 0) return undefined;
  if (request.method === 'HEAD') return undefined;
  const actual = response.headers['content-type'];
  if (!actual) return `Missing Content-Type header (documented: ${documented.join(', ')})`;
  const type = mediaType(actual);
  if (documented.some((d) => matches(mediaType(d), type))) return undefined;
  return `Undocumented Content-Type: ${type} (documented: ${documented.join(', ')})`;
};

export function mediaType(value: string): string {
  return value.split(';')[0]!.trim().toLowerCase();
}

function matches(documented: string, actual: string): boolean {
  if (documented === actual || documented === '*/*') return true;
  const [dt, ds] = documented.split('/');
  const [at] = actual.split('/');
  return ds === '*' && dt === at;
}
