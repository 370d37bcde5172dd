/** @module status_code_conformance: the status is documented for the operation (exact, `4XX` range, or `default`). */
import { responseFor } from '../contract/operations.ts';
import type { CheckFn } from './types.ts';

export const statusCodeConformance: CheckFn = ({ operation, response, case: c }) => {
  if (c.method) return undefined; // an undocumented method: unsupported_method judges it
  if (responseFor(operation, response.status)) return undefined;
  const documented = Object.keys(operation.responses).join(', ');
  return `Undocumented HTTP status code: ${response.status} (documented: ${documented || 'none'})`;
};
