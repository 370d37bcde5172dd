/**
 * @module The Usage resource of the period: what `GET /usage/current` and `GET /v1/usage` answer.
 */
import { periodOf, resetAt } from './period.ts';
import { pctConsumed, policyLevel, type PolicyLevel } from './policy.ts';
import { projectedStu } from './projection.ts';

export interface Usage {
  readonly period: string;
  readonly quotaStu: number;
  readonly rolloverStu: number;
  readonly consumedStu: number;
  readonly pctConsumed: number;
  readonly projectedStu: number;
  readonly level: PolicyLevel;
  readonly resetAt: string;
}

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
