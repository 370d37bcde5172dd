/**
 * @module The agent catalog: the orchestrator and the ten departmental agents every workspace has.
 * Slugs are the team's decision for the spec's "not shown" departmental slugs.
 */
import type { Alias } from './alias.ts';

export const ORCHESTRATOR_SLUG = 'orchestrator';

/** The ten departmental agents, in the order the spec names the departments. */
export const DEPARTMENT_SLUGS = ['sales', 'marketing', 'finance', 'legal', 'hr', 'operations', 'analytics', 'strategy', 'it', 'customer-care'] as const;

export const AGENT_SLUGS = [ORCHESTRATOR_SLUG, ...DEPARTMENT_SLUGS] as const;

export type DepartmentSlug = (typeof DEPARTMENT_SLUGS)[number];
export type AgentSlug = (typeof AGENT_SLUGS)[number];

export interface AgentEntry {
  readonly slug: AgentSlug;
  readonly name: string;
  readonly description: string;
  readonly kind: 'orchestrator' | 'department';
  /** The alias the catalog lists for this agent (`GET /v1/agents`). Never `Concerto`, which only one plan has. */
  readonly defaultAlias: Alias;
}

/**
 * Default aliases follow the work: the orchestrator and the front desk answer fast (Prelude), deep
 * analytical or regulated work gets the largest capacity (Symphony), the rest a balance (Sonata).
 */
export const AGENT_CATALOG: readonly AgentEntry[] = [
  entry('orchestrator', 'Orchestrator', 'Receives every request, picks the department that handles it and coordinates the work.', 'Prelude'),
  entry('sales', 'Sales', 'Qualifies leads, prepares quotes and follow-ups, and keeps the pipeline moving.', 'Sonata'),
  entry('marketing', 'Marketing', 'Plans campaigns, writes copy and reads how the audience responds.', 'Sonata'),
  entry('finance', 'Finance', 'Handles invoices, budgets, cash flow and financial reporting.', 'Symphony'),
  entry('legal', 'Legal', 'Reviews contracts, terms and compliance questions.', 'Symphony'),
  entry('hr', 'HR', 'Supports hiring, onboarding, leave and people policies.', 'Sonata'),
  entry('operations', 'Operations', 'Runs logistics, suppliers, inventory and day-to-day processes.', 'Sonata'),
  entry('analytics', 'Analytics', 'Turns data into metrics, dashboards and answers.', 'Symphony'),
  entry('strategy', 'Strategy', 'Works on positioning, market analysis and long-term plans.', 'Symphony'),
  entry('it', 'IT', 'Solves access, device, software and infrastructure issues.', 'Sonata'),
  entry('customer-care', 'Customer care', 'Answers customers, handles complaints and support tickets.', 'Prelude'),
];

export function isAgentSlug(value: unknown): value is AgentSlug {
  return typeof value === 'string' && (AGENT_SLUGS as readonly string[]).includes(value);
}

export function isDepartmentSlug(value: unknown): value is DepartmentSlug {
  return typeof value === 'string' && (DEPARTMENT_SLUGS as readonly string[]).includes(value);
}

/** The catalog entry of a slug, or undefined for a slug that is not an agent (`agent_unknown`). */
export function getAgent(slug: string): AgentEntry | undefined {
  return AGENT_CATALOG.find((agent) => agent.slug === slug);
}

function entry(slug: AgentSlug, name: string, description: string, defaultAlias: Alias): AgentEntry {
  return { slug, name, description, kind: slug === ORCHESTRATOR_SLUG ? 'orchestrator' : 'department', defaultAlias };
}
