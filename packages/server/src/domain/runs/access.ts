/**
 * @module Who may invoke what: the credential's agent scopes and the plan's aliases.
 *
 * - A key with `orchestrator:invoke` (or `orchestrator:*`) may invoke every agent.
 * - A key restricted to departmental agents (`orchestrator:invoke:agent:<department>`) that names
 *   another department: `403 agent_not_allowed` (the agent is not the caller's department).
 * - Any other target its scopes do not cover (the orchestrator, for a department key): `403
 *   scope_required`, naming the scope.
 * - An alias the plan does not include (`Concerto` outside enterprise): `403 forbidden`.
 */
import { fail } from '../../errors.ts';
import { isAliasInPlan, type PlanName } from '../../vocabulary/plans.ts';
import { isDepartmentSlug } from '../../vocabulary/catalog.ts';
import { agentScope, mayInvokeAgent } from '../keys/index.ts';

const AGENT_SCOPE = /^orchestrator:invoke:agent:(.+)$/;

/** @param scopes the credential's scopes; undefined for a run the service starts itself (inbound webhook) */
export function assertMayInvokeAgent(scopes: readonly string[] | undefined, target: string): void {
  if (scopes === undefined || mayInvokeAgent(scopes, target)) return;
  const boundDepartments = scopes.map((s) => AGENT_SCOPE.exec(s)?.[1]).filter((slug) => isDepartmentSlug(slug));
  if (isDepartmentSlug(target) && boundDepartments.length > 0) {
    throw fail('agent_not_allowed', 'This key is restricted to another department.', { agentSlug: target });
  }
  throw fail('scope_required', `This API key lacks the scope '${agentScope(target)}'.`);
}

export function assertAliasInPlan(plan: PlanName, alias: string): void {
  if (!isAliasInPlan(plan, alias)) throw fail('forbidden', `The plan of this workspace does not include the alias ${alias}.`);
}
