/**
 * @module The service's error table (code → status) as the team brief fixes it, used when the caller does not
 * pass `generated/errors.ts`'s `ERROR_STATUS`; and the extra fields each code must carry (the spec's error table).
 */

export const DEFAULT_ERROR_STATUS: Record<string, number> = {
  missing_bearer: 401,
  not_authenticated: 401,
  api_key_not_found: 401,
  api_key_invalid: 401,
  signature_invalid: 401,
  payment_not_completed: 402,
  tenant_forbidden: 403,
  forbidden: 403,
  role_forbidden: 403,
  scope_required: 403,
  agent_disabled: 403,
  agent_unknown: 403,
  agent_not_in_plan: 403,
  agent_not_allowed: 403,
  not_a_member: 403,
  not_found: 404,
  agent_not_found: 404,
  webhook_not_found: 404,
  webhook_unavailable: 404,
  member_not_found: 404,
  invalid_request: 400,
  invalid_body: 400,
  payload_invalid: 400,
  method_not_allowed: 405,
  expired: 410,
  payload_too_large: 413,
  quota_exceeded: 429,
  kill_switch: 429,
  rate_limit_exceeded: 429,
  too_many_attempts: 429,
  rate_limited: 429,
  internal_error: 500,
  not_implemented: 501,
  service_unavailable: 503,
};

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
