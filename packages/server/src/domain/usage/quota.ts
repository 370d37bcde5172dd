/**
 * @module The answer of a refused invocation at the quota: `429 quota_exceeded` (policy, pctConsumed, resetAt).
 * The decision itself is the store's (`start_runs`, store/functions/start_runs.sql: the hard stop, and an input
 * that does not fit below it); spending/budget.ts `reserveRun` builds the refusal from its outcome.
 */
import { fail, retryHints, type ServiceError } from '../../errors.ts';
import type { PolicyLevel } from './policy.ts';

/** A refusal at the quota, as the contract's `quota_exceeded` error says it. */
interface QuotaRefusal {
  readonly allowed: false;
  readonly policy: PolicyLevel;
  readonly pctConsumed: number;
  readonly resetAt: string;
  /** Milliseconds until `resetAt`. */
  readonly retryAfterMs: number;
}

/**
 * The 429 `quota_exceeded` error of a refused decision: the retry hints wait until the reset, and say not to loop.
 * Below the hard stop (a request whose input alone does not fit in what is left), `policy` is the period's level
 * and `message` says why.
 */
export function quotaExceededError(decision: QuotaRefusal, message = 'The STU quota of this period is exhausted.'): ServiceError {
  return fail(
    'quota_exceeded',
    message,
    { policy: decision.policy, pctConsumed: decision.pctConsumed, resetAt: decision.resetAt },
    retryHints(decision.retryAfterMs, false),
  );
}
