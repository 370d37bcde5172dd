/**
 * @module Plans: which agents and aliases a workspace may use and its monthly STU quota.
 * Quota amounts are "not shown" in the spec; these values are the team's documented decision.
 */
import { ALIASES, type Alias } from './alias.ts';
import { AGENT_SLUGS, type AgentSlug } from './catalog.ts';

export const PLAN_NAMES = ['starter', 'growth', 'enterprise'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

interface Plan {
  readonly name: PlanName;
  /** Agents the plan includes; any other known agent answers `agent_not_in_plan`. */
  readonly agents: readonly AgentSlug[];
  /** Aliases the plan includes; `Concerto` is enterprise only. */
  readonly aliases: readonly Alias[];
  /** Base quota of one monthly period, in STU. */
  readonly quotaStu: number;
  /** Most unused STU carried into the next period: one month's quota. */
  readonly rolloverCapStu: number;
}

const STANDARD_ALIASES: readonly Alias[] = ['Prelude', 'Sonata', 'Symphony'];

export const PLANS: Readonly<Record<PlanName, Plan>> = {
  starter: plan('starter', ['orchestrator', 'sales', 'marketing', 'customer-care'], STANDARD_ALIASES, 2_000_000),
  growth: plan('growth', AGENT_SLUGS, STANDARD_ALIASES, 10_000_000),
  enterprise: plan('enterprise', AGENT_SLUGS, ALIASES, 50_000_000),
};

export function isPlanName(value: unknown): value is PlanName {
  return typeof value === 'string' && (PLAN_NAMES as readonly string[]).includes(value);
}

export function isAgentInPlan(planName: PlanName, slug: string): boolean {
  return (PLANS[planName].agents as readonly string[]).includes(slug);
}

export function isAliasInPlan(planName: PlanName, alias: string): boolean {
  return (PLANS[planName].aliases as readonly string[]).includes(alias);
}

function plan(name: PlanName, agents: readonly AgentSlug[], aliases: readonly Alias[], quotaStu: number): Plan {
  return { name, agents, aliases, quotaStu, rolloverCapStu: quotaStu };
}
