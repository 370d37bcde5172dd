/** @module missing_required_header: leaving out a required header must give 4xx (401 for `Authorization`). */
import type { CheckFn } from './types.ts';

export const missingRequiredHeader: CheckFn = ({ case: c, response }) => {
  if (!c.missingHeader) return undefined;
  const expected = c.missingHeader.toLowerCase() === 'authorization' ? [401] : [400, 401, 403, 406, 422];
  if (expected.includes(response.status)) return undefined;
  return `Missing required header ${c.missingHeader} not rejected: got ${response.status}, expected ${expected.join(' or ')}`;
};
