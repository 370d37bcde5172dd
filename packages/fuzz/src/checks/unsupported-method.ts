/** @module unsupported_method: an undocumented method on a documented path gives 405 with an `Allow` header. */
import type { CheckFn } from './types.ts';

export const unsupportedMethod: CheckFn = ({ case: c, response }) => {
  if (!c.method) return undefined;
  if (response.status !== 405) return `Unsupported method ${c.method} answered ${response.status}, expected 405`;
  if (!response.headers.allow) return `Unsupported method ${c.method}: 405 without an Allow header`;
  return undefined;
};
