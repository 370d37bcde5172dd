/**
 * @module The Usage resource of the period: what `GET /usage/current` and `GET /v1/usage` answer.
 */
import type { Schema } from '../../contract.ts';
import { periodOf, resetAt } from './period.ts';
import { pctConsumed, policyLevel } from './policy.ts';
import { projectedStu } from './projection.ts';

/** The contract's Usage resource. */
export type Usage = Readonly<Schema<'Usage'>>;

export interface UsageInput {
  readonly now: Date;
  readonly quotaStu: number;
  readonly rolloverStu: number;
  readonly consumedStu: number;
}

/** Builds the Usage resource; STU only, no money. */
export function computeUsage({ now, quotaStu, rolloverStu, consumedStu }: UsageInput): Usage {
  const allowance = { quotaStu, rolloverStu, consumedStu };
  return {
    period: periodOf(now),
    quotaStu,
    rolloverStu,
    consumedStu,
    pctConsumed: pctConsumed(allowance),
    projectedStu: projectedStu(consumedStu, now),
    level: policyLevel(allowance),
    resetAt: resetAt(now).toISOString(),
  };
}
