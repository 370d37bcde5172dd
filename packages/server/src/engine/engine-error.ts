/**
 * @module EngineError: the only error an engine throws. Its message and reason are neutral, so
 * it can be logged, stored as a run's failure reason or shown, without revealing a provider,
 * a model, a host or a provider's error body.
 */
import type { TokenUsage } from './engine.ts';

/**
 * `engine_error` and `timeout` are the contract's run failure reasons as they are; `aborted` only
 * answers the caller's own signal (cancel, disconnect), so the caller decides the run's state.
 */
export const ENGINE_ERROR_REASONS = ['engine_error', 'timeout', 'aborted'] as const;
export type EngineErrorReason = (typeof ENGINE_ERROR_REASONS)[number];

const MESSAGES: Readonly<Record<EngineErrorReason, string>> = {
  engine_error: 'The model engine could not complete the request.',
  timeout: 'The model engine did not answer in time.',
  aborted: 'The request to the model engine was aborted.',
};

export class EngineError extends Error {
  override readonly name = 'EngineError';

  /**
   * @param reason neutral code: `engine_error` (the engine refused, broke, is unreachable or
   *               overloaded), `timeout` (no answer in time), `aborted` (the caller's signal)
   * @param usage  tokens consumed before the failure, to bill a run that failed mid-stream
   */
  constructor(
    readonly reason: EngineErrorReason,
    readonly usage: TokenUsage = { inputTokens: 0, outputTokens: 0 },
  ) {
    super(MESSAGES[reason]);
  }
}
