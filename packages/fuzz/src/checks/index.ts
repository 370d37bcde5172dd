/**
 * @module The checks, by their Schemathesis names (plus the project's own), in the order reports list them.
 */
import { contentTypeConformance } from './content-type-conformance.ts';
import { ensureResourceAvailability } from './ensure-resource-availability.ts';
import { errorBodyConformance } from './error-body-conformance.ts';
import { ignoredAuth } from './ignored-auth.ts';
import { missingRequiredHeader } from './missing-required-header.ts';
import { negativeDataRejection } from './negative-data-rejection.ts';
import { noProviderLeak } from './no-provider-leak.ts';
import { notAServerError } from './not-a-server-error.ts';
import { positiveDataAcceptance } from './positive-data-acceptance.ts';
import { rateLimitHeadersPresent } from './rate-limit-headers-present.ts';
import { requestIdEchoed } from './request-id-echoed.ts';
import { responseHeadersConformance } from './response-headers-conformance.ts';
import { responseSchemaConformance } from './response-schema-conformance.ts';
import { statusCodeConformance } from './status-code-conformance.ts';
import type { CheckContext, CheckFn } from './types.ts';
import { unsupportedMethod } from './unsupported-method.ts';
import { useAfterFree } from './use-after-free.ts';

export const CHECKS = {
  not_a_server_error: notAServerError,
  status_code_conformance: statusCodeConformance,
  content_type_conformance: contentTypeConformance,
  response_headers_conformance: responseHeadersConformance,
  response_schema_conformance: responseSchemaConformance,
  negative_data_rejection: negativeDataRejection,
  positive_data_acceptance: positiveDataAcceptance,
  missing_required_header: missingRequiredHeader,
  unsupported_method: unsupportedMethod,
  use_after_free: useAfterFree,
  ensure_resource_availability: ensureResourceAvailability,
  ignored_auth: ignoredAuth,
  rate_limit_headers_present: rateLimitHeadersPresent,
  request_id_echoed: requestIdEchoed,
  error_body_conformance: errorBodyConformance,
  no_provider_leak: noProviderLeak,
} satisfies Record<string, CheckFn>;

export type CheckName = keyof typeof CHECKS;
export const CHECK_NAMES = Object.keys(CHECKS) as CheckName[];

export interface CheckOutcome {
  check: CheckName;
  /** `undefined`: passed or not applicable. */
  failure?: string;
}

/** Runs the selected checks on one exchange. A check that throws is itself a failure (never a silent pass). */
export function runChecks(ctx: CheckContext, names: readonly CheckName[] = CHECK_NAMES): CheckOutcome[] {
  return names.map((check) => {
    try {
      return { check, failure: CHECKS[check](ctx) };
    } catch (error) {
      return { check, failure: `check crashed: ${(error as Error).message}` };
    }
  });
}

export type { CheckConfig, CheckContext, CheckFailure, CheckFn, Step } from './types.ts';
export { errorStatusFromContract } from './error-codes.ts';
export { DEFAULT_PROVIDER_NAMES } from './no-provider-leak.ts';
