/**
 * @module What every check receives and returns. Checks are pure functions of one recorded exchange
 * (plus, for the stateful ones, the earlier steps of the same sequence): no I/O, no randomness.
 */
import type { Case, PreparedRequest } from '../case.ts';
import type { OpenApiDocument } from '../contract/document.ts';
import type { Operation } from '../contract/operations.ts';
import type { Validator } from '../schema/validator.ts';
import type { RecordedResponse } from '../transport.ts';

export interface Step {
  operation: Operation;
  request: PreparedRequest;
  response: RecordedResponse;
}

export interface CheckConfig {
  /** Error code → HTTP status (`generated/errors.ts`'s `ERROR_STATUS`). */
  errorStatus: Record<string, number>;
  /** Words that must never appear in a response (provider and model names), matched case-insensitively. */
  providerNames: RegExp;
  /** Statuses that count as accepting schema-valid data (Schemathesis's default: 2xx, 401, 403, 404). */
  positiveStatuses: string[];
  /** Per operationId, when an operation may refuse valid data for a documented reason (a template that does not render). */
  positiveStatusesByOperation?: Record<string, string[]>;
}

export interface CheckContext {
  operation: Operation;
  case: Case;
  request: PreparedRequest;
  response: RecordedResponse;
  validator: Validator;
  doc: OpenApiDocument;
  config: CheckConfig;
  /** Earlier steps of the same stateful sequence, oldest first (empty outside the stateful phase). */
  history: Step[];
}

/** `undefined` when the check passes (or does not apply), else the failure message. */
export type CheckFn = (ctx: CheckContext) => string | undefined;

export interface CheckFailure {
  check: string;
  message: string;
}
