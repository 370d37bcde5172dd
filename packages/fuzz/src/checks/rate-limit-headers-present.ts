/**
 * @module rate_limit_headers_present: every response carries X-RateLimit-Limit / -Remaining / -Reset (epoch
 * seconds), and every 429 a Retry-After. An operation that documents no rate-limit header on any response
 * (a health route outside the limits) is exempt.
 */
import type { CheckFn } from './types.ts';

const NON_NEGATIVE_INT = /^\d+$/;

export const rateLimitHeadersPresent: CheckFn = ({ response, operation }) => {
  const limited = Object.values(operation.responses).some((r) => r.headers.some((header) => header.name.toLowerCase() === 'x-ratelimit-limit'));
  if (!limited) return undefined;
  const h = response.headers;
  const problems: string[] = [];
  for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
    const v = h[name];
    if (v === undefined) problems.push(`missing ${name}`);
    else if (!NON_NEGATIVE_INT.test(v.trim())) problems.push(`${name} is not a non-negative integer: ${JSON.stringify(v)}`);
  }
  const limit = Number(h['x-ratelimit-limit']);
  const remaining = Number(h['x-ratelimit-remaining']);
  if (Number.isFinite(limit) && Number.isFinite(remaining) && remaining > limit) problems.push(`remaining ${remaining} exceeds limit ${limit}`);
  const reset = Number(h['x-ratelimit-reset']);
  // Epoch seconds, not milliseconds and not a delta: between 2001 and 5138.
  if (h['x-ratelimit-reset'] !== undefined && Number.isFinite(reset) && (reset < 1e9 || reset >= 1e11)) {
    problems.push(`x-ratelimit-reset ${reset} is not epoch seconds`);
  }
  if (response.status === 429) {
    const retry = h['retry-after'];
    if (retry === undefined) problems.push('429 without Retry-After');
    else if (!NON_NEGATIVE_INT.test(retry.trim()) && Number.isNaN(Date.parse(retry))) problems.push(`Retry-After is neither seconds nor a date: ${retry}`);
  }
  return problems.length > 0 ? `Rate-limit headers: ${problems.join('; ')}` : undefined;
};
