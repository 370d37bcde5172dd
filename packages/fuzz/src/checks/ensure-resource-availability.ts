/** @module ensure_resource_availability: a resource a previous step just created is reachable through its link. */
import type { CheckFn } from './types.ts';

export const ensureResourceAvailability: CheckFn = ({ case: c, request, response, history }) => {
  const previous = history[history.length - 1];
  if (c.phase !== 'stateful' || !previous || request.method === 'DELETE') return undefined;
  const created = previous.request.method === 'POST' && previous.response.status >= 200 && previous.response.status < 300;
  if (!created || response.status !== 404) return undefined;
  return `Resource not available: ${request.method} ${request.path.split('?')[0]} answered 404 right after ${previous.request.method} ${previous.request.path.split('?')[0]} answered ${previous.response.status}`;
};
