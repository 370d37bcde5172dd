/**
 * @module Error code -> HTTP status, as listed by the spec. Stands in for generated/errors.ts
 * until the contract generator writes it.
 */
export const ERROR_STATUS = {
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
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
