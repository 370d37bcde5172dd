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
   * @param headers response headers that belong to the error (Retry-After, Allow)
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
