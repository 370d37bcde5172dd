/**
 * @module The SDK's errors. Every non-2xx answer throws a `ServiceError` (or the subclass of its family)
 * carrying the status, the contract's `error` code, the message, the request id and the code's extra fields;
 * a request that got no answer throws `ConnectionError` or `TimeoutError`.
 */
import type { ERROR_STATUS } from '../generated/errors.ts';
import type { Schemas } from '../generated/operations.ts';

/** Every error code of the contract. Streams may also end with `engine_error` or `timeout` (`StreamError`). */
export type ErrorCode = keyof typeof ERROR_STATUS | Schemas['StreamError']['error'];

/** Extra fields of the error body, typed from the contract's error schemas. */
export interface ErrorFields {
  /** `quota_exceeded`: the quota policy reached (`hardstop` refuses). */
  policy?: Schemas['QuotaExceededError']['policy'];
  /** `quota_exceeded`: percentage of the period consumed. */
  pctConsumed?: number;
  /** `quota_exceeded`: ISO 8601 time of the next reset. */
  resetAt?: string;
  /** `kill_switch`: which switch is active. */
  kind?: Schemas['KillSwitchError']['kind'];
  /** `kill_switch`: since when (ISO 8601), when known. */
  activeSince?: string;
  /** `rate_limit_exceeded`, `rate_limited`, `too_many_attempts`, `budget_reserved`: seconds to wait. */
  retryAfterSec?: number;
  /** `budget_reserved`: where runs in progress hold the room the invocation needs. */
  budget?: Schemas['BudgetReservedError']['budget'];
  /** `agent_*`, `not_a_member`: the agent concerned. */
  agentSlug?: string;
  /** `agent_disabled`: why the agent is paused. */
  reason?: string;
  /** A stream's `event: error`: the run that failed. */
  runId?: string;
}

export interface ServiceErrorInit extends ErrorFields {
  status: number;
  code: string;
  message?: string;
  requestId?: string;
  headers?: Headers;
  body?: unknown;
}

export class ServiceError extends Error implements ErrorFields {
  override readonly name: string = 'ServiceError';
  /** HTTP status (200 for an `event: error` inside a stream that had begun). */
  readonly status: number;
  /** The contract's stable `error` code; branch on this. */
  readonly code: ErrorCode | (string & {});
  /** `X-Request-Id` (or the body's `requestId`): quote it in a support ticket. */
  readonly requestId: string | undefined;
  readonly headers: Headers;
  /** The parsed error body as received. */
  readonly body: unknown;
  readonly policy?: ErrorFields['policy'];
  readonly pctConsumed?: number;
  readonly resetAt?: string;
  readonly kind?: ErrorFields['kind'];
  readonly activeSince?: string;
  readonly retryAfterSec?: number;
  readonly budget?: ErrorFields['budget'];
  readonly agentSlug?: string;
  readonly reason?: string;
  readonly runId?: string;

  constructor(init: ServiceErrorInit) {
    super(init.message ?? `${init.status} ${init.code}`);
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.headers = init.headers ?? new Headers();
    this.body = init.body;
    for (const field of EXTRA_FIELDS) {
      if (init[field] !== undefined) Object.defineProperty(this, field, { value: init[field], enumerable: true });
    }
  }
}

const EXTRA_FIELDS = ['policy', 'pctConsumed', 'resetAt', 'kind', 'activeSince', 'retryAfterSec', 'budget', 'agentSlug', 'reason', 'runId'] as const;

/** 400 `invalid_request`, `invalid_body`, `payload_invalid`; also 413 and 431. */
export class InvalidRequestError extends ServiceError {
  override readonly name: string = 'InvalidRequestError';
}
/** 401: `missing_bearer`, `not_authenticated`, `api_key_not_found`, `api_key_invalid`, `signature_invalid`. */
export class AuthenticationError extends ServiceError {
  override readonly name: string = 'AuthenticationError';
}
/** 403: `scope_required`, `role_forbidden`, `agent_*`, … (and 402 `payment_not_completed`). */
export class PermissionError extends ServiceError {
  override readonly name: string = 'PermissionError';
}
/** 404: `not_found` and every `*_not_found`, `webhook_unavailable`. */
export class NotFoundError extends ServiceError {
  override readonly name: string = 'NotFoundError';
}
/** 429 `rate_limit_exceeded`, `rate_limited`, `too_many_attempts`, `budget_reserved`: wait `retryAfterSec` and try again. */
export class RateLimitError extends ServiceError {
  override readonly name: string = 'RateLimitError';
}
/** 429 `quota_exceeded`: wait for `resetAt` or review consumption; never retried. */
export class QuotaExceededError extends ServiceError {
  override readonly name: string = 'QuotaExceededError';
}
/** 429 `kill_switch` (or a stream's `event: error` with `kill_switch`): a spending cut is active; never retried. */
export class KillSwitchError extends ServiceError {
  override readonly name: string = 'KillSwitchError';
}
/** 5xx, and a stream's `event: error` with `engine_error`, `timeout` or `internal_error`. */
export class InternalServerError extends ServiceError {
  override readonly name: string = 'InternalServerError';
}

/** No answer: the connection failed (refused, reset, DNS). */
export class ConnectionError extends Error {
  override readonly name: string = 'ConnectionError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
/** No answer within `timeoutMs`. */
export class TimeoutError extends ConnectionError {
  override readonly name: string = 'TimeoutError';
}

/**
 * A run's stream kept dropping before its terminal event: it was resumed from the run's event log
 * (`GET /v1/runs/{run_id}/events`) up to `maxRetries` times in a row without receiving a new event, or could not be
 * resumed at all (`cause` says why). `runId` and `lastEventId` (the `sequence` of the last event received, 0 for
 * none) let the caller follow the rest later with `client.runs.events(runId, { after: lastEventId })`.
 */
export class StreamInterruptedError extends ConnectionError {
  override readonly name: string = 'StreamInterruptedError';
  readonly runId: string;
  readonly lastEventId: number;
  constructor(message: string, init: { runId: string; lastEventId: number; cause?: unknown }) {
    super(message, { cause: init.cause });
    this.runId = init.runId;
    this.lastEventId = init.lastEventId;
  }
}

/** The class of an error code and status. */
export function errorClassOf(status: number, code: string): typeof ServiceError {
  if (code === 'quota_exceeded') return QuotaExceededError;
  if (code === 'kill_switch') return KillSwitchError;
  if (status === 429) return RateLimitError;
  if (status === 401) return AuthenticationError;
  if (status === 402 || status === 403) return PermissionError;
  if (status === 404 || status === 410 || code.endsWith('_not_found')) return NotFoundError;
  if (status >= 500 || code === 'engine_error' || code === 'timeout' || code === 'internal_error') return InternalServerError;
  if (status >= 400) return InvalidRequestError;
  return ServiceError;
}

/** Builds the error of a non-2xx answer (or of a stream's error event) from its parsed body. */
export function createServiceError(status: number, body: unknown, headers: Headers): ServiceError {
  const fields = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const code = typeof fields.error === 'string' ? fields.error : `http_${status}`;
  const Class = errorClassOf(status, code);
  const extras: Record<string, unknown> = {};
  for (const field of EXTRA_FIELDS) if (fields[field] !== undefined) extras[field] = fields[field];
  return new Class({
    ...(extras as ErrorFields),
    status,
    code,
    message: typeof fields.message === 'string' ? fields.message : undefined,
    requestId: typeof fields.requestId === 'string' ? fields.requestId : (headers.get('x-request-id') ?? undefined),
    headers,
    body,
  });
}
