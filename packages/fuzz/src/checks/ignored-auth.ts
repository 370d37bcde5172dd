/** @module ignored_auth: an operation that requires credentials refuses a request without (or with bad) ones. */
import { requiresAuth } from '../auth.ts';
import type { CheckFn } from './types.ts';

export const ignoredAuth: CheckFn = ({ case: c, operation, response }) => {
  if (!c.withoutAuth || !requiresAuth(operation)) return undefined;
  if (response.status < 200 || response.status >= 300) return undefined;
  return `Authentication declared but not enforced: ${c.description} answered ${response.status}`;
};
