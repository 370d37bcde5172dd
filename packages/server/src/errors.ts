/**
 * @module The one exception type of the service. Every failure that reaches a client is a
 * ServiceError, rendered by the error mapper into the spec's error body.
 */
import { ERROR_STATUS, type ErrorCode, type ErrorExtras } from '../../../generated/errors.ts';

export { ERROR_STATUS, type ErrorCode };

/**
 * The extra fields of `code`'s error body, as the contract's error table gives them (policy, kind, retryAfterSec,
 * agentSlug, ...). The request id is the error mapper's (middleware/errors): a thrower may name one, never needs to,
 * and the mapper sends the context's whatever it says.
 */
export type ErrorExtrasOf<C extends ErrorCode> = ErrorExtras[C] extends infer E
  ? E extends unknown
    ? Omit<E, 'requestId'> & { readonly requestId?: string | undefined }
    : never
  : never;

/** What `fail` takes after the code: the extras are required when the code's body has required fields. */
type FailArgs<C extends ErrorCode> =
  Record<never, never> extends ErrorExtrasOf<C>
    ? [message?: string, extras?: ErrorExtrasOf<C>, headers?: Record<string, string>]
    : [message: string | undefined, extras: ErrorExtrasOf<C>, headers?: Record<string, string>];

/** The statuses of the contract's error table: every one has a body. */
export type ErrorStatus = (typeof ERROR_STATUS)[ErrorCode];

export class ServiceError<C extends ErrorCode = ErrorCode> extends Error {
  override readonly name = 'ServiceError';

  /**
   * @param code    stable snake_case code from the contract's error table
   * @param status  HTTP status of that code (see generated/errors.ts)
   * @param message human-readable text; must carry no internal detail
   * @param extras  the code's extra body fields
   * @param headers response headers that belong to the error (the retry hints of {@link retryHints}, Allow)
   */
  constructor(
    readonly code: C,
    readonly status: ErrorStatus,
    message: string | undefined,
    readonly extras: ErrorExtrasOf<C>,
    readonly headers: Record<string, string> = {},
  ) {
    super(message ?? code);
    this.publicMessage = message;
  }

  /** The message as sent to the client, or undefined when none was given. */
  readonly publicMessage: string | undefined;

  /** Whether this is `code`'s error (then its extras are that code's). */
  is<K extends ErrorCode>(code: K): this is ServiceError<K> {
    const own: ErrorCode = this.code;
    return own === code;
  }
}

/**
 * A ServiceError whose status comes from the contract's error table, so a code can never be sent
 * with a status the spec does not give it.
 */
export function fail<C extends ErrorCode>(code: C, ...[message, extras, headers]: FailArgs<C>): ServiceError<C> {
  // Without extras, FailArgs proved that the code's body has no required field: none is a valid value.
  return new ServiceError(code, ERROR_STATUS[code], message, extras ?? ({} as ErrorExtrasOf<C>), headers);
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
