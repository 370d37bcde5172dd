/**
 * @module Turns whatever the Chat Completions client throws into a neutral EngineError. The
 * provider's status, body and message are dropped here on purpose: only the reason survives.
 */
import { APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type { TokenUsage } from '../engine.ts';
import { EngineError, type EngineErrorReason } from '../engine-error.ts';

export function toEngineError(error: unknown, usage: TokenUsage, signal: AbortSignal | undefined): EngineError {
  if (error instanceof EngineError) return error;
  return new EngineError(reasonOf(error, signal), usage);
}

function reasonOf(error: unknown, signal: AbortSignal | undefined): EngineErrorReason {
  if (signal?.aborted || error instanceof APIUserAbortError) return 'aborted';
  // Timeout before connection error: the timeout class extends the connection one.
  if (error instanceof APIConnectionTimeoutError) return 'timeout';
  if (error instanceof APIError && (error.status === 408 || error.status === 504)) return 'timeout';
  // Refused, unreachable, overloaded (429, 502, 503) or broken: all the same to a caller.
  return 'engine_error';
}
