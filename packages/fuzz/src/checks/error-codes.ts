/**
 * @module The error table: each code's HTTP status, read from the contract (`x-error-status`) unless the caller
 * passes one; and the extra fields each code must carry (the spec's error table, kept here as an independent oracle).
 */

/**
 * The contract's error table: code → HTTP status, from the `x-error-status` map of its error-code schema
 * (`components.schemas.ErrorCode` in this service's bundle). Empty when the contract has none.
 */
export function errorStatusFromContract(doc: { components?: { schemas?: Record<string, unknown> } }): Record<string, number> {
  for (const schema of Object.values(doc.components?.schemas ?? {})) {
    const table = (schema as { 'x-error-status'?: unknown } | null)?.['x-error-status'];
    if (table && typeof table === 'object') return { ...(table as Record<string, number>) };
  }
  return {};
}

export type FieldRule = 'string' | 'integer' | 'number' | 'date-time' | readonly string[];

export interface ErrorShape {
  fields?: Record<string, FieldRule>;
  optional?: Record<string, FieldRule>;
  /** Response headers the code requires. */
  headers?: string[];
  /** `message` must be present (scope_required names the missing scope). */
  message?: boolean;
}

const AGENT = { fields: { agentSlug: 'string' } } as const;

export const ERROR_SHAPES: Record<string, ErrorShape> = {
  scope_required: { message: true },
  agent_disabled: { fields: { agentSlug: 'string', reason: 'string' } },
  agent_unknown: AGENT,
  agent_not_in_plan: AGENT,
  agent_not_allowed: AGENT,
  not_a_member: AGENT,
  quota_exceeded: {
    fields: { policy: ['green', 'warning', 'critical', 'overage', 'grace', 'hardstop'], pctConsumed: 'number', resetAt: 'date-time' },
  },
  kill_switch: { fields: { kind: ['run', 'hour', 'day', 'manual'] }, optional: { activeSince: 'date-time' } },
  rate_limit_exceeded: { fields: { retryAfterSec: 'integer' }, headers: ['retry-after'] },
  rate_limited: { fields: { retryAfterSec: 'integer' } },
  method_not_allowed: { headers: ['allow'] },
  internal_error: { fields: { requestId: 'string' } },
  not_implemented: { fields: { requestId: 'string' } },
  service_unavailable: { fields: { requestId: 'string' }, headers: ['retry-after'] },
};
