/**
 * @module Quota check before a new invocation: at `hardstop` the invocation is refused with
 * `quota_exceeded` (policy, pctConsumed, resetAt). Levels below hardstop only inform.
 * Pure, so it can run inside the transaction that reads the period's consumption.
 */
import { fail, retryHints, type ServiceError } from '../../errors.ts';
import { resetAt } from './period.ts';
import { pctConsumed, policyLevel, type PolicyLevel } from './policy.ts';
import type { UsageInput } from './usage.ts';

type QuotaDecision =
  | { readonly allowed: true; readonly policy: Exclude<PolicyLevel, 'hardstop'> }
  | {
      readonly allowed: false;
      readonly policy: 'hardstop';
      readonly pctConsumed: number;
      readonly resetAt: string;
      /** Milliseconds until `resetAt`. */
      readonly retryAfterMs: number;
    };

export function checkQuota(input: UsageInput): QuotaDecision {
  const policy = policyLevel(input);
  if (policy !== 'hardstop') return { allowed: true, policy };
  const reset = resetAt(input.now);
  return {
    allowed: false,
    policy,
    pctConsumed: pctConsumed(input),
    resetAt: reset.toISOString(),
    retryAfterMs: Math.max(1, reset.getTime() - input.now.getTime()),
  };
}

/**
 * The 429 `quota_exceeded` error of a refused decision: the retry hints wait until the reset, and say not to loop.
 * Below the hard stop (a request whose input alone does not fit in what is left), `policy` is the period's level
 * and `message` says why.
 */
export function quotaExceededError(
  decision: Omit<Extract<QuotaDecision, { allowed: false }>, 'policy'> & { readonly policy: PolicyLevel },
  message = 'The STU quota of this period is exhausted.',
): ServiceError {
  return fail(
    'quota_exceeded',
    message,
    { policy: decision.policy, pctConsumed: decision.pctConsumed, resetAt: decision.resetAt },
    retryHints(decision.retryAfterMs, false),
  );
}

/** Throws `quota_exceeded` when the workspace is at hardstop; returns the level otherwise. */
export function assertQuotaAllows(input: UsageInput): Exclude<PolicyLevel, 'hardstop'> {
  const decision = checkQuota(input);
  if (!decision.allowed) throw quotaExceededError(decision);
  return decision.policy;
}
