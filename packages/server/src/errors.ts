/**
 * @module The one exception type of the service. Every failure that reaches a client is a
 * ServiceError, rendered by the error mapper into the spec's error body.
 */
import { ERROR_STATUS, type ErrorCode } from '../../../generated/errors.ts';

export { ERROR_STATUS, type ErrorCode };

/** Extra fields of the spec's error table, by code (policy, kind, retryAfterSec, agentSlug, ...). */
type ErrorExtras = Record<string, string | number | boolean | null | undefined | readonly string[] | Readonly<Record<string, string>>>;

export class ServiceError extends Error {
  override readonly name = 'ServiceError';

  /**
   * @param code    stable snake_case code from the contract's error table
   * @param status  HTTP status of that code (see generated/errors.ts)
   * @param message human-readable text; must carry no internal detail
   * @param extras  the code's extra body fields
   * @param headers response headers that belong to the error (the retry hints of {@link retryHints}, Allow)
   */
  constructor(
    readonly code: string,
    readonly status: number,
    message?: string,
    readonly extras: ErrorExtras = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message ?? code);
    this.publicMessage = message;
  }

  /** The message as sent to the client, or undefined when none was given. */
  readonly publicMessage: string | undefined;
}

/**
 * A ServiceError whose status comes from the contract's error table, so a code can never be sent
 * with a status the spec does not give it.
 */
export function fail(code: ErrorCode, message?: string, extras: ErrorExtras = {}, headers: Record<string, string> = {}): ServiceError {
  return new ServiceError(code, ERROR_STATUS[code], message, extras, headers);
}

/**
 * The retry hints of a refusal, set together so they never disagree: `Retry-After` (whole seconds, at least 1),
 * `Retry-After-Ms` (the same wait to the millisecond, the header Stainless-made clients prefer) and
 * `X-Should-Retry` where the service knows better than the status code whether repeating the request can succeed
 * (`true`: refused before any work; `false`: the same request fails again until something else changes).
 *
 * @param waitMs      how long to wait; undefined sends no wait (a retry would not help anyway)
 * @param shouldRetry the `X-Should-Retry` decision; undefined leaves it to the status code
 */
export function retryHints(waitMs: number | undefined, shouldRetry?: boolean): Record<string, string> {
  const headers: Record<string, string> = {};
  if (waitMs !== undefined) {
    const ms = Math.max(1, Math.ceil(waitMs));
    headers['Retry-After'] = String(Math.ceil(ms / 1000));
    headers['Retry-After-Ms'] = String(ms);
  }
  if (shouldRetry !== undefined) headers['X-Should-Retry'] = String(shouldRetry);
  return headers;
}
