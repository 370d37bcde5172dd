/**
 * @module Which agents a workspace can use right now: its plan minus its paused agents. Backs
 * `GET /v1/agents`, the router's candidates and the agent errors of an invocation.
 */
import { fail } from '../../errors.ts';
import { AGENT_CATALOG, getAgent, isDepartmentSlug, type AgentEntry, type DepartmentSlug } from '../../vocabulary/catalog.ts';
import { isAgentInPlan, type PlanName } from '../../vocabulary/plans.ts';

export interface WorkspaceAgents {
  readonly plan: PlanName;
  /** Paused agents of the workspace and why, as stored (the reason is shown to the caller). */
  readonly paused?: ReadonlyMap<string, string>;
}

/** The active agents of the workspace, in catalog order. */
export function activeAgents({ plan, paused }: WorkspaceAgents): AgentEntry[] {
  return AGENT_CATALOG.filter((agent) => isAgentInPlan(plan, agent.slug) && !paused?.has(agent.slug));
}

/** Departments the orchestrator may route to. */
export function routingCandidates(workspace: WorkspaceAgents): DepartmentSlug[] {
  return activeAgents(workspace)
    .map((agent) => agent.slug)
    .filter(isDepartmentSlug);
}

/**
 * The agent an invocation targets, or the spec's error: `agent_unknown` (no such slug),
 * `agent_not_in_plan`, `agent_disabled` (paused, with its reason). Checked in that order, so a
 * paused agent outside the plan reads as not in the plan.
 */
export function assertAgentAvailable(slug: string, { plan, paused }: WorkspaceAgents): AgentEntry {
  const agent = getAgent(slug);
  if (!agent) throw fail('agent_unknown', 'No agent has this slug.', { agentSlug: slug });
  if (!isAgentInPlan(plan, slug)) throw fail('agent_not_in_plan', 'This agent is not included in the plan.', { agentSlug: slug });
  const reason = paused?.get(slug);
  if (reason !== undefined) throw fail('agent_disabled', 'This agent is paused.', { agentSlug: slug, reason });
  return agent;
}
