/** @module negative_data_rejection: a request that violates the contract must be refused with a 4xx. */
import type { CheckFn } from './types.ts';

export const negativeDataRejection: CheckFn = ({ case: c, response }) => {
  if (c.kind !== 'negative' || c.method || c.missingHeader || c.withoutAuth) return undefined;
  if (response.status >= 400) return undefined;
  return `API accepted schema-violating request (${c.description}): got ${response.status}, expected 4xx`;
};
