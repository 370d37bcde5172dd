/** @module positive_data_acceptance: a request that satisfies the contract must not be refused as invalid. */
import type { CheckFn } from './types.ts';

export const positiveDataAcceptance: CheckFn = ({ case: c, response, config, operation }) => {
  const accepted = config.positiveStatusesByOperation?.[operation.id] ?? config.positiveStatuses;
  if (c.kind !== 'positive' || c.method || c.missingHeader || c.withoutAuth) return undefined;
  // 429 and 5xx say nothing about the data (rate limits; not_a_server_error reports the latter).
  if (response.status === 429 || response.status >= 500) return undefined;
  if (statusMatches(response.status, accepted)) return undefined;
  return `API rejected schema-compliant request: got ${response.status}, expected one of ${accepted.join(', ')}${bodyHint(response.text)}`;
};

/** `2xx`-style ranges and exact codes. */
export function statusMatches(status: number, patterns: string[]): boolean {
  const s = String(status);
  return patterns.some((p) => p === s || (p.length === 3 && p.slice(1).toLowerCase() === 'xx' && p[0] === s[0]));
}

function bodyHint(text: string): string {
  return text ? ` (${text.length > 160 ? `${text.slice(0, 160)}…` : text})` : '';
}
