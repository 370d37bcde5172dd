/**
 * @module The error mapper: the one place that turns a failure into the spec's error body
 * `{ error, message?, requestId? (5xx), ...extras }`. A ServiceError is rendered as it says; any
 * store that cannot be reached becomes `503 service_unavailable` with `Retry-After`; any other
 * thrown value becomes `500 internal_error` with the request id and no detail. Both are logged on
 * the server side only.
 *
 * Bodies are built with `c.json`, so headers that earlier middleware set on the context
 * (X-Request-Id, X-RateLimit-*) stay on the error response.
 */
import { fallbackLogger } from '../../log/index.ts';
import type { Context, ErrorHandler, MiddlewareHandler, NotFoundHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { fail, retryHints, ServiceError, type ErrorCode } from '../../errors.ts';
import { keepUnredacted } from '../redact/index.ts';
import { newRequestId } from '../request-id/index.ts';
import { isStoreUnavailable } from '../../store/unavailable.ts';
import { SEALED_SECRET_HINT, SealedSecretUnreadable } from '../../domain/webhooks/secret-box.ts';

/** How long a client waits before retrying while the store is unreachable. */
const STORE_RETRY_AFTER_SEC = 5;

interface ErrorLogEntry {
  requestId: string;
  method: string;
  path: string;
  error: unknown;
  /** The log line's message when the failure has a known cause and repair (default 'unhandled error'). */
  message?: string;
}

interface ErrorMapperOptions {
  /** Where unexpected failures are reported (with their stack); defaults to one JSON line on stderr. */
  log?: (entry: ErrorLogEntry) => void;
  /** Called for each request the store could not serve (metrics). */
  onStoreUnavailable?: () => void;
}

export function errorMapper(options: ErrorMapperOptions = {}): ErrorHandler {
  const log = options.log ?? logToStderr;
  return function errorMapper(err, c) {
    const known = toServiceError(err);
    if (!known && isStoreUnavailable(err)) {
      // Logged for the operator; the client is told to come back, never which database failed. Whether the request
      // was applied before the store went away is not known: X-Should-Retry says true only where repeating it cannot
      // apply it twice (a read, or a request with an Idempotency-Key, which answers the first outcome again).
      options.onStoreUnavailable?.();
      log({ requestId: requestIdOf(c), method: c.req.method, path: c.req.path, error: err });
      const repeatable = ['GET', 'HEAD', 'OPTIONS'].includes(c.req.method) || c.req.header('idempotency-key') !== undefined;
      return renderError(
        c,
        fail('service_unavailable', 'A backing service is temporarily unavailable.', {}, retryHints(STORE_RETRY_AFTER_SEC * 1000, repeatable)),
      );
    }
    if (!known && err instanceof SealedSecretUnreadable) {
      // The operator's to repair (the wrong SECRET_KEY): the log says how; the client only that it is unavailable,
      // and that repeating the request will not help until then (no wait: the repair has no known end).
      log({ requestId: requestIdOf(c), method: c.req.method, path: c.req.path, error: err, message: SEALED_SECRET_HINT });
      return renderError(c, fail('service_unavailable', 'A backing service is temporarily unavailable.', {}, retryHints(undefined, false)));
    }
    if (!known) {
      log({ requestId: requestIdOf(c), method: c.req.method, path: c.req.path, error: err });
      return renderError(c, fail('internal_error', 'An unexpected error occurred.'));
    }
    return renderError(c, known);
  };
}

/**
 * Hono hands only `Error` instances to the error handler; a thrown string or object would escape
 * as a crashed request. This turns them into Errors so the mapper renders them like any other.
 * Mount it right after the request id.
 */
export function errorBoundary(): MiddlewareHandler {
  return async function errorBoundary(_c, next) {
    try {
      await next();
    } catch (err) {
      throw err instanceof Error ? err : new Error('a non-Error value was thrown', { cause: err });
    }
  };
}

/** Unknown paths: `404 not_found`, through the same renderer. */
export function notFound(): NotFoundHandler {
  return function notFound(c) {
    return renderError(c, fail('not_found', 'No such route.'));
  };
}

/** The spec's error body and headers for a ServiceError. */
function renderError(c: Context, err: ServiceError): Response {
  const body: Record<string, unknown> = { error: err.code };
  if (err.publicMessage !== undefined) body.message = err.publicMessage;
  if (err.status >= 500) {
    const requestId = requestIdOf(c);
    body.requestId = requestId;
    // The caller's own id, echoed: the redactor must leave it equal to the X-Request-Id header.
    keepUnredacted(c, requestId);
  }
  for (const [name, value] of Object.entries(err.extras)) {
    // The request id is the context's, whatever an extra says; undefined extras are left out.
    if (value !== undefined && name !== 'requestId' && name !== 'error') body[name] = value;
  }
  for (const [name, value] of Object.entries(err.headers)) c.header(name, value);
  return c.json(body, err.status);
}

/**
 * Hono's own HTTPExceptions (for example from a body-limit or a malformed request) map to the
 * nearest code of the spec; anything else is not known and becomes internal_error.
 */
function toServiceError(err: unknown): ServiceError | undefined {
  if (err instanceof ServiceError) return err;
  if (err instanceof HTTPException) {
    const code = HTTP_EXCEPTION_CODES[err.status];
    return code ? fail(code) : undefined;
  }
  return undefined;
}

const HTTP_EXCEPTION_CODES: Partial<Record<number, ErrorCode>> = {
  400: 'invalid_request',
  401: 'not_authenticated',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
};

function requestIdOf(c: Context): string {
  const id: unknown = c.get('requestId');
  return typeof id === 'string' ? id : newRequestId();
}

function logToStderr(entry: ErrorLogEntry): void {
  fallbackLogger().error({ requestId: entry.requestId, method: entry.method, path: entry.path, err: entry.error }, entry.message ?? 'unhandled error');
}
